#define BOOST_TEST_MODULE kernel_shape_ops
#include <boost/test/unit_test.hpp>
#include <limits>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// data plus constant (shape-like) inputs; an undefined Tensor marks an omitted input.
KernelCase with_consts(const std::string& op, std::vector<Tensor> inputs, Attributes attrs = {}) {
  KernelCase c;
  c.op = op;
  c.attrs = std::move(attrs);
  c.constant.assign(inputs.size(), true);
  c.constant[0] = false;
  c.inputs = std::move(inputs);
  return c;
}

std::vector<float> iota_f(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

Attributes attr_int(const std::string& name, int64_t v) {
  Attributes a;
  a.set(name, v);
  return a;
}

Attributes attr_ints(const std::string& name, std::vector<int64_t> v) {
  Attributes a;
  a.set(name, std::move(v));
  return a;
}

}  // namespace

BOOST_AUTO_TEST_CASE(shape_and_size) {
  KernelCase c = with_consts("Shape", ins(make_f32({2, 3, 4}, {})));
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{2, 3, 4}));
  c.attrs.set("start", int64_t{-2});
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{3, 4}));
  c.attrs.set("end", int64_t{-1});
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{3}));
  c.attrs.set("start", int64_t{5});  // clamped: empty
  BOOST_CHECK_EQUAL(run1(c).numel(), 0);
  Tensor s = run1(with_consts("Size", ins(make_f32({2, 3, 4}, {}))));
  BOOST_CHECK_EQUAL(s.dims().rank(), 0);
  BOOST_CHECK_EQUAL(s.as<int64_t>()[0], 24);
}

BOOST_AUTO_TEST_CASE(reshape_zero_minus_one) {
  Tensor o = run1(with_consts("Reshape", ins(make_f32({2, 3, 4}, iota_f(24)), make_i64({3}, {0, -1, 2}))));
  BOOST_CHECK(o.dims() == (Dims{2, 6, 2}));
  BOOST_CHECK_EQUAL(o.as<float>()[23], 23.f);
  // allowzero=1: 0 is a real zero dim
  Tensor z = run1(
      with_consts("Reshape", ins(make_f32({0, 3}, {}), make_i64({2}, {3, 0})), attr_int("allowzero", 1)));
  BOOST_CHECK(z.dims() == (Dims{3, 0}));
  BOOST_CHECK(!run_kernel(with_consts("Reshape", ins(make_f32({2, 3}, {}), make_i64({2}, {4, -1})))).ok());
  BOOST_CHECK(!run_kernel(with_consts("Reshape", ins(make_f32({2, 3}, {}), make_i64({2}, {-1, -1})))).ok());
}

