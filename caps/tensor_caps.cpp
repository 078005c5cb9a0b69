#include "caps/tensor_caps.h"

#include <sstream>

namespace weave::caps {

namespace {

constexpr int64_t kMaxCapsBytes = int64_t{1} << 36;

void set_shape_field(GstStructure* s, std::span<const int64_t> shape) {
  GValue array = G_VALUE_INIT;
  gst_value_array_init(&array, static_cast<guint>(shape.size()));
  for (int64_t d : shape) {
    GValue v = G_VALUE_INIT;
    if (d == kDynamic || d < 1 || d > G_MAXINT) {
      g_value_init(&v, GST_TYPE_INT_RANGE);
      gst_value_set_int_range(&v, 1, G_MAXINT);
    } else {
      g_value_init(&v, G_TYPE_INT);
      g_value_set_int(&v, static_cast<int>(d));
    }
    gst_value_array_append_and_take_value(&array, &v);
  }
  gst_structure_take_value(s, "shape", &array);
}

std::string value_text(const GValue* v) {
  // Compact, annotation-free text ("<[1,8],3,224>") so messages read like shape_text(Dims).
  if (GST_VALUE_HOLDS_ARRAY(v)) {
    std::string out = "<";
    for (guint i = 0; i < gst_value_array_get_size(v); ++i) {
      if (i > 0) out += ",";
      out += value_text(gst_value_array_get_value(v, i));
    }
    return out + ">";
  }
  if (G_VALUE_HOLDS_INT(v)) return std::to_string(g_value_get_int(v));
  if (GST_VALUE_HOLDS_INT_RANGE(v))
    return "[" + std::to_string(gst_value_get_int_range_min(v)) + "," +
           std::to_string(gst_value_get_int_range_max(v)) + "]";
  if (G_VALUE_HOLDS_STRING(v)) return g_value_get_string(v) != nullptr ? g_value_get_string(v) : "";
  gchar* t = gst_value_serialize(v);
  std::string out = t != nullptr ? t : "?";
  g_free(t);
  return out;
}

}  // namespace

CapsPtr any_tensor_caps() {
  return CapsPtr(gst_caps_new_empty_simple(kMediaType));
}

Expected<CapsPtr> caps_from_info(const TensorInfo& info, bool with_name) {
  if (info.dtype == DType::undefined || dtype_name(info.dtype).empty())
    return make_error("tensor '", info.name, "': dtype has no caps name");
  if (info.shape.size() > static_cast<std::size_t>(kMaxRank))
    return make_error("tensor '", info.name, "': rank ", info.shape.size(), " exceeds ", kMaxRank);
  GstStructure* s = gst_structure_new_empty(kMediaType);
  if (with_name) gst_structure_set(s, "name", G_TYPE_STRING, info.name.c_str(), nullptr);
  std::string dt(dtype_name(info.dtype));
  gst_structure_set(s, "dtype", G_TYPE_STRING, dt.c_str(), nullptr);
  set_shape_field(s, info.shape);
  GstCaps* caps = gst_caps_new_empty();
  gst_caps_append_structure(caps, s);
  return CapsPtr(caps);
}

CapsPtr caps_from_dims(std::string_view name, DType dtype, const Dims& dims) {
  GstStructure* s = gst_structure_new_empty(kMediaType);
  if (!name.empty()) {
    std::string n(name);
    gst_structure_set(s, "name", G_TYPE_STRING, n.c_str(), nullptr);
  }
  std::string dt(dtype_name(dtype));
  gst_structure_set(s, "dtype", G_TYPE_STRING, dt.c_str(), nullptr);
  set_shape_field(s, dims.span());
  GstCaps* caps = gst_caps_new_empty();
  gst_caps_append_structure(caps, s);
  return CapsPtr(caps);
}

Expected<CapsTensor> parse_fixed_caps(const GstCaps* caps) {
  if (caps == nullptr || gst_caps_is_empty(caps)) return Error("caps are empty");
  if (gst_caps_is_any(caps)) return Error("caps are ANY, not a fixed tensor");
  if (gst_caps_get_size(caps) != 1)
    return make_error("caps hold ", gst_caps_get_size(caps), " structures, not one");
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  if (!gst_structure_has_name(s, kMediaType))
    return make_error("caps media type is ", gst_structure_get_name(s), ", not ", kMediaType);
  CapsTensor out;
  if (const gchar* name = gst_structure_get_string(s, "name")) out.name = name;
  const gchar* dt = gst_structure_get_string(s, "dtype");
  if (dt == nullptr) return Error("caps have no fixed string field 'dtype'");
  auto dtype = dtype_from_name(dt);
  if (!dtype || dtype_size(*dtype) == 0) return make_error("caps dtype '", dt, "' is not a known dtype");
  out.dtype = *dtype;
  const GValue* shape = gst_structure_get_value(s, "shape");
  if (shape == nullptr || !GST_VALUE_HOLDS_ARRAY(shape)) return Error("caps have no array field 'shape'");
  guint rank = gst_value_array_get_size(shape);
  if (rank > static_cast<guint>(kMaxRank))
    return make_error("caps shape ", value_text(shape), " has rank ", rank, " (at most ", kMaxRank, ")");
  int64_t bytes = static_cast<int64_t>(dtype_size(out.dtype));
  for (guint i = 0; i < rank; ++i) {
    const GValue* v = gst_value_array_get_value(shape, i);
    if (!G_VALUE_HOLDS_INT(v))
      return make_error("caps shape ", value_text(shape), " is not fixed (dim ", i, ")");
    int d = g_value_get_int(v);
    if (d < 1) return make_error("caps shape ", value_text(shape), " has a dim below 1 (dim ", i, ")");
    // bytes <= 2^36 and d < 2^31 before this: the product can pass 2^63, so check it.
    if (__builtin_mul_overflow(bytes, static_cast<int64_t>(d), &bytes) || bytes > kMaxCapsBytes)
      return make_error("caps shape ", value_text(shape), " is too large");
    out.dims.push_back(d);
  }
  return out;
}

std::string shape_text(const Dims& dims) {
  std::ostringstream os;
  os << '<';
  for (int i = 0; i < dims.rank(); ++i) os << (i ? "," : "") << dims[i];
  os << '>';
  return os.str();
}

std::string shape_text(const GstCaps* caps) {
  if (caps == nullptr || gst_caps_get_size(caps) == 0) return "(no shape)";
  const GValue* v = gst_structure_get_value(gst_caps_get_structure(caps, 0), "shape");
  if (v == nullptr) return "(no shape)";
  return value_text(v);
}

static std::string mismatch(std::string_view pad, std::string_view what, const std::string& have,
                            std::string_view role, const TensorInfo& model) {
  std::ostringstream os;
  os << "pad " << pad << ": caps " << what << " " << have << " does not fit model " << role << " '"
     << model.name << "' " << model.str();
  return os.str();
}

Status check_fits(const CapsTensor& t, const TensorInfo& model, std::string_view pad, std::string_view role) {
  if (t.dtype != model.dtype)
    return Error(mismatch(pad, "dtype", std::string(dtype_name(t.dtype)), role, model));
  bool ok = t.dims.size() == model.shape.size();
  for (std::size_t i = 0; ok && i < model.shape.size(); ++i) {
    int64_t m = model.shape[i];
    if (m != kDynamic && m != t.dims[static_cast<int>(i)]) ok = false;
  }
  if (!ok) return Error(mismatch(pad, "shape", shape_text(t.dims), role, model));
  return {};
}

Status check_caps_fit(const GstCaps* caps, const TensorInfo& model, std::string_view pad,
                      std::string_view role) {
  auto mine = caps_from_info(model, false);
  if (!mine) return mine.error();
  if (caps != nullptr && gst_caps_can_intersect(caps, mine->get())) return {};
  std::string what = "shape";
  std::string have = shape_text(caps);
  if (caps != nullptr && gst_caps_get_size(caps) > 0) {
    const gchar* dt = gst_structure_get_string(gst_caps_get_structure(caps, 0), "dtype");
    if (dt != nullptr && dtype_from_name(dt) != model.dtype) {
      what = "dtype";
      have = dt;
    }
  }
  return Error(mismatch(pad, what, have, role, model));
}

CapsPtr intersect(const GstCaps* a, const GstCaps* b) {
  if (a == nullptr && b == nullptr) return CapsPtr(gst_caps_new_any());
  if (a == nullptr) return CapsPtr(gst_caps_copy(b));
  if (b == nullptr) return CapsPtr(gst_caps_copy(a));
  return CapsPtr(
      gst_caps_intersect_full(const_cast<GstCaps*>(a), const_cast<GstCaps*>(b), GST_CAPS_INTERSECT_FIRST));
}

CapsPtr fixate(const GstCaps* caps) {
  if (caps == nullptr || gst_caps_is_empty(caps) || gst_caps_is_any(caps)) return nullptr;
  // gst_caps_fixate keeps the first structure and fixates ranges (also inside arrays) to
  // their lowest value.
  return CapsPtr(gst_caps_fixate(gst_caps_copy(caps)));
}

std::optional<Shape> shape_bound(const GstCaps* caps) {
  if (caps == nullptr || gst_caps_is_empty(caps) || gst_caps_is_any(caps)) return std::nullopt;
  const GValue* shape = gst_structure_get_value(gst_caps_get_structure(caps, 0), "shape");
  if (shape == nullptr || !GST_VALUE_HOLDS_ARRAY(shape)) return std::nullopt;
  Shape out;
  bool any_range = false;
  for (guint k = 0; k < gst_value_array_get_size(shape); ++k) {
    const GValue* d = gst_value_array_get_value(shape, k);
    int v = 0;
    if (G_VALUE_HOLDS_INT(d)) {
      v = g_value_get_int(d);
    } else if (GST_VALUE_HOLDS_INT_RANGE(d)) {
      v = gst_value_get_int_range_max(d);
      any_range = true;
    } else {
      return std::nullopt;
    }
    // An unbounded range (or an absurd bound) plans nothing useful.
    if (v < 1 || v >= (1 << 20)) return std::nullopt;
    out.push_back(v);
  }
  if (!any_range || out.empty() || shape_numel(out) > (int64_t{1} << 24)) return std::nullopt;
  return out;
}

}  // namespace weave::caps
