// weave-caps: tensor caps <-> TensorInfo, parsing hostile caps, fit checks and their messages.
#define BOOST_TEST_MODULE gst_caps
#include <gst/gst.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "caps/tensor_caps.h"

namespace wc = weave::caps;

namespace {

struct GstInit {
  GstInit() { gst_init(nullptr, nullptr); }
};
BOOST_GLOBAL_FIXTURE(GstInit);

std::string str(const GstCaps* c) {
  gchar* s = gst_caps_to_string(c);
  std::string out = s;
  g_free(s);
  return out;
}

wc::CapsPtr from_string(const char* s) {
  return wc::CapsPtr(gst_caps_from_string(s));
}

weave::TensorInfo info(std::string name, weave::Shape shape) {
  weave::TensorInfo t;
  t.name = std::move(name);
  t.dtype = weave::DType::float32;
  t.shape = std::move(shape);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(caps_from_info_marks_dynamic_dims_as_ranges) {
  auto c = wc::caps_from_info(info("images", {weave::kDynamic, 3, 640, 640}));
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(str(c->get()) ==
             "tensor/x-raw, name=(string)images, dtype=(string)float32, shape=(int)< [ 1, 2147483647 ], 3, "
             "640, 640 >");
  BOOST_TEST(!gst_caps_is_fixed(c->get()));
  auto nameless = wc::caps_from_info(info("images", {1, 1000}), false);
  BOOST_REQUIRE(nameless.ok());
  BOOST_TEST(str(nameless->get()) == "tensor/x-raw, dtype=(string)float32, shape=(int)< 1, 1000 >");
  BOOST_TEST(gst_caps_is_fixed(nameless->get()));
}

BOOST_AUTO_TEST_CASE(caps_from_info_rejects_undefined_dtype_and_huge_rank) {
  weave::TensorInfo t = info("x", {1});
  t.dtype = weave::DType::undefined;
  BOOST_TEST(!wc::caps_from_info(t).ok());
  auto r = wc::caps_from_info(info("x", weave::Shape(9, 1)));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message() == "tensor 'x': rank 9 exceeds 8");
}

BOOST_AUTO_TEST_CASE(fixed_caps_round_trip) {
  auto c = wc::caps_from_dims("logits", weave::DType::int64, weave::Dims{2, 5});
  BOOST_TEST(str(c.get()) == "tensor/x-raw, name=(string)logits, dtype=(string)int64, shape=(int)< 2, 5 >");
  auto t = wc::parse_fixed_caps(c.get());
  BOOST_REQUIRE(t.ok());
  BOOST_TEST(t->name == "logits");
  BOOST_TEST((t->dtype == weave::DType::int64));
  BOOST_TEST((t->dims == weave::Dims{2, 5}));
  BOOST_TEST(t->bytes() == 80u);
  BOOST_TEST(wc::shape_text(t->dims) == "<2,5>");
  BOOST_TEST(wc::shape_text(c.get()) == "<2,5>");
  // A scalar: empty shape array.
  auto s = wc::parse_fixed_caps(from_string("tensor/x-raw, dtype=float32, shape=(int)<>").get());
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(s->dims.rank() == 0);
  BOOST_TEST(s->bytes() == 4u);
}

BOOST_AUTO_TEST_CASE(parse_rejects_bad_caps_with_reasons) {
  auto msg = [](const char* caps) {
    auto c = from_string(caps);
    BOOST_REQUIRE(c != nullptr);
    auto r = wc::parse_fixed_caps(c.get());
    BOOST_REQUIRE(!r.ok());
    return r.message();
  };
  BOOST_TEST(msg("video/x-raw, format=RGB") == "caps media type is video/x-raw, not tensor/x-raw");
  BOOST_TEST(msg("tensor/x-raw, shape=(int)<1,4>") == "caps have no fixed string field 'dtype'");
  BOOST_TEST(msg("tensor/x-raw, dtype=complex7, shape=(int)<1,4>") ==
             "caps dtype 'complex7' is not a known dtype");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32") == "caps have no array field 'shape'");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(int)<[1,4],4>") ==
             "caps shape <[1,4],4> is not fixed (dim 0)");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(int)<1,0>") ==
             "caps shape <1,0> has a dim below 1 (dim 1)");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(int)<1,1,1,1,1,1,1,1,1>") ==
             "caps shape <1,1,1,1,1,1,1,1,1> has rank 9 (at most 8)");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(int)<65536,65536,65536>") ==
             "caps shape <65536,65536,65536> is too large");
  // Found by fuzz/fuzz_caps: the byte count of these dims passes 2^63 (it used to overflow).
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(int)<2147483647,2147483647,2147483647>") ==
             "caps shape <2147483647,2147483647,2147483647> is too large");
  BOOST_TEST(msg("tensor/x-raw, dtype=float32, shape=(string)<a,b>") ==
             "caps shape <a,b> is not fixed (dim 0)");
  BOOST_TEST(!wc::parse_fixed_caps(nullptr).ok());
  auto any = wc::CapsPtr(gst_caps_new_any());
  BOOST_TEST(wc::parse_fixed_caps(any.get()).message() == "caps are ANY, not a fixed tensor");
}

