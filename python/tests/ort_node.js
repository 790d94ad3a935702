#!/usr/bin/env node
// ONNX Runtime (npm onnxruntime-node, found as bench/find_ort.js finds it) as the reference for the Python
// tests: the model's input and output metadata, and its outputs on given inputs, for every tensor type
// onnxruntime-node has.
//
//   node ort_node.js MODEL OUT_DIR [NAME=FILE.npy ...]
//
// Writes OUT_DIR/meta.json ({inputs, outputs: [{name, type, shape}], names: output names in order}) and,
// when inputs are given, OUT_DIR/<i>.npy for output i of `names`.
'use strict';
const fs = require('fs');
const path = require('path');
const {findOrt} = require('../../bench/find_ort');

// .npy descr -> [ORT tensor type, typed array]. float16 crosses as raw bits (Node has no Float16Array).
const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const hlen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = buf[6] === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const t = TYPES[descr];
  if (!t) throw new Error(`${file}: unsupported dtype ${descr}`);
  const body = buf.buffer.slice(buf.byteOffset + start + hlen, buf.byteOffset + buf.length);  // a copy: aligned
  return {type: t[0], data: new t[1](body), shape};
}

function writeNpy(file, tensor) {
  const descr = Object.keys(TYPES).find(k => TYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`cannot save a ${tensor.type} tensor`);
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

async function main() {
  const [model, outDir, ...feedArgs] = process.argv.slice(2);
  if (!model || !outDir) throw new Error('usage: ort_node.js MODEL OUT_DIR [NAME=FILE.npy ...]');
  const ort = findOrt();
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, logSeverityLevel: 3});
  const meta = m => ({name: m.name, type: m.isTensor ? m.type : null, shape: m.isTensor ? m.shape : null});
  fs.mkdirSync(outDir, {recursive: true});
  fs.writeFileSync(path.join(outDir, 'meta.json'), JSON.stringify({
    inputs: session.inputMetadata.map(meta), outputs: session.outputMetadata.map(meta), names: session.outputNames}));
  if (!feedArgs.length) return;
  const feeds = {};
  for (const arg of feedArgs) {
    const eq = arg.lastIndexOf('=');
    const t = readNpy(arg.slice(eq + 1));
    feeds[arg.slice(0, eq)] = new ort.Tensor(t.type, t.data, t.shape);
  }
  const out = await session.run(feeds);
  session.outputNames.forEach((name, i) => writeNpy(path.join(outDir, `${i}.npy`), out[name]));
}

main().catch(e => { console.error(`ort_node: error: ${e.message}`); process.exit(1); });
