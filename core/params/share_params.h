// Explicit param sharing between models (R6): a graph about to become a Factory takes some of
// its params' bytes from another, already loaded model, by name. Typical use: a step model and
// an output model cut from one RNN language model, each run by its own executor, holding the
// embedding and weights once:
//
//   auto lm = weave::load_factory("lstm_lm.onnx");
//   auto step = weave::load_model_graph("lstm_step.onnx");
//   weave::ParamLink links[] = {{"embedding.weight"}, {"lstm.W", "onnx::LSTM_98"}};
//   if (auto st = weave::share_params(*step, **lm, links); !st) return st.error();
//   auto step_factory = weave::Factory::create(std::move(*step));
//
// Content dedup (FactoryOptions::dedup_params) finds equal params by itself; the explicit form
// is for when the caller knows which params are the same and wants that checked (dtype and
// shape must match, names must exist) rather than found, or runs with dedup off.
//
// Names are the NameMap's (the ONNX initializer names). A graph whose names were stripped
// (`weave compile --strip-names`) cannot take part. The graph is changed only when every link
// is valid; otherwise the error lists every bad link. Apply before Factory::create: a Factory
// is immutable and its kernels have seen the bytes.
#pragma once

#include <span>
#include <string>

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

struct ParamLink {
  std::string name;  // a param of the graph being prepared
  std::string from;  // a param of the source model; empty: the same name
};

// Replaces the bytes of each linked param of `g` by those of the source param (shared, not
// copied: the source's bytes stay alive as long as `g` or its factory uses them).
// (From a Factory: core/runtime/factory.h.)
[[nodiscard]] Status share_params(Graph& g, const Graph& from, std::span<const ParamLink> links);

// Links every param whose name exists in both models; returns how many were shared. A name in
// both with another dtype or shape is an error (rather than silently skipped).
[[nodiscard]] Expected<int> share_common_params(Graph& g, const Graph& from);

}  // namespace weave
