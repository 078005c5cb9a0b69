#!/usr/bin/env python3
"""The many-core scaling table: weave against ONNX Runtime (Python) at 1, 2, 4, 8 and 16 threads,
interleaved, on a machine with many cores. bench/scaling.sh packs what it needs (the weave
binary, its non-system libraries, the models as skeletons: bench/model_skeleton.py) into one
folder that travels to such a machine; this script runs there:

  python3 scaling.py --pack DIR --out OUT [--work DIR] [--threads 1,2,4,8,16] [--rounds 3]
                     [--budget-s 420] [--only NAME,...]

It fills the skeletons into WORK (default /tmp/weave-scaling), then for every round, model and thread count runs weave
(`weave bench MODEL --threads T --json`, a fresh process, its own pool of exactly T threads)
and ONNX Runtime (an InferenceSession with intra_op_num_threads=T, inter_op_num_threads=1, all
graph optimizations; a session per cell) on the same deterministic input (floats sin(i)/2); the
runtime that starts alternates from cell to cell. A cell is the median over rounds of each
run's median latency. A round is started only while the time budget lasts, and one whose
cells are not all done is not counted. Writes OUT/scaling.json and OUT/scaling.md (the table,
the geometric mean of weave / ONNX Runtime per thread count, and each model whose weave latency
rises from 8 to 16 threads), then per-operator profiles (`weave bench --profile`) at 8 and 16
threads of the models that scale worst.
Needs numpy, onnx and onnxruntime in this Python.
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np


def log(*a):
    print(time.strftime('%H:%M:%S'), *a, flush=True)


def fill_models(pack, out):
    sys.path.insert(0, os.path.join(pack, 'bench'))
    import model_skeleton
    names = []
    for f in sorted(os.listdir(os.path.join(pack, 'skeletons'))):
        if f.endswith('.onnx'):
            dst = os.path.join(out, f)
            if not os.path.exists(dst):
                model_skeleton.fill(os.path.join(pack, 'skeletons', f), dst)
            names.append(f[:-5])
    return names


def input_feed(session, shape):
    feed = {}
    for i in session.get_inputs():
        dims = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        if shape and i.name == shape[0]:
            dims = [int(d) for d in shape[1].split('x')]
        n = math.prod(dims)
        feed[i.name] = (np.sin(np.arange(n, dtype=np.float64)) / 2).astype(np.float32).reshape(dims)
    return feed


def ort_cell(ort, path, shape, threads, iters, warmup):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
    feed = input_feed(s, shape)
    for _ in range(warmup):
        s.run(None, feed)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        s.run(None, feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def weave_cell(pack, path, shape, threads, iters, warmup, profile=False, exe='weave'):
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(pack, 'lib'))
    cmd = [os.path.join(pack, exe), 'bench', path, '--threads', str(threads), '--iters', str(iters),
           '--warmup', str(warmup), '--json']
    if shape:
        cmd += ['--shape', '%s=%s' % shape]
    if profile:
        cmd.append('--profile')
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError('weave bench %s: %s' % (os.path.basename(path), p.stderr.strip()[-300:]))
    if profile:
        return p.stdout
    return json.loads(p.stdout.strip().splitlines()[-1])['median_ms']


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def table(names, threads, cells, machine):
    def med(name, t, rt):
        v = cells.get('%s/%d/%s' % (name, t, rt), [])
        return statistics.median(v) if v else None
    lines = ['Machine: %s' % machine, '',
             '| model | ' + ' | '.join('weave %dT ms' % t for t in threads) + ' | ' +
             ' | '.join('ORT %dT ms' % t for t in threads) + ' | ' +
             ' | '.join('ratio %dT' % t for t in threads) + ' |',
             '|---' * (1 + 3 * len(threads)) + '|']
    ratios = {t: [] for t in threads}
    rising = []
    for n in names:
        w = [med(n, t, 'weave') for t in threads]
        o = [med(n, t, 'ort') for t in threads]
        r = []
        for t, a, b in zip(threads, w, o):
            if a and b:
                ratios[t].append(a / b)
                r.append('%.2f' % (a / b))
            else:
                r.append('-')
        if 8 in threads and 16 in threads:
            a8, a16 = w[threads.index(8)], w[threads.index(16)]
            if a8 and a16 and a16 > a8:
                rising.append('%s (%.2f -> %.2f ms)' % (n, a8, a16))
        fmt = lambda x: '%.2f' % x if x else '-'
        lines.append('| %s | %s | %s | %s |' % (n, ' | '.join(map(fmt, w)), ' | '.join(map(fmt, o)), ' | '.join(r)))
    lines.append('| geometric mean | ' + ' | ' * (2 * len(threads) - 1) + ' | ' +
                 ' | '.join('%.2f' % geomean(ratios[t]) for t in threads) + ' |')
    lines += ['', 'weave slower at 16 threads than at 8: ' + (', '.join(rising) if rising else 'none')]
    return '\n'.join(lines) + '\n', {t: geomean(ratios[t]) for t in threads}


def before_table(names, threads, cells):
    def med(name, t, rt):
        v = cells.get('%s/%d/%s' % (name, t, rt), [])
        return statistics.median(v) if v else None
    lines = ['', 'weave against weave-before (the same cells, interleaved): ms now / ms before', '',
             '| model | ' + ' | '.join('%dT' % t for t in threads) + ' |', '|---' * (1 + len(threads)) + '|']
    per_t = {t: [] for t in threads}
    for n in names:
        row = []
        for t in threads:
            a, b = med(n, t, 'weave'), med(n, t, 'before')
            if a and b:
                per_t[t].append(a / b)
                row.append('%.2f' % (a / b))
            else:
                row.append('-')
        lines.append('| %s | %s |' % (n, ' | '.join(row)))
    lines.append('| geometric mean | ' + ' | '.join('%.2f' % geomean(per_t[t]) for t in threads) + ' |')
    return '\n'.join(lines) + '\n'


def machine_name():
    model = ''
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    return '%s, %d logical CPUs' % (model or platform.processor(), os.cpu_count())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pack', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--work', default='/tmp/weave-scaling')
    ap.add_argument('--threads', default='1,2,4,8,16')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iters', type=int, default=15)
    ap.add_argument('--budget-s', type=float, default=420)
    ap.add_argument('--only', default='', help='comma-separated model names')
    ap.add_argument('--profiles', type=int, default=3, help='models to profile at 8 and 16 threads')
    args = ap.parse_args()
    start = time.time()
    import onnxruntime as ort
    threads = [int(t) for t in args.threads.split(',')]
    models = args.work
    os.makedirs(models, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    names = fill_models(args.pack, models)
    shapes = {}  # model -> (input, dims), from bench/scaling.sh
    shapes_file = os.path.join(args.pack, 'shapes.txt')
    if os.path.exists(shapes_file):
        for line in open(shapes_file):
            if line.strip():
                n, i, d = line.split()
                shapes[n] = (i, d)
    if args.only:
        names = [n for n in names if n in args.only.split(',')]
    machine = machine_name()
    log('machine:', machine, '| onnxruntime', ort.__version__, '| models:', len(names), '| filled in %.0f s' % (time.time() - start))
    # A second weave binary (DIR/weave-before, e.g. the commit before a change) runs beside the
    # first in every cell: its own table compares the two.
    baseline = os.path.exists(os.path.join(args.pack, 'weave-before'))
    cells = {}
    rounds_done = 0
    failed = {}
    for r in range(args.rounds):
        if r > 0 and time.time() - start > args.budget_s * r / (r + 0.8):
            log('time budget: stopping after %d rounds' % rounds_done)
            break
        pending = {}
        k = r
        for n in names:
            path = os.path.join(models, n + '.onnx')
            for t in threads:
                order = ['weave', 'ort'] if k % 2 == 0 else ['ort', 'weave']
                if baseline:
                    order.insert(1, 'before')
                k += 1
                for rt in order:
                    if (n, rt) in failed:
                        continue
                    try:
                        if rt == 'ort':
                            ms = ort_cell(ort, path, shapes.get(n), t, args.iters, 2)
                        else:
                            ms = weave_cell(args.pack, path, shapes.get(n), t, args.iters, 2,
                                            exe='weave' if rt == 'weave' else 'weave-before')
                    except Exception as e:  # a model one runtime cannot run: reported, not fatal
                        failed[(n, rt)] = str(e)[-300:]
                        log('FAILED', n, rt, failed[(n, rt)])
                        continue
                    pending.setdefault('%s/%d/%s' % (n, t, rt), []).append(ms)
            log('round %d: %s done' % (r + 1, n))
        for key, v in pending.items():
            cells.setdefault(key, []).extend(v)
        rounds_done += 1
    md, gm = table(names, threads, cells, machine)
    if baseline:
        md += before_table(names, threads, cells)
    md = ('Rounds: %d; cells are medians over rounds of each run\'s median of %d runs.\n\n' % (rounds_done, args.iters)) + md
    if failed:
        md += '\nFailed: ' + '; '.join('%s on %s: %s' % (rt, n, why) for (n, rt), why in failed.items()) + '\n'
    with open(os.path.join(args.out, 'scaling.md'), 'w') as f:
        f.write(md)
    with open(os.path.join(args.out, 'scaling.json'), 'w') as f:
        json.dump({'machine': machine, 'onnxruntime': ort.__version__, 'threads': threads, 'rounds': rounds_done,
                   'cells': cells, 'geomean': gm, 'failed': {'%s/%s' % k: v for k, v in failed.items()}}, f, indent=1)
    print(md, flush=True)
    # Profiles of the models whose weave latency scales worst from 8 to 16 threads.
    if args.profiles and 8 in threads and 16 in threads:
        def scale(n):
            a = cells.get('%s/8/weave' % n)
            b = cells.get('%s/16/weave' % n)
            return statistics.median(b) / statistics.median(a) if a and b else 0
        worst = sorted(names, key=scale, reverse=True)[:args.profiles]
        with open(os.path.join(args.out, 'profiles.txt'), 'w') as f:
            for n in worst:
                for t in (8, 16):
                    if time.time() - start > args.budget_s + 60:
                        break
                    f.write('=== %s, %d threads (16T/8T %.2f)\n' % (n, t, scale(n)))
                    try:
                        f.write(weave_cell(args.pack, os.path.join(models, n + '.onnx'), shapes.get(n), t, 10, 2,
                                                profile=True))
                    except Exception as e:
                        f.write('failed: %s\n' % e)
        log('profiles written for', ', '.join(worst))
    log('done in %.0f s' % (time.time() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
