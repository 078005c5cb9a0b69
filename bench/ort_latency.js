// ONNX Runtime latency on one model, the peer side of the latency table.
//   node bench/ort_latency.js MODEL.onnx 'name:1x3x224x224[:int64]' ... [--threads T] [--iters N] [--warmup W]
// One session (intra-op threads T, inter-op 1, all graph optimizations), W untimed runs, then N
// timed runs on deterministic inputs; prints one JSON line: load_ms, median_ms, min_ms.
// ORT_NODE may point at the onnxruntime-node package (see bench/ort_common.js).
const { ort, makeFeeds } = require('./ort_common');

const args = process.argv.slice(2);
let threads = 1, iters = 20, warmup = 3;
const specs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--threads') threads = +args[++i];
  else if (args[i] === '--iters') iters = +args[++i];
  else if (args[i] === '--warmup') warmup = +args[++i];
  else specs.push(args[i]);
}
const model = specs.shift();
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

(async () => {
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const loadMs = nowMs() - t0;
  const feeds = makeFeeds(specs);
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iters; i++) {
    const a = nowMs();
    await session.run(feeds);
    times.push(nowMs() - a);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(JSON.stringify({
    peer: 'onnxruntime', version: ort.env.versions.node, model, threads, iters, load_ms: loadMs, median_ms: median, min_ms: times[0],
  }));
})().catch((e) => { console.error(String(e)); process.exit(1); });
