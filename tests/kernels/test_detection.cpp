#define BOOST_TEST_MODULE kernel_detection
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

// Three boxes of one class: 0 and 1 overlap (IoU 0.9), 2 is apart.
KernelCase nms(float iou, int64_t max_out) {
  KernelCase c;
  c.op = "NonMaxSuppression";
  c.inputs = ins(make_f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1, 5, 5, 6, 6}),
                 make_f32({1, 1, 3}, {0.9f, 0.95f, 0.5f}), make_i64({}, {max_out}), make_f32({}, {iou}));
  c.constant = {true, true, true, true};
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nms_keeps_the_best_of_overlapping_boxes) {
  auto r = run1(nms(0.5f, 10));
  BOOST_CHECK(r.dims() == (Dims{2, 3}));
  BOOST_CHECK(values<int64_t>(r) == (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // A looser threshold keeps all three; max_output_boxes_per_class caps the count.
  BOOST_CHECK(run1(nms(0.95f, 10)).dims() == (Dims{3, 3}));
  BOOST_CHECK(values<int64_t>(run1(nms(0.95f, 1))) == (std::vector<int64_t>{0, 0, 1}));
}

BOOST_AUTO_TEST_CASE(nms_rejects_mismatched_scores) {
  KernelCase c = nms(0.5f, 10);
  c.inputs[1] = make_f32({1, 1, 2}, {0.9f, 0.95f});
  BOOST_CHECK(run_error(c).find("[batches, classes, boxes]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(roi_align_averages_a_constant_map) {
  KernelCase c;
  c.op = "RoiAlign";
  c.attrs.set("output_height", int64_t{2});
  c.attrs.set("output_width", int64_t{2});
  c.attrs.set("sampling_ratio", int64_t{2});
  c.inputs = ins(make_f32({1, 1, 4, 4}, std::vector<float>(16, 3.f)),
                 make_f32({2, 4}, {0, 0, 3, 3, 1, 1, 2, 2}), make_i64({2}, {0, 5}));
  auto r = run1(c);
  BOOST_CHECK(r.dims() == (Dims{2, 1, 2, 2}));
  // Inside the map every sample is 3; a batch index outside the input gives zeros.
  check_close(r, {3, 3, 3, 3, 0, 0, 0, 0});
  c.attrs.set("mode", std::string("median"));
  BOOST_CHECK(run_error(c).find("mode") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(nms_refuses_hostile_sizes_instead_of_stalling) {
  constexpr int64_t n = 70000;  // n x n comparisons exceed the bound
  KernelCase c;
  c.op = "NonMaxSuppression";
  c.inputs = ins(make_f32({1, n, 4}, std::vector<float>(4 * n, 0.f)),
                 make_f32({1, 1, n}, std::vector<float>(n, 0.5f)), make_i64({}, {n}));
  c.constant = {true, true, true};
  BOOST_CHECK(run_error(c).find("too many comparisons") != std::string::npos);
}
