// TfIdfVectorizer over integer tokens.
//
// The pool's n-grams are kept per length, sorted, next to their output index, so run() finds a
// window of the input by binary search without allocating. Like ONNX Runtime, n-grams of 2 or
// more items are counted for every skip distance 1 .. max_skip_count + 1 (items start, start +
// d, start + 2d, ...), unigrams once. String tokens (pool_strings) are not supported.
#include <algorithm>
#include <numeric>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

enum class TfIdfMode { tf, idf, tfidf };

// The pool's n-grams of one length n: `items` holds them back to back (n each), sorted.
struct NgramTable {
  int64_t n = 0;
  std::vector<int64_t> items;
  std::vector<int64_t> output;  // output index per n-gram

  [[nodiscard]] int64_t size() const { return static_cast<int64_t>(output.size()); }
  // Output index of the n-gram read through at(k), k < n; -1 when the pool lacks it.
  template <class At>
  [[nodiscard]] int64_t find(At&& at) const {
    int64_t lo = 0, hi = size();
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      int cmp = 0;
      for (int64_t k = 0; k < n && cmp == 0; ++k) {
        const int64_t a = items[static_cast<std::size_t>(mid * n + k)], b = at(k);
        cmp = a < b ? -1 : a > b ? 1 : 0;
      }
      if (cmp == 0) return output[static_cast<std::size_t>(mid)];
      if (cmp < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    return -1;
  }
};

class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(std::vector<NgramTable> tables, int64_t min_n, int64_t max_n, int64_t max_skip, int64_t outputs,
              TfIdfMode mode, std::vector<float> weights)
      : tables_(std::move(tables)),
        min_n_(min_n),
        max_n_(max_n),
        max_skip_(max_skip),
        outputs_(outputs),
        mode_(mode),
        weights_(std::move(weights)) {}

  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": needs the input");
    const ConstTensorView& x = ctx.inputs[0];
    if (x.dtype != DType::int32 && x.dtype != DType::int64)
      return make_error(ctx.label, ": input must be int32 or int64 tokens, got ", dtype_name(x.dtype));
    if (x.dims.rank() != 1 && x.dims.rank() != 2)
      return make_error(ctx.label, ": input ", dims_str(x.dims), " must be [C] or [N, C]");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x.dims.rank() == 1 ? Dims{outputs_} : Dims{x.dims[0], outputs_};
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ConstTensorView& x = ctx.inputs[0];
    const int64_t rows = x.dims.rank() == 1 ? 1 : x.dims[0];
    const int64_t len = x.dims[x.dims.rank() - 1];
    float* y = ctx.outputs[0].as<float>();
    std::fill(y, y + rows * outputs_, 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = y + r * outputs_;
      for (const NgramTable& t : tables_) {
        if (t.n < min_n_ || t.n > max_n_ || t.size() == 0) continue;
        const int64_t skips = t.n == 1 ? 1 : max_skip_ + 1;
        for (int64_t d = 1; d <= skips; ++d)
          for (int64_t s = 0; s + (t.n - 1) * d < len; ++s) {
            const int64_t o = t.find([&](int64_t k) { return kern::int_at(x, r * len + s + k * d); });
            if (o >= 0) yr[o] += 1.f;
          }
      }
      for (int64_t o = 0; o < outputs_; ++o) {
        const float w = weights_.empty() ? 1.f : weights_[static_cast<std::size_t>(o)];
        if (mode_ == TfIdfMode::idf)
          yr[o] = yr[o] > 0.f ? w : 0.f;
        else if (mode_ == TfIdfMode::tfidf)
          yr[o] *= w;
      }
    }
  }

 private:
  std::vector<NgramTable> tables_;
  int64_t min_n_, max_n_, max_skip_, outputs_;
  TfIdfMode mode_;
  std::vector<float> weights_;
};

Expected<std::unique_ptr<Kernel>> make_tfidf(const KernelSetup& s) {
  const auto& a = s.node.attrs;
  if (a.has("pool_strings"))
    return make_error("TfIdfVectorizer over strings (pool_strings) is not supported");
  const std::string mode_name = a.get_string("mode", "TF");
  if (mode_name != "TF" && mode_name != "IDF" && mode_name != "TFIDF")
    return make_error("unsupported attribute mode='", mode_name, "'");
  const TfIdfMode mode = mode_name == "TF"    ? TfIdfMode::tf
                         : mode_name == "IDF" ? TfIdfMode::idf
                                              : TfIdfMode::tfidf;
  const int64_t min_n = a.get_int("min_gram_length", 1), max_n = a.get_int("max_gram_length", 1);
  const int64_t max_skip = a.get_int("max_skip_count", 0);
  const auto pool = a.get_ints("pool_int64s");
  const auto counts = a.get_ints("ngram_counts");
  const auto indexes = a.get_ints("ngram_indexes");
  const auto weights = a.get_floats("weights");
  if (min_n < 1 || max_n < min_n || max_n > 64 || max_skip < 0 || max_skip > (1 << 20))
    return make_error("TfIdfVectorizer gram lengths [", min_n, ", ", max_n, "] or max_skip_count ", max_skip,
                      " are out of range");
  if (counts.empty() || static_cast<int64_t>(counts.size()) > max_n || counts[0] != 0)
    return make_error("TfIdfVectorizer ngram_counts must start at 0 with at most one entry per gram length");
  // Pool segment i holds the (i + 1)-grams from counts[i] to counts[i + 1] (or the pool's end).
  std::vector<NgramTable> tables;
  std::size_t gram = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0)
      return make_error("TfIdfVectorizer ngram_counts do not split pool_int64s into whole n-grams");
    const int64_t m = (end - begin) / n;
    if (gram + static_cast<std::size_t>(m) > indexes.size())
      return make_error("TfIdfVectorizer has fewer ngram_indexes than n-grams in the pool");
    std::vector<int64_t> order(static_cast<std::size_t>(m));
    std::iota(order.begin(), order.end(), int64_t{0});
    const auto* base = pool.data() + begin;
    std::sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
      return std::lexicographical_compare(base + p * n, base + p * n + n, base + q * n, base + q * n + n);
    });
    NgramTable t;
    t.n = n;
    for (int64_t j : order) {
      t.items.insert(t.items.end(), base + j * n, base + j * n + n);
      t.output.push_back(indexes[gram + static_cast<std::size_t>(j)]);
    }
    gram += static_cast<std::size_t>(m);
    tables.push_back(std::move(t));
  }
  int64_t outputs = 0;
  for (int64_t v : indexes) {
    if (v < 0 || v >= (int64_t{1} << 24))
      return make_error("TfIdfVectorizer ngram_indexes value ", v, " is out of range");
    outputs = std::max(outputs, v + 1);
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < outputs)
    return make_error("TfIdfVectorizer has ", weights.size(), " weights for ", outputs, " outputs");
  return make_kernel<TfIdfKernel>(std::move(tables), min_n, max_n, max_skip, outputs, mode,
                                  std::vector<float>(weights.begin(), weights.end()));
}

}  // namespace

void register_tf_idf_vectorizer(KernelRegistry& r) {
  r.add("TfIdfVectorizer", &make_tfidf);
}

}  // namespace weave
