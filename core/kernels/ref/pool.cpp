// MaxPool and AveragePool (1-D..3-D; one kernel, float32); MaxPool also of other numeric dtypes
// and with its Indices output.
// Work is split over the N*C planes; each output element visits its window directly.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

class PoolKernel final : public Kernel {
 public:
  PoolKernel(WindowAttrs a, bool is_max, bool count_include_pad)
      : a_(std::move(a)), max_(is_max), include_pad_(count_include_pad) {}

  Expected<WindowGeometry> geometry(const Dims& x, const std::string& label) const {
    if (x.rank() < 3 || x.rank() > 5)
      return make_error(label, ": input ", kern::dims_bracketed(x), " must be N x C x (1 to 3 spatial dims)");
    return forward_geometry(a_, std::span<const int64_t>(x.begin() + 2, x.end()), a_.kernel, label);
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    auto g = geometry(x, ctx.label);
    if (!g) return g.error();
    Dims out{x[0], x[1]};
    for (int i = 0; i < g->nd; ++i) out.push_back(g->out[i]);
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    ctx.workspace = 0;
    ctx.work = window_work(*g, shape_numel(out.span()));
    ctx.keep(std::move(*g));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const WindowGeometry* geo = &ctx.kept<WindowGeometry>();
    // Padded extent per axis, for count_include_pad.
    int64_t pe3[3] = {0, 0, 0};
    for (int i = 0; i < geo->nd; ++i) pe3[3 - geo->nd + i] = geo->pad_end[i];
    const Geo3 g = lift(*geo);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const int64_t in_sz = g.in_size(), out_sz = g.out_size();
    ctx.parallel.for_range(xd[0] * xd[1], 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float* xp = x + p * in_sz;
        float* yp = y + p * out_sz;
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh)
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              const int64_t d0 = od * g.s[0] - g.pb[0], h0 = oh * g.s[1] - g.pb[1],
                            w0 = ow * g.s[2] - g.pb[2];
              float best = -std::numeric_limits<float>::infinity();
              float sum = 0.f;
              int64_t count = 0, padded = 0;
              for (int64_t kd = 0; kd < g.k[0]; ++kd) {
                const int64_t id = d0 + kd * g.d[0];
                const bool in_d = id >= 0 && id < g.in[0];
                const bool pad_d = id >= -g.pb[0] && id < g.in[0] + pe3[0];
                for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                  const int64_t ih = h0 + kh * g.d[1];
                  const bool in_h = in_d && ih >= 0 && ih < g.in[1];
                  const bool pad_h = pad_d && ih >= -g.pb[1] && ih < g.in[1] + pe3[1];
                  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                    const int64_t iw = w0 + kw * g.d[2];
                    if (pad_h && iw >= -g.pb[2] && iw < g.in[2] + pe3[2]) ++padded;
                    if (!in_h || iw < 0 || iw >= g.in[2]) continue;
                    const float v = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                    best = std::max(best, v);
                    sum += v;
                    ++count;
                  }
                }
              }
              float r;
              if (max_) {
                r = best;
              } else {
                const int64_t div = include_pad_ ? padded : count;
                r = div > 0 ? sum / static_cast<float>(div) : 0.f;
              }
              yp[(od * g.out[1] + oh) * g.out[2] + ow] = r;
            }
      }
    });
  }

 private:
  WindowAttrs a_;
  bool max_, include_pad_;
};

