#!/usr/bin/python3
"""The `weave` CLI as a user runs it: every command on a real model, and every kind of bad input
from issue #2 (missing files, truncated or damaged artifacts section by section, wrong magic or
version, truncated ONNX, unsupported ops, wrong input names/dtypes/shapes). Each bad input must
give a clear message naming the file/section/node/tensor and an exit code in 1..127 (no crash).

  test_cli.py WEAVE_BINARY

Environment: WEAVE_SOURCE_ROOT (reference data), WEAVE_MODELS_DIR (exported models).
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper

WEAVE = sys.argv[1]
SRC = os.environ.get("WEAVE_SOURCE_ROOT", ".")
MODELS = os.environ.get("WEAVE_MODELS_DIR", "models")
MODEL = os.path.join(MODELS, "squeezenet1_1.onnx")
REF = os.path.join(SRC, "tests/models/data/squeezenet1_1")
TMP = tempfile.mkdtemp(prefix="weave-cli-")
passed, failed = 0, 0


def weave(*args):
    p = subprocess.run([WEAVE, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def expect_error(name, args, *needles, code=1):
    rc, out, err = weave(*args)
    ok = rc == code and 0 < rc < 128 and all(n in err for n in needles)
    check(name, ok, f"rc={rc} stderr={err.strip()[:500]!r} wanted {needles}")


def tmp(name):
    return os.path.join(TMP, name)


# ------------------------------------------------------------------ the happy paths
sizes = {}
for codec in ["none", "zlib", "lz4", "zstd", "zlib-shuffle"]:
    out = tmp(f"sq.{codec}.weave")
    rc, so, se = weave("compile", MODEL, "-o", out, "--compression", codec)
    check(f"compile --compression {codec}", rc == 0 and os.path.exists(out), se)
    sizes[codec] = os.path.getsize(out) if os.path.exists(out) else 0
check("zlib artifact is smaller than none", 0 < sizes["zlib"] < sizes["none"], str(sizes))

rc, so, se = weave("inspect", tmp("sq.zlib.weave"), "--json")
info = json.loads(so) if rc == 0 else {}
check("inspect --json", rc == 0 and info.get("num_inputs") == 1 and info.get("num_params", 0) > 0
      and info["inputs"][0]["name"] == "input" and info["inputs"][0]["shape"][0] == "batch"
      and info["outputs"][0]["name"] == "logits" and info.get("arena_bytes", 0) > 0
      and info.get("ops", {}).get("Conv") == 26 and info.get("size_on_disk") == sizes["zlib"], so + se)
rc, so, se = weave("inspect", MODEL)
check("inspect onnx text", rc == 0 and "inputs (1)" in so and "Conv 26" in so, so + se)

check("inspect: squeezenet runs allocation-free", "shapes:   all follow from the input dims" in so
      and info.get("run_time_shapes") is False, so)

# A shape computed from input data (Reshape to the shape given as an input): inspect says the
# model plans per value, and run computes it.
dyn = helper.make_model(helper.make_graph(
    [helper.make_node("Reshape", ["x", "shape"], ["y"])], "dyn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6]),
     helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), opset_imports=[helper.make_opsetid("", 13)])
onnx.save(dyn, tmp("dyn.onnx"))
rc, so, se = weave("inspect", tmp("dyn.onnx"))
check("inspect: run-time shapes", rc == 0 and "depend on values computed in the run" in so
      and "Reshape" in so, so + se)
rc, so, se = weave("inspect", tmp("dyn.onnx"), "--json")
check("inspect --json: run-time shapes", rc == 0 and json.loads(so).get("run_time_shapes") is True, so + se)
np.save(tmp("dyn_x.npy"), np.arange(6, dtype=np.float32))
np.save(tmp("dyn_shape.npy"), np.array([3, 2], dtype=np.int64))
rc, so, se = weave("run", tmp("dyn.onnx"), "--input", "x=" + tmp("dyn_x.npy"), "--input",
                   "shape=" + tmp("dyn_shape.npy"), "--output-dir", tmp("dyn-out"))
y = np.load(tmp("dyn-out/y.npy")) if rc == 0 else None
check("run: run-time shapes", rc == 0 and y is not None and y.shape == (3, 2)
      and np.array_equal(y.ravel(), np.arange(6)), se)

rc, so, se = weave("compile", MODEL, "-o", tmp("sq.stripped.weave"), "--strip-names")
rc2, so2, _ = weave("inspect", tmp("sq.stripped.weave"))
check("strip-names", rc == 0 and "names:    stripped" in so2, so2)

for model in [tmp("sq.zlib.weave"), MODEL]:
    outdir = tmp("run-" + os.path.basename(model))
    rc, so, se = weave("run", model, "--input", f"input={REF}/input_input.npy", "--output-dir", outdir)
    ok = rc == 0 and os.path.exists(os.path.join(outdir, "logits.npy"))
    if ok:
        got, want = np.load(os.path.join(outdir, "logits.npy")), np.load(f"{REF}/output_logits.npy")
        ok = got.shape == want.shape and bool(np.all(np.abs(got - want) <= 1e-3 + 1e-3 * np.abs(want)))
    check(f"run {os.path.basename(model)} matches ONNX Runtime", ok, se)

rc, so, se = weave("bench", tmp("sq.zlib.weave"), "--iters", "3", "--json")
last = json.loads(so.strip().splitlines()[-1]) if rc == 0 else {}
check("bench --json last line", all(k in last for k in ("load_ms", "median_ms", "min_ms"))
      and last["min_ms"] <= last["median_ms"], so + se)
rc, so, se = weave("bench", tmp("sq.zlib.weave"), "--iters", "2", "--profile")
check("bench --profile table", rc == 0 and "share" in so and "Conv" in so and "by op type" in so, so + se)

# Time evaluator options: repeats of `number` runs, number raised to reach --min-time.
rc, so, se = weave("bench", tmp("sq.zlib.weave"), "--repeat", "3", "--number", "2", "--warmup", "1", "--json")
last = json.loads(so.strip().splitlines()[-1]) if rc == 0 else {}
check("bench --repeat/--number", last.get("repeat") == 3 and last.get("number") == 2
      and len(last.get("repeat_ms", [])) == 3 and "repeats of 2 runs" in so, so + se)
rc, so, se = weave("bench", tmp("sq.zlib.weave"), "--repeat", "2", "--min-time", "1", "--json")
last = json.loads(so.strip().splitlines()[-1]) if rc == 0 else {}
check("bench --min-time", rc == 0 and last.get("number", 0) >= 1 and len(last.get("repeat_ms", [])) == 2, so + se)
expect_error("bench --number 0", ["bench", tmp("sq.zlib.weave"), "--number", "0"], "--number", code=2)
expect_error("bench --min-time bad", ["bench", tmp("sq.zlib.weave"), "--min-time", "-3"], "--min-time", code=2)

# Dynamic dims within a bound: planned once for the bound; beyond it an error or an explicit re-plan.
rc, so, se = weave("bench", tmp("sq.zlib.weave"), "--max-shape", "input=2x3x224x224", "--iters", "2", "--json")
last = json.loads(so.strip().splitlines()[-1]) if rc == 0 else {}
check("bench --max-shape runs at the bound", last.get("inputs") == "input=2x3x224x224"
      and "bound: input<=2x3x224x224" in so, so + se)
outdir = tmp("run-bound")
rc, so, se = weave("run", MODEL, "--input", f"input={REF}/input_input.npy", "--max-shape", "input=4x3x224x224",
                   "--output-dir", outdir)
ok = rc == 0 and os.path.exists(os.path.join(outdir, "logits.npy"))
if ok:
    got, want = np.load(os.path.join(outdir, "logits.npy")), np.load(f"{REF}/output_logits.npy")
    ok = got.shape == want.shape and bool(np.all(np.abs(got - want) <= 1e-3 + 1e-3 * np.abs(want)))
check("run --max-shape within the bound matches", ok, se)
batch2 = tmp("input_b2.npy")
np.save(batch2, np.concatenate([np.load(f"{REF}/input_input.npy")] * 2))
expect_error("run beyond --max-shape", ["run", MODEL, "--input", f"input={batch2}", "--max-shape",
             "input=1x3x224x224"], "dims 2x3x224x224 exceed the planned bound 1x3x224x224")
rc, so, se = weave("run", MODEL, "--input", f"input={batch2}", "--max-shape", "input=1x3x224x224",
                   "--replan-beyond-bound")
check("run --replan-beyond-bound logs the re-plan", rc == 0 and "re-planning" in se and "logits" in so, so + se)
expect_error("run --max-shape static dim", ["run", MODEL, "--input", f"input={batch2}", "--max-shape",
             "input=2x3x100x100"], "max_shapes", "changes a static dim")
expect_error("run --max-shape syntax", ["run", MODEL, "--input", f"input={batch2}", "--max-shape", "input=abc"],
             "--max-shape", code=2)

# ------------------------------------------------------------------ usage errors: exit 2
expect_error("no command", [], "usage", code=2)
expect_error("unknown command", ["frobnicate"], "unknown command", code=2)
expect_error("compile without -o", ["compile", MODEL], "usage", code=2)
expect_error("unknown option", ["inspect", MODEL, "--bogus"], "--bogus", code=2)

# ------------------------------------------------------------------ missing files
missing = tmp("does-not-exist.onnx")
for cmd in (["compile", missing, "-o", tmp("x.weave")], ["inspect", missing], ["bench", missing],
            ["run", missing, "--input", "x=y.npy"]):
    expect_error(f"missing file: {cmd[0]}", cmd, "does-not-exist.onnx")

# ------------------------------------------------------------------ damaged artifacts
good = open(tmp("sq.zlib.weave"), "rb").read()


def write(name, data):
    with open(tmp(name), "wb") as f:
        f.write(data)
    return tmp(name)


for n in [0, 7, 39, 40, 100, len(good) // 2, len(good) - 1]:
    expect_error(f"truncated .weave at {n}", ["inspect", write(f"trunc{n}.weave", good[:n])],
                 f"trunc{n}.weave")
bad_magic = b"NOTWEAVE" + good[8:]
expect_error("wrong magic", ["run", write("magic.weave", bad_magic), "--input", "input=x.npy"], "magic.weave")
ver = bytearray(good)
ver[8:12] = struct.pack("<I", 99)
struct.pack_into("<I", ver, 32, zlib.crc32(bytes(ver[:32])) & 0xFFFFFFFF)
expect_error("unsupported version", ["inspect", write("version.weave", bytes(ver))], "version 99")

# Flip one byte in the middle of each section named in the section table.
count = struct.unpack_from("<I", good, 24)[0]
names = {1: "metadata", 2: "graph", 3: "params", 4: "names", 5: "blobs"}
for i in range(count):
    kind, flags, off, size, crc = struct.unpack_from("<IIQQI", good, 40 + 32 * i)
    section = names.get(kind & 0x7FFFFFFF, f"kind {kind}")
    if size == 0:
        continue
    dam = bytearray(good)
    dam[off + size // 2] ^= 0x5A
    expect_error(f"damaged {section} section", ["run", write(f"dam-{section}.weave", bytes(dam)),
                                                "--input", f"input={REF}/input_input.npy"],
                 f"dam-{section}.weave", section)

# ------------------------------------------------------------------ bad ONNX
onnx_bytes = open(MODEL, "rb").read()
for n in [10, 1000, len(onnx_bytes) // 3]:
    expect_error(f"truncated .onnx at {n}", ["compile", write(f"trunc{n}.onnx", onnx_bytes[:n]), "-o", tmp("t.weave")],
                 f"trunc{n}.onnx")

# The hostile model that crashed libonnx's shape inference in CI (docs/reliability.md): an error
# naming the node and the attribute from every command that reads a model.
hostile = os.path.join(SRC, "tests/fuzz/onnx/convinteger-float-input-rank1-weight-int-auto-pad")
for cmd in (["inspect", hostile], ["compile", hostile, "-o", tmp("h.weave")], ["bench", hostile, "--iters", "1"]):
    expect_error(f"{cmd[0]} of a hostile model", cmd, "node 2 (ConvInteger)", "attribute 'auto_pad' is of kind INT")

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
graph = helper.make_graph([
    helper.make_node("Relu", ["x"], ["a"], name="fine_relu"),
    helper.make_node("Bernoulli", ["a"], ["b"], name="random_bernoulli"),
    helper.make_node("Frobnicate", ["b"], ["c"], name="custom_frob", domain="com.example"),
    helper.make_node("Bernoulli", ["c"], ["y"], name="second_bernoulli"),
], "unsupported", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
onnx.save(model, tmp("unsupported.onnx"))
expect_error("unsupported ops listed at compile time", ["compile", tmp("unsupported.onnx"), "-o", tmp("u.weave")],
             "unsupported.onnx", "Bernoulli", "random_bernoulli", "second_bernoulli", "Frobnicate", "custom_frob")

# ------------------------------------------------------------------ bad inputs to run
np.save(tmp("int.npy"), np.zeros((1, 3, 224, 224), np.int64))
np.save(tmp("small.npy"), np.zeros((1, 3, 100, 100), np.float32))
expect_error("run: unknown input name", ["run", tmp("sq.zlib.weave"), "--input", f"image={REF}/input_input.npy"],
             "'image'", "'input'")
expect_error("run: wrong dtype", ["run", tmp("sq.zlib.weave"), "--input", f"input={tmp('int.npy')}"],
             "expected dtype float32, got int64")
expect_error("run: wrong shape", ["run", tmp("sq.zlib.weave"), "--input", f"input={tmp('small.npy')}"],
             "'input'", "1x3x100x100")
write("garbage.npy", b"\x93NUMPY garbage")
expect_error("run: corrupt npy", ["run", tmp("sq.zlib.weave"), "--input", f"input={tmp('garbage.npy')}"],
             "garbage.npy")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
