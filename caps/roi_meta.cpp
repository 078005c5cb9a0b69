#include "caps/roi_meta.h"

#include <gst/video/video.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace weave::caps {

namespace {

constexpr const char* kDetection = "detection";
constexpr const char* kAngle = "angle";
constexpr const char* kText = "text";
constexpr const char* kTrack = "track";

std::vector<GstVideoRegionOfInterestMeta*> roi_metas(GstBuffer* buffer) {
  std::vector<GstVideoRegionOfInterestMeta*> out;
  gpointer state = nullptr;
  while (GstMeta* m =
             gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    out.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m));
  return out;
}

double get_double(const GstStructure* s, const char* field, double fallback) {
  double v = fallback;
  return gst_structure_get_double(s, field, &v) ? v : fallback;
}

// `values` as a GstValueArray of doubles in field `field` of `s`.
void set_doubles(GstStructure* s, const char* field, std::span<const float> values) {
  GValue array = G_VALUE_INIT;
  gst_value_array_init(&array, static_cast<guint>(values.size()));
  for (float f : values) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_DOUBLE);
    g_value_set_double(&v, f);
    gst_value_array_append_and_take_value(&array, &v);
  }
  gst_structure_take_value(s, field, &array);
}

// Field `field` of `s` as floats; nullopt unless it is an array of doubles only.
std::optional<std::vector<float>> get_doubles(const GstStructure* s, const char* field) {
  const GValue* a = gst_structure_get_value(s, field);
  if (a == nullptr || !GST_VALUE_HOLDS_ARRAY(a)) return std::nullopt;
  std::vector<float> out;
  for (guint i = 0; i < gst_value_array_get_size(a); ++i) {
    const GValue* v = gst_value_array_get_value(a, i);
    if (!G_VALUE_HOLDS_DOUBLE(v)) return std::nullopt;
    out.push_back(static_cast<float>(g_value_get_double(v)));
  }
  return out;
}

// Replaces the param of the structure's name, or adds it; takes ownership of `s`.
void set_param(GstVideoRegionOfInterestMeta* meta, GstStructure* s) {
  for (GList* l = meta->params; l != nullptr; l = l->next)
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), gst_structure_get_name(s))) {
      gst_structure_free(static_cast<GstStructure*>(l->data));
      l->data = s;
      return;
    }
  gst_video_region_of_interest_meta_add_param(meta, s);
}

vision::Region region_of(GstVideoRegionOfInterestMeta* m) {
  vision::Region r;
  r.id = m->id;
  r.type = m->roi_type != 0 ? g_quark_to_string(m->roi_type) : "";
  // guint fields: clamp before the int conversion.
  auto to_int = [](guint v) { return static_cast<int>(std::min<guint>(v, G_MAXINT / 2)); };
  r.box = vision::Box{to_int(m->x), to_int(m->y), to_int(m->w), to_int(m->h)};
  for (GList* l = m->params; l != nullptr; l = l->next) {
    const auto* s = static_cast<const GstStructure*>(l->data);
    if (gst_structure_has_name(s, kDetection)) {
      r.score = static_cast<float>(get_double(s, "confidence", 0.0));
      gst_structure_get_int(s, "label-id", &r.class_id);
      if (const char* label = gst_structure_get_string(s, "label")) r.label = label;
      if (auto c = get_doubles(s, "corners"); c && c->size() == 8) {
        vision::Quad q;
        for (std::size_t i = 0; i < 4; ++i) q[i] = vision::Point{(*c)[2 * i], (*c)[2 * i + 1]};
        r.quad = q;
      }
    } else if (gst_structure_has_name(s, kAngle)) {
      int deg = 0;
      if (gst_structure_get_int(s, "degrees", &deg)) r.angle = deg;
      r.angle_score = static_cast<float>(get_double(s, "confidence", 0.0));
    } else if (gst_structure_has_name(s, kTrack)) {
      guint64 id = 0;
      if (gst_structure_get_uint64(s, "id", &id) && id != 0) {
        vision::TrackTag t;
        t.id = id;
        gst_structure_get_int(s, "age", &t.age);
        gboolean predicted = FALSE;
        if (gst_structure_get_boolean(s, "predicted", &predicted)) t.predicted = predicted;
        r.track = t;
      }
    } else if (gst_structure_has_name(s, kText)) {
      const char* text = gst_structure_get_string(s, "text");
      r.text = vision::TextResult{text != nullptr ? text : "",
                                  static_cast<float>(get_double(s, "confidence", 0.0))};
      if (auto chars = get_doubles(s, "char-confidences")) r.text->char_scores = std::move(*chars);
    } else if (const char* label = gst_structure_get_string(s, "label")) {
      vision::ClassResult c;
      c.name = gst_structure_get_name(s);
      c.label = label;
      gst_structure_get_int(s, "label-id", &c.class_id);
      c.score = static_cast<float>(get_double(s, "confidence", 0.0));
      r.classes.push_back(std::move(c));
    }
  }
  return r;
}

}  // namespace

std::vector<vision::Region> read_regions(GstBuffer* buffer, std::string_view type) {
  std::vector<vision::Region> out;
  for (GstVideoRegionOfInterestMeta* m : roi_metas(buffer)) {
    if (!type.empty() && (m->roi_type == 0 || type != g_quark_to_string(m->roi_type))) continue;
    out.push_back(region_of(m));
  }
  return out;
}