BOOST_AUTO_TEST_CASE(reshape_runtime_shape_is_clear_error) {
  KernelCase c = with_consts("Reshape", ins(make_f32({2, 3}, {}), make_i64({1}, {6})));
  c.constant = {false, false};
  const std::string m = run_error(c);
  BOOST_CHECK_MESSAGE(m.find("shape of Reshape is only known at run time") != std::string::npos, m);
  BOOST_CHECK(m.find("test node (Reshape)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(flatten_axes) {
  Tensor x = make_f32({2, 3, 4}, iota_f(24));
  BOOST_CHECK(run1(with_consts("Flatten", ins(cp(x)))).dims() == (Dims{2, 12}));
  BOOST_CHECK(run1(with_consts("Flatten", ins(cp(x)), attr_int("axis", 0))).dims() == (Dims{1, 24}));
  BOOST_CHECK(run1(with_consts("Flatten", ins(cp(x)), attr_int("axis", -1))).dims() == (Dims{6, 4}));
  BOOST_CHECK(run1(with_consts("Flatten", ins(cp(x)), attr_int("axis", 3))).dims() == (Dims{24, 1}));
  BOOST_CHECK(!run_kernel(with_consts("Flatten", ins(cp(x)), attr_int("axis", 4))).ok());
}

BOOST_AUTO_TEST_CASE(squeeze_unsqueeze) {
  Tensor x = make_f32({1, 3, 1, 2}, iota_f(6));
  BOOST_CHECK(run1(with_consts("Squeeze", ins(cp(x)))).dims() == (Dims{3, 2}));
  BOOST_CHECK(run1(with_consts("Squeeze", ins(cp(x), make_i64({1}, {-2})))).dims() == (Dims{1, 3, 2}));
  BOOST_CHECK(!run_kernel(with_consts("Squeeze", ins(cp(x), make_i64({1}, {1})))).ok());  // size 3
  Tensor u = run1(with_consts("Unsqueeze", ins(make_f32({3}, {1, 2, 3}), make_i64({2}, {0, -1}))));
  BOOST_CHECK(u.dims() == (Dims{1, 3, 1}));
  check_close(u, {1, 2, 3});
  BOOST_CHECK(!run_kernel(with_consts("Unsqueeze", ins(make_f32({3}, {}), make_i64({2}, {0, 0})))).ok());
  KernelCase old = with_consts("Unsqueeze", ins(make_f32({2}, {1, 2})), attr_ints("axes", {1}));
  old.opset = 11;
  BOOST_CHECK(run1(old).dims() == (Dims{2, 1}));
}

BOOST_AUTO_TEST_CASE(transpose_perms) {
  // default: reverse
  Tensor t = run1(with_consts("Transpose", ins(make_f32({2, 3}, {0, 1, 2, 3, 4, 5}))));
  BOOST_CHECK(t.dims() == (Dims{3, 2}));
  check_close(t, {0, 3, 1, 4, 2, 5});
  // NCHW -> NHWC on [1,2,2,3]
  Tensor x = make_f32({1, 2, 2, 3}, iota_f(12));
  Tensor n = run1(with_consts("Transpose", ins(cp(x)), attr_ints("perm", {0, 2, 3, 1})));
  BOOST_CHECK(n.dims() == (Dims{1, 2, 3, 2}));
  check_close(n, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11});
  // and back
  Tensor back = run1(with_consts("Transpose", ins(cp(n)), attr_ints("perm", {0, 3, 1, 2})));
  BOOST_CHECK_EQUAL(max_abs_diff(back, x), 0.0);
  // 3-D [0,2,1] with int64 data and a generic perm
  Tensor y = run1(with_consts("Transpose", ins(make_i64({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})),
                              attr_ints("perm", {1, 0, 2})));
  BOOST_CHECK(values<int64_t>(y) == (std::vector<int64_t>{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}));
  BOOST_CHECK(!run_kernel(with_consts("Transpose", ins(cp(x)), attr_ints("perm", {0, 1, 1, 2}))).ok());
}

BOOST_AUTO_TEST_CASE(transpose_large_tiled_matches_definition) {
  Tensor x = random_f32({2, 67, 45}, 3);
  Tensor o = run1(with_consts("Transpose", ins(cp(x)), attr_ints("perm", {0, 2, 1})));
  BOOST_CHECK(o.dims() == (Dims{2, 45, 67}));
  bool ok = true;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 67; ++i)
      for (int j = 0; j < 45; ++j)
        ok = ok && o.as<float>()[(b * 45 + j) * 67 + i] == x.as<float>()[(b * 67 + i) * 45 + j];
  BOOST_CHECK(ok);
}

BOOST_AUTO_TEST_CASE(transpose_of_patches_matches_definition) {
  // A patch rearrangement [N,C,H/k,k,W/k,k] -> [N,C,k,k,H/k,W/k] (unfold_patch_conv): the input's
  // contiguous axis lands third from last, tiles of it x the last axis with the rest a batch.
  const int64_t C = 3, P = 5, K = 9, Q = 10;  // H/k = 5, W/k = 10, k = 9
  Tensor x = random_f32({1, C, P, K, Q, K}, 11);
  auto r =
      run_kernel(with_consts("Transpose", ins(cp(x)), attr_ints("perm", {0, 1, 3, 5, 2, 4})), "reference");
  BOOST_TEST_REQUIRE(r.ok());
  const Tensor& o = (*r)[0];
  BOOST_TEST_REQUIRE((o.dims() == Dims{1, C, K, K, P, Q}));
  bool ok = true;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t ky = 0; ky < K; ++ky)
      for (int64_t kx = 0; kx < K; ++kx)
        for (int64_t p = 0; p < P; ++p)
          for (int64_t q = 0; q < Q; ++q)
            ok = ok && o.as<float>()[(((c * K + ky) * K + kx) * P + p) * Q + q] ==
                           x.as<float>()[(((c * P + p) * K + ky) * Q + q) * K + kx];
  BOOST_CHECK(ok);
}

