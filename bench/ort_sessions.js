// Memory of N ONNX Runtime sessions of one model side by side in one node process.
//   node bench/ort_sessions.js MODEL.onnx N 'name:1x3x224x224[:int64]' ... [--threads T]
// Creates N InferenceSession of MODEL, runs each once, keeps all alive and prints one JSON line
// with the process's resident set now (VmRSS) and at its peak (VmHWM), from /proc/self/status.
// N = 0 only loads onnxruntime-node: that is the baseline (node + the ORT library) that the
// benchmark subtracts to compare runtimes rather than interpreters.
// ORT_NODE may point at the onnxruntime-node package (see bench/ort_common.js).
const fs = require('fs');
const { ort, makeFeeds } = require('./ort_common');

function procMemory() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = (key) => {
    const m = status.match(new RegExp('^' + key + ':\\s+(\\d+) kB', 'm'));
    return m ? +m[1] : 0;
  };
  return { vm_hwm_kb: kb('VmHWM'), vm_rss_kb: kb('VmRSS'), rss_anon_kb: kb('RssAnon'), rss_file_kb: kb('RssFile') };
}

const args = process.argv.slice(2);
let threads = 1;
const rest = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--threads') threads = +args[++i];
  else rest.push(args[i]);
}
const [model, nText, ...specs] = rest;
const n = +nText;

(async () => {
  const start = procMemory();
  const feeds = makeFeeds(specs);
  const sessions = [];
  let createMs = 0;
  for (let k = 0; k < n; k++) {
    const t0 = process.hrtime.bigint();
    const s = await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    createMs += Number(process.hrtime.bigint() - t0) / 1e6;
    await s.run(feeds);
    sessions.push(s);
  }
  if (global.gc) global.gc();
  const end = procMemory();
  console.log(JSON.stringify({
    bench: 'ort_sessions_mem', peer: 'onnxruntime', model, n, threads, start, end,
    mean_create_ms: n ? +(createMs / n).toFixed(2) : 0,
  }));
  for (const s of sessions) if (s.release) await s.release();
})().catch((e) => { console.error(String(e)); process.exit(1); });
