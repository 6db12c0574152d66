// Reference outputs from ONNX Runtime (npm onnxruntime-node, CPU execution provider).
//
//   node ort_reference.js MODEL.onnx OUT_DIR [--batch N] NAME=FILE.npy ...
//
// Feeds graph input NAME from FILE.npy ('<f4' or '|u1', converted to float32), runs the model and
// writes every output to OUT_DIR/<output name>.npy ('<f4'; characters outside [A-Za-z0-9._-]
// replaced by '_', as jet-run names files). --batch N: the files hold several batches of the
// model's batch size N along dim 0; they are run one batch at a time and the outputs concatenated
// along dim 0 (the Fashion-MNIST test set). NODE_PATH must reach onnxruntime-node
// (tests/networks/prepare.py installs it under the build directory).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function fail(message) {
  console.error('ort_reference: ' + message);
  process.exit(1);
}

// A .npy file: { dims, data: Float32Array }.
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') fail(file + ': not a .npy file');
  const major = bytes[6];
  const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) fail(file + ': unsupported header ' + header);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const data = new Float32Array(count);
  if (descr[1] === '<f4') {
    if (bytes.length !== offset + 4 * count) fail(file + ': wrong data size');
    for (let i = 0; i < count; ++i) data[i] = bytes.readFloatLE(offset + 4 * i);
  } else if (descr[1] === '|u1') {
    if (bytes.length !== offset + count) fail(file + ': wrong data size');
    for (let i = 0; i < count; ++i) data[i] = bytes[offset + i];
  } else {
    fail(file + ': dtype ' + descr[1] + ' is not supported here (use <f4 or |u1)');
  }
  return { dims, data };
}

function writeNpy(file, dims, data) {
  const shape = dims.length === 1 ? '(' + dims[0] + ',)' : '(' + dims.join(', ') + ')';
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ', }';
  // Version 1.0: magic (6) + version (2) + length (2) + header, padded to 64 bytes, ending '\n'.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - 10 - header.length - 1) + '\n';
  const out = Buffer.alloc(total + 4 * data.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(header.length, 8);
  out.write(header, 10, 'latin1');
  for (let i = 0; i < data.length; ++i) out.writeFloatLE(data[i], total + 4 * i);
  fs.writeFileSync(file, out);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 3) fail('usage: node ort_reference.js MODEL.onnx OUT_DIR [--batch N] NAME=FILE.npy ...');
  const [model, outDir] = args;
  let batch = 0;
  const inputs = {};
  for (let i = 2; i < args.length; ++i) {
    if (args[i] === '--batch') {
      batch = Number(args[++i]);
      if (!(batch > 0)) fail('--batch needs a positive number');
      continue;
    }
    const eq = args[i].indexOf('=');
    if (eq <= 0) fail('bad input argument ' + args[i] + ' (want NAME=FILE.npy)');
    inputs[args[i].slice(0, eq)] = readNpy(args[i].slice(eq + 1));
  }
  // All optimizations off: the reference is the graph as written, node by node.
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
  for (const name of session.inputNames) if (!(name in inputs)) fail('no file for input ' + name);

  const total = batch ? Object.values(inputs)[0].dims[0] : 1;
  if (batch && total % batch !== 0) fail('dim 0 (' + total + ') is not a multiple of --batch ' + batch);
  const runs = batch ? total / batch : 1;
  const results = {};  // output name -> { dims (one run), chunks }
  for (let r = 0; r < runs; ++r) {
    const feeds = {};
    for (const name of session.inputNames) {
      const x = inputs[name];
      if (!batch) {
        feeds[name] = new ort.Tensor('float32', x.data, x.dims);
        continue;
      }
      const per = x.data.length / x.dims[0] * batch;
      feeds[name] = new ort.Tensor('float32', x.data.subarray(r * per, (r + 1) * per),
                                   [batch].concat(x.dims.slice(1)));
    }
    const out = await session.run(feeds);
    for (const name of session.outputNames) {
      if (out[name].type !== 'float32') fail('output ' + name + ' is ' + out[name].type);
      if (!results[name]) results[name] = { dims: out[name].dims.slice(), chunks: [] };
      results[name].chunks.push(Float32Array.from(out[name].data));
    }
  }
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) {
    const res = results[name];
    const dims = res.dims.slice();
    if (batch) dims[0] *= runs;
    const all = new Float32Array(res.chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of res.chunks) {
      all.set(c, at);
      at += c.length;
    }
    const file = path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
    writeNpy(file, dims, all);
    console.log('ort_reference: ' + name + ' [' + dims.join(', ') + '] -> ' + file);
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
