// Einsum (any equation, with "..." broadcasting, repeated labels for diagonals, implicit or
// explicit output), float32 and float64, accumulated in double.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::floating;
using kern::load;
using kern::make_kernel;
using kern::store;

constexpr int kLetters = 52;                          // a-z, A-Z
constexpr int kLabels = kLetters + kMaxRank;          // then one label per ellipsis dim
constexpr int64_t kMaxEinsumWork = int64_t{1} << 32;  // products evaluated, against hostile shapes

// An equation parsed against concrete input ranks: per input its axis labels, and the output's.
struct Equation {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

int letter(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -1;
}

// Labels of one term ("ab...c") for an input of rank `rank`; ellipsis dims are right-aligned
// among `ell` shared ellipsis labels.
Expected<std::vector<int>> term_labels(const std::string& t, int rank, int ell, bool ell_known,
                                       int& ell_here) {
  std::vector<int> out;
  int letters = 0;
  bool has_ell = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 3, "...") == 0) {
      if (has_ell) return make_error("Einsum term '", t, "' has two ellipses");
      has_ell = true;
      i += 2;
    } else if (letter(t[i]) >= 0) {
      ++letters;
    } else if (t[i] != ' ') {
      return make_error("Einsum term '", t, "' has an invalid character '", t[i], "'");
    }
  }
  ell_here = has_ell && rank >= 0 ? rank - letters : 0;  // rank < 0: the output term
  if (ell_here < 0 || (!has_ell && letters != rank && rank >= 0))
    return make_error("Einsum term '", t, "' does not match an input of rank ", rank);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 3, "...") == 0) {
      const int n = ell_known ? ell : ell_here;
      for (int k = 0; k < n; ++k) out.push_back(kLetters + (ell - n) + k);
      i += 2;
    } else if (letter(t[i]) >= 0) {
      out.push_back(letter(t[i]));
    }
  }
  return out;
}

