#define BOOST_TEST_MODULE kernel_sampling
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

BOOST_AUTO_TEST_CASE(grid_sample_at_the_corners_reads_the_pixels) {
  KernelCase c;
  c.op = "GridSample";
  c.opset = 16;
  c.attrs.set("align_corners", int64_t{1});
  // (x, y) per output pixel: the four corners, so the output is the input.
  c.inputs = ins(make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1}));
  check_close(run1(c), {1, 2, 3, 4});
  // The centre is the mean of the four in bilinear mode.
  c.inputs[1] = make_f32({1, 1, 1, 2}, {0, 0});
  check_close(run1(c), {2.5f});
  c.attrs.set("padding_mode", std::string("wrap"));
  BOOST_CHECK(run_error(c).find("padding_mode") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(resize_cubic_keeps_a_constant_and_a_ramp_stays_monotonic) {
  KernelCase c;
  c.op = "Resize";
  c.opset = 13;
  c.attrs.set("mode", std::string("cubic"));
  c.inputs = ins(make_f32({1, 1, 2, 2}, {5, 5, 5, 5}), Tensor{}, make_f32({4}, {1, 1, 2, 2}));
  c.constant = {false, false, true};
  auto r = run1(c);
  BOOST_CHECK(r.dims() == (Dims{1, 1, 4, 4}));
  check_close(r, std::vector<float>(16, 5.f));
  c.inputs[0] = make_f32({1, 1, 1, 4}, {0, 1, 2, 3});
  c.inputs[2] = make_f32({4}, {1, 1, 1, 2});
  const auto v = values<float>(run1(c));
  BOOST_REQUIRE(v.size() == 8u);
  for (std::size_t i = 1; i < v.size(); ++i) BOOST_CHECK(v[i] >= v[i - 1] - 1e-5f);
}

BOOST_AUTO_TEST_CASE(grid_sample_reflection_of_a_huge_coordinate_stays_on_the_image) {
  KernelCase c;
  c.op = "GridSample";
  c.opset = 16;
  c.attrs.set("padding_mode", std::string("reflection"));
  c.inputs = ins(make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1, 1, 2, 2}, {1e30f, -1e30f, 0.25f, 3.5f}));
  const auto v = values<float>(run1(c));
  BOOST_REQUIRE(v.size() == 2u);
  for (float x : v) BOOST_CHECK(x >= 1.f && x <= 4.f);
}
