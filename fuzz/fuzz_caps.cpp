// Fuzzes the tensor caps parser (caps/tensor_caps.h): what upstream elements and users put in
// tensor/x-raw caps. The first byte picks the form: caps text (gst_caps_from_string, as in a
// gst-launch line) or caps built value by value from the input (fields of any GType, shapes
// with ints, ranges, strings, nested arrays and lists: what a peer element can send). Each caps
// goes through parse_fixed_caps, check_fits / check_caps_fit against model tensors, shape_text,
// intersect and fixate, as weaveinfer's caps events and queries do.
#include <gst/gst.h>

#include <string>

#include "caps/tensor_caps.h"
#include "fuzz/fuzz_util.h"

namespace {

using weave::fuzz::Input;

void put_dim(Input& in, GValue* list, int depth, uint8_t leaf);

bool is_container(uint8_t kind) {
  return kind % 8 == 5 || kind % 8 == 6;
}

// A value that is not a list or array: an int, an int range, a string, a double or a boolean.
void put_scalar(Input& in, GValue* out, uint8_t kind) {
  switch (kind % 8) {
    case 0:
    case 1:
      g_value_init(out, G_TYPE_INT);
      g_value_set_int(out, static_cast<int>(in.u32()));
      break;
    case 2: {
      g_value_init(out, GST_TYPE_INT_RANGE);
      int a = static_cast<int>(in.u32()), b = static_cast<int>(in.u32());
      if (a > b) std::swap(a, b);
      if (a == b) b = a == G_MAXINT ? a : a + 1;
      if (a == b) --a;
      gst_value_set_int_range(out, a, b);
      break;
    }
    case 3: {
      g_value_init(out, G_TYPE_STRING);
      const std::string s(in.take_string(32));
      g_value_set_string(out, s.c_str());
      break;
    }
    case 4:
      g_value_init(out, G_TYPE_DOUBLE);
      g_value_set_double(out, static_cast<double>(static_cast<int>(in.u32())) / 7.0);
      break;
    default:
      g_value_init(out, G_TYPE_BOOLEAN);
      g_value_set_boolean(out, in.u8() & 1);
      break;
  }
}

// GStreamer's lists and arrays hold values of one basic type: the type of their innermost first
// element (caps from real elements always do; GStreamer refuses to append another, which leaves
// the value to the caller). So a container picks the kind of its elements once, and nested
// containers all end in one `leaf` kind. Lists only at the top (GStreamer has no lists of lists).
void put_value(Input& in, GValue* out, int depth, uint8_t kind, uint8_t leaf) {
  if (is_container(kind) && depth < 3) {
    g_value_init(out, depth == 0 && in.u8() % 2 ? GST_TYPE_LIST : GST_TYPE_ARRAY);
    put_dim(in, out, depth + 1, leaf);
    return;
  }
  put_scalar(in, out, is_container(kind) ? leaf : kind);
}

void put_dim(Input& in, GValue* list, int depth, uint8_t leaf) {
  const int n = in.u8() % 10;
  const uint8_t kind = is_container(in.u8()) ? 5 : leaf;  // containers, or leaves
  for (int i = 0; i < n; ++i) {
    GValue v = G_VALUE_INIT;
    put_value(in, &v, depth, kind, leaf);
    const bool is_list = GST_VALUE_HOLDS_LIST(list);
    const guint before = is_list ? gst_value_list_get_size(list) : gst_value_array_get_size(list);
    if (is_list)
      gst_value_list_append_and_take_value(list, &v);
    else
      gst_value_array_append_and_take_value(list, &v);
    // Refused (not expected with one basic type): the value was not taken.
    if ((is_list ? gst_value_list_get_size(list) : gst_value_array_get_size(list)) == before)
      g_value_unset(&v);
  }
}

// The leaf kind of one value: never a container.
uint8_t leaf_kind(Input& in) {
  const uint8_t k = in.u8() % 8;
  return is_container(k) ? 7 : k;
}

GstCaps* built_caps(Input& in) {
  static const char* kMedia[] = {"tensor/x-raw", "video/x-raw", "tensor/x-raw"};
  static const char* kDtypes[] = {"float32", "uint8",     "int64", "float16",
                                  "bool",    "undefined", "int8",  "float64"};
  GstCaps* caps = gst_caps_new_empty();
  const int structures = 1 + in.u8() % 3;
  for (int s = 0; s < structures; ++s) {
    GstStructure* st = gst_structure_new_empty(kMedia[in.u8() % 3]);
    const uint8_t fields = in.u8();
    if (fields & 1) {
      const std::string name(in.take_string(24));
      gst_structure_set(st, "name", G_TYPE_STRING, name.c_str(), nullptr);
    }
    if (fields & 2) {
      const uint8_t d = in.u8();
      const std::string dt = d < 200 ? kDtypes[d % 8] : std::string(in.take_string(16));
      gst_structure_set(st, "dtype", G_TYPE_STRING, dt.c_str(), nullptr);
    } else if (fields & 4) {
      GValue v = G_VALUE_INIT;
      const uint8_t kind = in.u8();
      put_value(in, &v, 2, kind, leaf_kind(in));
      gst_structure_take_value(st, "dtype", &v);
    }
    if (fields & 8) {
      GValue shape = G_VALUE_INIT;
      const uint8_t kind = in.u8();
      const uint8_t leaf = leaf_kind(in);
      if (fields & 16) {
        put_value(in, &shape, 0, kind, leaf);
      } else {
        g_value_init(&shape, GST_TYPE_ARRAY);
        put_dim(in, &shape, 1, leaf);
      }
      gst_structure_take_value(st, "shape", &shape);
    }
    gst_caps_append_structure(caps, st);
  }
  return caps;
}

void exercise(const GstCaps* caps) {
  using namespace weave;
  static const TensorInfo kModels[] = {
      {"x", DType::float32, {kDynamic, 3, 224, 224}, {"batch", "", "", ""}},
      {"image", DType::uint8, {1, kDynamic, kDynamic, 3}, {}},
      {"ids", DType::int64, {kDynamic}, {}},
      {"scalar", DType::float32, {}, {}},
  };
  auto t = caps::parse_fixed_caps(caps);
  if (!t) fuzz::check_error(t, "parse_fixed_caps");
  (void)caps::shape_text(caps);
  for (const TensorInfo& m : kModels) {
    if (t) {
      Status s = caps::check_fits(*t, m, "sink_x");
      if (!s) fuzz::check_error(s, "check_fits");
      auto again = caps::parse_fixed_caps(caps::caps_from_dims(t->name, t->dtype, t->dims).get());
      fuzz::check(again && again->dtype == t->dtype && again->dims == t->dims,
                  "caps_from_dims -> parse_fixed_caps changed the tensor");
    }
    Status fit = caps::check_caps_fit(caps, m, "sink_x");
    if (!fit) fuzz::check_error(fit, "check_caps_fit");
    auto model_caps = caps::caps_from_info(m, false);
    fuzz::check(bool(model_caps), "caps_from_info failed for a valid model tensor");
    caps::CapsPtr both = caps::intersect(caps, model_caps->get());
    if (both) {
      caps::CapsPtr fixed = caps::fixate(both.get());
      if (fixed) (void)caps::parse_fixed_caps(fixed.get());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gst_init(nullptr, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  GstCaps* caps = nullptr;
  if (in.u8() % 2 == 0) {
    auto rest = in.rest();
    const std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());
    caps = gst_caps_from_string(text.c_str());
  } else {
    caps = built_caps(in);
  }
  if (caps == nullptr) return 0;
  exercise(caps);
  gst_caps_unref(caps);
  return 0;
}