BOOST_AUTO_TEST_CASE(transpose_of_few_planes_matches_definition) {
  // NCHW -> NHWC of an image with 1 to 4 channels has a loop of its own (5 takes the tiles);
  // 37 x 41 pixels leave partial chunks and odd plane strides.
  for (int64_t c = 1; c <= 5; ++c) {
    Tensor x = random_f32({1, c, 37, 41}, static_cast<uint32_t>(c));
    Tensor o = run1(with_consts("Transpose", ins(cp(x)), attr_ints("perm", {0, 2, 3, 1})));
    BOOST_TEST_REQUIRE((o.dims() == Dims{1, 37, 41, c}));
    bool ok = true;
    for (int64_t p = 0; p < 37 * 41; ++p)
      for (int64_t k = 0; k < c; ++k) ok = ok && o.as<float>()[p * c + k] == x.as<float>()[k * 37 * 41 + p];
    BOOST_TEST(ok, "channels " << c);
  }
}

BOOST_AUTO_TEST_CASE(concat_and_split) {
  KernelCase c = with_consts(
      "Concat", ins(make_f32({2, 1}, {1, 2}), make_f32({2, 2}, {3, 4, 5, 6}), make_f32({2, 0}, {})),
      attr_int("axis", -1));
  c.constant = {false, false, false};
  Tensor o = run1(c);
  BOOST_CHECK(o.dims() == (Dims{2, 3}));
  check_close(o, {1, 3, 4, 2, 5, 6});
  c.inputs[1] = make_f32({3, 2}, {});
  const std::string m = run_error(c);
  BOOST_CHECK_MESSAGE(m.find("2x1") != std::string::npos && m.find("3x2") != std::string::npos, m);

  KernelCase s =
      with_consts("Split", ins(make_f32({2, 3}, iota_f(6)), make_i64({2}, {1, 2})), attr_int("axis", 1));
  s.num_outputs = 2;
  auto outs = run_all(s);
  BOOST_CHECK(outs[0].dims() == (Dims{2, 1}));
  check_close(outs[0], {0, 3});
  check_close(outs[1], {1, 2, 4, 5});
  // equal split without sizes; opset-18 num_outputs with a smaller last chunk
  KernelCase e = with_consts("Split", ins(make_i64({4}, {1, 2, 3, 4})));
  e.num_outputs = 2;
  auto eo = run_all(e);
  BOOST_CHECK(values<int64_t>(eo[1]) == (std::vector<int64_t>{3, 4}));
  KernelCase n = with_consts("Split", ins(make_i64({5}, {1, 2, 3, 4, 5})), attr_int("num_outputs", 2));
  n.num_outputs = 2;
  n.opset = 18;
  auto no = run_all(n);
  BOOST_CHECK(values<int64_t>(no[0]) == (std::vector<int64_t>{1, 2, 3}));
  BOOST_CHECK(values<int64_t>(no[1]) == (std::vector<int64_t>{4, 5}));
  KernelCase old = with_consts("Split", ins(make_i64({3}, {1, 2, 3})), attr_ints("split", {2, 1}));
  old.opset = 11;
  old.num_outputs = 2;
  BOOST_CHECK(values<int64_t>(run_all(old)[0]) == (std::vector<int64_t>{1, 2}));
  e.inputs[0] = make_i64({3}, {1, 2, 3});
  BOOST_CHECK(!run_kernel(e).ok());
}

