#define BOOST_TEST_MODULE kernel_signal
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

BOOST_AUTO_TEST_CASE(hann_window_periodic_and_symmetric) {
  KernelCase c;
  c.op = "HannWindow";
  c.opset = 17;
  c.inputs = ins(make_i64({}, {4}));
  c.constant = {true};
  check_close(run1(c), {0, 0.5f, 1, 0.5f});
  c.attrs.set("periodic", int64_t{0});
  c.inputs = ins(make_i64({}, {3}));
  check_close(run1(c), {0, 1, 0});
  c.inputs = ins(make_i64({}, {-1}));
  BOOST_CHECK(run_error(c).find("out of range") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dft_of_an_impulse_and_a_constant) {
  KernelCase c;
  c.op = "DFT";
  c.opset = 17;
  c.inputs = ins(make_f32({2, 4, 1}, {1, 0, 0, 0, 1, 1, 1, 1}));
  auto r = run1(c);
  BOOST_CHECK(r.dims() == (Dims{2, 4, 2}));
  check_close(r, {1, 0, 1, 0, 1, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0});
  c.attrs.set("onesided", int64_t{1});
  BOOST_CHECK(run1(c).dims() == (Dims{2, 3, 2}));
  // The inverse of the constant's spectrum is the constant again.
  KernelCase inv;
  inv.op = "DFT";
  inv.opset = 17;
  inv.attrs.set("inverse", int64_t{1});
  inv.inputs = ins(make_f32({1, 4, 2}, {4, 0, 0, 0, 0, 0, 0, 0}));
  check_close(run1(inv), {1, 0, 1, 0, 1, 0, 1, 0});
}

BOOST_AUTO_TEST_CASE(dft_rejects_a_signal_without_the_complex_axis) {
  KernelCase c;
  c.op = "DFT";
  c.opset = 17;
  c.inputs = ins(make_f32({2, 4, 3}, std::vector<float>(24, 0.f)));
  BOOST_CHECK(run_error(c).find("1 or 2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dft_refuses_a_hostile_length_instead_of_stalling) {
  KernelCase c;
  c.op = "DFT";
  c.opset = 17;
  c.inputs = ins(make_f32({1, 4, 1}, {1, 0, 0, 0}), make_i64({}, {int64_t{1} << 24}));
  c.constant = {false, true};
  BOOST_CHECK(run_error(c).find("too much work") != std::string::npos);
}
