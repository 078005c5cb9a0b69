#include "caps/tensor_origin.h"

#include <new>

namespace weave::caps {

namespace {

struct OriginMeta {
  GstMeta meta;
  TensorOrigin* origin;  // placement-constructed in `storage`; not an owning heap pointer
  alignas(TensorOrigin) unsigned char storage[sizeof(TensorOrigin)];
};

gboolean origin_init(GstMeta* meta, gpointer, GstBuffer*) {
  auto* m = reinterpret_cast<OriginMeta*>(meta);
  m->origin = new (m->storage) TensorOrigin();
  return TRUE;
}

void origin_free(GstMeta* meta, GstBuffer*) {
  auto* m = reinterpret_cast<OriginMeta*>(meta);
  m->origin->~TensorOrigin();
  m->origin = nullptr;
}

const GstMetaInfo* origin_info();

gboolean origin_transform(GstBuffer* dst, GstMeta* meta, GstBuffer*, GQuark type, gpointer) {
  if (!GST_META_TRANSFORM_IS_COPY(type)) return FALSE;  // a scale or crop changes what it says
  set_tensor_origin(dst, *reinterpret_cast<OriginMeta*>(meta)->origin);
  return TRUE;
}

// This code is linked into the plugin and into applications (and tests) that read the meta: the
// first copy in a process registers the meta, the others find it by name (the layout is the same).
const GstMetaInfo* origin_info() {
  static const GstMetaInfo* info = nullptr;
  if (g_once_init_enter(&info)) {
    const GstMetaInfo* i = gst_meta_get_info("WeaveTensorOriginMeta");
    if (i == nullptr)
      i = gst_meta_register(tensor_origin_meta_api_get_type(), "WeaveTensorOriginMeta", sizeof(OriginMeta),
                            origin_init, origin_free, origin_transform);
    g_once_init_leave(&info, i);
  }
  return info;
}

}  // namespace

GType tensor_origin_meta_api_get_type() {
  static GType type = 0;
  static const gchar* tags[] = {nullptr};
  if (g_once_init_enter(&type)) {
    GType t = g_type_from_name("WeaveTensorOriginMetaAPI");  // registered by another copy of this code
    if (t == 0) t = gst_meta_api_type_register("WeaveTensorOriginMetaAPI", tags);
    g_once_init_leave(&type, t);
  }
  return type;
}

void set_tensor_origin(GstBuffer* buffer, const TensorOrigin& origin) {
  auto* m = reinterpret_cast<OriginMeta*>(gst_buffer_get_meta(buffer, tensor_origin_meta_api_get_type()));
  if (m == nullptr) m = reinterpret_cast<OriginMeta*>(gst_buffer_add_meta(buffer, origin_info(), nullptr));
  if (m != nullptr) *m->origin = origin;
}

std::optional<TensorOrigin> tensor_origin(GstBuffer* buffer) {
  auto* m = reinterpret_cast<OriginMeta*>(gst_buffer_get_meta(buffer, tensor_origin_meta_api_get_type()));
  if (m == nullptr) return std::nullopt;
  return *m->origin;
}

void copy_untagged_metas(GstBuffer* dst, GstBuffer* src) {
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta(src, &state)) {
    const GstMetaInfo* info = meta->info;
    const gchar* const* tags = gst_meta_api_type_get_tags(info->api);
    if (tags != nullptr && tags[0] != nullptr) continue;
    if (info->transform_func == nullptr) continue;
    GstMetaTransformCopy copy = {FALSE, 0, static_cast<gsize>(-1)};
    info->transform_func(dst, meta, src, _gst_meta_transform_copy, &copy);
  }
}

}  // namespace weave::caps
