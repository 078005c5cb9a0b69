// ONNX Runtime's outputs for one model on the deterministic inputs of bench/ort_common.js, as .npy
// files, for comparing weave's outputs with (bench/run.py, broad set).
//   node bench/ort_outputs.js MODEL.onnx OUT_DIR 'name:1x3x224x224[:int64]' ...
// Writes OUT_DIR/<output name>.npy (every non-alphanumeric character of the name as '_', as
// `weave run` names its files) for float32 outputs, one thread, all graph optimizations.
const fs = require('fs');
const path = require('path');
const { ort, makeFeeds } = require('./ort_common');

const [model, outDir, ...specs] = process.argv.slice(2);

function npy(tensor) {
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), data]);
}

(async () => {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const out = await session.run(makeFeeds(specs));
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, t] of Object.entries(out)) {
    if (t.type !== 'float32') continue;
    fs.writeFileSync(path.join(outDir, name.replace(/[^A-Za-z0-9]/g, '_') + '.npy'), npy(t));
  }
  console.log(JSON.stringify({ peer: 'onnxruntime', model, outputs: Object.keys(out) }));
})().catch((e) => { console.error(e.message || e); process.exit(1); });
