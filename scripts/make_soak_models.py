#!/usr/bin/python3
"""The three models of the soak test (tests/soak, scripts/soak.sh), written into OUTDIR:
  soak_classify.onnx  "x" float32[1,3,32,32] -> Conv 3x3 (8) -> Relu -> MaxPool 2 -> Conv 3x3 (16)
                      -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> "logits" float32[1,10]
  soak_pair.onnx      "a", "b" float32[1,3,32,32] -> Sub -> Conv 3x3 (8) -> Relu
                      -> GlobalAveragePool -> "diff" float32[1,8,1,1]
  soak_detect.onnx    "x" float32[batch,3,32,32] -> Conv 4x4 stride 4 (6) -> Sigmoid -> Reshape
                      -> Transpose -> Mul -> "boxes" float32[batch,64,6]: 64 YOLOv5-style rows
                      (cx, cy, w, h in input pixels, objectness, one class) for weavemeta mode=yolo,
                      with a dynamic batch for weaveinfer batch-size
Small on purpose: many frames per second on 2 cores, so a run of minutes pushes tens of
thousands of buffers through every element. Seeded random weights.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)


def w(shape, name):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def save(graph, path):
    m = helper.make_model(graph, producer_name="weave-soak", opset_imports=[helper.make_operatorsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    n = helper.make_node
    img = [1, 3, 32, 32]
    save(helper.make_graph([
        n("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["r2"]),
        n("GlobalAveragePool", ["r2"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", "w3", "b3"], ["logits"], transB=1)], "soak_classify",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, img)],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [w((8, 3, 3, 3), "w1"), w((8,), "b1"), w((16, 8, 3, 3), "w2"), w((16,), "b2"), w((10, 16), "w3"),
         w((10,), "b3")]), os.path.join(out, "soak_classify.onnx"))
    save(helper.make_graph([
        n("Sub", ["a", "b"], ["d"]),
        n("Conv", ["d", "w1", "b1"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["r"]),
        n("GlobalAveragePool", ["r"], ["diff"])], "soak_pair",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, img),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, img)],
        [helper.make_tensor_value_info("diff", TensorProto.FLOAT, [1, 8, 1, 1])],
        [w((8, 3, 3, 3), "w1"), w((8,), "b1")]), os.path.join(out, "soak_pair.onnx"))
    scale = numpy_helper.from_array(np.array([32, 32, 16, 16, 1, 1], dtype=np.float32), "scale")
    shape = numpy_helper.from_array(np.array([0, 6, 64], dtype=np.int64), "shape")
    save(helper.make_graph([
        n("Conv", ["x", "w1", "b1"], ["c"], kernel_shape=[4, 4], strides=[4, 4]),
        n("Sigmoid", ["c"], ["s"]),
        n("Reshape", ["s", "shape"], ["r"]),
        n("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
        n("Mul", ["t", "scale"], ["boxes"])], "soak_detect",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", 64, 6])],
        [w((6, 3, 4, 4), "w1"), w((6,), "b1"), scale, shape]), os.path.join(out, "soak_detect.onnx"))


if __name__ == "__main__":
    main()
