#include "core/kernels/registry.h"

#include <algorithm>

#include "core/kernels/ref/register.h"

#if WEAVE_HAVE_FAST
#include "core/kernels/fast/cpu.h"
#include "core/kernels/fast/nhwc.h"
#endif

namespace weave {

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();  // never destroyed: kernels may be looked up during exit
    register_reference_kernels(*reg);
#if WEAVE_HAVE_FAST
    fast::register_fast_kernels(*reg);  // a no-op on CPUs without a fast path
#endif
    return reg;
  }();
  return *r;
}

const KernelRegistry& KernelRegistry::reference() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();  // never destroyed, like global()
    for (const Entry& e : global().entries_)
      if (e.impl == "reference") reg->entries_.push_back(e);
    return reg;
  }();
  return *r;
}

void KernelRegistry::add(std::string op, KernelFactory factory, int priority, std::string impl) {
  // After every entry that sorts before it or ties with it: the order stays sorted, and entries
  // of equal op and priority keep the order they were added in. (Sorting the whole list after
  // each of the hundreds of adds took about a millisecond of every process's first load.)
  const auto at =
      std::upper_bound(entries_.begin(), entries_.end(), std::pair<const std::string&, int>(op, priority),
                       [](const auto& key, const Entry& e) {
                         if (key.first != e.op) return key.first < e.op;
                         return key.second > e.priority;
                       });
  entries_.insert(at, Entry{std::move(op), factory, priority, std::move(impl)});
}

bool KernelRegistry::supports(std::string_view op) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.op == op; });
}

namespace {

// Every operator has at least one output, and kernels rely on it (fuzz_onnx: a ConstantOfShape
// with none read past its outputs).
Status check_outputs(const KernelSetup& setup) {
  if (setup.node.outputs.empty())
    return make_error(setup.label, ": a '", setup.node.op, "' node needs an output");
  return {};
}

// One factory's answer: a kernel (carrying the float inputs its factory marked), nullptr when it
// declines, or its error in the node's context.
Expected<std::unique_ptr<Kernel>> try_factory(const KernelFactory& factory, const KernelSetup& setup) {
  setup.float_inputs = 0;
  auto k = factory(setup);
  if (!k) return k.error().context(setup.label);
  if (*k) (*k)->set_float_inputs(setup.float_inputs);
  return k;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> KernelRegistry::create(const KernelSetup& setup, std::string* impl) const {
  WEAVE_TRY(check_outputs(setup));
  bool any = false;
  for (const Entry& e : entries_) {
    if (e.op != setup.node.op) continue;
    any = true;
    auto k = try_factory(e.factory, setup);
    if (!k) return k.error();
    if (*k) {
      if (impl != nullptr) *impl = e.impl;
      return std::move(*k);
    }
  }
  if (!any) return make_error(setup.label, ": operator '", setup.node.op, "' is not supported");
  return make_error(setup.label, ": no kernel accepts this '", setup.node.op, "' node");
}

Expected<std::unique_ptr<Kernel>> KernelRegistry::create(const KernelSetup& setup,
                                                         std::string_view impl) const {
  WEAVE_TRY(check_outputs(setup));
  for (const Entry& e : entries_) {
    if (e.op != setup.node.op || e.impl != impl) continue;
    auto k = try_factory(e.factory, setup);
    if (!k || *k) return k;
  }
  return make_error(setup.label, ": no '", impl, "' kernel for '", setup.node.op, "'");
}

std::string_view fast_path_isa() {
#if WEAVE_HAVE_FAST
  if (KernelRegistry::global().has_channels_last_kernels()) return fast::isa_name(fast::active_isa());
#endif
  return {};
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    if (out.empty() || out.back() != e.op) out.push_back(e.op);
  return out;
}

}  // namespace weave
