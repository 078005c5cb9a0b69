#!/usr/bin/env bash
# An object detector on 1280x720 video: weaveconvert letterboxes each frame into the model's
# 640x640 input (grey 114 bars), weaveinfer runs a YOLOv5-style export (output <1,25200,85>,
# from scripts/export_detectors.py: random seeded weights, so the boxes and classes mean nothing
# but there are many), weavemeta mode=yolo maps the boxes to the frame, clips them, drops those
# in the bars and runs NMS, weaveoverlay draws them. Every frame's JSON line has "objects"
# (empty when nothing is found) and no "texts". Prints the frames, the detections and the fps.
#   pipelines/detect.sh [FRAMES] [MODEL]   FRAMES: buffers (default 20); MODEL: a <1,N,5+C> detector
source "$(dirname "$0")/lib.sh"
frames=${1:-20}
model=${2:-$build/tests/vision/yolov5_style.onnx}
need "$model" "the build exports it (ninja -C build; scripts/export_detectors.py)"
json=$out/detect.jsonl
launch "$frames" "videotestsrc num-buffers=$frames pattern=ball ! video/x-raw,width=1280,height=720
  ! videoconvert ! video/x-raw,format=RGB ! tee name=frames
  frames. ! queue ! det.video
  frames. ! queue ! weaveconvert resize=letterbox pad-value=114 width=640 height=640
    ! weaveinfer cache-dir=$cache model=$model ! det.tensor
  weavemeta name=det mode=yolo max-detections=100 json=$json ! weaveoverlay ! fakesink"
lines=$(wc -l <"$json")
with_objects=$(grep -c '"objects":\[' "$json" || true)
with_texts=$(grep -c '"texts"' "$json" || true)
detections=$(grep -o '"label":' "$json" | wc -l)
echo "detect: $lines frames, $detections detections, \"objects\" on $with_objects lines, \"texts\" on $with_texts"
if [ "$lines" -eq "$frames" ] && [ "$with_objects" -eq "$lines" ] && [ "$with_texts" -eq 0 ]; then
  echo "detect: every frame has its objects list and no texts list"
fi
