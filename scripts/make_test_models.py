#!/usr/bin/python3
"""Tiny ONNX models for the GStreamer element tests (tests/gst), written into OUTDIR.

Weights are fixed small integers so tests can check outputs by hand:
  matmul_dyn.onnx   "Input.1" float32[batch,4] -> "Scores" = Input.1 @ W   float32[batch,3]
                    W[i][j] = i + j  (rows i=0..3, cols j=0..2)
  two_inputs.onnx   "a" float32[2,3], "b" float32[3,2] -> "y" = a @ b      float32[2,2]
  two_outputs.onnx  "x" float32[1,4] -> "logits" = x @ W float32[1,3] (W as above),
                                        "probs" = Softmax(x, axis=-1)      float32[1,4]
  square.onnx       "x" float32[1,4] -> "x_out" = x @ P float32[1,4], P a permutation
                    (x_out = [x3, x0, x1, x2]); chains of it stay exact.
  matmul_dyn2.onnx  matmul_dyn with W2 = 2 W: the same inputs and outputs, other results
                    (a model file replaced under a running element).
  relu_dyn.onnx     "x" float32[batch,4] -> "y" = Relu(x) @ W  float32[batch,3]: an intermediate
                    whose size follows the dynamic batch (the arena a bound plans).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, outdir, name):
    model.opset_import[0].version = 13
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(outdir, name))


def w43():
    return np.array([[i + j for j in range(3)] for i in range(4)], dtype=np.float32)


def matmul_dyn(outdir, name="matmul_dyn.onnx", scale=1.0):
    x = helper.make_tensor_value_info("Input.1", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("Scores", TensorProto.FLOAT, ["batch", 3])
    w = numpy_helper.from_array(w43() * np.float32(scale), "W")
    node = helper.make_node("MatMul", ["Input.1", "W"], ["Scores"], name="mm")
    g = helper.make_graph([node], "matmul_dyn", [x], [y], [w])
    save(helper.make_model(g, producer_name="weave-tests"), outdir, name)


def relu_dyn(outdir):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
    w = numpy_helper.from_array(w43(), "W")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "W"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "relu_dyn", [x], [y], [w])
    save(helper.make_model(g, producer_name="weave-tests"), outdir, "relu_dyn.onnx")


def two_inputs(outdir):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    g = helper.make_graph([node], "two_inputs", [a, b], [y])
    save(helper.make_model(g, producer_name="weave-tests"), outdir, "two_inputs.onnx")


def two_outputs(outdir):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 3])
    probs = helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 4])
    w = numpy_helper.from_array(w43(), "W")
    n1 = helper.make_node("MatMul", ["x", "W"], ["logits"], name="mm")
    n2 = helper.make_node("Softmax", ["x"], ["probs"], name="sm", axis=-1)
    g = helper.make_graph([n1, n2], "two_outputs", [x], [logits, probs], [w])
    save(helper.make_model(g, producer_name="weave-tests"), outdir, "two_outputs.onnx")


def square(outdir):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1, 4])
    p = np.zeros((4, 4), dtype=np.float32)
    for i in range(4):
        p[i][(i + 1) % 4] = 1.0  # out[j] = x[j-1]
    w = numpy_helper.from_array(p, "P")
    node = helper.make_node("MatMul", ["x", "P"], ["x_out"], name="mm")
    g = helper.make_graph([node], "square", [x], [y], [w])
    save(helper.make_model(g, producer_name="weave-tests"), outdir, "square.onnx")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    matmul_dyn(outdir)
    matmul_dyn(outdir, "matmul_dyn2.onnx", 2.0)
    relu_dyn(outdir)
    two_inputs(outdir)
    two_outputs(outdir)
    square(outdir)


if __name__ == "__main__":
    main()
