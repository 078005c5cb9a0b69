#!/usr/bin/python3
"""Model skeletons: an ONNX model without its large weights, and the model made whole again with
seeded random weights of the same shape and scale. The broad set is ~600 MB of random weights;
its skeletons are a few MB, so they travel where the models cannot (a machine reached through a
64 MiB transfer, bench/scaling.sh) and are filled there. Latency depends on shapes, not on the
weights' values, as long as activations keep their scale: each stripped tensor keeps its mean and
standard deviation, and the fill draws normal values with them.

  bench/model_skeleton.py strip MODEL.onnx SKELETON.onnx [--min-elements N]
  bench/model_skeleton.py fill SKELETON.onnx MODEL.onnx

strip empties every float32 initializer of at least N elements (default 4096) and writes its
statistics into the tensor's doc_string ("skeleton mean=M std=S"); small tensors (BatchNorm
statistics, shapes, biases) and integer tensors are kept as they are. fill draws each emptied
tensor from a generator seeded by the tensor's name, so one skeleton always fills the same way on
one numpy version. Needs the onnx and numpy Python packages (Debian: python3-onnx, python3-numpy).
"""
import argparse
import sys
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

TAG = 'skeleton'


def strip(src, dst, min_elements):
    model = onnx.load(src)
    kept = emptied = 0
    for t in model.graph.initializer:
        if t.data_type != onnx.TensorProto.FLOAT or t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        if n < min_elements:
            kept += 1
            continue
        a = numpy_helper.to_array(t).astype(np.float64)
        t.ClearField('raw_data')
        t.ClearField('float_data')
        t.doc_string = '%s mean=%.9g std=%.9g' % (TAG, a.mean(), a.std())
        emptied += 1
    onnx.save(model, dst)
    print('%s: %d tensors emptied, %d small ones kept' % (dst, emptied, kept))


def fill(src, dst):
    model = onnx.load(src)
    filled = 0
    for t in model.graph.initializer:
        if not t.doc_string.startswith(TAG + ' '):
            continue
        stats = dict(kv.split('=') for kv in t.doc_string.split()[1:])
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        rng = np.random.default_rng(zlib.crc32(t.name.encode()))
        a = rng.normal(float(stats['mean']), float(stats['std']), n).astype('<f4')
        t.raw_data = a.tobytes()
        t.doc_string = ''
        filled += 1
    onnx.save(model, dst)
    print('%s: %d tensors filled' % (dst, filled))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('strip')
    s.add_argument('model')
    s.add_argument('skeleton')
    s.add_argument('--min-elements', type=int, default=4096)
    f = sub.add_parser('fill')
    f.add_argument('skeleton')
    f.add_argument('model')
    args = ap.parse_args()
    if args.cmd == 'strip':
        strip(args.model, args.skeleton, args.min_elements)
    else:
        fill(args.skeleton, args.model)
    return 0


if __name__ == '__main__':
    sys.exit(main())
