#!/usr/bin/python3
"""Latency of one model in OpenCV DNN or PyTorch: the Python peers of the latency table.

  py_latency.py opencv MODEL.onnx NAME:DIMS[:int64] ... [--threads T] [--iters N] [--warmup W]
  py_latency.py torch  MODEL.onnx NAME:DIMS[:int64] ... --arch ARCH [--cache DIR] [--threads T] ...

opencv: cv2.dnn.readNetFromONNX(MODEL), OpenCV's own backend on the CPU, cv2.setNumThreads(T);
        every model output is computed (forward of all unconnected output layers), like ORT.
torch:  PyTorch cannot read ONNX, so the same architecture runs in eager mode: ARCH is resnet18,
        mobilenet_v2, squeezenet1_1 (torchvision, the seeded and calibrated weights of
        scripts/export_models.py, cached in DIR as a state dict) or lstm_lm (its LstmLM, seeded).
        torch.set_num_threads(T), torch.set_num_interop_threads(1), torch.inference_mode().

Inputs are those of bench/ort_common.js: floats sin(i)/2, int64 i % 8. W untimed runs, then N
timed runs; prints one JSON line: load_ms, median_ms, min_ms. A model the runtime cannot load or
run exits with status 3 and the runtime's own message on stderr (bench/run.py reports it).
Debian's /usr/bin/python3 (python3-opencv, python3-torch, python3-torchvision).
"""
import argparse
import importlib.util
import json
import math
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANNOT = 3  # exit status: the runtime cannot load or run this model


def make_inputs(specs):
    import numpy as np
    out = []
    for sp in specs:
        parts = sp.split(':')
        name, dims = parts[0], [int(d) for d in parts[1].split('x')]
        n = math.prod(dims)
        if len(parts) > 2 and parts[2] == 'int64':
            a = (np.arange(n, dtype=np.int64) % 8).reshape(dims)
        else:
            a = (np.sin(np.arange(n, dtype=np.float64)) * 0.5).astype(np.float32).reshape(dims)
        out.append((name, a))
    return out


def time_runs(run, iters, warmup):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


def opencv_runner(model, inputs, threads):
    import cv2
    cv2.setNumThreads(threads)
    net = cv2.dnn.readNetFromONNX(model)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    outs = net.getUnconnectedOutLayersNames()

    def run():
        for name, a in inputs:
            net.setInput(a, name)
        net.forward(outs)
    return run, {'version': cv2.__version__, 'threads_api': 'cv2.setNumThreads(%d)' % threads}


def export_models_module():
    spec = importlib.util.spec_from_file_location('export_models', os.path.join(ROOT, 'scripts/export_models.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def torch_module(arch, cache):
    import torch
    import torchvision
    em = export_models_module()
    if arch == 'lstm_lm':
        return em.seeded_lstm_lm()
    if arch not in ('resnet18', 'mobilenet_v2', 'squeezenet1_1'):
        raise ValueError('no PyTorch definition of %s here' % arch)
    # Calibrating BatchNorm takes seconds: keep the result while export_models.py is unchanged.
    path = os.path.join(cache, arch + '.pt') if cache else None
    src = os.path.join(ROOT, 'scripts/export_models.py')
    if path and os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(src):
        model = getattr(torchvision.models, arch)(weights=None)
        model.load_state_dict(torch.load(path))
        return model.eval()
    model = em.calibrated_torchvision(arch)
    if path:
        os.makedirs(cache, exist_ok=True)
        torch.save(model.state_dict(), path + '.tmp')
        os.replace(path + '.tmp', path)
    return model


def torch_runner(arch, cache, inputs, threads):
    import torch
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    model = torch_module(arch, cache).eval()
    args = [torch.from_numpy(a) for _, a in inputs]

    def run():
        with torch.inference_mode():
            model(*args)
    # How Debian built it matters (e.g. BLAS_INFO=generic: no optimized BLAS behind non-oneDNN ops).
    config = torch.__config__.show()
    build = re.findall(r'BLAS_INFO=\w+|USE_MKLDNN=\w+|CPU capability usage: \w+', config)
    return run, {'version': torch.__version__, 'build': ', '.join(build), 'arch': arch,
                 'threads_api': 'torch.set_num_threads(%d), torch.set_num_interop_threads(1)' % threads}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runtime', choices=('opencv', 'torch'))
    ap.add_argument('model')
    ap.add_argument('inputs', nargs='+')
    ap.add_argument('--arch')
    ap.add_argument('--cache')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--iters', type=int, default=20)
    ap.add_argument('--warmup', type=int, default=2)
    a = ap.parse_args()
    inputs = make_inputs(a.inputs)
    t0 = time.perf_counter()
    try:
        if a.runtime == 'opencv':
            run, info = opencv_runner(a.model, inputs, a.threads)
        else:
            run, info = torch_runner(a.arch, a.cache, inputs, a.threads)
        run()  # the first run is part of loading: some runtimes finish setting up in it
    except Exception as e:  # the runtime's own message is the useful part
        print('%s cannot run %s: %s' % (a.runtime, os.path.basename(a.model), str(e).strip()), file=sys.stderr)
        sys.exit(CANNOT)
    load_ms = (time.perf_counter() - t0) * 1e3
    med, mn = time_runs(run, a.iters, a.warmup)
    print(json.dumps({'peer': a.runtime, 'model': a.model, 'threads': a.threads, 'iters': a.iters,
                      'load_ms': load_ms, 'median_ms': med, 'min_ms': mn, **info}))


if __name__ == '__main__':
    main()
