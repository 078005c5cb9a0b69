// weave-worker: cameras shared by workers through a Kafka consumer group (docs/deployment.md).
//
//   weave-worker run --brokers B [--id ID] [--group G] [--jobs TOPIC] [--results TOPIC]
//                    [--cascade FILE --models DIR --cache DIR] [--produced-dir DIR]
//       Joins consumer group G (default weave-workers) on the jobs topic (default weave-jobs).
//       Kafka assigns the topic's partitions to the group's workers; this one reads its
//       partitions from the start and runs a pipeline for the latest job of each camera in them
//       (core/publish/jobs.h), publishing each frame's results with weavepublish to
//       kafka://B/RESULTS (default weave-results), tagged worker=ID. A partition taken away
//       (another worker joined, or this one is leaving) stops its cameras; a camera whose stream
//       fails is started again after 2 s. SIGTERM or SIGINT: every pipeline gets an end of stream
//       (its queue flushed), the worker leaves the group (its cameras move at once) and exits.
//       With --produced-dir, every message is also written to DIR/produced-ID-CAMERA-RUN.jsonl
//       (what a killed worker produced but never delivered can then be counted).
//   weave-worker submit --brokers B [--jobs TOPIC] [--spread yes] FILE
//       Each line of FILE (a job's JSON) to the jobs topic, keyed by its camera (Kafka picks the
//       partition by the key's hash); with --spread yes, job i goes to partition i modulo their
//       number, so that few cameras still spread evenly over the workers.
//   weave-worker results --brokers B [--topic T] [--idle S] [--out FILE]
//       Every message of topic T (default weave-results) from the start, one per line, until
//       none came for S seconds (default 3).
//   weave-worker mock-kafka [--brokers N] [--topic NAME:PARTITIONS ...]
//       A Kafka cluster for tests and demos on loopback (librdkafka's mock cluster, the real
//       protocol): prints its bootstrap servers, serves until killed.
//
// Pipelines of a job: "ocr" is the PP-OCRv4 cascade of pipelines/ocr_cascade.txt (--cascade,
// --models, --cache) with weavetrack and the detector every 5th frame; "decode" only decodes and
// publishes each frame (no model: the transport alone).
#include <gst/gst.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/publish/jobs.h"
#include "pipelines/app/text_scene.h"

namespace wp = weave::publish;
using Clock = std::chrono::steady_clock;

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop = true;
}

struct Args {
  std::map<std::string, std::vector<std::string>> opts;
  std::vector<std::string> rest;
  [[nodiscard]] std::string get(const std::string& k, const std::string& def = "") const {
    const auto it = opts.find(k);
    return it == opts.end() || it->second.empty() ? def : it->second.back();
  }
};

Args parse_args(int argc, char** argv, int from) {
  Args a;
  for (int i = from; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--", 0) == 0 && i + 1 < argc)
      a.opts[s.substr(2)].push_back(argv[++i]);
    else
      a.rest.push_back(s);
  }
  return a;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "weave-worker: %s\n", why.c_str());
  return 1;
}

rd_kafka_conf_t* base_conf(const std::string& brokers) {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  return conf;
}

// ---- run ---------------------------------------------------------------------------------------

struct Worker {
  std::string id, brokers, results_topic, cascade_path, models, cache, produced_dir;
  wp::JobBoard board;
  struct Running {
    wp::CameraJob job;
    GstElement* pipeline = nullptr;
    int run = 0;
    Clock::time_point retry_at{};  // when a failed camera may start again
  };
  std::map<std::string, Running> cameras;
  int runs = 0;

  // The gst-launch description of `job`.
  std::string describe(const wp::CameraJob& job, int run) const {
    std::string safe;
    for (char c : job.camera) safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    std::string source = job.source.rfind("rtsp://", 0) == 0
                             ? "rtspsrc location=" + job.source + " protocols=tcp latency=200 ! decodebin"
                             : "uridecodebin uri=" + job.source;
    std::string body;
    if (job.pipeline == "ocr") {
      // The cascade as pipelines/ocr.sh --track --interval 5 runs it, its names prefixed.
      weave::demo::CascadeOptions o;
      o.prefix = safe + "_";
      o.models = models;
      o.cache = cache;
      o.track = true;
      o.detect_every = o.read_every = 5;
      const std::string cascade = weave::demo::ocr_cascade(cascade_path, o);
      body = "videoconvert ! video/x-raw,format=RGB ! " + cascade;
    } else {
      body = "videoconvert";
    }
    std::string publish = " ! weavepublish name=" + safe + "_publish uri=kafka://" + brokers + "/" +
                          results_topic + " camera=" + job.camera + " tags=worker=" + id;
    if (!produced_dir.empty())
      publish += " ! weavepublish name=" + safe + "_produced uri=file://" + produced_dir + "/produced-" + id +
                 "-" + safe + "-" + std::to_string(run) + ".jsonl camera=" + job.camera +
                 " tags=worker=" + id;
    return source + " ! " + body + publish + " ! fakesink sync=false";
  }

