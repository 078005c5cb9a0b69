#!/usr/bin/env bash
# One source, two different models: videotestsrc is teed into resnet18 and squeezenet1_1, each
# branch with its own queue (its own thread), weaveconvert and weavedecode. Both models see every
# frame; the two weaveinfer elements run in parallel. Weights are random (seeded), so the
# classes mean nothing. Prints each branch's first result, the frame counts and the measured fps.
#   pipelines/tee.sh [FRAMES]      FRAMES: buffers (default 30)
source "$(dirname "$0")/lib.sh"
frames=${1:-30}
for m in resnet18 squeezenet1_1; do
  need "$models/$m.onnx" "the build exports it (ninja -C build)"
done
labels=$out/tee_labels.txt
write_numbered_labels "$labels" 1000
norm="mean=0.485,0.456,0.406 std=0.229,0.224,0.225"
launch "$frames" "videotestsrc num-buffers=$frames pattern=ball ! tee name=t
  t. ! queue ! weaveconvert $norm ! weaveinfer cache-dir=$cache model=$models/resnet18.onnx
     ! weavedecode labels=$labels top-k=1 softmax=true json=$out/tee_resnet18.jsonl ! fakesink
  t. ! queue ! weaveconvert $norm ! weaveinfer cache-dir=$cache model=$models/squeezenet1_1.onnx
     ! weavedecode labels=$labels top-k=1 softmax=true json=$out/tee_squeezenet1_1.jsonl ! fakesink" \
  ", each through both models"
for m in resnet18 squeezenet1_1; do
  printf '%-14s %3d frames, first: %s\n' "$m" "$(wc -l <"$out/tee_$m.jsonl")" "$(head -n 1 "$out/tee_$m.jsonl")"
done
