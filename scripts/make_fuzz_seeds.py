#!/usr/bin/python3
"""Seed corpora for the fuzzers in fuzz/ (docs/reliability.md), written into OUTDIR/<target>/.

  onnx/        the tiny test models of scripts/make_test_models.py, plus one small model per op
               family the kernels implement (conv, pooling, norms, gemm, rnn, resize, shape ops,
               reductions, elementwise), with small seeded weights; some params >= 1 KiB so that
               their artifacts use every codec
  npy/         NumPy's own writer: every dtype the reader accepts, versions 1.0/2.0/3.0,
               scalars, empty and rank-8 arrays, a big-endian and a Fortran-order array
  caps/        caps text as gst-launch lines and elements write it (first byte 0: the text form)
  shape_text/  max-shape / --shape texts
The .weave and codec seeds are made from the onnx/ seeds by the fuzz build's make_fuzz_seeds
program (scripts/fuzz.sh runs both). Everything here is generated; nothing is downloaded.
"""
import io
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)


def w(shape, name):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, producer_name="weave-fuzz-seeds", opset_imports=[helper.make_operatorsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def op_models():
    n = helper.make_node
    ms = {}
    ms["conv_relu_pool"] = model("conv_relu_pool", [
        n("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c", "s", "bb", "m", "v"], ["bn"]),
        n("Relu", ["bn"], ["r"]),
        n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p"], ["y"])],
        [vi("x", [1, 4, 8, "w"])], [vi("y", [1, 16, 1, 1])],
        [w((16, 4, 3, 3), "w"), w((16,), "b"), w((16,), "s"), w((16,), "bb"), w((16,), "m"),
         numpy_helper.from_array(np.ones(16, np.float32), "v")])
    ms["convtranspose_avgpool"] = model("convtranspose_avgpool", [
        n("ConvTranspose", ["x", "w"], ["c"], strides=[2, 2], kernel_shape=[2, 2]),
        n("AveragePool", ["c"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("InstanceNormalization", ["a", "s", "b"], ["y"])],
        [vi("x", [1, 8, 4, 4])], [vi("y", [1, 8, 8, 8])],
        [w((8, 8, 2, 2), "w"), w((8,), "s"), w((8,), "b")])
    ms["gemm_softmax"] = model("gemm_softmax", [
        n("Flatten", ["x"], ["f"], axis=1),
        n("Gemm", ["f", "w", "b"], ["g"], transB=1),
        n("LeakyRelu", ["g"], ["l"], alpha=0.1),
        n("Softmax", ["l"], ["y"], axis=-1),
        n("TopK", ["y", "k"], ["v", "i"], axis=-1)],
        [vi("x", ["n", 2, 4, 4])], [vi("y", ["n", 10]), vi("v", ["n", 3]), vi("i", ["n", 3], TensorProto.INT64)],
        [w((10, 32), "w"), w((10,), "b"), numpy_helper.from_array(np.array([3], np.int64), "k")])
    ms["lstm"] = model("lstm", [
        n("LSTM", ["x", "W", "R", "B"], ["y", "yh", "yc"], hidden_size=8),
        n("Squeeze", ["yh", "ax"], ["h"])],
        [vi("x", ["t", 1, 4])], [vi("h", [1, 8]), vi("y", ["t", 1, 1, 8])],
        [w((1, 32, 4), "W"), w((1, 32, 8), "R"), w((1, 64), "B"), numpy_helper.from_array(np.array([0], np.int64), "ax")])
    ms["shape_ops"] = model("shape_ops", [
        n("Shape", ["x"], ["s"]),
        n("Gather", ["s", "i0"], ["d0"], axis=0),
        n("Concat", ["d0", "m1"], ["ns"], axis=0),
        n("Reshape", ["x", "ns"], ["r"]),
        n("Transpose", ["r"], ["t"], perm=[1, 0]),
        n("Slice", ["t", "st", "en", "axs"], ["sl"]),
        n("Unsqueeze", ["sl", "axs"], ["u"]),
        n("Expand", ["u", "es"], ["e"]),
        n("Tile", ["e", "rep"], ["ti"]),
        n("Pad", ["ti", "pads"], ["pd"], mode="constant"),
        n("Split", ["pd"], ["y", "z"], axis=1),
        n("Cast", ["z"], ["zc"], to=TensorProto.INT64),
        n("Where", ["cond", "y", "y"], ["yw"])],
        [vi("x", [2, 3, 4]), vi("cond", [1], TensorProto.BOOL)], [vi("yw", ["a", "b", "c"]), vi("zc", ["a", "b", "c"], TensorProto.INT64)],
        [numpy_helper.from_array(np.array([0], np.int64), "i0"), numpy_helper.from_array(np.array([-1], np.int64), "m1"),
         numpy_helper.from_array(np.array([0], np.int64), "st"), numpy_helper.from_array(np.array([2], np.int64), "en"),
         numpy_helper.from_array(np.array([0], np.int64), "axs"), numpy_helper.from_array(np.array([2, 2, 2], np.int64), "es"),
         numpy_helper.from_array(np.array([1, 1, 2], np.int64), "rep"),
         numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 1], np.int64), "pads")])
    ms["resize_depth"] = model("resize_depth", [
        n("Resize", ["x", "", "sc"], ["r"], mode="linear"),
        n("DepthToSpace", ["r"], ["d"], blocksize=2),
        n("SpaceToDepth", ["d"], ["s"], blocksize=2),
        n("Resize", ["s", "", "", "sz"], ["y"], mode="nearest")],
        [vi("x", [1, 4, 3, 3])], [vi("y", [1, 4, 5, 5])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
         numpy_helper.from_array(np.array([1, 4, 5, 5], np.int64), "sz")])
    ms["reduce_elementwise"] = model("reduce_elementwise", [
        n("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
        n("Sub", ["x", "m"], ["d"]),
        n("Mul", ["d", "d"], ["sq"]),
        n("ReduceSum", ["sq", "ax"], ["ss"], keepdims=1),
        n("Add", ["ss", "eps"], ["se"]),
        n("Sqrt", ["se"], ["sd"]),
        n("Div", ["d", "sd"], ["nz"]),
        n("Pow", ["nz", "two"], ["p"]),
        n("Clip", ["p", "lo", "hi"], ["c"]),
        n("Sigmoid", ["c"], ["sg"]),
        n("Tanh", ["sg"], ["th"]),
        n("ArgMax", ["th"], ["am"], axis=1),
        n("Greater", ["th", "lo"], ["gt"]),
        n("Not", ["gt"], ["ng"]),
        n("ReduceMax", ["th"], ["y"], axes=[2], keepdims=0)],
        [vi("x", [2, 5, 3])], [vi("y", [2, 5]), vi("am", [2, 1, 3], TensorProto.INT64), vi("ng", [2, 5, 3], TensorProto.BOOL)],
        [numpy_helper.from_array(np.array([1], np.int64), "ax"), numpy_helper.from_array(np.array([1e-5], np.float32), "eps"),
         numpy_helper.from_array(np.array([2], np.float32), "two"), numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")])
    ms["layernorm_gelu"] = model("layernorm_gelu", [
        n("MatMul", ["x", "w"], ["h"]),
        n("LayerNormalization", ["h", "g", "b"], ["ln"], axis=-1),
        n("Erf", ["ln"], ["e"]),
        n("HardSwish", ["e"], ["hs"]),
        n("PRelu", ["hs", "slope"], ["y"])],
        [vi("x", [1, "s", 16])], [vi("y", [1, "s", 32])],
        [w((16, 32), "w"), w((32,), "g"), w((32,), "b"), w((32,), "slope")], opset=17)
    ms["const_fold"] = model("const_fold", [
        n("Constant", [], ["c"], value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "cv")),
        n("ConstantOfShape", ["cs"], ["z"], value=numpy_helper.from_array(np.array([1.5], np.float32), "zv")),
        n("Range", ["r0", "r1", "r2"], ["r"]),
        n("Identity", ["c"], ["ci"]),
        n("Add", ["ci", "z"], ["cz"]),
        n("Mul", ["x", "cz"], ["y"]),
        n("Cast", ["r"], ["y2"], to=TensorProto.FLOAT)],
        [vi("x", [2, 3])], [vi("y", [2, 3]), vi("y2", [4])],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "cs"), numpy_helper.from_array(np.array(0, np.int64), "r0"),
         numpy_helper.from_array(np.array(4, np.int64), "r1"), numpy_helper.from_array(np.array(1, np.int64), "r2")])
    ms["upsample_opset9"] = model("upsample_opset9", [
        n("Upsample", ["x", "sc"], ["y"], mode="nearest")],
        [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 4])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")], opset=9)
    return ms


