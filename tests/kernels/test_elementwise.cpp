#define BOOST_TEST_MODULE kernel_elementwise
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "core/kernels/kernel_util.h"
#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase bin(const std::string& op, const Tensor& a, const Tensor& b) {
  KernelCase c;
  c.op = op;
  c.inputs.push_back(cp(a));
  c.inputs.push_back(cp(b));
  return c;
}

KernelCase un(const std::string& op, const Tensor& a, Attributes attrs = {}) {
  KernelCase c;
  c.op = op;
  c.attrs = std::move(attrs);
  c.inputs.push_back(cp(a));
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(add_same_shape) {
  Tensor o = run1(bin("Add", make_f32({2, 2}, {1, 2, 3, 4}), make_f32({2, 2}, {10, 20, 30, 40})));
  BOOST_CHECK(o.dims() == (Dims{2, 2}));
  check_close(o, {11, 22, 33, 44});
}

BOOST_AUTO_TEST_CASE(broadcast_scalar_both_sides) {
  check_close(run1(bin("Sub", make_f32({3}, {1, 2, 3}), make_f32({}, {10}))), {-9, -8, -7});
  check_close(run1(bin("Sub", make_f32({}, {10}), make_f32({3}, {1, 2, 3}))), {9, 8, 7});
}

BOOST_AUTO_TEST_CASE(broadcast_row_column_and_both) {
  // [2,3] * [3] (row)
  check_close(run1(bin("Mul", make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({3}, {1, 10, 100}))),
              {1, 20, 300, 4, 50, 600});
  // [2,3] + [2,1] (column)
  check_close(run1(bin("Add", make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({2, 1}, {10, 20}))),
              {11, 12, 13, 24, 25, 26});
  // [3,1] - [1,2] -> [3,2] (both sides broadcast)
  Tensor o = run1(bin("Sub", make_f32({3, 1}, {10, 20, 30}), make_f32({1, 2}, {1, 2})));
  BOOST_CHECK(o.dims() == (Dims{3, 2}));
  check_close(o, {9, 8, 19, 18, 29, 28});
}

BOOST_AUTO_TEST_CASE(broadcast_per_channel_4d) {
  // [1,2,2,2] / [2,1,1]
  Tensor o =
      run1(bin("Div", make_f32({1, 2, 2, 2}, {2, 4, 6, 8, 10, 20, 30, 40}), make_f32({2, 1, 1}, {2, 10})));
  BOOST_CHECK(o.dims() == (Dims{1, 2, 2, 2}));
  check_close(o, {1, 2, 3, 4, 1, 2, 3, 4});
}

BOOST_AUTO_TEST_CASE(broadcast_large_threads_agree) {
  // Big enough for several parallel chunks; the middle axis is broadcast on one side only.
  Tensor a = random_f32({4, 1, 5000}, 1);
  Tensor b = random_f32({3, 1}, 2);
  Tensor o = run1(bin("Add", a, b));
  BOOST_CHECK(o.dims() == (Dims{4, 3, 5000}));
  // spot checks
  BOOST_CHECK_EQUAL(o.as<float>()[0], a.as<float>()[0] + b.as<float>()[0]);
  const int64_t idx = (3 * 3 + 2) * 5000 + 4321;  // [3, 2, 4321]
  BOOST_CHECK_EQUAL(o.as<float>()[idx], a.as<float>()[3 * 5000 + 4321] + b.as<float>()[2]);
}

BOOST_AUTO_TEST_CASE(broadcast_error_names_label_and_shapes) {
  const std::string m = run_error(bin("Add", make_f32({2, 3}, {}), make_f32({4}, {})));
  BOOST_CHECK_MESSAGE(m.find("test node (Add)") != std::string::npos, m);
  BOOST_CHECK_MESSAGE(m.find("2x3") != std::string::npos && m.find(" 4 ") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(empty_tensors) {
  Tensor o = run1(bin("Add", make_f32({0, 3}, {}), make_f32({3}, {1, 2, 3})));
  BOOST_CHECK(o.dims() == (Dims{0, 3}));
  Tensor o2 = run1(bin("Mul", make_f32({2, 0}, {}), make_f32({2, 1}, {1, 2})));
  BOOST_CHECK(o2.dims() == (Dims{2, 0}));
  Tensor o3 = run1(un("Relu", make_f32({0}, {})));
  BOOST_CHECK_EQUAL(o3.numel(), 0);
  // 0 vs 3 is not broadcastable.
  BOOST_CHECK(!run_kernel(bin("Add", make_f32({0}, {}), make_f32({3}, {1, 2, 3}))).ok());
}

BOOST_AUTO_TEST_CASE(int64_arithmetic) {
  Tensor o = run1(bin("Add", make_i64({3}, {1, -2, 3}), make_i64({1}, {10})));
  BOOST_CHECK(values<int64_t>(o) == (std::vector<int64_t>{11, 8, 13}));
  Tensor d = run1(bin("Div", make_i64({4}, {7, -7, 5, std::numeric_limits<int64_t>::min()}),
                      make_i64({4}, {2, 2, 0, -1})));
  // C truncation; division by zero -> 0; INT64_MIN / -1 wraps.
  BOOST_CHECK(values<int64_t>(d) == (std::vector<int64_t>{3, -3, 0, std::numeric_limits<int64_t>::min()}));
  Tensor m = run1(bin("Mul", make<int32_t>({2}, {3, -4}), make<int32_t>({}, {5})));
  BOOST_CHECK(values<int32_t>(m) == (std::vector<int32_t>{15, -20}));
  Tensor s = run1(bin("Sub", make<int32_t>({2}, {3, -4}), make<int32_t>({2}, {5, 5})));
  BOOST_CHECK(values<int32_t>(s) == (std::vector<int32_t>{-2, -9}));
}

BOOST_AUTO_TEST_CASE(pow_max_min_variadic) {
  check_close(run1(bin("Pow", make_f32({3}, {2, 3, 4}), make_f32({}, {2}))), {4, 9, 16});
  KernelCase c;
  c.op = "Max";
  c.inputs = ins(make_f32({3}, {1, 5, 3}), make_f32({}, {2}), make_f32({1, 3}, {0, 0, 4}));
  Tensor o = run1(c);
  BOOST_CHECK(o.dims() == (Dims{1, 3}));
  check_close(o, {2, 5, 4});
  c.op = "Min";
  check_close(run1(c), {0, 0, 2});
  c.op = "Sum";
  check_close(run1(c), {3, 7, 9});
  c.op = "Mean";
  check_close(run1(c), {1, 7.f / 3, 3});
  KernelCase one;
  one.op = "Max";
  one.inputs = ins(make_i64({2}, {4, -1}));
  BOOST_CHECK(values<int64_t>(run1(one)) == (std::vector<int64_t>{4, -1}));
  Tensor mi = run1(bin("Min", make_i64({2}, {4, -1}), make_i64({}, {0})));
  BOOST_CHECK(values<int64_t>(mi) == (std::vector<int64_t>{0, -1}));
}

BOOST_AUTO_TEST_CASE(mod_semantics) {
  Tensor m = run1(bin("Mod", make_i64({4}, {5, -5, 5, 5}), make_i64({4}, {3, 3, -3, 0})));
  BOOST_CHECK(values<int64_t>(m) == (std::vector<int64_t>{2, 1, -1, 0}));
  KernelCase f = bin("Mod", make_f32({2}, {5.5f, -5.5f}), make_f32({}, {2}));
  f.attrs.set("fmod", int64_t{1});
  check_close(run1(f), {1.5f, -1.5f});
  f.attrs.set("fmod", int64_t{0});
  BOOST_CHECK(!run_kernel(f).ok());
}

BOOST_AUTO_TEST_CASE(comparisons) {
  Tensor a = make_f32({3}, {1, 2, 3});
  Tensor b = make_f32({}, {2});
  auto cmp = [&](const std::string& op) { return values<uint8_t>(run1(bin(op, a, b))); };
  BOOST_CHECK(cmp("Equal") == (std::vector<uint8_t>{0, 1, 0}));
  BOOST_CHECK(cmp("Less") == (std::vector<uint8_t>{1, 0, 0}));
  BOOST_CHECK(cmp("Greater") == (std::vector<uint8_t>{0, 0, 1}));
  BOOST_CHECK(cmp("LessOrEqual") == (std::vector<uint8_t>{1, 1, 0}));
  BOOST_CHECK(cmp("GreaterOrEqual") == (std::vector<uint8_t>{0, 1, 1}));
  Tensor e = run1(bin("Equal", make_i64({2, 1}, {1, 2}), make_i64({2}, {1, 2})));
  BOOST_CHECK_EQUAL(e.dtype(), DType::boolean);
  BOOST_CHECK(values<uint8_t>(e) == (std::vector<uint8_t>{1, 0, 0, 1}));
  Tensor l = run1(bin("Less", make<int32_t>({2}, {-1, 5}), make<int32_t>({2}, {0, 5})));
  BOOST_CHECK(values<uint8_t>(l) == (std::vector<uint8_t>{1, 0}));
  // dtype mismatch is an error
  BOOST_CHECK(!run_kernel(bin("Less", make_f32({1}, {1}), make_i64({1}, {1}))).ok());
}

BOOST_AUTO_TEST_CASE(logic_ops) {
  Tensor a = make_bool({4}, {0, 0, 1, 1});
  Tensor b = make_bool({4}, {0, 1, 0, 1});
  BOOST_CHECK(values<uint8_t>(run1(bin("And", a, b))) == (std::vector<uint8_t>{0, 0, 0, 1}));
  BOOST_CHECK(values<uint8_t>(run1(bin("Or", a, b))) == (std::vector<uint8_t>{0, 1, 1, 1}));
  BOOST_CHECK(values<uint8_t>(run1(bin("Xor", a, b))) == (std::vector<uint8_t>{0, 1, 1, 0}));
  BOOST_CHECK(values<uint8_t>(run1(un("Not", a))) == (std::vector<uint8_t>{1, 1, 0, 0}));
  BOOST_CHECK(values<uint8_t>(run1(bin("Equal", a, b))) == (std::vector<uint8_t>{1, 0, 0, 1}));
  BOOST_CHECK(!run_kernel(bin("And", make_f32({1}, {1}), make_f32({1}, {1}))).ok());
}

BOOST_AUTO_TEST_CASE(where_three_way_broadcast) {
  KernelCase c;
  c.op = "Where";
  c.inputs = ins(make_bool({2, 1}, {1, 0}), make_f32({3}, {1, 2, 3}), make_f32({}, {-1}));
  Tensor o = run1(c);
  BOOST_CHECK(o.dims() == (Dims{2, 3}));
  check_close(o, {1, 2, 3, -1, -1, -1});
  c.inputs = ins(make_bool({3}, {0, 1, 0}), make_i64({3}, {1, 2, 3}), make_i64({3}, {7, 8, 9}));
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{7, 2, 9}));
  c.inputs = ins(make_bool({2}, {0, 1}), make_i64({3}, {1, 2, 3}), make_i64({3}, {7, 8, 9}));
  BOOST_CHECK(run_error(c).find("incompatible broadcast shapes") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(prelu_broadcast_slope) {
  KernelCase c = bin("PRelu", make_f32({1, 2, 2}, {-1, 2, -3, 4}), make_f32({2, 1}, {0.5f, 0.25f}));
  check_close(run1(c), {-0.5f, 2, -0.75f, 4});
  // slope may not grow the output
  BOOST_CHECK(!run_kernel(bin("PRelu", make_f32({2}, {1, 2}), make_f32({2, 2}, {1, 2, 3, 4}))).ok());
}

BOOST_AUTO_TEST_CASE(unary_math) {
  Tensor x = make_f32({4}, {-2, -0.5f, 0, 1.5f});
  check_close(run1(un("Relu", x)), {0, 0, 0, 1.5f});
  Attributes la;
  la.set("alpha", 0.1f);
  check_close(run1(un("LeakyRelu", x, la)), {-0.2f, -0.05f, 0, 1.5f});
  check_close(run1(un("Sigmoid", x)), {0.11920292f, 0.37754067f, 0.5f, 0.81757448f});
  check_close(run1(un("HardSigmoid", x)), {0.1f, 0.4f, 0.5f, 0.8f});
  check_close(run1(un("HardSwish", make_f32({4}, {-4, -1, 1, 4}))), {0, -1.f / 3, 2.f / 3, 4});
  check_close(run1(un("Tanh", x)), {-0.96402758f, -0.46211716f, 0, 0.90514825f});
  check_close(run1(un("Exp", x)), {0.13533528f, 0.60653066f, 1, 4.48168907f}, 1e-5f);
  check_close(run1(un("Log", make_f32({3}, {1, std::exp(2.f), 0}))), {0, 2, -INFINITY});
  check_close(run1(un("Sqrt", make_f32({2}, {4, 2.25f}))), {2, 1.5f});
  check_close(run1(un("Abs", x)), {2, 0.5f, 0, 1.5f});
  check_close(run1(un("Neg", x)), {2, 0.5f, 0, -1.5f});
  check_close(run1(un("Reciprocal", make_f32({2}, {4, -0.5f}))), {0.25f, -2});
  check_close(run1(un("Floor", x)), {-2, -1, 0, 1});
  check_close(run1(un("Ceil", x)), {-2, 0, 0, 2});
  check_close(run1(un("Round", make_f32({5}, {0.5f, 1.5f, 2.5f, -0.5f, 2.6f}))), {0, 2, 2, 0, 3});
  check_close(run1(un("Erf", make_f32({2}, {0, 1}))), {0, 0.84270079f});
  check_close(run1(un("Softplus", make_f32({3}, {0, 1, 100}))), {0.69314718f, 1.31326169f, 100});
  check_close(run1(un("Elu", x)), {-0.86466472f, -0.39346934f, 0, 1.5f});
  check_close(run1(un("Selu", make_f32({2}, {-1, 1}))), {-1.11133074f, 1.05070102f});
  check_close(run1(un("Gelu", make_f32({3}, {-1, 0, 1}))), {-0.15865526f, 0, 0.84134474f});
  Attributes ga;
  ga.set("approximate", std::string("tanh"));
  check_close(run1(un("Gelu", make_f32({2}, {-1, 1}), ga)), {-0.15880801f, 0.84119199f});
  check_close(run1(un("Sin", make_f32({2}, {0, 1.5707964f}))), {0, 1});
  check_close(run1(un("Cos", make_f32({2}, {0, 3.1415927f}))), {1, -1});
  check_close(run1(un("Sign", x)), {-1, -1, 0, 1});
}

BOOST_AUTO_TEST_CASE(unary_int_paths) {
  Tensor x = make_i64({3}, {-3, 0, 4});
  BOOST_CHECK(values<int64_t>(run1(un("Abs", x))) == (std::vector<int64_t>{3, 0, 4}));
  BOOST_CHECK(values<int64_t>(run1(un("Neg", x))) == (std::vector<int64_t>{3, 0, -4}));
  BOOST_CHECK(values<int64_t>(run1(un("Sign", x))) == (std::vector<int64_t>{-1, 0, 1}));
  BOOST_CHECK(values<int64_t>(run1(un("Relu", x))) == (std::vector<int64_t>{0, 0, 4}));
  BOOST_CHECK(!run_kernel(un("Exp", x)).ok());
}

BOOST_AUTO_TEST_CASE(clip_forms) {
  Tensor x = make_f32({4}, {-2, 0.5f, 3, 10});
  KernelCase c = un("Clip", x);
  c.inputs.push_back(make_f32({}, {0}));
  c.inputs.push_back(make_f32({}, {6}));
  c.constant = {false, true, true};
  check_close(run1(c), {0, 0.5f, 3, 6});
  c.constant = {false, false, false};  // runtime bounds
  check_close(run1(c), {0, 0.5f, 3, 6});
  c.inputs[1] = Tensor();  // only max
  check_close(run1(c), {-2, 0.5f, 3, 6});
  KernelCase ci = un("Clip", make_i64({3}, {-5, 5, 50}));
  ci.inputs.push_back(make_i64({}, {0}));
  ci.inputs.push_back(make_i64({}, {10}));
  BOOST_CHECK(values<int64_t>(run1(ci)) == (std::vector<int64_t>{0, 5, 10}));
  KernelCase old = un("Clip", x);
  old.opset = 6;
  old.attrs.set("min", -1.f);
  old.attrs.set("max", 1.f);
  check_close(run1(old), {-1, 0.5f, 1, 1});
  c.inputs[1] = make_f32({2}, {0, 1});
  BOOST_CHECK(!run_kernel(c).ok());
}

BOOST_AUTO_TEST_CASE(identity_dropout) {
  Tensor x = make_i64({2}, {7, 8});
  BOOST_CHECK(values<int64_t>(run1(un("Identity", x))) == (std::vector<int64_t>{7, 8}));
  check_close(run1(un("Dropout", make_f32({2}, {1, 2}))), {1, 2});
  // Inference: the mask is all true; training mode with a ratio above 0 and no seed would be random.
  KernelCase d = un("Dropout", make_f32({2}, {1, 2}));
  d.num_outputs = 2;
  auto r = run_all(d);
  BOOST_CHECK(values<uint8_t>(r[1]) == (std::vector<uint8_t>{1, 1}));
  d.inputs.push_back(make_f32({}, {0.5f}));
  d.inputs.push_back(make_bool({}, {1}));
  d.constant = {false, true, true};
  BOOST_CHECK(run_error(d).find("at random") != std::string::npos);
  d.inputs[1] = make_f32({}, {0});  // ratio 0 in training mode keeps everything
  BOOST_CHECK(values<uint8_t>(run_all(d)[1]) == (std::vector<uint8_t>{1, 1}));
}

BOOST_AUTO_TEST_CASE(dropout_training_with_a_seed_draws_like_numpy) {
  // numpy: np.random.seed(0); np.random.uniform(0, 1, 4) = [0.5488, 0.7152, 0.6028, 0.5449],
  // so ratio 0.6 keeps elements 1 and 2, scaled by 1 / 0.4.
  KernelCase d = un("Dropout", make_f32({4}, {1, 2, 3, 4}));
  d.attrs.set("seed", int64_t{0});
  d.num_outputs = 2;
  d.inputs.push_back(make_f32({}, {0.6f}));
  d.inputs.push_back(make_bool({}, {1}));
  d.constant = {false, true, true};
  auto r = run_all(d);
  check_close(r[0], {0, 5, 7.5f, 0});
  BOOST_CHECK(values<uint8_t>(r[1]) == (std::vector<uint8_t>{0, 1, 1, 0}));
  d.inputs[1] = make_f32({}, {1.f});
  BOOST_CHECK(run_error(d).find("[0, 1)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cast_conversions) {
  auto cast = [](const Tensor& t, DType to) {
    KernelCase c = un("Cast", t);
    c.attrs.set("to", static_cast<int64_t>(to));
    return run1(c);
  };
  // float -> int truncates toward zero, saturates, NaN -> 0
  Tensor i = cast(make_f32({5}, {2.7f, -2.7f, 1e20f, -1e20f, NAN}), DType::int32);
  BOOST_CHECK(values<int32_t>(i) == (std::vector<int32_t>{2, -2, std::numeric_limits<int32_t>::max(),
                                                          std::numeric_limits<int32_t>::min(), 0}));
  Tensor u8 = cast(make_f32({3}, {-1, 255.9f, 300}), DType::uint8);
  BOOST_CHECK(values<uint8_t>(u8) == (std::vector<uint8_t>{0, 255, 255}));
  Tensor i8 = cast(make_i64({2}, {130, -1}), DType::int8);  // integer narrowing wraps
  BOOST_CHECK(values<int8_t>(i8) == (std::vector<int8_t>{-126, -1}));
  Tensor b = cast(make_f32({3}, {0, -0.5f, 2}), DType::boolean);
  BOOST_CHECK(values<uint8_t>(b) == (std::vector<uint8_t>{0, 1, 1}));
  check_close(cast(b, DType::float32), {0, 1, 1});
  // float16 round trip: exact for representable values, rounding for others
  Tensor h = cast(make_f32({6}, {1.f, -2.5f, 65504.f, 1e6f, 5.9604645e-8f, 1.0004883f}), DType::float16);
  BOOST_CHECK(values<uint16_t>(h) == (std::vector<uint16_t>{0x3c00, 0xc100, 0x7bff, 0x7c00, 0x0001, 0x3c00}));
  check_close(cast(h, DType::float32), {1.f, -2.5f, 65504.f, INFINITY, 5.9604645e-8f, 1.f}, 0);
  // int64 round trip through float64 and int32
  Tensor big = make_i64({2}, {1234567890123LL, -5});
  BOOST_CHECK(values<int64_t>(cast(cast(big, DType::float64), DType::int64)) == values<int64_t>(big));
  BOOST_CHECK(values<int64_t>(cast(cast(make_i64({2}, {-7, 9}), DType::int32), DType::int64)) ==
              (std::vector<int64_t>{-7, 9}));
  Tensor i16 = cast(make_f32({2}, {-3.9f, 40000}), DType::int16);
  BOOST_CHECK(values<int16_t>(i16) == (std::vector<int16_t>{-3, 32767}));
  KernelCase bad = un("Cast", make_f32({1}, {1}));
  bad.attrs.set("to", int64_t{8});  // string
  BOOST_CHECK(!run_kernel(bad).ok());
}

BOOST_AUTO_TEST_CASE(small_and_unsigned_integers_wrap_and_never_trap) {
  // uint8 wraps; uint16 * uint16 must not overflow the int it promotes to.
  auto u8 = run1(bin("Add", make<uint8_t>({3}, {250, 1, 7}), make<uint8_t>({3}, {10, 2, 0})));
  BOOST_CHECK(values<uint8_t>(u8) == (std::vector<uint8_t>{4, 3, 7}));
  auto u16 = run1(bin("Mul", make<uint16_t>({1}, {65535}), make<uint16_t>({1}, {65535})));
  BOOST_CHECK(values<uint16_t>(u16) == (std::vector<uint16_t>{1}));
  // Unsigned division and modulo: no signed -1 special case, 0 divisor gives 0.
  auto ud =
      run1(bin("Div", make<uint32_t>({3}, {7, 4294967295u, 5}), make<uint32_t>({3}, {2, 4294967295u, 0})));
  BOOST_CHECK(values<uint32_t>(ud) == (std::vector<uint32_t>{3, 1, 0}));
  auto um = run1(bin("Mod", make<uint64_t>({2}, {7, 9}), make<uint64_t>({2}, {~uint64_t{0}, 4})));
  BOOST_CHECK(values<uint64_t>(um) == (std::vector<uint64_t>{7, 1}));
  auto mx = run1(bin("Max", make<int8_t>({3}, {-128, 5, 0}), make<int8_t>({3}, {127, -5, 0})));
  BOOST_CHECK(values<int8_t>(mx) == (std::vector<int8_t>{127, 5, 0}));
  auto md = run1(bin("Mod", make<int16_t>({2}, {-7, 7}), make<int16_t>({2}, {3, -3})));
  BOOST_CHECK(values<int16_t>(md) == (std::vector<int16_t>{2, -2}));
}

BOOST_AUTO_TEST_CASE(float16_arithmetic_is_computed_in_float) {
  const uint16_t one = kern::float_to_half(1.f), two = kern::float_to_half(2.f),
                 half = kern::float_to_half(0.5f);
  Tensor a(DType::float16, {2}), b(DType::float16, {2});
  a.as<uint16_t>()[0] = one;
  a.as<uint16_t>()[1] = two;
  b.as<uint16_t>()[0] = b.as<uint16_t>()[1] = half;
  auto m = run1(bin("Max", a, b));
  BOOST_CHECK(m.dtype() == DType::float16);
  BOOST_CHECK(kern::half_to_float(m.as<uint16_t>()[0]) == 1.f);
  auto lt = run1(bin("Less", a, b));
  BOOST_CHECK(lt.dtype() == DType::boolean);
  BOOST_CHECK(values<uint8_t>(lt) == (std::vector<uint8_t>{0, 0}));
}

BOOST_AUTO_TEST_CASE(pow_takes_mixed_dtypes) {
  // float base, integer exponent; integer base, float exponent; integer both (exact).
  check_close(run1(bin("Pow", make_f32({3}, {2, 3, 4}), make_i64({3}, {2, 0, -1}))), {4, 1, 0.25f});
  auto ib = run1(bin("Pow", make<int32_t>({3}, {1, 2, 3}), make_f32({3}, {4, 5, 0.5f})));
  BOOST_CHECK(values<int32_t>(ib) == (std::vector<int32_t>{1, 32, 1}));
  auto ii = run1(bin("Pow", make_i64({4}, {3, -2, 2, 5}), make_i64({4}, {3, 3, -1, 0})));
  BOOST_CHECK(values<int64_t>(ii) == (std::vector<int64_t>{27, -8, 0, 1}));
  // Wraps rather than overflowing: 3^100 mod 2^64, as int64.
  auto big = run1(bin("Pow", make_i64({1}, {3}), make_i64({1}, {100})));
  BOOST_CHECK(values<int64_t>(big) == (std::vector<int64_t>{-2984622845537545263}));
  // Unsigned exponents of another width; a negative float exponent on an integer base truncates.
  auto u = run1(bin("Pow", make<int32_t>({3}, {-2, 7, 4}), make<uint8_t>({3}, {3, 0, 255})));
  BOOST_CHECK(values<int32_t>(u) == (std::vector<int32_t>{-8, 1, 0}));
  auto nf = run1(bin("Pow", make<int16_t>({2}, {2, 4}), make_f32({2}, {-1, 0.5f})));
  BOOST_CHECK(values<int16_t>(nf) == (std::vector<int16_t>{0, 2}));
  // A float64 base with an int32 exponent, broadcast.
  auto d = run1(bin("Pow", make<double>({2}, {1.5, -2}), make<int32_t>({1}, {3})));
  BOOST_CHECK(values<double>(d) == (std::vector<double>{3.375, -8}));
}

BOOST_AUTO_TEST_CASE(more_unary_math) {
  check_close(run1(un("Tan", make_f32({2}, {0, 0.5f}))), {0, std::tan(0.5f)});
  check_close(run1(un("Asin", make_f32({2}, {0, 1}))), {0, 1.5707964f});
  check_close(run1(un("Acosh", make_f32({1}, {1}))), {0});
  check_close(run1(un("Atanh", make_f32({1}, {0.5f}))), {std::atanh(0.5f)});
  check_close(run1(un("Softsign", make_f32({2}, {-1, 3}))), {-0.5f, 0.75f});
  Attributes t;
  t.set("alpha", 2.f);
  check_close(run1(un("ThresholdedRelu", make_f32({3}, {1, 2, 3}), t)), {0, 0, 3});
  Attributes sh;
  sh.set("lambd", 1.f);
  sh.set("bias", 0.5f);
  check_close(run1(un("Shrink", make_f32({3}, {-2, 0.5f, 2}), sh)), {-1.5f, 0, 1.5f});
  check_close(run1(un("Celu", make_f32({2}, {-1, 2}))), {std::exp(-1.f) - 1.f, 2});
}

BOOST_AUTO_TEST_CASE(isnan_isinf_and_bitshift) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  auto n = run1(un("IsNaN", make_f32({3}, {nan, 1, inf})));
  BOOST_CHECK(values<uint8_t>(n) == (std::vector<uint8_t>{1, 0, 0}));
  Attributes neg_only;
  neg_only.set("detect_positive", int64_t{0});
  auto i = run1(un("IsInf", make_f32({3}, {-inf, inf, nan}), neg_only));
  BOOST_CHECK(values<uint8_t>(i) == (std::vector<uint8_t>{1, 0, 0}));
  KernelCase sl = bin("BitShift", make<uint8_t>({3}, {1, 255, 3}), make<uint8_t>({3}, {3, 1, 9}));
  sl.attrs.set("direction", std::string("LEFT"));
  BOOST_CHECK(values<uint8_t>(run1(sl)) == (std::vector<uint8_t>{8, 254, 0}));
  KernelCase sr = bin("BitShift", make<uint64_t>({2}, {16, 16}), make<uint64_t>({2}, {2, 64}));
  sr.attrs.set("direction", std::string("RIGHT"));
  BOOST_CHECK(values<uint64_t>(run1(sr)) == (std::vector<uint64_t>{4, 0}));
  sr.attrs.set("direction", std::string("UP"));
  BOOST_CHECK(run_error(sr).find("direction") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(castlike_and_bfloat16) {
  KernelCase c = bin("CastLike", make_f32({2}, {1.5f, -2}), make_i64({1}, {0}));
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{1, -2}));
  // float32 -> bfloat16 keeps the upper 16 bits; back again is exact for those values.
  Tensor like(DType::bfloat16, {1});
  KernelCase b = bin("CastLike", make_f32({2}, {1.f, 0.4789254f}), like);
  Tensor bf = run1(b);
  BOOST_CHECK(bf.dtype() == DType::bfloat16);
  BOOST_CHECK(bf.as<uint16_t>()[0] == 0x3f80);
  BOOST_CHECK(bf.as<uint16_t>()[1] == static_cast<uint16_t>(std::bit_cast<uint32_t>(0.4789254f) >> 16));
  KernelCase back = bin("CastLike", bf, make_f32({1}, {0}));
  check_close(run1(back), {1.f, kern::bf16_to_float(bf.as<uint16_t>()[1])}, 0);
}

BOOST_AUTO_TEST_CASE(clip_small_integers_and_float16) {
  KernelCase c = un("Clip", make<int8_t>({3}, {-128, 5, 127}));
  c.inputs.push_back(make<int8_t>({}, {-3}));
  c.inputs.push_back(make<int8_t>({}, {4}));
  BOOST_CHECK(values<int8_t>(run1(c)) == (std::vector<int8_t>{-3, 4, 4}));
}
