// The classifier of bench/density.sh built on ONNX Runtime: what bench_density classify runs per
// camera frame, as an application would write it with onnxruntime-node.
//   node bench/ort_camera.js MODEL.onnx FRAMES_DIR S [--frames N] [--size 224]
// S worker threads, one per stream, each with its own InferenceSession (1 intra-op thread, all
// graph optimizations). A worker decodes the PNG frames of FRAMES_DIR into RGB once (not timed),
// then, for N frames round and round: resizes the 1280x720 RGB frame to SIZE x SIZE with sharp
// (libvips, triangle filter, one thread), normalizes it with ImageNet's mean and std into a float32
// NCHW tensor, runs the model and takes the top class. Prints one JSON line: total frames per
// second over all streams (after one warm-up frame each) and the process's CPU time over the same
// interval. Needs onnxruntime-node and sharp (bash bench/install_peers.sh; ORT_NODE, SHARP_NODE
// may point at the packages).
const fs = require('fs');
const path = require('path');
const { isMainThread, parentPort, workerData } = require('worker_threads');
const { ort, runWorkers } = require('./ort_common');

const root = path.resolve(__dirname, '..');
const sharp = require(process.env.SHARP_NODE || path.join(root, 'third_party/npm/node_modules/sharp'));
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const mean = [0.485, 0.456, 0.406];
const std = [0.229, 0.224, 0.225];

async function classify(session, inputName, frame, size, tensor) {
  const { data } = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .resize(size, size, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = size * size;
  const out = tensor.data;
  for (let c = 0; c < 3; c++) {
    const scale = 1 / (255 * std[c]), shift = -mean[c] / std[c], base = c * plane;
    for (let i = 0, j = c; i < plane; i++, j += 3) out[base + i] = data[j] * scale + shift;
  }
  const results = await session.run({ [inputName]: tensor });
  const scores = results[session.outputNames[0]].data;
  let best = 0;
  for (let k = 1; k < scores.length; k++) if (scores[k] > scores[best]) best = k;
  return best;
}

if (!isMainThread) {
  (async () => {
    const { model, framesDir, frames, size } = workerData;
    sharp.concurrency(1);
    sharp.cache(false);
    const session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const inputName = session.inputNames[0];
    const pngs = fs.readdirSync(framesDir).filter((f) => f.endsWith('.png')).sort();
    const images = [];
    for (const f of pngs) {
      const { data, info } = await sharp(path.join(framesDir, f)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      images.push({ data, width: info.width, height: info.height });
    }
    const tensor = new ort.Tensor('float32', new Float32Array(3 * size * size), [1, 3, size, size]);
    await classify(session, inputName, images[0], size, tensor);
    parentPort.postMessage({ ready: true });
    parentPort.on('message', async () => {
      const t0 = nowMs();
      for (let i = 0; i < frames; i++) await classify(session, inputName, images[i % images.length], size, tensor);
      parentPort.postMessage({ done: true, ms: nowMs() - t0 });
    });
  })().catch((e) => parentPort.postMessage({ error: String(e) }));
} else {
  const args = process.argv.slice(2);
  let frames = 150, size = 224;
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--frames') frames = +args[++i];
    else if (args[i] === '--size') size = +args[++i];
    else rest.push(args[i]);
  }
  const [model, framesDir, sText] = rest;
  const streams = +sText;
  if (!model || !framesDir || !(streams >= 1) || !(frames >= 1) || !(size >= 1)) {
    console.error('usage: node bench/ort_camera.js MODEL.onnx FRAMES_DIR S [--frames N] [--size 224]');
    process.exit(2);
  }
  (async () => {
    let t0, cpu0;
    await runWorkers(
      __filename, Array.from({ length: streams }, () => ({ model, framesDir, frames, size })),
      () => { t0 = nowMs(); cpu0 = process.cpuUsage(); },
      (perStream) => {
        const wallS = (nowMs() - t0) / 1e3;
        const cpu = process.cpuUsage(cpu0);
        const cpuS = (cpu.user + cpu.system) / 1e6;
        console.log(JSON.stringify({
          bench: 'ort_camera', peer: 'onnxruntime', model, streams, frames_per_stream: frames, size,
          wall_s: wallS, cpu_s: cpuS, cpu_per_wall: cpuS / wallS, total_fps: (streams * frames) / wallS,
          per_stream_ms: perStream,
        }));
      });
  })().catch((e) => { console.error(`ort_camera: ${e.message}`); process.exit(1); });
}