int add_region(GstBuffer* buffer, const vision::Region& r) {
  int id = 0;
  for (GstVideoRegionOfInterestMeta* m : roi_metas(buffer)) id = std::max(id, m->id + 1);
  const vision::Box b = r.box;
  GstVideoRegionOfInterestMeta* m = gst_buffer_add_video_region_of_interest_meta(
      buffer, r.type.empty() ? "object" : r.type.c_str(), static_cast<guint>(std::max(b.x, 0)),
      static_cast<guint>(std::max(b.y, 0)), static_cast<guint>(std::max(b.width, 0)),
      static_cast<guint>(std::max(b.height, 0)));
  m->id = id;
  m->parent_id = -1;
  GstStructure* s =
      gst_structure_new(kDetection, "confidence", G_TYPE_DOUBLE, static_cast<double>(r.score), nullptr);
  if (r.class_id >= 0) gst_structure_set(s, "label-id", G_TYPE_INT, r.class_id, nullptr);
  if (!r.label.empty()) gst_structure_set(s, "label", G_TYPE_STRING, r.label.c_str(), nullptr);
  if (r.quad) {
    std::vector<float> corners;
    for (const vision::Point& p : *r.quad) corners.insert(corners.end(), {p.x, p.y});
    set_doubles(s, "corners", corners);
  }
  gst_video_region_of_interest_meta_add_param(m, s);
  vision::RowResult row;
  row.angle = r.angle;
  row.angle_score = r.angle_score;
  row.text = r.text;
  if (row.angle || row.text) attach_row(buffer, id, row, {});
  for (const vision::ClassResult& c : r.classes) {
    vision::RowResult cls;
    cls.classes.push_back(vision::Classification{c.class_id, c.label, c.score});
    attach_row(buffer, id, cls, c.name);
  }
  if (r.track) attach_track(buffer, id, *r.track);
  return id;
}

namespace {

// The skipped-frame mark: a meta without fields. Linked into the plugin and into applications
// and tests that read it: the first copy in a process registers it, the others find it by name.
GType skipped_api_type() {
  static GType type = 0;
  static const gchar* tags[] = {nullptr};  // about the frame, not its bytes: copied with it
  if (g_once_init_enter(&type)) {
    GType t = g_type_from_name("WeaveSkippedFrameMetaAPI");
    if (t == 0) t = gst_meta_api_type_register("WeaveSkippedFrameMetaAPI", tags);
    if (t == 0) t = g_type_from_name("WeaveSkippedFrameMetaAPI");  // another copy won the race
    g_once_init_leave(&type, t);
  }
  return type;
}

gboolean skipped_init(GstMeta*, gpointer, GstBuffer*) {
  return TRUE;
}

gboolean skipped_transform(GstBuffer* dst, GstMeta*, GstBuffer*, GQuark, gpointer) {
  mark_skipped(dst);  // whatever the transform, the frame was not looked at
  return TRUE;
}

const GstMetaInfo* skipped_info() {
  static const GstMetaInfo* info = nullptr;
  if (g_once_init_enter(&info)) {
    const GstMetaInfo* i = gst_meta_get_info("WeaveSkippedFrameMeta");
    if (i == nullptr)
      i = gst_meta_register(skipped_api_type(), "WeaveSkippedFrameMeta", sizeof(GstMeta), skipped_init,
                            nullptr, skipped_transform);
    if (i == nullptr) i = gst_meta_get_info("WeaveSkippedFrameMeta");  // another copy won the race
    g_once_init_leave(&info, i);
  }
  return info;
}

}  // namespace

void mark_skipped(GstBuffer* buffer) {
  if (!is_skipped(buffer) && skipped_info() != nullptr) gst_buffer_add_meta(buffer, skipped_info(), nullptr);
}

bool is_skipped(GstBuffer* buffer) {
  return gst_buffer_get_meta(buffer, skipped_api_type()) != nullptr;
}

bool attach_track(GstBuffer* buffer, int id, const vision::TrackTag& track) {
  GstVideoRegionOfInterestMeta* m = gst_buffer_get_video_region_of_interest_meta_id(buffer, id);
  if (m == nullptr) return false;
  set_param(
      m, gst_structure_new(kTrack, "id", G_TYPE_UINT64, static_cast<guint64>(track.id), "age", G_TYPE_INT,
                           track.age, "predicted", G_TYPE_BOOLEAN, track.predicted ? TRUE : FALSE, nullptr));
  return true;
}

bool attach_row(GstBuffer* buffer, int id, const vision::RowResult& row, std::string_view class_name) {
  GstVideoRegionOfInterestMeta* m = gst_buffer_get_video_region_of_interest_meta_id(buffer, id);
  if (m == nullptr) return false;
  if (!row.classes.empty()) {
    const std::string name = class_name.empty() ? std::string("classification") : std::string(class_name);
    const vision::Classification& c = row.classes.front();
    set_param(
        m, gst_structure_new(name.c_str(), "label", G_TYPE_STRING, c.label.c_str(), "label-id", G_TYPE_INT,
                             c.class_id, "confidence", G_TYPE_DOUBLE, static_cast<double>(c.score), nullptr));
  }
  if (row.angle)
    set_param(m, gst_structure_new(kAngle, "degrees", G_TYPE_INT, *row.angle, "confidence", G_TYPE_DOUBLE,
                                   static_cast<double>(row.angle_score), nullptr));
  if (row.text) {
    GstStructure* t = gst_structure_new(kText, "text", G_TYPE_STRING, row.text->text.c_str(), "confidence",
                                        G_TYPE_DOUBLE, static_cast<double>(row.text->score), nullptr);
    if (!row.text->char_scores.empty()) set_doubles(t, "char-confidences", row.text->char_scores);
    set_param(m, t);
  }
  return true;
}

}  // namespace weave::caps
