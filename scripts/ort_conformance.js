#!/usr/bin/env node
// Runs ONNX's conformance cases (libonnx-testdata) through ONNX Runtime and prints one line per
// case, tab-separated: name, outcome, detail -- the format weave_conformance reads with --ort for
// the ONNX Runtime column of docs/conformance.md. Same cases, same comparison as the Weave runner
// (tests/conformance/conformance.h): |got - expected| <= 1e-7 + 1e-3 * |expected| for floating
// types (NaN matches NaN), exact for integers, bool and strings, equal shapes.
//
//   ORT_NODE=third_party/npm/node_modules/onnxruntime-node \
//     node scripts/ort_conformance.js [DATA_DIR] > tests/conformance/ort_results.tsv
//
// DATA_DIR defaults to /usr/share/libonnx-testdata/data. Test data files are TensorProto
// messages, decoded here by a minimal protobuf reader (no dependency besides onnxruntime-node).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

const dataDir = process.argv[2] || '/usr/share/libonnx-testdata/data';
const suites = ['node', 'pytorch-converted', 'pytorch-operator', 'simple'];

// ---- minimal protobuf reading (wire types 0, 1, 2, 5) ----
function readVarint(buf, pos) {
  let result = 0n, shift = 0n;
  for (;;) {
    if (pos.i >= buf.length) throw new Error('truncated varint');
    const b = buf[pos.i++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

// Field number -> list of raw values: BigInt for varints, Buffer for fixed and length-delimited.
function fields(buf) {
  const out = new Map();
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const no = key >> 3, wt = key & 7;
    let v;
    if (wt === 0) v = { wt, v: readVarint(buf, pos) };
    else if (wt === 1) { v = { wt, v: buf.subarray(pos.i, pos.i + 8) }; pos.i += 8; }
    else if (wt === 5) { v = { wt, v: buf.subarray(pos.i, pos.i + 4) }; pos.i += 4; }
    else if (wt === 2) {
      const len = Number(readVarint(buf, pos));
      v = { wt, v: buf.subarray(pos.i, pos.i + len) };
      pos.i += len;
    } else throw new Error('unsupported wire type ' + wt);
    if (!out.has(no)) out.set(no, []);
    out.get(no).push(v);
  }
  return out;
}

// Repeated varint field, packed or not, as BigInts.
function varints(f, no) {
  const out = [];
  for (const e of f.get(no) || []) {
    if (e.wt === 0) out.push(e.v);
    else { const pos = { i: 0 }; while (pos.i < e.v.length) out.push(readVarint(e.v, pos)); }
  }
  return out;
}

// Repeated fixed-size field (float 4, double 8), packed or not, as one Buffer.
function fixed(f, no) {
  return Buffer.concat((f.get(no) || []).map((e) => e.v));
}

const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', null], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};

function decodeTensor(buf) {
  const f = fields(buf);
  const dims = varints(f, 1).map(Number);
  const dt = Number((varints(f, 2)[0]) || 0n);
  const name = f.has(8) ? f.get(8)[0].v.toString('utf8') : '';
  if (!TYPES[dt]) throw new TypeError('element type ' + dt + ' is not supported by this reader');
  const [type, Arr] = TYPES[dt];
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    data = (f.get(6) || []).map((e) => e.v.toString('utf8'));
  } else if (f.has(9)) {
    const raw = Buffer.from(f.get(9)[0].v);  // copy: aligned for the typed array
    data = new Arr(raw.buffer, raw.byteOffset, raw.length / Arr.BYTES_PER_ELEMENT);
  } else if (dt === 1) {
    const b = Buffer.from(fixed(f, 4));
    data = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  } else if (dt === 11) {
    const b = Buffer.from(fixed(f, 10));
    data = new Float64Array(b.buffer, b.byteOffset, b.length / 8);
  } else if (dt === 7) {
    data = BigInt64Array.from(varints(f, 7).map((v) => BigInt.asIntN(64, v)));
  } else if (dt === 12 || dt === 13) {
    const v = varints(f, 11);
    data = dt === 13 ? BigUint64Array.from(v) : Uint32Array.from(v.map(Number));
  } else {
    // int32_data carries int32, int16, int8, uint16, uint8, bool and float16 bits.
    data = Arr.from(varints(f, 5).map((v) => Number(BigInt.asIntN(32, v))));
  }
  // A SequenceProto or OptionalProto read as a TensorProto gives nonsense counts.
  if (data.length !== count) throw new TypeError(`not a TensorProto (a sequence or optional value?)`);
  return { name, type, dims, data };
}

// ---- comparison ----
function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function close(got, want) {
  if (Number.isNaN(want) || Number.isNaN(got)) return Number.isNaN(want) && Number.isNaN(got);
  if (!Number.isFinite(want) || !Number.isFinite(got)) return got === want;
  return Math.abs(got - want) <= 1e-7 + 1e-3 * Math.abs(want);
}

function compare(got, want) {
  if (got.type !== want.type) return `dtype ${got.type}, expected ${want.type}`;
  const gd = Array.from(got.dims).map(Number);
  if (gd.length !== want.dims.length || gd.some((d, i) => d !== want.dims[i]))
    return `shape ${gd.join('x')}, expected ${want.dims.join('x')}`;
  const floating = want.type === 'float32' || want.type === 'float64' || want.type === 'float16';
  const val = want.type === 'float16' ? (a, i) => halfToFloat(a[i]) : (a, i) => Number(a[i]);
  let bad = 0, first = -1;
  for (let i = 0; i < want.data.length; ++i) {
    const ok = floating ? close(val(got.data, i), val(want.data, i)) : got.data[i] === want.data[i];
    if (!ok) { if (first < 0) first = i; ++bad; }
  }
  if (!bad) return '';
  return `${bad} of ${want.data.length} elements differ, first at ${first}: got ${got.data[first]}, expected ${want.data[first]}`;
}

function classify(msg) {
  if (/NOT_IMPLEMENTED|Could not find an implementation|not a registered function\/op|No Op registered|Unrecognized attribute|is not supported in this build/.test(msg)) {
    if (/Unrecognized attribute/.test(msg)) return 'unsupported-attribute';
    return 'unsupported-op';
  }
  if (/type|sequence|optional|element type/i.test(msg)) return 'unsupported-dtype';
  return 'error';
}

function numbered(dir, prefix) {
  const out = [];
  for (let i = 0; fs.existsSync(path.join(dir, `${prefix}${i}.pb`)); ++i) out.push(path.join(dir, `${prefix}${i}.pb`));
  return out;
}

async function runCase(dir) {
  let session;
  try {
    session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
      { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  } catch (e) {
    return [classify(String(e.message)), String(e.message)];
  }
  const sets = fs.readdirSync(dir).filter((d) => d.startsWith('test_data_set_')).sort();
  if (!sets.length) return ['error', 'no test_data_set_* folder'];
  for (const s of sets) {
    const feeds = {};
    let wants;
    try {
      numbered(path.join(dir, s), 'input_').forEach((p, k) => {
        const t = decodeTensor(fs.readFileSync(p));
        const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[k];
        feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
      });
      wants = numbered(path.join(dir, s), 'output_').map((p) => decodeTensor(fs.readFileSync(p)));
    } catch (e) {
      return [e instanceof TypeError ? 'unsupported-dtype' : 'error', `${s}: ${e.message}`];
    }
    let outs;
    try {
      outs = await session.run(feeds);
    } catch (e) {
      return [classify(String(e.message)), `${s}: ${e.message}`];
    }
    for (let k = 0; k < wants.length; ++k) {
      const name = session.outputNames.includes(wants[k].name) ? wants[k].name : session.outputNames[k];
      const got = outs[name];
      if (!got) return ['fail', `${s}: output '${name}' missing`];
      const diff = compare(got, wants[k]);
      if (diff) return ['fail', `${s}: output '${name}': ${diff}`];
    }
  }
  return ['pass', ''];
}

(async () => {
  for (const suite of suites) {
    const sdir = path.join(dataDir, suite);
    if (!fs.existsSync(sdir)) continue;
    for (const c of fs.readdirSync(sdir).sort()) {
      const dir = path.join(sdir, c);
      if (!fs.existsSync(path.join(dir, 'model.onnx'))) continue;
      let r;
      try {
        r = await runCase(dir);
      } catch (e) {
        r = ['error', String(e && e.message)];
      }
      const detail = r[1].split('\n')[0].replace(/\t/g, ' ').slice(0, 400);
      process.stdout.write(`${suite}/${c}\t${r[0]}\t${detail}\n`);
    }
  }
})();
