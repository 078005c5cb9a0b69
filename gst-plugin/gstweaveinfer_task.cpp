// weaveinfer's streaming task, the one consumer of the queue the sink pads fill: it runs the
// model on every gathered set of inputs, writing straight into output buffers, and pushes them
// with the input's timestamps and metas; events go out in their place, sticky ones after the
// output caps (a multi-input model knows them only once every input has caps).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "caps/tensor_origin.h"
#include "gst-plugin/gstweaveinfer_private.h"
#include "gst-plugin/gstweavememory.h"

namespace weave::gst::infer {

static void ensure_stream_start(GstWeaveInfer* self, GstEvent* upstream) {
  WeaveInferImpl* impl = self->impl.get();
  guint group = 0;
  bool has_group = upstream != nullptr && gst_event_parse_group_id(upstream, &group);
  const gchar* upstream_id = nullptr;
  if (upstream != nullptr) gst_event_parse_stream_start(upstream, &upstream_id);
  // One stream per output; gst_pad_create_stream_id() only serves elements with one sink pad.
  std::string base;
  if (upstream_id != nullptr) {
    base = upstream_id;
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%08x%08x", g_random_int(), g_random_int());
    base = buf;
  }
  for (auto& s : impl->srcs) {
    std::string id = base + "/" + GST_PAD_NAME(s.pad);
    GstEvent* ev = gst_event_new_stream_start(id.c_str());
    if (has_group) gst_event_set_group_id(ev, group);
    gst_pad_push_event(s.pad, ev);
  }
  impl->stream_started = true;
}

static void push_src_caps(GstWeaveInfer* self, int k, const weave::Dims& dims) {
  WeaveInferImpl* impl = self->impl.get();
  PadInfo& s = impl->srcs[k];
  if (!impl->stream_started) ensure_stream_start(self, nullptr);
  weave::caps::CapsTensor t;
  t.name = s.info.name;
  t.dtype = s.info.dtype;
  t.dims = dims;
  auto caps = weave::caps::caps_from_dims(t.name, t.dtype, t.dims);
  {
    std::lock_guard lock(impl->caps_lock);
    s.tensor = t;
    s.has_caps = true;
  }
  GST_DEBUG_OBJECT(s.pad, "caps %" GST_PTR_FORMAT, caps.get());
  gst_pad_push_event(s.pad, gst_event_new_caps(caps.get()));
}

static void push_all(GstWeaveInfer* self, GstEvent* event) {
  for (auto& s : self->impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
  gst_event_unref(event);
}

static bool src_caps_known(WeaveInferImpl* impl) {
  std::lock_guard lock(impl->caps_lock);
  for (const auto& s : impl->srcs)
    if (!s.has_caps) return false;
  return true;
}

static void push_held(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  std::vector<EventPtr> held;
  held.swap(impl->held);
  for (auto& ev : held) {
    if (GST_EVENT_TYPE(ev.get()) == GST_EVENT_SEGMENT) impl->segment_pushed = true;
    push_all(self, ev.release());
  }
}

// Held events first, then a default segment if upstream sent none: what must precede data or a gap.
static void ensure_segment(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (!impl->held.empty()) push_held(self);
  if (impl->segment_pushed) return;
  GstSegment seg;
  gst_segment_init(&seg, GST_FORMAT_TIME);
  push_all(self, gst_event_new_segment(&seg));
  impl->segment_pushed = true;
}

namespace {

// Output buffers the model writes into directly (R7): 64-byte aligned, mapped for writing while
// the frame runs; pushed (or released) afterwards.
class OutBuffers final : public weave::stream::OutputSink {
 public:
  explicit OutBuffers(std::size_t n) : outs_(n) {}
  ~OutBuffers() override {
    for (auto& o : outs_) {
      unmap(o);
      if (o.buffer != nullptr) gst_buffer_unref(o.buffer);
    }
  }
  weave::Expected<std::span<std::byte>> allocate(int index, weave::DType, const weave::Dims&,
                                                 std::size_t bytes) override {
    Out& o = outs_[static_cast<std::size_t>(index)];
    o.buffer = bytes > 0 ? weave::gst::output_buffer_new(bytes) : gst_buffer_new();
    if (o.buffer == nullptr) return weave::make_error("cannot allocate ", bytes, " bytes for output ", index);
    if (bytes == 0) return std::span<std::byte>();
    if (!gst_buffer_map(o.buffer, &o.map, GST_MAP_WRITE))
      return weave::make_error("cannot map the buffer of output ", index);
    o.mapped = true;
    return std::span<std::byte>(reinterpret_cast<std::byte*>(o.map.data), o.map.size);
  }
  // Unmaps every output and hands buffer k over.
  void unmap_all() {
    for (auto& o : outs_) unmap(o);
  }
  GstBuffer* take(std::size_t k) { return std::exchange(outs_[k].buffer, nullptr); }

 private:
  struct Out {
    GstBuffer* buffer = nullptr;
    GstMapInfo map{};
    bool mapped = false;
  };
  static void unmap(Out& o) {
    if (o.mapped) gst_buffer_unmap(o.buffer, &o.map);
    o.mapped = false;
  }
  std::vector<Out> outs_;
};

// The input buffers of one set, mapped for reading while the frame runs.
class MappedInputs {
 public:
  explicit MappedInputs(const std::vector<Payload>& inputs) : inputs_(inputs), maps_(inputs.size()) {}
  ~MappedInputs() {
    for (std::size_t i = 0; i < mapped_; ++i) gst_buffer_unmap(input(i).buffer.get(), &maps_[i]);
  }
  // Maps every buffer; views of the tensors their caps described.
  bool map(std::vector<weave::stream::InputFrame>& out) {
    for (; mapped_ < inputs_.size(); ++mapped_) {
      GstBuffer* b = input(mapped_).buffer.get();
      const guint blocks = gst_buffer_n_memory(b);
      if (!gst_buffer_map(b, &maps_[mapped_], GST_MAP_READ)) return false;
      const auto& t = input(mapped_).tensor;
      out.push_back(
          {weave::ConstTensorView{maps_[mapped_].data, t.dtype, t.dims}, maps_[mapped_].size, blocks > 1});
    }
    return true;
  }

 private:
  const Input& input(std::size_t i) const { return inputs_[i].get<Input>(); }
  const std::vector<Payload>& inputs_;
  std::vector<GstMapInfo> maps_;
  std::size_t mapped_ = 0;
};

}  // namespace

// inference-interval: a set the model skips goes out as a GAP of its time on every output, so
// downstream (weavemeta) knows the frame had no run rather than waiting for one. Sets before the
// output caps are known always run (a gap must follow caps and segment).
static bool skip_set(GstWeaveInfer* self, const std::vector<Payload>& inputs) {
  WeaveInferImpl* impl = self->impl.get();
  const int every = std::max(impl->inference_interval.load(), 1);
  const std::uint64_t n = impl->sets_since_segment++;
  if (every == 1 || n % static_cast<std::uint64_t>(every) == 0 || inputs.empty() || !src_caps_known(impl))
    return false;
  GstBuffer* first = inputs[0].get<Input>().buffer.get();
  if (!GST_BUFFER_PTS_IS_VALID(first)) return false;  // a gap needs a time
  ensure_segment(self);
  push_all(self, gst_event_new_gap(GST_BUFFER_PTS(first), GST_BUFFER_DURATION(first)));
  ++impl->skipped;
  return true;
}

// Once per start, after a frame that ran alone: the group stopped batching (the model's outputs
// turned out not to keep the batch first, or a batch failed where its frames ran alone).
static void warn_unbatchable(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (impl->warned_unbatchable) return;
  const std::string why = impl->batch->unbatchable();
  if (why.empty()) return;
  impl->warned_unbatchable = true;
  GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("batch-size ignored: frames run alone."), ("%s", why.c_str()));
}

static GstFlowReturn run_set(GstWeaveInfer* self, const std::vector<Payload>& inputs) {
  WeaveInferImpl* impl = self->impl.get();
  if (!impl->stream_started) ensure_stream_start(self, nullptr);
  if (skip_set(self, inputs)) return GST_FLOW_OK;
  OutBuffers outs(impl->srcs.size());
  weave::Expected<std::vector<weave::Dims>> out_dims = weave::make_error("not run");
  {
    // Inputs stay mapped (READ) until the run is over: bound ones are read in place.
    MappedInputs mapped(inputs);
    std::vector<weave::stream::InputFrame> frames;
    if (!mapped.map(frames)) {
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot map an input buffer."), (nullptr));
      return GST_FLOW_ERROR;
    }
    if (impl->batch) {
      int batch_frames = 1;
      const std::chrono::milliseconds timeout(impl->batch_timeout_ms.load());
      out_dims = impl->batch->run(*impl->frames, frames, outs, timeout, *impl->stats, &batch_frames);
      if (batch_frames > 1)
        ++impl->batched;
      else
        warn_unbatchable(self);
    } else {
      out_dims = impl->frames->run(frames, outs);
    }
    outs.unmap_all();
  }
  if (!out_dims) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", out_dims.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }

  GstBuffer* first = inputs.empty() ? nullptr : inputs[0].get<Input>().buffer.get();
  for (std::size_t k = 0; k < impl->srcs.size(); ++k) {
    PadInfo& s = impl->srcs[k];
    if (!s.has_caps || !(s.tensor.dims == (*out_dims)[k]) || s.tensor.dtype != s.info.dtype)
      push_src_caps(self, static_cast<int>(k), (*out_dims)[k]);
  }
  // Sticky order: caps, then segment (and held tags), then data.
  ensure_segment(self);
  GstFlowReturn ret = GST_FLOW_OK;
  for (std::size_t k = 0; k < impl->srcs.size(); ++k) {
    GstBuffer* buf = outs.take(k);
    if (first != nullptr) {
      gst_buffer_copy_into(buf, first, GST_BUFFER_COPY_TIMESTAMPS, 0, static_cast<gsize>(-1));
      // Metas about the stream (e.g. where a tensor came from) follow the data.
      weave::caps::copy_untagged_metas(buf, first);
    }
    GstFlowReturn r = gst_pad_push(impl->srcs[k].pad, buf);
    ret = gst_flow_combiner_update_pad_flow(impl->combiner, impl->srcs[k].pad, r);
  }
  return ret;
}

static void handle_control(GstWeaveInfer* self, Control& item) {
  WeaveInferImpl* impl = self->impl.get();
  if (!item.event) {
    for (std::size_t k = 0; k < impl->srcs.size() && k < item.caps.size(); ++k)
      push_src_caps(self, static_cast<int>(k), item.caps[k]);
    push_held(self);
    return;
  }
  GstEvent* ev = item.event.get();
  if (GST_EVENT_TYPE(ev) == GST_EVENT_STREAM_START) {
    ensure_stream_start(self, ev);
  } else if ((event_has_flag(ev, GST_EVENT_TYPE_STICKY) || GST_EVENT_TYPE(ev) == GST_EVENT_GAP) &&
             !src_caps_known(impl)) {
    // A gap keeps its place behind the segment it belongs to.
    impl->held.push_back(std::move(item.event));
  } else if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
    // A frame without data (e.g. no region to crop): every output says so, in its place.
    ensure_segment(self);
    push_all(self, item.event.release());
  } else {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_SEGMENT) {
      if (!impl->stream_started) ensure_stream_start(self, nullptr);
      impl->segment_pushed = true;
      impl->sets_since_segment = 0;  // the first frame after a seek is always run
    }
    push_all(self, item.event.release());
  }
}

