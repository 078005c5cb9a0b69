// What the files of weaveinfer share: the element's C++ state and the few functions one file
// calls in another. gstweaveinfer.cpp is the element (properties, state changes, model loading),
// gstweaveinfer_pads.cpp its pads (chain, events, queries, caps), gstweaveinfer_task.cpp its
// streaming task (the queue's consumer: runs the model and pushes every output).
#pragma once

#include <gst/base/gstflowcombiner.h>
#include <gst/gst.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "caps/tensor_caps.h"
#include "core/loader/model_settings.h"
#include "core/loader/model_slot.h"
#include "core/stream/batch_group.h"
#include "core/stream/frame_runner.h"
#include "core/stream/stream_runner.h"
#include "gst-plugin/gstweaveinfer.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_EXTERN(gst_weave_infer_debug);
#define GST_CAT_DEFAULT gst_weave_infer_debug

namespace weave::gst::infer {

inline constexpr int kDefaultQueueSize = 4;
inline constexpr guint kDefaultBatchTimeoutMs = 10;
#ifdef WEAVE_HAVE_ZSTD
inline constexpr GstWeaveCompression kDefaultCompression = GST_WEAVE_COMPRESSION_ZSTD_PLANES;
#else
inline constexpr GstWeaveCompression kDefaultCompression = GST_WEAVE_COMPRESSION_ZLIB_PLANES;
#endif
inline constexpr GstWeaveInferLeaky kDefaultLeaky = GST_WEAVE_INFER_LEAKY_NONE;

struct BufferUnref {
  void operator()(GstBuffer* b) const { gst_buffer_unref(b); }
};
using BufferPtr = std::unique_ptr<GstBuffer, BufferUnref>;
struct EventUnref {
  void operator()(GstEvent* e) const { gst_event_unref(e); }
};
using EventPtr = std::unique_ptr<GstEvent, EventUnref>;

// What travels in the queue besides buffers, in stream order: a serialized event, or the output
// caps planned once every input had caps.
struct Control {
  EventPtr event;                 // null: caps item
  std::vector<weave::Dims> caps;  // output dims from the plan
};
// A queued input buffer with the tensor its caps described when it came: caps may change (e.g.
// crops of another batch size) while earlier buffers still wait in the queue.
struct Input {
  BufferPtr buffer;
  weave::caps::CapsTensor tensor;
};
using Runner = weave::stream::StreamRunner;
using weave::stream::Payload;

struct PadInfo {
  GstPad* pad = nullptr;  // owned by the element
  weave::TensorInfo info;
  // Sink: negotiated tensor. Src: dims of the caps last pushed.
  bool has_caps = false;
  weave::caps::CapsTensor tensor;
};

inline weave::stream::Leaky leaky_of(int leaky) {
  switch (leaky) {
    case GST_WEAVE_INFER_LEAKY_UPSTREAM:
      return weave::stream::Leaky::upstream;
    case GST_WEAVE_INFER_LEAKY_DOWNSTREAM:
      return weave::stream::Leaky::downstream;
    default:
      return weave::stream::Leaky::none;
  }
}

// All C++ state lives here, constructed in instance_init and destroyed in finalize.
struct WeaveInferImpl {
  // Settings (GST_OBJECT_LOCK).
  std::string model;
  std::string cache_dir;
  bool cache_dir_set = false;
  int compression = kDefaultCompression;
  int threads = 0;
  int leaky = kDefaultLeaky;
  std::string max_shape;  // as set (validated by parse_shape_bounds)

  // The loaded model (changed only in NULL/READY).
  weave::ModelSlot loaded;
  std::vector<PadInfo> sinks;
  std::vector<PadInfo> srcs;
  GstFlowCombiner* combiner = nullptr;
  std::mutex caps_lock;  // has_caps and tensor of the pads (streaming threads and queries)

  std::atomic<int> inference_interval{1};  // runs every N-th set (property; read by the task)
  int batch_size = 1;                      // GST_OBJECT_LOCK; applied at start
  std::atomic<guint> batch_timeout_ms{kDefaultBatchTimeoutMs};

  // Queue, gathering and end of stream between the sink pads and the task.
  Runner runner{Runner::Options{1, kDefaultQueueSize, leaky_of(kDefaultLeaky)}};

  // Task thread only.
  std::unique_ptr<weave::stream::FrameRunner> frames;
  std::shared_ptr<weave::stream::BatchGroup> batch;  // batch-size > 1 and the model allows it
  bool warned_unbatchable = false;
  std::atomic<std::uint64_t> batched{0};  // frames run in a batch with others'
  bool stream_started = false;
  bool segment_pushed = false;
  std::uint64_t sets_since_segment = 0;  // for inference-interval
  std::atomic<std::uint64_t> skipped{0};
  // Sticky events (segment, tags) that arrived before the output caps could be known (a
  // multi-input model needs caps on every input): pushed right after the caps, in order.
  std::vector<EventPtr> held;

  // Statistics of the model runs; they survive state changes.
  std::shared_ptr<weave::stream::FrameStats> stats = std::make_shared<weave::stream::FrameStats>();
};

// GST_EVENT_IS_SERIALIZED / GST_EVENT_IS_STICKY mix two enum types, deprecated in C++20.
inline bool event_has_flag(GstEvent* event, GstEventTypeFlags flag) {
  return (gst_event_type_get_flags(GST_EVENT_TYPE(event)) & flag) != 0;
}

// gstweaveinfer_pads.cpp: pads made from the model (NULL/READY only) and what they tell.
void add_pads(GstWeaveInfer* self, const Factory& f);
void remove_pads(GstWeaveInfer* self);
// Before a run: warns about unlinked pads, resets the flow combiner, says no-more-pads again.
void prepare_pads(GstWeaveInfer* self);
// Bounds for the next load: the max-shape property, else what upstream caps promise.
ShapeBounds effective_bounds(GstWeaveInfer* self);
// "sink_x, src_y" (or "none"), for messages.
std::string pad_list(const WeaveInferImpl* impl);

// gstweaveinfer_task.cpp: starts the runner and the task on the first src pad.
void start_task(GstWeaveInfer* self);

}  // namespace weave::gst::infer

struct _GstWeaveInfer {
  GstElement parent;
  weave::gst::InstanceState<weave::gst::infer::WeaveInferImpl> impl;
};