  void start(const wp::CameraJob& job) {
    Running& r = cameras[job.camera];
    r.job = job;
    r.run = ++runs;
    if (job.pipeline != "ocr" && job.pipeline != "decode") {
      std::fprintf(stderr, "[%s] camera %s: unknown pipeline \"%s\" (ocr or decode); not started\n",
                   id.c_str(), job.camera.c_str(), job.pipeline.c_str());
      r.retry_at = Clock::time_point::max();  // until its job changes
      return;
    }
    if (job.pipeline == "ocr" && cascade_path.empty()) {
      std::fprintf(stderr,
                   "[%s] camera %s: pipeline ocr needs --cascade (pipelines/ocr_cascade.txt); not started\n",
                   id.c_str(), job.camera.c_str());
      r.retry_at = Clock::time_point::max();
      return;
    }
    GError* err = nullptr;
    const std::string desc = describe(job, r.run);
    r.pipeline = gst_parse_launch(desc.c_str(), &err);
    if (err != nullptr) {
      std::fprintf(stderr, "[%s] camera %s: %s\n", id.c_str(), job.camera.c_str(), err->message);
      g_error_free(err);
      if (r.pipeline != nullptr) gst_object_unref(r.pipeline);
      r.pipeline = nullptr;
      r.retry_at = Clock::now() + std::chrono::seconds(2);
      return;
    }
    gst_element_set_state(r.pipeline, GST_STATE_PLAYING);
    std::printf("[%s] camera %s started (%s, %s)\n", id.c_str(), job.camera.c_str(), job.pipeline.c_str(),
                job.source.c_str());
    std::fflush(stdout);
  }

  // Ends a pipeline: an end of stream first (weavepublish flushes its queue), at most `wait`.
  static void finish(GstElement* pipeline, std::chrono::milliseconds wait) {
    if (pipeline == nullptr) return;
    if (wait.count() > 0) {
      gst_element_send_event(pipeline, gst_event_new_eos());
      GstBus* bus = gst_element_get_bus(pipeline);
      GstMessage* m =
          gst_bus_timed_pop_filtered(bus, static_cast<GstClockTime>(wait.count()) * GST_MSECOND,
                                     static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
      if (m != nullptr) gst_message_unref(m);
      gst_object_unref(bus);
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }

  void stop(const std::string& camera, std::chrono::milliseconds wait) {
    auto it = cameras.find(camera);
    if (it == cameras.end()) return;
    finish(it->second.pipeline, wait);
    std::printf("[%s] camera %s stopped\n", id.c_str(), camera.c_str());
    std::fflush(stdout);
    cameras.erase(it);
  }

  // Starts what the board wants and is not running, stops what it no longer wants, restarts
  // failed streams.
  void reconcile() {
    const auto wanted = board.wanted();
    std::vector<std::string> gone;
    for (const auto& [camera, r] : cameras)
      if (!wanted.count(camera) || !(wanted.at(camera) == r.job)) gone.push_back(camera);
    for (const auto& c : gone) stop(c, std::chrono::milliseconds(2000));
    for (auto& [camera, r] : cameras) {
      if (r.pipeline == nullptr) continue;
      GstBus* bus = gst_element_get_bus(r.pipeline);
      GstMessage* m =
          gst_bus_pop_filtered(bus, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
      gst_object_unref(bus);
      if (m == nullptr) continue;
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError* e = nullptr;
        gst_message_parse_error(m, &e, nullptr);
        std::fprintf(stderr, "[%s] camera %s (%s) failed: %s (again in 2 s)\n", id.c_str(), camera.c_str(),
                     r.job.source.c_str(), e->message);
        g_error_free(e);
      } else {
        std::fprintf(stderr, "[%s] camera %s ended (again in 2 s)\n", id.c_str(), camera.c_str());
      }
      gst_message_unref(m);
      finish(r.pipeline, std::chrono::milliseconds(0));
      r.pipeline = nullptr;
      r.retry_at = Clock::now() + std::chrono::seconds(2);
    }
    for (const auto& [camera, job] : wanted) {
      auto it = cameras.find(camera);
      if (it == cameras.end())
        start(job);
      else if (it->second.pipeline == nullptr && Clock::now() >= it->second.retry_at)
        start(job);
    }
  }
};

Worker* g_worker = nullptr;

std::set<int32_t> partitions_of(const rd_kafka_topic_partition_list_t* parts) {
  std::set<int32_t> out;
  for (int i = 0; i < parts->cnt; ++i) out.insert(parts->elems[i].partition);
  return out;
}

void rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts, void*) {
  Worker& w = *g_worker;
  const std::set<int32_t> ps = partitions_of(parts);
  std::string list;
  for (int32_t p : ps) list.append(" ").append(std::to_string(p));
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    for (int i = 0; i < parts->cnt; ++i)
      parts->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;  // every job again
    w.board.assign(ps);
    rd_kafka_incremental_assign(rk, parts);
    std::printf("[%s] partitions assigned:%s\n", w.id.c_str(), list.c_str());
  } else {
    w.board.revoke(ps);
    w.reconcile();  // their cameras stop before another worker takes them
    rd_kafka_incremental_unassign(rk, parts);
    std::printf("[%s] partitions revoked:%s\n", w.id.c_str(), list.c_str());
  }
  std::fflush(stdout);
}