static void weave_infer_loop(gpointer user_data) {
  auto* self = GST_WEAVE_INFER(user_data);
  WeaveInferImpl* impl = self->impl.get();
  Runner::Step step = impl->runner.next();
  GstFlowReturn ret = GST_FLOW_OK;
  switch (step.kind) {
    case Runner::StepKind::flushing:
      gst_pad_pause_task(impl->srcs[0].pad);
      return;
    case Runner::StepKind::set:
      ret = run_set(self, step.buffers);
      break;
    case Runner::StepKind::event:
      handle_control(self, step.event.get<Control>());
      break;
    case Runner::StepKind::eos:
      if (!impl->stream_started) ensure_stream_start(self, nullptr);
      push_all(self, gst_event_new_eos());
      break;
  }
  if (ret == GST_FLOW_OK) return;
  GST_DEBUG_OBJECT(self, "pausing task: %s", gst_flow_get_name(ret));
  impl->runner.stop(ret);
  gst_pad_pause_task(impl->srcs[0].pad);
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS) {
    GST_ELEMENT_FLOW_ERROR(self, ret);
    push_all(self, gst_event_new_eos());
  }
}

void start_task(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (impl->srcs.empty()) return;
  impl->runner.start();
  gst_pad_start_task(impl->srcs[0].pad, weave_infer_loop, self, nullptr);
}

}  // namespace weave::gst::infer
