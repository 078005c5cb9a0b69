// One registry of kernels for all ops. The reference kernels live in core/kernels/ref/, one
// operator (or the ops of one kernel) per file, each with its register_<file>(); the fast CPU path
// lives in core/kernels/fast/. registry.cpp calls register_reference_kernels (ref/register.h) and
// fast::register_fast_kernels: explicit calls rather than static initialisers, which a static
// library would silently drop. Fast kernels register with a higher priority and may decline a
// node, in which case the reference kernel takes it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernels/kernel.h"

namespace weave {

class KernelRegistry {
 public:
  // The process-wide registry with every built-in kernel. Thread-safe after first use.
  static KernelRegistry& global();
  // The same kernels without any fast path (only impl == "reference"): what a portable build
  // runs. Tests and the conformance runner use it to check both paths. Thread-safe.
  static const KernelRegistry& reference();

  void add(std::string op, KernelFactory factory, int priority = 0, std::string impl = "reference");
  [[nodiscard]] bool supports(std::string_view op) const;
  // Creates the highest-priority kernel that accepts the node; `impl` (optional) receives the
  // implementation that took it ("fast", "reference", ...).
  [[nodiscard]] Expected<std::unique_ptr<Kernel>> create(const KernelSetup& setup,
                                                         std::string* impl = nullptr) const;
  // Creates the kernel of one implementation ("reference", ...) only; for tests that check a
  // fast kernel against the reference one.
  [[nodiscard]] Expected<std::unique_ptr<Kernel>> create(const KernelSetup& setup,
                                                         std::string_view impl) const;
  [[nodiscard]] std::vector<std::string> ops() const;

  // Channels-last kernels (the fast path) answer for the nodes they take: the compiler's
  // layout pass (core/compiler/layout_nhwc.h) lays out a layout-sensitive node NHWC only when
  // takes_nhwc says a kernel will take it so. The registry rewrites nothing itself.
  using NodeQuery = bool (*)(const Graph& g, const Node& node);
  void set_nhwc_query(NodeQuery query) { nhwc_query_ = query; }
  [[nodiscard]] bool has_channels_last_kernels() const { return nhwc_query_ != nullptr; }
  [[nodiscard]] bool takes_nhwc(const Graph& g, const Node& node) const {
    return nhwc_query_ != nullptr && nhwc_query_(g, node);
  }

 private:
  struct Entry {
    std::string op;
    KernelFactory factory;
    int priority;
    std::string impl;
  };
  std::vector<Entry> entries_;  // sorted by op, then priority descending
  NodeQuery nhwc_query_ = nullptr;
};

// The instruction set the fast CPU path runs with in this process ("avx2", "avx512"), or ""
// when global() has no fast kernels (a portable build, a CPU without AVX2, WEAVE_ISA=none).
[[nodiscard]] std::string_view fast_path_isa();

}  // namespace weave
