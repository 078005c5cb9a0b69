#define BOOST_TEST_MODULE kernel_quantize
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase op(const std::string& name, std::vector<Tensor> in) {
  KernelCase c;
  c.op = name;
  c.inputs = std::move(in);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(quantize_rounds_half_to_even_and_saturates) {
  KernelCase q = op("QuantizeLinear", ins(make_f32({5}, {0.5f, 1.5f, 2.5f, 1000, -1000}), make_f32({}, {1}),
                                          make<uint8_t>({}, {10})));
  BOOST_CHECK(values<uint8_t>(run1(q)) == (std::vector<uint8_t>{10, 12, 12, 255, 0}));
  KernelCase s =
      op("QuantizeLinear", ins(make_f32({2}, {-1000, 3}), make_f32({}, {2}), make<int8_t>({}, {0})));
  BOOST_CHECK(values<int8_t>(run1(s)) == (std::vector<int8_t>{-128, 2}));
}

BOOST_AUTO_TEST_CASE(dequantize_per_axis) {
  KernelCase d = op("DequantizeLinear", ins(make<uint8_t>({2, 2}, {0, 10, 20, 30}), make_f32({2}, {1, 0.5f}),
                                            make<uint8_t>({2}, {10, 20})));
  d.attrs.set("axis", int64_t{0});
  check_close(run1(d), {-10, 0, 0, 5});
}

BOOST_AUTO_TEST_CASE(dynamic_quantize_picks_range_including_zero) {
  KernelCase d = op("DynamicQuantizeLinear", ins(make_f32({3}, {0, 2.55f, 1.275f})));
  d.num_outputs = 3;
  auto r = run_all(d);
  BOOST_CHECK(values<uint8_t>(r[0]) == (std::vector<uint8_t>{0, 255, 128}));
  check_close(r[1], {0.01f});
  BOOST_CHECK(values<uint8_t>(r[2]) == (std::vector<uint8_t>{0}));
}

BOOST_AUTO_TEST_CASE(integer_matmul_and_conv_subtract_zero_points) {
  KernelCase m = op("MatMulInteger", ins(make<uint8_t>({1, 2}, {3, 4}), make<uint8_t>({2, 1}, {5, 6}),
                                         make<uint8_t>({}, {1}), make<uint8_t>({}, {2})));
  BOOST_CHECK(values<int32_t>(run1(m)) == (std::vector<int32_t>{2 * 3 + 3 * 4}));
  KernelCase c = op("ConvInteger", ins(make<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                                       make<uint8_t>({1, 1, 1, 1}, {2}), make<uint8_t>({}, {1})));
  BOOST_CHECK(values<int32_t>(run1(c)) == (std::vector<int32_t>{0, 2, 4, 6}));
}

BOOST_AUTO_TEST_CASE(qlinear_matmul_requantizes) {
  // (2-0)*(3-0) = 6 real at scales 0.5*0.5 = 1.5; / y_scale 0.5 = 3; + y_zp 1 = 4.
  KernelCase q =
      op("QLinearMatMul", ins(make<uint8_t>({1, 1}, {2}), make_f32({}, {0.5f}), make<uint8_t>({}, {0}),
                              make<uint8_t>({1, 1}, {3}), make_f32({}, {0.5f}), make<uint8_t>({}, {0}),
                              make_f32({}, {0.5f}), make<uint8_t>({}, {1})));
  BOOST_CHECK(values<uint8_t>(run1(q)) == (std::vector<uint8_t>{4}));
}