def npy_seeds(outdir):
    arrays = {
        "f4": np.arange(12, dtype="<f4").reshape(3, 4), "f8": np.linspace(0, 1, 5), "f2": np.ones((2, 2), "<f2"),
        "i8": np.arange(-3, 3, dtype="<i8"), "i4": np.array([[1, -2]], "<i4"), "i2": np.array([7], "<i2"),
        "i1": np.array([-1, 1], "|i1"), "u1": np.arange(8, dtype="|u1").reshape(2, 2, 2),
        "u2": np.array([65535], "<u2"), "u4": np.array([1, 2], "<u4"), "u8": np.array([3], "<u8"),
        "b1": np.array([True, False]), "scalar": np.array(3.5, "<f4"), "empty": np.zeros((0, 4), "<f4"),
        "rank8": np.zeros((1, 1, 1, 1, 1, 1, 1, 2), "<f4"), "big_endian": np.arange(3, dtype=">f4"),
        "fortran": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
    }
    for name, a in arrays.items():
        for version in ((1, 0), (2, 0), (3, 0)):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, version=version)
            open(os.path.join(outdir, f"{name}_v{version[0]}.npy"), "wb").write(buf.getvalue())


CAPS = [
    "tensor/x-raw, name=(string)logits, dtype=(string)float32, shape=(int)<1,1000>",
    "tensor/x-raw, dtype=(string)float32, shape=(int)<[1,2147483647],3,224,224>",
    "tensor/x-raw, dtype=(string)uint8, shape=(int)<1,[1,16384],[1,16384],3>",
    "tensor/x-raw, name=(string)ids, dtype=(string)int64, shape=(int)<7>",
    "tensor/x-raw, dtype=(string)float32, shape=(int)<>",
    "tensor/x-raw, dtype=(string)float16, shape=(int)<2,{3,4}>",
    "tensor/x-raw, dtype=(string){float32,uint8}, shape=(int)<1,3,224,224>; tensor/x-raw",
    "tensor/x-raw, dtype=(string)bool, shape=(int)<1,1,1,1,1,1,1,1,1>",
    "video/x-raw, format=RGB, width=224, height=224",
    "ANY", "EMPTY",
]

SHAPES = ["1x3x224x224", "1,3,960,960", "4", "2x8", "0x1", "1X2x3", "1x", "x1", "1x3x2147483648x2147483648",
          "9223372036854775807x2", "1x1x1x1x1x1x1x1", "1x1x1x1x1x1x1x1x1", "-1x3", " 1x2", "1x2;y=3"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fuzz-seeds"
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = {k: os.path.join(out, k) for k in ("onnx", "npy", "caps", "shape_text")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    subprocess.run(["/usr/bin/python3", os.path.join(here, "make_test_models.py"), dirs["onnx"]], check=True)
    for name, m in op_models().items():
        onnx.save(m, os.path.join(dirs["onnx"], name + ".onnx"))
    npy_seeds(dirs["npy"])
    for i, text in enumerate(CAPS):
        open(os.path.join(dirs["caps"], f"caps{i:02d}"), "wb").write(b"\0" + text.encode())
    for i, text in enumerate(SHAPES):
        open(os.path.join(dirs["shape_text"], f"shape{i:02d}"), "w").write(text)
    print(f"seeds in {out}: " + ", ".join(f"{k} {len(os.listdir(d))}" for k, d in dirs.items()))


if __name__ == "__main__":
    main()
