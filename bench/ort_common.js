// Shared by bench/ort_latency.js and bench/ort_sessions.js: the onnxruntime-node package and the
// deterministic inputs both feed to a model.
// ORT_NODE may point at the onnxruntime-node package (default: require('onnxruntime-node')).
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

// Inputs from specs 'name:1x3x224x224[:int64]': floats sin(i)/2, or int64 i % 8.
function makeFeeds(specs) {
  const feeds = {};
  for (const sp of specs) {
    const [name, shp, ty] = sp.split(':');
    const dims = shp.split('x').map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    if (ty === 'int64') feeds[name] = new ort.Tensor('int64', BigInt64Array.from({ length: count }, (_, i) => BigInt(i % 8)), dims);
    else feeds[name] = new ort.Tensor('float32', Float32Array.from({ length: count }, (_, i) => Math.sin(i) * 0.5), dims);
  }
  return feeds;
}

// One worker_thread per entry of `data`, running `file` with that workerData: each posts
// {ready: true} once warmed up, then {done: true, ms} after it is told 'go' (or {error}). Waits
// until every worker is ready, calls onStart() right before telling them all to go and
// onEnd(ms per worker) when all are done, while the workers still live (their threads' CPU time
// can still be read); then terminates them.
async function runWorkers(file, data, onStart, onEnd) {
  const { Worker } = require('worker_threads');
  const workers = data.map((workerData) => new Worker(file, { workerData }));
  try {
    await Promise.all(workers.map((w) => new Promise((resolve, reject) => {
      w.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve()));
      w.once('error', reject);
    })));
    const done = workers.map((w) => new Promise((resolve, reject) => {
      w.on('message', (m) => (m.error ? reject(new Error(m.error)) : m.done && resolve(m.ms)));
      w.on('error', reject);
    }));
    onStart();
    for (const w of workers) w.postMessage('go');
    onEnd(await Promise.all(done));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

module.exports = { ort, makeFeeds, runWorkers };