// MaxPool of any numeric dtype with the optional Indices output: the flat index of each
// maximum in the whole input, row-major (storage_order 0) or, with storage_order 1, column-major
// within each plane (1-D and 2-D windows). The first maximum in window order wins.
class MaxPoolIndexedKernel final : public Kernel {
 public:
  MaxPoolIndexedKernel(WindowAttrs a, bool column_major) : a_(std::move(a)), column_major_(column_major) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 3 || x.rank() > 5)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x),
                        " must be N x C x (1 to 3 spatial dims)");
    if (column_major_ && x.rank() > 4)
      return make_error(ctx.label, ": MaxPool storage_order=1 takes 1-D or 2-D windows");
    auto g = forward_geometry(a_, std::span<const int64_t>(x.begin() + 2, x.end()), a_.kernel, ctx.label);
    if (!g) return g.error();
    Dims out{x[0], x[1]};
    for (int i = 0; i < g->nd; ++i) out.push_back(g->out[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = DType::int64;
      ctx.outputs[1].dims = out;
    }
    ctx.work = window_work(*g, shape_numel(out.span()));
    ctx.keep(std::move(*g));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const WindowGeometry* geo = &ctx.kept<WindowGeometry>();
    const Geo3 g = lift(*geo);
    int64_t* idx =
        ctx.outputs.size() > 1 && ctx.outputs[1].present() ? ctx.outputs[1].as<int64_t>() : nullptr;
    (void)kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(
        ctx.inputs[0].dtype, [&](auto tag) {
          using T = kern::storage_t<decltype(tag)::value>;
          const T* x = ctx.inputs[0].as<T>();
          T* y = ctx.outputs[0].as<T>();
          const int64_t in_sz = g.in_size(), out_sz = g.out_size();
          for (int64_t p = 0; p < xd[0] * xd[1]; ++p)
            for (int64_t od = 0; od < g.out[0]; ++od)
              for (int64_t oh = 0; oh < g.out[1]; ++oh)
                for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                  const int64_t d0 = od * g.s[0] - g.pb[0], h0 = oh * g.s[1] - g.pb[1],
                                w0 = ow * g.s[2] - g.pb[2];
                  T best = std::numeric_limits<T>::lowest();
                  int64_t at = -1;
                  for (int64_t kd = 0; kd < g.k[0]; ++kd)
                    for (int64_t kh = 0; kh < g.k[1]; ++kh)
                      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                        const int64_t id = d0 + kd * g.d[0], ih = h0 + kh * g.d[1], iw = w0 + kw * g.d[2];
                        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2])
                          continue;
                        const int64_t i = (id * g.in[1] + ih) * g.in[2] + iw;
                        if (at < 0 || x[p * in_sz + i] > best) {
                          best = x[p * in_sz + i];
                          at = column_major_ ? iw * g.in[1] + ih : i;
                        }
                      }
                  const int64_t o = p * out_sz + (od * g.out[1] + oh) * g.out[2] + ow;
                  y[o] = best;
                  if (idx) idx[o] = at < 0 ? 0 : p * in_sz + at;
                }
        });
  }

 private:
  WindowAttrs a_;
  bool column_major_;
};

Expected<std::unique_ptr<Kernel>> make_pool(const KernelSetup& s, bool is_max) {
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 1, 1));
  const bool general = is_max && (kern::has_output(s, 1) || s.node.attrs.get_int("storage_order", 0) != 0 ||
                                  (s.inputs[0] != nullptr && s.inputs[0]->dtype != DType::float32));
  if (general) {
    const DType t = s.inputs[0] != nullptr ? s.inputs[0]->dtype : DType::undefined;
    if (!kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(t, [](auto) {}))
      return make_error(s.label, ": MaxPool does not take dtype ", dtype_name(t));
  } else {
    WEAVE_TRY(kern::require_float(s, {0}));
  }
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  if (a->kernel.empty()) return make_error(s.label, ": ", s.node.op, " needs kernel_shape");
  if (!is_max && !a->dilations.empty() &&
      std::any_of(a->dilations.begin(), a->dilations.end(), [](int64_t d) { return d != 1; }) && s.opset < 19)
    return make_error(s.label, ": AveragePool dilations need opset >= 19");
  if (general)
    return std::unique_ptr<Kernel>(
        std::make_unique<MaxPoolIndexedKernel>(std::move(*a), s.node.attrs.get_int("storage_order", 0) != 0));
  const bool include_pad = s.node.attrs.get_int("count_include_pad", 0) != 0;
  return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(std::move(*a), is_max, include_pad));
}

Expected<std::unique_ptr<Kernel>> make_max_pool(const KernelSetup& s) {
  return make_pool(s, true);
}
Expected<std::unique_ptr<Kernel>> make_avg_pool(const KernelSetup& s) {
  return make_pool(s, false);
}

}  // namespace

void register_pool(KernelRegistry& r) {
  r.add("MaxPool", make_max_pool);
  r.add("AveragePool", make_avg_pool);
}

}  // namespace weave
