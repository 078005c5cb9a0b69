// Camera jobs (core/publish/jobs.h): parsed or refused with a reason; the board runs the latest
// job of each camera in the partitions this worker holds, and forgets a revoked partition's.
#define BOOST_TEST_MODULE jobs
#include <boost/test/unit_test.hpp>

#include "core/publish/jobs.h"

using namespace weave::publish;

BOOST_AUTO_TEST_CASE(jobs_parse_or_say_why) {
  auto j = parse_job(R"({"camera":"door-3","source":"rtsp://h:8554/d3","pipeline":"decode"})");
  BOOST_REQUIRE(j);
  BOOST_TEST(j->camera == "door-3");
  BOOST_TEST(j->source == "rtsp://h:8554/d3");
  BOOST_TEST(j->pipeline == "decode");
  auto d = parse_job(R"({"camera":"c","source":"file:///v.webm"})");
  BOOST_REQUIRE(d);
  BOOST_TEST(d->pipeline == "ocr");  // the default
  auto s = parse_job(R"({"camera":"c","stop":true})");
  BOOST_REQUIRE(s);
  BOOST_TEST(s->stop);
  for (const char* bad :
       {"", "[]", "{", R"({"source":"x"})", R"({"camera":"c"})", R"({"camera":7,"source":"x"})",
        R"({"camera":"c","source":""})", R"({"camera":"c","stop":"yes"})"}) {
    auto r = parse_job(bad);
    BOOST_TEST(!r, bad);
    if (!r) BOOST_TEST(r.error().message().find("job") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(the_board_runs_the_latest_job_of_each_camera_in_its_partitions) {
  JobBoard b;
  b.assign({0, 1});
  BOOST_TEST(b.on_message(0, "a", R"({"camera":"a","source":"rtsp://x/a"})").ok());
  BOOST_TEST(b.on_message(1, "b", R"({"camera":"b","source":"rtsp://x/b"})").ok());
  BOOST_TEST(b.on_message(2, "c", R"({"camera":"c","source":"rtsp://x/c"})").ok());  // not ours
  BOOST_TEST(b.on_message(0, "a", R"({"camera":"a","source":"rtsp://y/a"})").ok());  // replaced
  auto w = b.wanted();
  BOOST_TEST(w.size() == 2u);
  BOOST_TEST(w["a"].source == "rtsp://y/a");
  BOOST_TEST(!b.on_message(1, "x", "not json").ok());  // reported, nothing changes
  BOOST_TEST(b.wanted().size() == 2u);
  b.revoke({1});  // b's partition went to another worker
  w = b.wanted();
  BOOST_TEST(w.size() == 1u);
  BOOST_TEST(w.count("a") == 1u);
  BOOST_TEST(b.on_message(0, "a", "").ok());  // a tombstone ends it
  BOOST_TEST(b.wanted().empty());
  b.assign({2});
  BOOST_TEST(b.on_message(2, "c", R"({"camera":"c","source":"rtsp://x/c"})").ok());
  BOOST_TEST(b.on_message(2, "c", R"({"camera":"c","stop":true})").ok());
  BOOST_TEST(b.wanted().empty());
}
