#!/usr/bin/env node
// Times ONNX Runtime (npm onnxruntime-node, CPU) on one ONNX model, the peer that ninegrid's benchmarks
// compare against, or saves its outputs as .npy so tests can compare ninegrid with it.
//
//   node ort_runner.js MODEL [--threads T] [--runs R] [--warmup W] [--shape NAME=1x3x640x640]
//                            [--input NAME=FILE.npy] [--save-outputs DIR] [--save-inputs DIR] [--json]
// --save-inputs writes the inputs it ran on (given or generated) as .npy, so that the peers' conversion check
// (bench/compare.py --peers) runs every engine on the same values; the files take the input names with characters
// other than letters, digits, ".", "_" and "-" as "_", and names.json beside them maps each file name back.
'use strict';
const fs = require('fs');
const path = require('path');
const {findOrt} = require('./find_ort');

function parseArgs(argv) {
  const a = {model: null, threads: 1, runs: 20, warmup: 3, shapes: {}, inputs: {}, save: null, saveInputs: null, json: false};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--threads') a.threads = parseInt(next(), 10);
    else if (k === '--runs') a.runs = parseInt(next(), 10);
    else if (k === '--warmup') a.warmup = parseInt(next(), 10);
    else if (k === '--shape') { const [n, s] = next().split('='); a.shapes[n] = s.split(/[x,]/).map(Number); }
    else if (k === '--input') { const [n, f] = next().split('='); a.inputs[n] = f; }
    else if (k === '--save-outputs') a.save = next();
    else if (k === '--save-inputs') a.saveInputs = next();
    else if (k === '--json') a.json = true;
    else if (k === '--help' || k === '-h') { console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 8).join('\n')); process.exit(0); }
    else if (!a.model) a.model = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (!a.model) throw new Error('no model given');
  return a;
}

const NPY_TYPES = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
                   '|u1': ['uint8', Uint8Array], '<f8': ['float64', Float64Array]};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const t = NPY_TYPES[descr];
  if (!t) throw new Error(`${file}: unsupported dtype ${descr}`);
  const off = hstart + hlen;
  const data = new t[1](buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length));
  return {type: t[0], data, shape};
}

function writeNpy(file, tensor) {
  const descr = {float32: '<f4', int64: '<i8', int32: '<i4', uint8: '|u1', float64: '<f8', bool: '|b1'}[tensor.type];
  if (!descr) throw new Error(`cannot save ${tensor.type}`);
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// The same deterministic pattern as `ninegrid` uses for inputs that are not given is not required here:
// timing does not depend on values, and correctness comparisons pass explicit --input files.
function fillPattern(n) {
  const a = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; a[i] = (s >>> 8) / 16777216; }
  return a;
}

function median(xs) { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; }

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = findOrt();
  const baselineRssMb = process.memoryUsage().rss / 1048576;  // Node itself, before ORT loads the model
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 3});
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;

  const feeds = {};
  for (const name of session.inputNames) {
    if (args.inputs[name]) {
      const t = readNpy(args.inputs[name]);
      feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
      continue;
    }
    const meta = session.inputMetadata ? session.inputMetadata.find(m => m.name === name) : null;
    let dims = args.shapes[name];
    if (!dims && meta && meta.shape) dims = meta.shape.map((d, i) => (typeof d === 'number' && d > 0) ? d : (i === 0 ? 1 : NaN));
    if (!dims || dims.some(d => !(d > 0))) throw new Error(`input ${name} needs --shape ${name}=...`);
    feeds[name] = new ort.Tensor('float32', fillPattern(dims.reduce((a, b) => a * b, 1)), dims);
  }

  if (args.saveInputs) {
    fs.mkdirSync(args.saveInputs, {recursive: true});
    const names = {};  // file name -> input name, for names the file system form changes ('input:0')
    for (const [name, t] of Object.entries(feeds)) {
      const file = name.replace(/[^A-Za-z0-9._-]/g, '_');
      writeNpy(path.join(args.saveInputs, file + '.npy'), t);
      names[file] = name;
    }
    fs.writeFileSync(path.join(args.saveInputs, 'names.json'), JSON.stringify(names));
  }
  if (args.save) {
    const out = await session.run(feeds);
    fs.mkdirSync(args.save, {recursive: true});
    for (const [name, t] of Object.entries(out)) writeNpy(path.join(args.save, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), t);
  }

  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.runs; i++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const r = {model: args.model, threads: args.threads, runs: args.runs, load_ms: loadMs,
             min_ms: Math.min(...times), median_ms: times.length ? median(times) : NaN, max_ms: Math.max(...times),
             mean_ms: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
             peak_rss_mb: process.resourceUsage().maxRSS / 1024, baseline_rss_mb: baselineRssMb, times_ms: times};
  if (args.json) console.log(JSON.stringify(r));
  else console.log(`onnxruntime ${ort.env.versions.common}: load ${loadMs.toFixed(1)} ms, median ${r.median_ms.toFixed(3)} ms ` +
                   `(min ${r.min_ms.toFixed(3)}, max ${r.max_ms.toFixed(3)}), peak RSS ${r.peak_rss_mb.toFixed(1)} MB`);
}

main().catch(e => { console.error(`ort_runner: error: ${e.message}`); process.exit(1); });
