#!/usr/bin/env bash
# Two models chained by named pads: resnet18 cut in two (scripts/export_models.py exports
# resnet18_backbone.onnx: input -> features, the 512x7x7 feature map, and resnet18_head.onnx:
# features -> logits, with the same weights as resnet18.onnx). The backbone's src_features pad
# feeds the head through a queue (each weaveinfer runs in its own thread). The chained logits
# are then compared with the whole resnet18's on the same frames: they must be equal (up to
# float rounding). Prints the JSON of the first frames, the comparison and the measured fps.
#   pipelines/chain.sh [FRAMES]      FRAMES: buffers (default 30)
source "$(dirname "$0")/lib.sh"
frames=${1:-30}
for m in resnet18 resnet18_backbone resnet18_head; do
  need "$models/$m.onnx" "the build exports it (ninja -C build)"
done
labels=$out/chain_labels.txt
write_numbered_labels "$labels" 1000
src="videotestsrc num-buffers=$frames pattern=ball
  ! weaveconvert mean=0.485,0.456,0.406 std=0.229,0.224,0.225"

echo "== backbone -> head, $frames frames"
launch "$frames" "$src
  ! weaveinfer cache-dir=$cache model=$models/resnet18_backbone.onnx name=bb
  bb.src_features ! queue ! weaveinfer cache-dir=$cache model=$models/resnet18_head.onnx name=head
  head.src_logits ! weavedecode labels=$labels top-k=2 softmax=true json=$out/chain.jsonl
  ! filesink location=$out/chain_logits.f32"
head -n 2 "$out/chain.jsonl"

echo "== the whole resnet18 on the same frames"
launch "$frames" "$src
  ! weaveinfer cache-dir=$cache model=$models/resnet18.onnx
  ! filesink location=$out/full_logits.f32"

echo "== chained vs whole"
/usr/bin/python3 - "$out/chain_logits.f32" "$out/full_logits.f32" "$frames" <<'PY'
import sys
import numpy as np
chained, full = (np.fromfile(p, dtype=np.float32) for p in sys.argv[1:3])
frames = int(sys.argv[3])
if chained.size != frames * 1000 or full.size != frames * 1000:
    sys.exit(f"expected {frames} x 1000 logits, got {chained.size} and {full.size} floats")
chained, full = chained.reshape(frames, 1000), full.reshape(frames, 1000)
diff = np.abs(chained - full).max()
scale = np.abs(full).max()
same_top = (chained.argmax(1) == full.argmax(1)).all()
print(f"{frames} frames x 1000 logits: max |chained - whole| = {diff:.3g} (logits up to {scale:.3g}); "
      f"top class equal on every frame: {same_top}")
if not (diff <= 1e-4 * max(1.0, scale) and same_top):
    sys.exit("chained output differs from the whole model")
print("chained output == whole resnet18 output")
PY
