// ONNX Runtime on S streams in one process: the peer side of the many-streams table.
//   node bench/ort_streams.js MODEL.onnx S 'name:1x3x224x224[:int64]' ... [--frames N] [--mode workers|async]
// S InferenceSessions of MODEL (1 intra-op thread, 1 inter-op thread, all graph optimizations),
// each runs one warm-up frame, then all run N frames at once; prints one JSON line with the total
// frames per second and the process's CPU time over the same interval.
//
// --mode workers (the default): one worker_thread per session, so the S sessions compute on S
//   threads concurrently. onnxruntime-node's session.run() is a Promise, but the inference itself
//   runs synchronously on the JavaScript thread that called it (in a setImmediate callback of
//   dist/backend.js), so sessions of one thread take turns.
// --mode async: all S sessions on the main thread, each in its own async loop: what a plain
//   Promise.all gives, kept to show the difference (cpu_per_wall stays near 1).
// Two checks that the sessions overlap, both over the timed interval: cpu_per_wall = process CPU
// seconds / wall seconds, the cores kept busy on average (up to min(S, cores) when they overlap,
// lower on a machine others load too); and busy_threads, the threads of the process that did at
// least 10% of its CPU work (from /proc/self/task/*/stat): S in workers mode, 1 in async mode.
// ORT_NODE may point at the onnxruntime-node package (see bench/ort_common.js).
const fs = require('fs');
const { isMainThread, parentPort, workerData } = require('worker_threads');
const { ort, makeFeeds, runWorkers } = require('./ort_common');

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' };

// CPU clock ticks (user + system) of every thread of this process, by thread id.
function threadTicks() {
  const out = new Map();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');  // fields from 3 (state) on
      out.set(tid, +f[11] + +f[12]);  // utime, stime: fields 14 and 15
    } catch (e) { /* the thread ended */ }
  }
  return out;
}

// Threads that did at least 10% of the CPU work between two threadTicks() snapshots.
function busyThreads(before, after) {
  const used = [];
  for (const [tid, t] of after) used.push(t - (before.get(tid) || 0));
  const total = used.reduce((a, b) => a + b, 0);
  return { busy_threads: used.filter((u) => total > 0 && u >= 0.1 * total).length, thread_ticks: used.filter((u) => u > 0) };
}

if (!isMainThread) {
  // Worker: own session, warm-up, then N frames when told to go.
  (async () => {
    const { model, specs, frames } = workerData;
    const session = await ort.InferenceSession.create(model, sessionOptions);
    const feeds = makeFeeds(specs);
    await session.run(feeds);
    parentPort.postMessage({ ready: true });
    // `on`, not `once`: the listener keeps the worker (and its thread's CPU time) alive until the
    // main thread has read it and terminates the worker.
    parentPort.on('message', async () => {
      const t0 = nowMs();
      for (let i = 0; i < frames; i++) await session.run(feeds);
      parentPort.postMessage({ done: true, ms: nowMs() - t0 });
    });
  })().catch((e) => parentPort.postMessage({ error: String(e) }));
} else {
  const args = process.argv.slice(2);
  let frames = 20, mode = 'workers';
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--frames') frames = +args[++i];
    else if (args[i] === '--mode') mode = args[++i];
    else rest.push(args[i]);
  }
  const [model, sText, ...specs] = rest;
  const streams = +sText;
  if (!model || !(streams >= 1) || !(frames >= 1) || !['workers', 'async'].includes(mode)) {
    console.error('usage: ort_streams.js MODEL.onnx S name:DIMS[:int64] ... [--frames N] [--mode workers|async]');
    process.exit(2);
  }

  const report = (t0, cpu0, ticks0, perStreamMs) => {
    const wallS = (nowMs() - t0) / 1e3;
    const cpu = process.cpuUsage(cpu0);
    const threads = busyThreads(ticks0, threadTicks());
    const cpuS = (cpu.user + cpu.system) / 1e6;
    console.log(JSON.stringify({
      bench: 'ort_streams', peer: 'onnxruntime', model, mode, streams, frames_per_stream: frames,
      intra_op_threads: 1, inter_op_threads: 1, wall_s: wallS, cpu_s: cpuS, cpu_per_wall: cpuS / wallS,
      total_fps: (streams * frames) / wallS, per_stream_ms: perStreamMs, ...threads,
    }));
  };

  (async () => {
    if (mode === 'async') {
      const sessions = [];
      const feeds = makeFeeds(specs);
      for (let k = 0; k < streams; k++) {
        const s = await ort.InferenceSession.create(model, sessionOptions);
        await s.run(feeds);
        sessions.push(s);
      }
      const ticks0 = threadTicks(), t0 = nowMs(), cpu0 = process.cpuUsage();
      const perStream = await Promise.all(sessions.map(async (s) => {
        const a = nowMs();
        for (let i = 0; i < frames; i++) await s.run(feeds);
        return nowMs() - a;
      }));
      report(t0, cpu0, ticks0, perStream);
      return;
    }
    let ticks0, t0, cpu0;
    await runWorkers(__filename, Array.from({ length: streams }, () => ({ model, specs, frames })),
      () => { ticks0 = threadTicks(); t0 = nowMs(); cpu0 = process.cpuUsage(); },
      (perStream) => report(t0, cpu0, ticks0, perStream));
  })().catch((e) => { console.error(String(e)); process.exit(1); });
}
