// weaveinfer's pads: made from the model's inputs and outputs, the sink pads' chain (validate,
// then queue for the task), events (caps plan the outputs; flushes; serialized events keep
// their place in the queue) and queries (caps, accept-caps, allocation, latency).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/tensor_names.h"
#include "gst-plugin/gstweaveinfer_private.h"

namespace weave::gst::infer {

static GstFlowReturn weave_infer_chain(GstPad* pad, GstObject* parent, GstBuffer* buffer);
static gboolean weave_infer_sink_event(GstPad* pad, GstObject* parent, GstEvent* event);
static gboolean weave_infer_sink_query(GstPad* pad, GstObject* parent, GstQuery* query);
static gboolean weave_infer_src_event(GstPad* pad, GstObject* parent, GstEvent* event);
static gboolean weave_infer_src_query(GstPad* pad, GstObject* parent, GstQuery* query);
static gboolean weave_infer_src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode,
                                              gboolean active);

static int pad_index(GstPad* pad) {
  return GPOINTER_TO_INT(gst_pad_get_element_private(pad));
}

std::string pad_list(const WeaveInferImpl* impl) {
  std::string s;
  for (const auto* v : {&impl->sinks, &impl->srcs})
    for (const auto& p : *v) {
      if (!s.empty()) s += ", ";
      s += GST_PAD_NAME(p.pad);
    }
  return s.empty() ? std::string("none") : s;
}

// ---------------------------------------------------------------------------------------------
// Pads made from the model (NULL/READY only)

void remove_pads(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (impl->combiner != nullptr) {
    gst_flow_combiner_free(impl->combiner);
    impl->combiner = nullptr;
  }
  for (auto* v : {&impl->sinks, &impl->srcs})
    for (auto& p : *v) gst_element_remove_pad(GST_ELEMENT(self), p.pad);
  impl->sinks.clear();
  impl->srcs.clear();
}

// A pad of template `templ` for the model's input or output `index`.
static PadInfo new_pad(GstWeaveInfer* self, const char* templ, const std::string& name, std::size_t index,
                       const weave::TensorInfo& info) {
  GstPadTemplate* t = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(self), templ);
  PadInfo p;
  p.pad = gst_pad_new_from_template(t, name.c_str());
  gst_pad_set_element_private(p.pad, GINT_TO_POINTER(static_cast<int>(index)));
  p.info = info;
  return p;
}

void add_pads(GstWeaveInfer* self, const weave::Factory& f) {
  WeaveInferImpl* impl = self->impl.get();
  impl->combiner = gst_flow_combiner_new();
  std::vector<std::string> in_names, out_names;
  for (const auto& i : f.inputs()) in_names.push_back(i.name);
  for (const auto& o : f.outputs()) out_names.push_back(o.name);
  auto in_ids = weave::unique_tensor_names(in_names);
  auto out_ids = weave::unique_tensor_names(out_names);
  for (std::size_t i = 0; i < in_ids.size(); ++i) {
    PadInfo p = new_pad(self, "sink_%s", "sink_" + in_ids[i], i, f.input_info(static_cast<int>(i)));
    gst_pad_set_chain_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_chain));
    gst_pad_set_event_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_sink_event));
    gst_pad_set_query_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_sink_query));
    impl->sinks.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < out_ids.size(); ++i) {
    PadInfo p = new_pad(self, "src_%s", "src_" + out_ids[i], i, f.output_info(static_cast<int>(i)));
    gst_pad_set_event_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_src_event));
    gst_pad_set_query_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_src_query));
    gst_pad_set_activatemode_function(p.pad, GST_DEBUG_FUNCPTR(weave_infer_src_activate_mode));
    gst_flow_combiner_add_pad(impl->combiner, p.pad);
    impl->srcs.push_back(std::move(p));
  }
  impl->runner.set_inputs(static_cast<int>(impl->sinks.size()));
  // The pad vectors are complete before any pad becomes visible (pad-added handlers query).
  for (auto* v : {&impl->sinks, &impl->srcs})
    for (auto& p : *v) gst_element_add_pad(GST_ELEMENT(self), p.pad);
  gst_element_no_more_pads(GST_ELEMENT(self));
}

