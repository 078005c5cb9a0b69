// The OCR peer of bench/ocr_accuracy.sh: the npm package @gutenye/ocr-node (ONNX Runtime, the same
// PP-OCRv4 detector and recognizer weights as pipelines/ocr_cascade.txt, no direction classifier)
// run on the PNG frames of a video, writing what it read as JSON lines in weavemeta's format, so
// pipelines/ocr_score scores both readers by one rule.
//
//   node bench/ocr_peer.mjs FRAMES_DIR OUT.jsonl [--threads N] [--fps F]
//
// FRAMES_DIR holds 00000.png, 00001.png, ... (one per frame, in order). Each output line is
// {"pts":<frame * 1e9 / F>,"texts":[{"text","score","box":[[x,y] x4]}]}; the package already joins
// the boxes of one line. Prints the mean time per frame (PNG decoding included, model loading not).
// Install: bash bench/install_peers.sh (npm install --ignore-scripts into third_party/npm).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let threads = 2;
let fps = 10;
const positional = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--fps') fps = Number(args[++i]);
  else positional.push(args[i]);
}
if (positional.length !== 2 || !(threads >= 1) || !(fps > 0)) {
  console.error('usage: node bench/ocr_peer.mjs FRAMES_DIR OUT.jsonl [--threads N] [--fps F]');
  process.exit(2);
}
const [framesDir, outPath] = positional;
const entry = path.join(root, 'third_party/npm/node_modules/@gutenye/ocr-node/build/index.js');
if (!fs.existsSync(entry)) {
  console.error(`ocr_peer: ${entry} is missing (bash bench/install_peers.sh)`);
  process.exit(1);
}
const Ocr = (await import(pathToFileURL(entry).href)).default;
const onnxOptions = { intraOpNumThreads: threads, interOpNumThreads: 1 };
const ocr = await Ocr.create({ onnxOptions });

const frames = fs.readdirSync(framesDir).filter((f) => f.endsWith('.png')).sort();
if (frames.length === 0) {
  console.error(`ocr_peer: no PNG frames in ${framesDir}`);
  process.exit(1);
}
const out = [];
let total = 0;
for (let i = 0; i < frames.length; ++i) {
  const t0 = performance.now();
  const lines = await ocr.detect(path.join(framesDir, frames[i]), { onnxOptions });
  total += performance.now() - t0;
  const texts = lines.map((l) => ({
    text: l.text,
    score: l.mean,
    box: l.box.map((p) => [Math.round(p[0]), Math.round(p[1])]),
  }));
  out.push(JSON.stringify({ pts: Math.round((i * 1e9) / fps), texts }));
}
fs.writeFileSync(outPath, `${out.join('\n')}\n`);
console.log(`peer: ${frames.length} frames, ${(total / frames.length).toFixed(1)} ms a frame, ${threads} threads`);