int cmd_run(const Args& a) {
  Worker w;
  g_worker = &w;
  w.brokers = a.get("brokers");
  if (w.brokers.empty()) return fail("run: --brokers HOST:PORT[,...] is required");
  w.id = a.get("id", "w" + std::to_string(getpid()));
  w.results_topic = a.get("results", "weave-results");
  w.models = a.get("models");
  w.cache = a.get("cache", "/tmp/weave-worker-cache");
  w.produced_dir = a.get("produced-dir");
  w.cascade_path = a.get("cascade");
  if (!w.cascade_path.empty() && weave::demo::ocr_cascade(w.cascade_path, {}).empty())
    return fail("run: --cascade " + w.cascade_path + ": cannot read a pipeline in it");
  char err[256];
  rd_kafka_conf_t* conf = base_conf(w.brokers);
  const std::string group = a.get("group", "weave-workers");
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"group.id", group},
           {"client.id", w.id},
           {"enable.auto.commit", "false"},
           {"auto.offset.reset", "earliest"},
           {"session.timeout.ms", a.get("session-timeout-ms", "6000")},
           {"heartbeat.interval.ms", "1000"},
           {"partition.assignment.strategy", "cooperative-sticky"}})
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
      return fail("run: " + k + ": " + err);
  rd_kafka_conf_set_rebalance_cb(conf, rebalance);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) return fail(std::string("run: ") + err);
  rd_kafka_poll_set_consumer(rk);
  const std::string jobs = a.get("jobs", "weave-jobs");
  rd_kafka_topic_partition_list_t* sub = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(sub, jobs.c_str(), RD_KAFKA_PARTITION_UA);
  if (const auto e = rd_kafka_subscribe(rk, sub); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail("run: subscribe to " + jobs + ": " + rd_kafka_err2str(e));
  rd_kafka_topic_partition_list_destroy(sub);
  std::printf("[%s] joined group %s on %s (%s)\n", w.id.c_str(), group.c_str(), jobs.c_str(),
              w.brokers.c_str());
  std::fflush(stdout);
  while (!g_stop) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m != nullptr) {
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const std::string key(static_cast<const char*>(m->key), m->key_len);
        const std::string value(static_cast<const char*>(m->payload), m->len);
        if (auto st = w.board.on_message(m->partition, key, value); !st)
          std::fprintf(stderr, "[%s] %s: %s\n", w.id.c_str(), jobs.c_str(), st.message().c_str());
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::fprintf(stderr, "[%s] %s\n", w.id.c_str(), rd_kafka_message_errstr(m));
      }
      rd_kafka_message_destroy(m);
    }
    w.reconcile();
  }
  std::printf("[%s] leaving: ending %zu cameras\n", w.id.c_str(), w.cameras.size());
  std::fflush(stdout);
  std::vector<std::string> all;
  for (const auto& [c, r] : w.cameras) all.push_back(c);
  for (const auto& c : all) w.stop(c, std::chrono::milliseconds(5000));
  rd_kafka_consumer_close(rk);  // leaves the group: the partitions move now, not after a timeout
  rd_kafka_destroy(rk);
  return 0;
}