Expected<Equation> parse_equation(const std::string& eq, std::span<const ConstTensorView> in) {
  std::string lhs = eq, rhs;
  const auto arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  if (explicit_out) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
  }
  std::vector<std::string> terms;
  for (std::size_t b = 0;;) {
    const auto c = lhs.find(',', b);
    terms.push_back(lhs.substr(b, c == std::string::npos ? std::string::npos : c - b));
    if (c == std::string::npos) break;
    b = c + 1;
  }
  if (terms.size() != in.size())
    return make_error("Einsum equation '", eq, "' has ", terms.size(), " terms for ", in.size(), " inputs");
  // Ellipsis width: the most dims any input's ellipsis covers.
  int ell = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    int here = 0;
    auto l = term_labels(terms[i], in[i].dims.rank(), 0, false, here);
    if (!l) return l.error();
    ell = std::max(ell, here);
  }
  Equation e;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    int here = 0;
    auto l = term_labels(terms[i], in[i].dims.rank(), ell, false, here);
    if (!l) return l.error();
    e.inputs.push_back(std::move(*l));
  }
  if (explicit_out) {
    int here = 0;
    auto l = term_labels(rhs, -1, ell, true, here);
    if (!l) return l.error();
    e.output = *l;
  } else {
    // Implicit: ellipsis dims first, then the letters used exactly once, in alphabetical order.
    std::array<int, kLabels> count{};
    for (const auto& t : e.inputs)
      for (int lab : t) ++count[static_cast<std::size_t>(lab)];
    for (int k = 0; k < ell; ++k) e.output.push_back(kLetters + k);
    for (int lab = 0; lab < kLetters; ++lab)
      if (count[static_cast<std::size_t>(lab)] == 1) e.output.push_back(lab);
  }
  return e;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(std::string equation) : eq_(std::move(equation)) {}

  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty()) return make_error(ctx.label, ": Einsum needs inputs");
    for (const auto& v : ctx.inputs)
      if (!v.present() || v.dtype != ctx.inputs[0].dtype || !floating(v.dtype))
        return make_error(ctx.label, ": inputs must share one dtype, float32 or float64");
    Plan p;
    Dims out;
    WEAVE_TRY(resolve(ctx.inputs, ctx.label, p.size, out));
    auto e = parse_equation(eq_, ctx.inputs);
    if (!e) return e.error().context(ctx.label);
    // Every label: the output's first, then the summed ones.
    p.all = e->output;
    for (const auto& t : e->inputs)
      for (int lab : t)
        if (std::find(p.all.begin(), p.all.end(), lab) == p.all.end()) p.all.push_back(lab);
    p.n_out = e->output.size();
    for (std::size_t i = 0; i < p.all.size(); ++i)
      (i < p.n_out ? p.out_count : p.sum_count) *= p.size[static_cast<std::size_t>(p.all[i])];
    // Per input, (label, element stride) of each axis; broadcast size-1 ellipsis dims add nothing.
    p.stride.resize(ctx.inputs.size());
    for (std::size_t k = 0; k < ctx.inputs.size(); ++k) {
      const Dims st = strides_of(ctx.inputs[k].dims);
      const auto& labs = e->inputs[k];
      for (std::size_t a = 0; a < labs.size(); ++a)
        if (ctx.inputs[k].dims[static_cast<int>(a)] != 1 || p.size[static_cast<std::size_t>(labs[a])] == 1)
          p.stride[k].emplace_back(static_cast<std::size_t>(labs[a]), st[static_cast<int>(a)]);
    }
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    ctx.keep(std::move(p));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Plan& p = ctx.kept<Plan>();
    const auto& size = p.size;
    const auto& all = p.all;
    const std::size_t n_out = p.n_out;
    const int64_t out_count = p.out_count, sum_count = p.sum_count;
    const auto& stride = p.stride;
    std::array<int64_t, kLabels> idx{};
    for (int64_t o = 0; o < out_count; ++o) {
      int64_t rem = o;
      for (std::size_t i = n_out; i-- > 0;) {
        const auto lab = static_cast<std::size_t>(all[i]);
        idx[lab] = rem % size[lab];
        rem /= size[lab];
      }
      double acc = 0;
      for (int64_t sidx = 0; sidx < sum_count; ++sidx) {
        int64_t r2 = sidx;
        for (std::size_t i = all.size(); i-- > n_out;) {
          const auto lab = static_cast<std::size_t>(all[i]);
          idx[lab] = r2 % size[lab];
          r2 /= size[lab];
        }
        double prod = 1;
        for (std::size_t k = 0; k < ctx.inputs.size(); ++k) {
          int64_t off = 0;
          for (const auto& [lab, st] : stride[k]) off += idx[lab] * st;
          prod *= load(ctx.inputs[k], off);
        }
        acc += prod;
      }
      store(ctx.outputs[0], o, acc);
    }
  }

 private:
  // Size of every label (consistent across inputs, 1 broadcasting) and the output dims.
  Status resolve(std::span<const ConstTensorView> in, const std::string& label,
                 std::array<int64_t, kLabels>& size, Dims& out) const {
    auto e = parse_equation(eq_, in);
    if (!e) return e.error().context(label);
    size.fill(-1);
    for (std::size_t k = 0; k < in.size(); ++k)
      for (std::size_t a = 0; a < e->inputs[k].size(); ++a) {
        auto& s = size[static_cast<std::size_t>(e->inputs[k][a])];
        const int64_t d = in[k].dims[static_cast<int>(a)];
        const bool ell = e->inputs[k][a] >= kLetters;
        if (s < 0 || (ell && s == 1))
          s = d;
        else if (d != s && !(ell && d == 1))
          return make_error(label, ": Einsum '", eq_, "': label sizes ", s, " and ", d, " differ (input ", k,
                            " ", dims_str(in[k].dims), ")");
      }
    if (e->output.size() > static_cast<std::size_t>(kMaxRank))
      return make_error(label, ": Einsum output rank too high");
    out = Dims{};
    int64_t work = 1;
    for (int lab : e->output) {
      if (size[static_cast<std::size_t>(lab)] < 0)
        return make_error(label, ": Einsum '", eq_, "': output label not in any input");
      out.push_back(size[static_cast<std::size_t>(lab)]);
    }
    for (auto& s : size) {
      if (s < 0) s = 1;
      if (s > 0 && work <= kMaxEinsumWork) work *= s;
    }
    if (work > kMaxEinsumWork)
      return make_error(label, ": Einsum '", eq_, "' is too large for the reference kernel");
    return {};
  }

  // What infer() works out for one set of input shapes.
  struct Plan {
    std::array<int64_t, kLabels> size{};  // of every label
    std::vector<int> all;                 // every label: the output's first, then the summed ones
    std::size_t n_out = 0;
    int64_t out_count = 1, sum_count = 1;
    std::vector<std::vector<std::pair<std::size_t, int64_t>>> stride;  // per input: (label, stride)
  };

  std::string eq_;
};

}  // namespace

void register_einsum(KernelRegistry& r) {
  r.add("Einsum", [](const KernelSetup& s) -> Expected<std::unique_ptr<Kernel>> {
    if (!s.node.attrs.has("equation")) return make_error("Einsum needs the attribute equation");
    return make_kernel<EinsumKernel>(s.node.attrs.get_string("equation"));
  });
}

}  // namespace weave