BOOST_AUTO_TEST_CASE(fit_check_names_pad_and_both_shapes) {
  weave::TensorInfo model = info("x", {weave::kDynamic, 3, 640, 640});
  wc::CapsTensor t;
  t.dtype = weave::DType::float32;
  t.dims = weave::Dims{1, 3, 224, 224};
  auto st = wc::check_fits(t, model, "sink_x");
  BOOST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() ==
             "pad sink_x: caps shape <1,3,224,224> does not fit model input 'x' float32[?x3x640x640]");
  t.dims = weave::Dims{7, 3, 640, 640};  // dynamic batch takes any value
  BOOST_TEST(wc::check_fits(t, model, "sink_x").ok());
  t.dims = weave::Dims{3, 640, 640};  // wrong rank
  BOOST_TEST(!wc::check_fits(t, model, "sink_x").ok());
  t.dims = weave::Dims{1, 3, 640, 640};
  t.dtype = weave::DType::uint8;
  BOOST_TEST(wc::check_fits(t, model, "sink_x").message() ==
             "pad sink_x: caps dtype uint8 does not fit model input 'x' float32[?x3x640x640]");
}

BOOST_AUTO_TEST_CASE(unfixed_caps_fit_check) {
  weave::TensorInfo model = info("x", {weave::kDynamic, 4});
  BOOST_TEST(wc::check_caps_fit(from_string("tensor/x-raw, dtype=float32, shape=(int)<[1,8],4>").get(), model,
                                "sink_x")
                 .ok());
  auto bad = wc::check_caps_fit(from_string("tensor/x-raw, dtype=float32, shape=(int)<[1,8],5>").get(), model,
                                "sink_x");
  BOOST_TEST(bad.message() == "pad sink_x: caps shape <[1,8],5> does not fit model input 'x' float32[?x4]");
  auto dt =
      wc::check_caps_fit(from_string("tensor/x-raw, dtype=int8, shape=(int)<1,4>").get(), model, "sink_x");
  BOOST_TEST(dt.message() == "pad sink_x: caps dtype int8 does not fit model input 'x' float32[?x4]");
}

BOOST_AUTO_TEST_CASE(intersect_and_fixate_dynamic_dims) {
  auto model = wc::caps_from_info(info("x", {weave::kDynamic, 3, weave::kDynamic}), false);
  BOOST_REQUIRE(model.ok());
  auto peer = from_string("tensor/x-raw, dtype=float32, shape=(int)<[2,8],3,[16,32]>");
  auto both = wc::intersect(peer.get(), model->get());
  BOOST_TEST(str(both.get()) ==
             "tensor/x-raw, dtype=(string)float32, shape=(int)< [ 2, 8 ], 3, [ 16, 32 ] >");
  auto fixed = wc::fixate(both.get());
  BOOST_REQUIRE(fixed != nullptr);
  auto t = wc::parse_fixed_caps(fixed.get());
  BOOST_REQUIRE(t.ok());
  BOOST_TEST((t->dims == weave::Dims{2, 3, 16}));  // lowest values of the ranges
  auto clash = from_string("tensor/x-raw, dtype=float32, shape=(int)<1,4,1>");
  BOOST_TEST(gst_caps_is_empty(wc::intersect(clash.get(), model->get()).get()));
  BOOST_TEST(wc::fixate(wc::intersect(clash.get(), model->get()).get()) == nullptr);
  BOOST_TEST(str(wc::intersect(nullptr, peer.get()).get()) == str(peer.get()));
}

BOOST_AUTO_TEST_CASE(shape_bound_of_finite_ranges) {
  auto b = wc::shape_bound(from_string("tensor/x-raw,shape=<1,3,[1,960],[32,640]>").get());
  BOOST_TEST_REQUIRE(b.has_value());
  BOOST_TEST((*b == weave::Shape{1, 3, 960, 640}));
  // Fixed shapes promise nothing beyond themselves; open or huge ranges are no plan.
  BOOST_TEST(!wc::shape_bound(from_string("tensor/x-raw,shape=<1,3,224,224>").get()).has_value());
  BOOST_TEST(!wc::shape_bound(from_string("tensor/x-raw,shape=<1,3,[1,2147483647],8>").get()).has_value());
  BOOST_TEST(!wc::shape_bound(from_string("tensor/x-raw,shape=<1,3,[1,16384],[1,16384]>").get()).has_value());
  BOOST_TEST(!wc::shape_bound(from_string("tensor/x-raw").get()).has_value());
  BOOST_TEST(!wc::shape_bound(nullptr).has_value());
}