// ---- submit, results, mock-kafka -------------------------------------------------------------

int cmd_submit(const Args& a) {
  const std::string brokers = a.get("brokers");
  if (brokers.empty() || a.rest.empty()) return fail("submit: --brokers B FILE");
  char err[256];
  rd_kafka_conf_t* conf = base_conf(brokers);
  rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) return fail(std::string("submit: ") + err);
  const std::string topic = a.get("jobs", "weave-jobs");
  int partitions = 0;  // --spread: round robin over this many
  if (a.get("spread") == "yes") {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1)
      partitions = md->topics[0].partition_cnt;
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    if (partitions <= 0) return fail("submit: no partitions of topic " + topic);
  }
  std::ifstream in(a.rest[0]);
  if (!in) return fail("submit: cannot read " + a.rest[0]);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto job = wp::parse_job(line);
    if (!job) return fail("submit: " + a.rest[0] + ": " + job.error().message());
    const int32_t partition = partitions > 0 ? n % partitions : RD_KAFKA_PARTITION_UA;
    const auto e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                                     RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                     RD_KAFKA_V_KEY(job->camera.data(), job->camera.size()),
                                     RD_KAFKA_V_VALUE(line.data(), line.size()), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return fail("submit: " + std::string(rd_kafka_err2str(e)));
    ++n;
  }
  if (rd_kafka_flush(rk, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail("submit: jobs not delivered in 10 s");
  rd_kafka_destroy(rk);
  std::printf("submitted %d jobs to %s\n", n, topic.c_str());
  return 0;
}

int cmd_results(const Args& a) {
  const std::string brokers = a.get("brokers");
  if (brokers.empty()) return fail("results: --brokers B");
  const std::string topic = a.get("topic", "weave-results");
  const double idle = std::stod(a.get("idle", "3"));
  char err[256];
  rd_kafka_conf_t* conf = base_conf(brokers);
  rd_kafka_conf_set(conf, "group.id", ("weave-results-" + std::to_string(getpid())).c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) return fail(std::string("results: ") + err);
  rd_kafka_poll_set_consumer(rk);
  // Every partition from its start, without a group: no rebalance to wait for.
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1)
    return fail("results: no metadata for topic " + topic);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
  for (int i = 0; i < md->topics[0].partition_cnt; ++i)
    rd_kafka_topic_partition_list_add(parts, topic.c_str(), md->topics[0].partitions[i].id)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  const std::string out_path = a.get("out");
  std::FILE* out = out_path.empty() ? stdout : std::fopen(out_path.c_str(), "w");
  if (out == nullptr) return fail("results: cannot write " + out_path);
  auto last = Clock::now();
  long n = 0;
  while (std::chrono::duration<double>(Clock::now() - last).count() < idle && !g_stop) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fwrite(m->payload, 1, m->len, out);
      std::fputc('\n', out);
      ++n;
      last = Clock::now();
    }
    rd_kafka_message_destroy(m);
  }
  if (out != stdout) std::fclose(out);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  std::fprintf(stderr, "results: %ld messages from %s\n", n, topic.c_str());
  return 0;
}

int cmd_mock_kafka(const Args& a) {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) return fail(std::string("mock-kafka: ") + err);
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, std::stoi(a.get("brokers", "1")));
  if (mc == nullptr) return fail("mock-kafka: cannot start the mock cluster");
  const auto it = a.opts.find("topic");
  if (it != a.opts.end())
    for (const std::string& t : it->second) {
      const auto colon = t.rfind(':');
      const std::string name = t.substr(0, colon);
      const int parts = colon == std::string::npos ? 1 : std::stoi(t.substr(colon + 1));
      if (rd_kafka_mock_topic_create(mc, name.c_str(), parts, 1) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return fail("mock-kafka: cannot create topic " + name);
    }
  std::printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  std::fflush(stdout);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  const std::string cmd = argc > 1 ? argv[1] : "";
  const Args a = parse_args(argc, argv, 2);
  if (cmd == "run") {
    gst_init(&argc, &argv);
    return cmd_run(a);
  }
  if (cmd == "submit") return cmd_submit(a);
  if (cmd == "results") return cmd_results(a);
  if (cmd == "mock-kafka") return cmd_mock_kafka(a);
  std::fprintf(
      stderr,
      "usage: weave-worker run|submit|results|mock-kafka ... (see the top of tools/worker/weave_worker.cpp "
      "or docs/deployment.md)\n");
  return 2;
}