void prepare_pads(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  for (auto& s : impl->sinks) {
    if (!gst_pad_is_linked(s.pad))
      GST_ELEMENT_WARNING(
          self, CORE, PAD,
          ("Input pad %s is not linked; the model runs only when every input has data.", GST_PAD_NAME(s.pad)),
          ("pads: %s", pad_list(impl).c_str()));
  }
  bool any_src_linked = false;
  for (auto& s : impl->srcs) any_src_linked = any_src_linked || gst_pad_is_linked(s.pad);
  if (!any_src_linked)
    GST_ELEMENT_WARNING(self, CORE, PAD, ("No output pad is linked."), ("pads: %s", pad_list(impl).c_str()));
  if (impl->combiner != nullptr) gst_flow_combiner_reset(impl->combiner);
  // A gst-launch delayed link waiting for a pad that does not exist is reported by the
  // parser when it sees no-more-pads; say it again now that all links are made.
  gst_element_no_more_pads(GST_ELEMENT(self));
}

weave::ShapeBounds effective_bounds(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  GST_OBJECT_LOCK(self);
  std::string text = impl->max_shape;
  GST_OBJECT_UNLOCK(self);
  if (!text.empty()) {
    auto parsed = weave::parse_shape_bounds(text);  // validated when set
    return parsed ? *parsed : weave::ShapeBounds{};
  }
  weave::ShapeBounds bounds;
  for (const auto& s : impl->sinks) {
    if (weave::shape_is_static(s.info.shape)) continue;
    auto mine = weave::caps::caps_from_info(s.info, false);
    if (!mine) continue;
    // No filter in the query: subset checks on shape arrays with ranges are unreliable
    // (capsfilter warns); intersect here instead.
    GstCaps* peer = gst_pad_peer_query_caps(s.pad, nullptr);
    auto both = weave::caps::intersect(peer, mine->get());
    auto shape = weave::caps::shape_bound(both.get());
    if (shape && shape->size() == s.info.shape.size()) {
      GST_INFO_OBJECT(self, "pad %s: upstream caps bound the input to %s", GST_PAD_NAME(s.pad),
                      weave::shape_str(*shape).c_str());
      bounds[s.info.name] = *shape;
    }
    if (peer != nullptr) gst_caps_unref(peer);
  }
  return bounds;
}

// ---------------------------------------------------------------------------------------------
// Input: chain, events and queries of the sink pads

static GstFlowReturn flow_of(const Runner& runner, weave::stream::Push r) {
  switch (r) {
    case weave::stream::Push::queued:
    case weave::stream::Push::dropped:
      return GST_FLOW_OK;
    case weave::stream::Push::eos:
      return GST_FLOW_EOS;
    case weave::stream::Push::flushing:
      return GST_FLOW_FLUSHING;
    case weave::stream::Push::stopped:
      break;
  }
  return static_cast<GstFlowReturn>(runner.code());
}

static GstFlowReturn weave_infer_chain(GstPad* pad, GstObject* parent, GstBuffer* buffer) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  BufferPtr owned(buffer);
  const int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size())) return GST_FLOW_ERROR;
  if (auto r = impl->runner.accepting(index); r != weave::stream::Push::queued)
    return flow_of(impl->runner, r);

  PadInfo& sp = impl->sinks[index];
  std::unique_lock lock(impl->caps_lock);
  if (!sp.has_caps) {
    lock.unlock();
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Pad %s got a buffer before caps.", GST_PAD_NAME(pad)),
                      (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const weave::caps::CapsTensor tensor = sp.tensor;
  lock.unlock();
  const std::size_t want = tensor.bytes();
  const std::size_t have = gst_buffer_get_size(buffer);
  if (have != want) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("Pad %s: buffer of %zu bytes, but caps %s %s need %zu bytes.", GST_PAD_NAME(pad), have,
                       std::string(weave::dtype_name(tensor.dtype)).c_str(),
                       weave::caps::shape_text(tensor.dims).c_str(), want),
                      (nullptr));
    return GST_FLOW_ERROR;
  }
  std::optional<uint64_t> pts;
  if (GST_BUFFER_PTS_IS_VALID(buffer)) pts = GST_BUFFER_PTS(buffer);
  const auto r = impl->runner.push(index, pts, Payload(Input{std::move(owned), tensor}));
  if (r == weave::stream::Push::dropped) GST_LOG_OBJECT(self, "queue full, dropped a buffer");
  return flow_of(impl->runner, r);
}

static bool post_negotiation_error(GstWeaveInfer* self, const std::string& message) {
  GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", message.c_str()), (nullptr));
  return false;
}