BOOST_AUTO_TEST_CASE(slice_forms) {
  Tensor x = make_f32({3, 4}, iota_f(12));
  // basic with axes
  Tensor a =
      run1(with_consts("Slice", ins(cp(x), make_i64({1}, {1}), make_i64({1}, {3}), make_i64({1}, {1}))));
  BOOST_CHECK(a.dims() == (Dims{3, 2}));
  check_close(a, {1, 2, 5, 6, 9, 10});
  // negative start, INT64_MAX end, negative axis
  Tensor b =
      run1(with_consts("Slice", ins(cp(x), make_i64({1}, {-2}), make_i64({1}, {kMax}), make_i64({1}, {-2}))));
  BOOST_CHECK(b.dims() == (Dims{2, 4}));
  check_close(b, {4, 5, 6, 7, 8, 9, 10, 11});
  // negative step reverses: ends = INT64_MIN means "through the start"
  Tensor c = run1(with_consts(
      "Slice", ins(cp(x), make_i64({1}, {-1}), make_i64({1}, {std::numeric_limits<int64_t>::min()}),
                   make_i64({1}, {1}), make_i64({1}, {-1}))));
  BOOST_CHECK(c.dims() == (Dims{3, 4}));
  check_close(c, {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
  // step 2 on both axes, step -2 from 3 down to (exclusive) 0
  Tensor d = run1(with_consts("Slice", ins(cp(x), make_i64({2}, {0, 3}), make_i64({2}, {3, 0}),
                                           make_i64({2}, {0, 1}), make_i64({2}, {2, -2}))));
  BOOST_CHECK(d.dims() == (Dims{2, 2}));
  check_close(d, {3, 1, 11, 9});
  // empty result
  Tensor e =
      run1(with_consts("Slice", ins(cp(x), make_i64({1}, {3}), make_i64({1}, {1}), make_i64({1}, {1}))));
  BOOST_CHECK(e.dims() == (Dims{3, 0}));
  // step 0 and runtime starts are errors
  BOOST_CHECK(!run_kernel(with_consts("Slice", ins(cp(x), make_i64({1}, {0}), make_i64({1}, {1}),
                                                   make_i64({1}, {0}), make_i64({1}, {0}))))
                   .ok());
  KernelCase rt = with_consts("Slice", ins(cp(x), make_i64({1}, {0}), make_i64({1}, {1})));
  rt.constant = {false, false, true};
  BOOST_CHECK(run_error(rt).find("only known at run time") != std::string::npos);
  KernelCase old = with_consts("Slice", ins(cp(x)), attr_ints("starts", {1}));
  old.attrs.set("ends", std::vector<int64_t>{2});
  old.opset = 9;
  check_close(run1(old), {4, 5, 6, 7});
}

BOOST_AUTO_TEST_CASE(gather_axes_and_negative_indices) {
  Tensor x = make_f32({3, 2}, {0, 1, 10, 11, 20, 21});
  KernelCase c = with_consts("Gather", ins(cp(x), make_i64({2}, {-1, 0})));
  c.constant = {false, false};
  Tensor o = run1(c);
  BOOST_CHECK(o.dims() == (Dims{2, 2}));
  check_close(o, {20, 21, 0, 1});
  // axis 1, 2-D int32 indices
  KernelCase c1 =
      with_consts("Gather", ins(cp(x), make<int32_t>({2, 2}, {1, 0, 1, 1})), attr_int("axis", -1));
  c1.constant = {false, false};
  Tensor o1 = run1(c1);
  BOOST_CHECK(o1.dims() == (Dims{3, 2, 2}));
  check_close(o1, {1, 0, 1, 1, 11, 10, 11, 11, 21, 20, 21, 21});
  // scalar index drops the axis; int64 data
  KernelCase s = with_consts("Gather", ins(make_i64({3}, {5, 6, 7}), make_i64({}, {1})));
  Tensor so = run1(s);
  BOOST_CHECK_EQUAL(so.dims().rank(), 0);
  BOOST_CHECK_EQUAL(so.as<int64_t>()[0], 6);
  // out-of-range indices are clamped, never read out of bounds
  KernelCase bad = with_consts("Gather", ins(cp(x), make_i64({2}, {7, -9})));
  check_close(run1(bad), {20, 21, 0, 1});
}

BOOST_AUTO_TEST_CASE(gather_elements) {
  KernelCase c =
      with_consts("GatherElements", ins(make_f32({2, 2}, {1, 2, 3, 4}), make_i64({2, 2}, {0, 0, 1, -2})),
                  attr_int("axis", 1));
  check_close(run1(c), {1, 1, 4, 3});
  c.attrs.set("axis", int64_t{0});
  c.inputs[1] = make_i64({1, 2}, {1, 0});
  check_close(run1(c), {3, 2});
}

BOOST_AUTO_TEST_CASE(expand_and_tile) {
  Tensor e = run1(with_consts("Expand", ins(make_f32({3, 1}, {1, 2, 3}), make_i64({3}, {2, 1, 2}))));
  BOOST_CHECK(e.dims() == (Dims{2, 3, 2}));
  check_close(e, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  BOOST_CHECK(!run_kernel(with_consts("Expand", ins(make_f32({3}, {}), make_i64({1}, {2})))).ok());
  Tensor t = run1(with_consts("Tile", ins(make_i64({2, 2}, {1, 2, 3, 4}), make_i64({2}, {2, 3}))));
  BOOST_CHECK(t.dims() == (Dims{4, 6}));
  BOOST_CHECK(values<int64_t>(t) ==
              (std::vector<int64_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  BOOST_CHECK(run1(with_consts("Tile", ins(make_f32({2}, {1, 2}), make_i64({1}, {0})))).dims() == (Dims{0}));
  BOOST_CHECK(
      !run_kernel(with_consts("Tile", ins(make_f32({2}, {1, 2}), make_i64({1}, {int64_t{1} << 62})))).ok());
}

BOOST_AUTO_TEST_CASE(constant_of_shape_and_range) {
  KernelCase zc = with_consts("ConstantOfShape", ins(make_i64({2}, {2, 3})));
  zc.constant = {true};
  Tensor z = run1(zc);
  zc.constant = {false};
  BOOST_CHECK(run_error(zc).find("only known at run time") != std::string::npos);
  BOOST_CHECK(z.dims() == (Dims{2, 3}));
  check_close(z, {0, 0, 0, 0, 0, 0});
  Attributes a;
  TensorAttr v{DType::int64, {1}, {}};
  const int64_t seven = 7;
  v.bytes.resize(8);
  std::memcpy(v.bytes.data(), &seven, 8);
  a.set("value", v);
  KernelCase c = with_consts("ConstantOfShape", ins(make_i64({1}, {3})), a);
  c.constant = {true};
  Tensor s = run1(c);
  BOOST_CHECK(values<int64_t>(s) == (std::vector<int64_t>{7, 7, 7}));

  KernelCase r = with_consts("Range", ins(make_i64({}, {10}), make_i64({}, {1}), make_i64({}, {-3})));
  r.constant = {true, true, true};
  BOOST_CHECK(values<int64_t>(run1(r)) == (std::vector<int64_t>{10, 7, 4}));
  KernelCase rf = with_consts("Range", ins(make_f32({}, {0}), make_f32({}, {1}), make_f32({}, {0.25f})));
  rf.constant = {true, true, true};
  check_close(run1(rf), {0, 0.25f, 0.5f, 0.75f});
  KernelCase re = with_consts("Range", ins(make_i64({}, {5}), make_i64({}, {1}), make_i64({}, {1})));
  re.constant = {true, true, true};
  BOOST_CHECK_EQUAL(run1(re).numel(), 0);
  re.inputs[2] = make_i64({}, {0});
  BOOST_CHECK(!run_kernel(re).ok());
}

BOOST_AUTO_TEST_CASE(pad_modes) {
  Tensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Attributes m;
  KernelCase c = with_consts("Pad", ins(cp(x), make_i64({4}, {1, 2, 0, 1}), make_f32({}, {9})));
  Tensor o = run1(c);
  BOOST_CHECK(o.dims() == (Dims{3, 6}));
  check_close(o, {9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9});
  c.attrs.set("mode", std::string("reflect"));
  check_close(run1(c), {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
  c.attrs.set("mode", std::string("edge"));
  check_close(run1(c), {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6});
  // negative pads crop; no constant_value -> 0
  KernelCase n = with_consts("Pad", ins(cp(x), make_i64({4}, {0, -1, 0, 1})));
  Tensor no = run1(n);
  BOOST_CHECK(no.dims() == (Dims{2, 3}));
  check_close(no, {2, 3, 0, 5, 6, 0});
  // reflect pads must be smaller than the dim
  KernelCase bad = with_consts("Pad", ins(cp(x), make_i64({4}, {0, 3, 0, 0})));
  bad.attrs.set("mode", std::string("reflect"));
  BOOST_CHECK(!run_kernel(bad).ok());
  // int64 data, opset-18 axes input
  KernelCase ax = with_consts("Pad", ins(make_i64({2, 2}, {1, 2, 3, 4}), make_i64({2}, {1, 0}),
                                         make_i64({}, {-1}), make_i64({1}, {-1})));
  BOOST_CHECK(values<int64_t>(run1(ax)) == (std::vector<int64_t>{-1, 1, 2, -1, 3, 4}));
}

BOOST_AUTO_TEST_CASE(depth_space_round_trip) {
  Tensor x = make_f32({1, 4, 1, 2}, iota_f(8));
  Attributes a;
  a.set("blocksize", int64_t{2});
  Tensor d = run1(with_consts("DepthToSpace", ins(cp(x)), a));
  BOOST_CHECK(d.dims() == (Dims{1, 1, 2, 4}));
  // DCR: out[0,0,h*2+i, w*2+j] = in[0, (i*2+j), h, w]
  check_close(d, {0, 2, 1, 3, 4, 6, 5, 7});
  Tensor back = run1(with_consts("SpaceToDepth", ins(cp(d)), a));
  BOOST_CHECK_EQUAL(max_abs_diff(back, x), 0.0);
  a.set("mode", std::string("CRD"));
  Tensor crd = run1(with_consts("DepthToSpace", ins(make_f32({1, 8, 1, 1}, iota_f(8))), a));
  BOOST_CHECK(crd.dims() == (Dims{1, 2, 2, 2}));
  check_close(crd, {0, 1, 2, 3, 4, 5, 6, 7});
}

BOOST_AUTO_TEST_CASE(hostile_shapes_are_rejected_or_safe) {
  // Unsqueeze past the maximum rank
  BOOST_CHECK(
      !run_kernel(with_consts("Unsqueeze", ins(make_f32({1, 1, 1, 1, 1, 1, 1, 1}, {0}), make_i64({1}, {0}))))
           .ok());
  // Expand into an enormous shape
  const std::string m = run_error(
      with_consts("Expand", ins(make_f32({1}, {1}), make_i64({3}, {int64_t{1} << 30, int64_t{1} << 30, 4}))));
  BOOST_CHECK_MESSAGE(m.find("too large") != std::string::npos, m);
  // Extreme steps select a single element without overflow
  Tensor x = make_f32({3, 4}, iota_f(12));
  Tensor a = run1(with_consts("Slice", ins(cp(x), make_i64({1}, {0}), make_i64({1}, {kMax}),
                                           make_i64({1}, {1}), make_i64({1}, {kMax}))));
  BOOST_CHECK(a.dims() == (Dims{3, 1}));
  check_close(a, {0, 4, 8});
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Tensor b = run1(with_consts("Slice", ins(cp(x), make_i64({1}, {-1}), make_i64({1}, {kMin}),
                                           make_i64({1}, {1}), make_i64({1}, {kMin}))));
  check_close(b, {3, 7, 11});
  // Pad with enormous pads
  BOOST_CHECK(!run_kernel(with_consts("Pad", ins(cp(x), make_i64({4}, {0, 0, int64_t{1} << 50, 0})))).ok());
}
