#!/usr/bin/python3
"""Single depthwise convolutions as ONNX files: the cases docs/performance.md quotes for the
depthwise kernels (mobile networks' shapes), seeded random weights, written into OUTDIR.

    /usr/bin/python3 bench/depthwise_cases.py build/bench/depthwise
    for m in build/bench/depthwise/*.onnx; do
      build/tools/weave bench $m --threads 1 --repeat 30 --profile | grep 'Conv '
    done

Each file is x [1, C, H, H] -> Conv(group=C, KxK, stride S, pads K//2) -> y; the profile's Conv
line is the depthwise kernel alone (the reorders around it are their own lines). Named
dw<K>_<H>x<H>x<C>[_s2].onnx.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (channels, map size, kernel, stride)
CASES = [
    (16, 112, 3, 1),
    (32, 112, 3, 1),
    (96, 112, 3, 2),
    (64, 56, 3, 1),
    (72, 56, 3, 1),
    (144, 56, 3, 1),
    (144, 56, 3, 2),
    (576, 14, 3, 1),
    (72, 56, 5, 1),
    (72, 56, 5, 2),
    (240, 28, 5, 2),
    (120, 28, 5, 1),
    (480, 14, 5, 1),
    (1152, 7, 5, 1),
    (96, 56, 7, 1),
    (384, 14, 7, 1),
    (768, 7, 7, 1),
]


def write(out, c, h, k, s):
    rng = np.random.default_rng(c * 1000 + h * 10 + k)
    w = numpy_helper.from_array((rng.random((c, 1, k, k), dtype=np.float32) - 0.5), "w")
    o = (h + 2 * (k // 2) - k) // s + 1
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=c, kernel_shape=[k, k], pads=[k // 2] * 4,
                            strides=[s, s])
    g = helper.make_graph([node], "depthwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, o, o])], [w])
    m = helper.make_model(g, producer_name="weave-bench", opset_imports=[helper.make_operatorsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    name = f"dw{k}_{h}x{h}x{c}" + ("_s2" if s == 2 else "") + ".onnx"
    onnx.save(m, os.path.join(out, name))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    for c, h, k, s in CASES:
        write(sys.argv[1], c, h, k, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