static gboolean handle_sink_caps(GstWeaveInfer* self, int index, GstCaps* caps) {
  WeaveInferImpl* impl = self->impl.get();
  PadInfo& sp = impl->sinks[index];
  auto t = weave::caps::parse_fixed_caps(caps);
  if (!t)
    return post_negotiation_error(self, std::string("pad ") + GST_PAD_NAME(sp.pad) + ": " + t.message());
  auto fits = weave::caps::check_fits(*t, sp.info, GST_PAD_NAME(sp.pad), "input");
  if (!fits) return post_negotiation_error(self, fits.message());

  std::vector<weave::Dims> in_dims;
  bool all = true;
  {
    std::lock_guard lock(impl->caps_lock);
    sp.tensor = *t;
    sp.has_caps = true;
    for (const auto& s : impl->sinks) {
      all = all && s.has_caps;
      in_dims.push_back(s.tensor.dims);
    }
  }
  GST_DEBUG_OBJECT(self, "pad %s: caps %" GST_PTR_FORMAT, GST_PAD_NAME(sp.pad), caps);
  const auto factory = impl->loaded.factory();
  if (!factory->replan_beyond_bound())
    if (auto bound = factory->check_bound(index, t->dims); !bound)
      return post_negotiation_error(self, std::string("pad ") + GST_PAD_NAME(sp.pad) + ": " +
                                              bound.message() + " (property max-shape)");
  if (!all) return TRUE;

  auto plan = factory->plan_for(in_dims);
  if (!plan) {
    std::string shapes;
    for (const auto& s : impl->sinks)
      shapes += std::string(shapes.empty() ? "" : ", ") + GST_PAD_NAME(s.pad) + " " +
                weave::caps::shape_text(s.tensor.dims);
    return post_negotiation_error(self,
                                  "the model cannot run with input shapes " + shapes + ": " + plan.message());
  }
  Control item;
  for (int32_t v : factory->graph().outputs) item.caps.push_back((*plan)->slots[v].dims);
  (void)impl->runner.push_event(Payload(std::move(item)), index);
  return TRUE;
}

static gboolean weave_infer_sink_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size()))
    return gst_pad_event_default(pad, parent, event);
  GST_LOG_OBJECT(pad, "event %" GST_PTR_FORMAT, event);

  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
      GstCaps* caps = nullptr;
      gst_event_parse_caps(event, &caps);
      gboolean ok = handle_sink_caps(self, index, caps);
      gst_event_unref(event);
      return ok;
    }
    case GST_EVENT_FLUSH_START: {
      // A seek reaches the flush of every input (a source tee'd into two inputs flushes both,
      // once per seek it gets): the first input's flush-start flushes the element and goes
      // downstream, and the element flushes until every input that started has stopped.
      if (impl->runner.flush_input(index, GST_FLOW_FLUSHING)) {
        for (auto& s : impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
        // The task may be waiting for a batch to fill (batch-size): run it now.
        if (impl->batch) impl->batch->wake();
        if (!impl->srcs.empty()) gst_pad_pause_task(impl->srcs[0].pad);
      }
      gst_event_unref(event);
      return TRUE;
    }
    case GST_EVENT_FLUSH_STOP: {
      if (!impl->runner.flush_input_done(index)) {
        GST_DEBUG_OBJECT(pad, "flush-stop: other inputs still flushing");
        gst_event_unref(event);
        return TRUE;
      }
      // The last flushing input stopped; the task is paused (flush-start): the runner's and the
      // task's state are ours to reset.
      impl->runner.reset();
      if (impl->combiner != nullptr) gst_flow_combiner_reset(impl->combiner);
      impl->segment_pushed = false;  // the flush removed downstream's segment
      for (auto& s : impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
      gst_event_unref(event);
      // Input 0 (where stream events come from) may not send another segment: it was not
      // flushed, or its new one came before this. Its current segment goes out again first.
      if (GstEvent* seg = gst_pad_get_sticky_event(impl->sinks[0].pad, GST_EVENT_SEGMENT, 0)) {
        Control item;
        item.event.reset(seg);
        (void)impl->runner.push_event(Payload(std::move(item)));
      }
      if (!impl->srcs.empty() && gst_pad_is_active(impl->srcs[0].pad)) start_task(self);
      return TRUE;
    }
    case GST_EVENT_EOS:
      gst_event_unref(event);
      (void)impl->runner.push_eos(index);
      return TRUE;
    case GST_EVENT_STREAM_START:
    case GST_EVENT_SEGMENT:
    default:
      if (!event_has_flag(event, GST_EVENT_TYPE_SERIALIZED)) return gst_pad_event_default(pad, parent, event);
      // Stream-level events of a multi-input model come from its first input only.
      if (index != 0) {
        gst_event_unref(event);
        return TRUE;
      }
      Control item;
      item.event.reset(event);
      (void)impl->runner.push_event(Payload(std::move(item)), index);
      return TRUE;
  }
}

