#!/usr/bin/env node
// ONNX Runtime's time per node on one model, to set beside `ninegrid profile MODEL`: ORT's own profiler
// (SessionOptions.enableProfiling) over R runs, the first W dropped, the median per node printed in run
// order with the node's operator and output shape. ORT fuses differently (Conv+Add+Relu, its own layout
// transforms appear as ReorderInput/ReorderOutput nodes), so match rows by name and shape, not by index.
//
//   node bench/ort_layer_times.js MODEL [--threads T] [--runs R] [--warmup W] [--shape 1x3x224x224]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {findOrt} = require('./find_ort');

function parseArgs(argv) {
  const a = {model: null, threads: 1, runs: 50, warmup: 10, shape: null};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--threads') a.threads = parseInt(next(), 10);
    else if (k === '--runs') a.runs = parseInt(next(), 10);
    else if (k === '--warmup') a.warmup = parseInt(next(), 10);
    else if (k === '--shape') a.shape = next().split(/[x,]/).map(Number);
    else if (k === '--help' || k === '-h') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 7).join('\n'));
      process.exit(0);
    } else if (!a.model) a.model = k;
    else throw new Error(`unexpected argument ${k}`);
  }
  if (!a.model) throw new Error('no model given (--help for usage)');
  if (!(a.runs > a.warmup)) throw new Error('--runs must exceed --warmup');
  return a;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = findOrt();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-layers-'));
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads, interOpNumThreads: 1, enableProfiling: true,
    profileFilePrefix: path.join(dir, 'profile'),
  });
  const name = session.inputNames[0];
  // The declared shape, or --shape for dynamic dimensions; the values do not change the timing.
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const shape = args.shape || (meta && meta.shape ? meta.shape.map(d => (typeof d === 'number' ? d : 1)) : null);
  if (!shape) throw new Error('cannot tell the input shape: pass --shape');
  const n = shape.reduce((x, y) => x * y, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = Math.sin(i) * 0.5;
  const feeds = {[name]: new ort.Tensor('float32', data, shape)};
  for (let r = 0; r < args.runs; r++) await session.run(feeds);
  session.endProfiling();

  const file = fs.readdirSync(dir).map(f => path.join(dir, f)).find(f => f.endsWith('.json'));
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map();  // name -> {op, shape, times}, in first-seen (run) order
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const key = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(key)) {
      const out = (e.args.output_type_shape || [])[0] || {};
      nodes.set(key, {op: e.args.op_name, shape: (Object.values(out)[0] || []).join('x'), times: []});
    }
    nodes.get(key).times.push(e.dur / 1000);
  }
  fs.rmSync(dir, {recursive: true, force: true});
  let total = 0;
  console.log(`${args.model}: ONNX Runtime ${args.threads} thread(s), median of ${args.runs - args.warmup} runs`);
  console.log('      ms  op               output            node');
  for (const [key, v] of nodes) {
    const t = v.times.slice(args.warmup).sort((x, y) => x - y);
    const median = t.length ? t[Math.floor(t.length / 2)] : 0;
    total += median;
    console.log(`${median.toFixed(3).padStart(8)}  ${v.op.padEnd(16)} ${v.shape.padEnd(17)} ${key}`);
  }
  console.log(`total ${total.toFixed(3)} ms (sum of node medians)`);
}

main().catch(e => {
  console.error(`ort_layer_times: ${e.message}`);
  process.exit(1);
});