static gboolean weave_infer_sink_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size()))
    return gst_pad_query_default(pad, parent, query);
  const PadInfo& sp = impl->sinks[index];
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      GstCaps* filter = nullptr;
      gst_query_parse_caps(query, &filter);
      auto mine = weave::caps::caps_from_info(sp.info, false);
      if (!mine) return FALSE;
      auto result = weave::caps::intersect(filter, mine->get());
      gst_query_set_caps_result(query, result.get());
      return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS: {
      // Any fixed tensor caps are accepted here; the CAPS event checks them against the model
      // and posts an error naming both shapes (a refused accept-caps would only surface as a
      // bare not-negotiated). The caps query above is exact, so link-time negotiation is not
      // loosened.
      GstCaps* caps = nullptr;
      gst_query_parse_accept_caps(query, &caps);
      auto t = weave::caps::parse_fixed_caps(caps);
      if (t) {
        auto fits = weave::caps::check_fits(*t, sp.info, GST_PAD_NAME(pad));
        if (!fits) GST_INFO_OBJECT(pad, "%s", fits.message().c_str());
      }
      gst_query_set_accept_caps_result(query, t.ok());
      return TRUE;
    }
    case GST_QUERY_ALLOCATION: {
      // Outputs are new buffers; upstream's allocation is none of downstream's business. We
      // only ask for 64-byte aligned memory, so that inputs can be read in place (zero-copy).
      GstAllocationParams params;
      gst_allocation_params_init(&params);
      params.align = weave::kAlignment - 1;
      gst_query_add_allocation_param(query, nullptr, &params);
      return TRUE;
    }
    default:
      return gst_pad_query_default(pad, parent, query);
  }
}

// ---------------------------------------------------------------------------------------------
// Output: events and queries of the src pads

static gboolean weave_infer_src_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  // Upstream events (seek, QoS, reconfigure, ...) go to every input.
  return gst_pad_event_default(pad, parent, event);
}

static gboolean weave_infer_src_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->srcs.size()))
    return gst_pad_query_default(pad, parent, query);
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      GstCaps* filter = nullptr;
      gst_query_parse_caps(query, &filter);
      std::unique_lock lock(impl->caps_lock);
      const bool fixed = impl->srcs[index].has_caps;
      const weave::caps::CapsTensor t = impl->srcs[index].tensor;
      lock.unlock();
      weave::caps::CapsPtr mine;
      if (fixed) {
        mine = weave::caps::caps_from_dims(t.name, t.dtype, t.dims);
      } else {
        auto c = weave::caps::caps_from_info(impl->srcs[index].info, true);
        if (!c) return FALSE;
        mine = std::move(*c);
      }
      auto result = weave::caps::intersect(filter, mine.get());
      gst_query_set_caps_result(query, result.get());
      return TRUE;
    }
    case GST_QUERY_LATENCY: {
      // The latency of the slowest input; the element adds no fixed latency of its own.
      gboolean live = FALSE;
      GstClockTime min = 0, max = GST_CLOCK_TIME_NONE;
      bool any = false;
      for (auto& s : impl->sinks) {
        GstQuery* q = gst_query_new_latency();
        if (gst_pad_peer_query(s.pad, q)) {
          gboolean l = FALSE;
          GstClockTime mn = 0, mx = GST_CLOCK_TIME_NONE;
          gst_query_parse_latency(q, &l, &mn, &mx);
          any = true;
          live = live || l;
          if (mn > min) min = mn;
          if (GST_CLOCK_TIME_IS_VALID(mx) && (!GST_CLOCK_TIME_IS_VALID(max) || mx < max)) max = mx;
        }
        gst_query_unref(q);
      }
      if (!any) return FALSE;
      gst_query_set_latency(query, live, min, max);
      return TRUE;
    }
    default:
      return gst_pad_query_default(pad, parent, query);
  }
}

static gboolean weave_infer_src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode,
                                              gboolean active) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  // The task lives on the first src pad; the others only follow.
  if (impl->srcs.empty() || pad != impl->srcs[0].pad) return TRUE;
  if (active) {
    start_task(self);
    return TRUE;
  }
  impl->runner.flush(GST_FLOW_FLUSHING);
  if (impl->batch) impl->batch->wake();
  return gst_pad_stop_task(pad);
}

}  // namespace weave::gst::infer
