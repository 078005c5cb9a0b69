// ExpandDepthwise: a 1x1 expansion convolution and the depthwise convolution that reads it, in
// one pass over row bands (MobileNet's inverted residual blocks). See nhwc.h for the pattern and
// why; core/compiler/fuse_expand_depthwise.h makes the nodes.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/kernels/fast/epilogue.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fast/pack.h"
#include "core/kernels/fused_ops.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/spatial.h"

namespace weave::fast {
namespace {

// The expansion GEMM runs on at least about this many pixels per refill of a band, so that
// narrow images still give the micro-kernel full register tiles.
constexpr int64_t kMinRefillPixels = 64;
// Bands (and scratch slices) per node at most: the parallel split is by bands.
constexpr int64_t kMaxBands = 16;
// A band has at least kMinBandRows rows: neighbouring bands both expand the rows their windows
// share (kernel height - stride per boundary), and a split by rows of a short image is uneven.
constexpr int64_t kMinBandRows = 3;
// Neighbouring bands both expand the rows their windows share. When those rows are at least
// half of a band's own (MobileNet-v2's 7x7 maps on 2 threads: bands of 3-4 output rows, each
// expanding 2 more), the map is expanded whole instead (the GEMM split over the threads), then
// the depthwise runs on it, if that expansion fits in kWholeMapBytes (small enough to stay in L2
// between the two steps). Its three 7x7 nodes at 2 threads: 0.17-0.18 -> 0.14 ms each (medians
// of 6 interleaved runs of `weave bench --profile`); its 14x14 and 28x28 ones were 5-10% slower
// whole, so they keep their bands. A map also runs whole when its bands (at least kMinBandRows
// rows each) would feed less than half the threads its work justifies: on 16 cores a 7x7 map
// has 2 bands, but its expansion splits over every thread and its depthwise over 7 rows.
constexpr int64_t kWholeMapBytes = int64_t{1} << 20;

class ExpandDepthwise final : public Kernel {
 public:
  ExpandDepthwise(const Ops& ops, WindowAttrs a, Activation act_e, Activation act_d, const Dims& we,
                  const Dims& wd)
      : ops_(ops),
        a_(std::move(a)),
        act_e_(act_e),
        act_d_(act_d),
        Cin_(we[1]),
        C_(we[0]),
        KH_(wd[2]),
        KW_(wd[3]),
        bands_(scratch_lanes(kMaxBands)) {}

  void pack(const float* we, const float* be, const float* wd, const float* bd) {
    packed_e_ = pack_conv(we, 1, C_, Cin_, 1, ops_.nr, ops_.vec);
    dw_ = pack_depthwise(wd, C_, KH_ * KW_, ops_.vec, c_pad_);
    zeros_ = AlignedBuffer(static_cast<std::size_t>(Cin_) * sizeof(float));
    auto copy = [this](const float* b) {
      AlignedBuffer out;
      if (b == nullptr) return out;
      out = AlignedBuffer(static_cast<std::size_t>(C_) * sizeof(float));
      std::memcpy(out.data(), b, static_cast<std::size_t>(C_) * sizeof(float));
      return out;
    };
    bias_e_ = copy(be);
    bias_d_ = copy(bd);
  }

  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override {
    fn(packed_e_.data);
    fn(dw_);
  }
  [[nodiscard]] bool packs_input(std::size_t k) const override { return k >= 1 && k <= 4; }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4)
      return make_error(ctx.label, ": NHWC input ", kern::dims_bracketed(x), " must have rank 4");
    if (x[3] != Cin_)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " (NHWC) has ", x[3],
                        " channels; the expansion weights expect ", Cin_);
    auto geo = geometry(x, ctx.label);
    if (!geo) return geo.error();
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{x[0], geo->out[0], geo->out[1], C_};
    const int64_t banded = bands(x[0] * geo->out[0], bands_) * slice_floats(*geo);
    ctx.workspace = static_cast<std::size_t>(std::max(banded, whole_floats(*geo))) * sizeof(float);
    ctx.keep(band_shape(*geo, x));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const Band& b = ctx.kept<Band>();
    const int64_t rows = xd[0] * b.OH;
    // infer() planned a slice for each of bands(rows, bands_); threads() may give fewer, and
    // the work may justify fewer still (parallel.h): the expansion's GEMM (over the input
    // pixels, about) and the depthwise taps.
    const double work = 2.0 * static_cast<double>(xd[0] * b.IH * b.IW * Cin_ * C_) +
                        2.0 * static_cast<double>(rows * b.OW * C_ * KH_ * KW_);
    const int threads = threads_for(ctx.parallel, work);
    const int64_t n_bands = bands(rows, std::min<int64_t>(bands_, threads));
    const int64_t slice = slice_floats(b.geo);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    auto* scratch = reinterpret_cast<float*>(ctx.workspace.data());
    const int64_t shared_rows = std::max<int64_t>(0, b.span - b.SH);  // per band boundary
    const bool overlap = n_bands > 1 && rows < 2 * shared_rows * n_bands;
    const bool few_bands = threads >= 4 && 2 * n_bands <= threads;
    if ((overlap || few_bands) && whole_floats(b.geo) > 0) {
      for (int64_t n = 0; n < xd[0]; ++n)
        run_whole(b, x + n * b.IH * b.IW * Cin_, y + n * b.OH * b.OW * C_, scratch, ctx.parallel);
      return;
    }
    ctx.parallel.for_range(n_bands, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        run_band(b, x, y, scratch + p * slice, rows * p / n_bands, rows * (p + 1) / n_bands);
    });
  }

 private:
  // What a band needs of the geometry, in one place.
  struct Band {
    int64_t IH, IW, OH, OW, SH, DH, PT, span, capacity;
    WindowGeometry geo;
  };

  Expected<WindowGeometry> geometry(const Dims& x, const std::string& label) const {
    const int64_t in[2] = {x[1], x[2]}, k[2] = {KH_, KW_};
    return forward_geometry(a_, in, k, label);
  }

  // Bands for `rows` output rows (images x rows), at most `most`, each of kMinBandRows or more.
  static int64_t bands(int64_t rows, int64_t most) {
    return std::clamp<int64_t>(rows / kMinBandRows, 1, std::max<int64_t>(1, most));
  }

  // Input rows one output row reads, and the rows a band's buffer holds: that span plus enough
  // rows for kMinRefillPixels per refill.
  static int64_t span_rows(const WindowGeometry& g) { return (g.kernel[0] - 1) * g.dilation[0] + 1; }
  static int64_t capacity_rows(const WindowGeometry& g) {
    const int64_t refill = std::max<int64_t>(g.stride[0], (kMinRefillPixels + g.in[1] - 1) / g.in[1]);
    return span_rows(g) + refill;
  }
  int64_t slice_floats(const WindowGeometry& g) const {
    const int64_t f = capacity_rows(g) * g.in[1] * C_;
    return (f + 15) / 16 * 16;  // 64-byte aligned slices
  }
  // Floats of one image's whole expansion when it is small enough for run_whole(), else 0.
  int64_t whole_floats(const WindowGeometry& g) const {
    const int64_t f = g.in[0] * g.in[1] * C_;
    return f * static_cast<int64_t>(sizeof(float)) <= kWholeMapBytes ? f : 0;
  }
  static Band band_shape(const WindowGeometry& g, const Dims& x) {
    return Band{x[1],          x[2],           g.out[0],     g.out[1],         g.stride[0],
                g.dilation[0], g.pad_begin[0], span_rows(g), capacity_rows(g), g};
  }

  // Output rows [o0, o1) of the flattened (image, row) range. The buffer holds the expanded
  // input rows [r0, r1) of the current image; each output row first makes sure the rows its
  // window reads are there (moving the rows still needed to the front when the buffer is full,
  // then expanding new rows up to what the band will read), then runs the depthwise kernel on
  // the buffer as if it were the whole input.
  void run_band(const Band& b, const float* x, float* y, float* buf, int64_t o0, int64_t o1) const {
    const SerialParallel& serial = SerialParallel::instance();
    const int64_t row_floats = b.IW * C_;
    int64_t image = -1, r0 = 0, r1 = 0, last = 0;
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t n = o / b.OH, oh = o % b.OH;
      if (n != image) {
        image = n, r0 = r1 = 0;
        const int64_t last_oh = std::min(o1, (n + 1) * b.OH) - 1 - n * b.OH;
        last = std::clamp<int64_t>(last_oh * b.SH - b.PT + b.span, 0, b.IH);  // rows this band reads
      }
      const int64_t top = oh * b.SH - b.PT;
      const int64_t lo = std::clamp<int64_t>(top, 0, b.IH), hi = std::clamp<int64_t>(top + b.span, lo, b.IH);
      if (lo > r1) r0 = r1 = lo;  // rows skipped (stride above the window)
      if (hi > r0 + b.capacity) {
        const int64_t keep = r1 - lo;
        std::memmove(buf, buf + (lo - r0) * row_floats,
                     static_cast<std::size_t>(keep * row_floats) * sizeof(float));
        r0 = lo;
      }
      if (hi > r1) {
        const int64_t end = std::min(last, r0 + b.capacity);
        expand(x + (n * b.IH + r1) * b.IW * Cin_, end - r1, b.IW, buf + (r1 - r0) * row_floats, serial);
        r1 = end;
      }
      ops_.depthwise(depthwise_args(b, buf + (lo - r0) * row_floats, r1 - lo, lo - top,
                                    y + (n * b.OH + oh) * b.OW * C_, 1),
                     serial);
    }
  }

  // One image: the expansion of every input row into buf, then the depthwise convolution of
  // buf, each step split over the threads.
  void run_whole(const Band& b, const float* x, float* y, float* buf, const Parallel& par) const {
    expand(x, b.IH, b.IW, buf, par);
    ops_.depthwise(depthwise_args(b, buf, b.IH, b.PT, y, b.OH), par);
  }

  // The depthwise convolution of `ih` expanded rows at x (the first one `pt` rows below the
  // window's top) into `oh` output rows at y.
  DepthwiseArgs depthwise_args(const Band& b, const float* x, int64_t ih, int64_t pt, float* y,
                               int64_t oh) const {
    DepthwiseArgs a;
    a.x = x;
    a.N = 1, a.IH = ih, a.IW = b.IW, a.C = C_;
    a.y = y;
    a.OH = oh, a.OW = b.OW;
    a.KH = KH_, a.KW = KW_, a.SH = b.SH, a.SW = b.geo.stride[1], a.DH = b.DH, a.DW = b.geo.dilation[1];
    a.PT = pt, a.PL = b.geo.pad_begin[1];
    a.w = reinterpret_cast<const float*>(dw_.data());
    a.c_pad = c_pad_;
    a.bias = bias_d_.size() > 0 ? reinterpret_cast<const float*>(bias_d_.data()) : nullptr;
    a.act = act_d_;
    return a;
  }

  // The 1x1 expansion of `rows` input rows of width iw into `out` (rows x iw pixels of C_).
  void expand(const float* x, int64_t rows, int64_t iw, float* out, const Parallel& par) const {
    ConvGemmArgs g;
    g.x = x;
    g.IH = rows, g.IW = iw;
    g.ldx = Cin_;
    g.x_image = rows * iw * Cin_;
    g.y = out;
    g.OH = rows, g.OW = iw;
    g.ldy = C_;
    g.y_image = rows * iw * C_;
    g.Cg = Cin_, g.Mg = C_;
    g.w = packed_e_.floats();
    g.layout = packed_e_.layout;
    g.bias = bias_e_.size() > 0 ? reinterpret_cast<const float*>(bias_e_.data()) : nullptr;
    g.act = act_e_;
    g.zeros = reinterpret_cast<const float*>(zeros_.data());
    ops_.conv_gemm(g, par);
  }

  const Ops& ops_;
  WindowAttrs a_;  // the depthwise convolution's window
  Activation act_e_, act_d_;
  int64_t Cin_, C_, KH_, KW_;
  int64_t bands_ = 1;
  PackedWeights packed_e_;
  SharedBytes dw_;
  int64_t c_pad_ = 0;
  AlignedBuffer bias_e_, bias_d_, zeros_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_expand_depthwise(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  if (ops == nullptr) return make_error(s.label, ": ExpandDepthwise needs the fast CPU path");
  if (s.node.inputs.size() != 5 || s.node.outputs.size() != 1)
    return make_error(s.label, ": ExpandDepthwise takes 5 inputs and gives 1 output");
  const ConstTensorView* we = kern::constant(s, 1);
  const ConstTensorView* be = kern::constant(s, 2);
  const ConstTensorView* wd = kern::constant(s, 3);
  const ConstTensorView* bd = kern::constant(s, 4);
  if (we == nullptr || wd == nullptr || we->dtype != DType::float32 || wd->dtype != DType::float32 ||
      we->dims.rank() != 4 || wd->dims.rank() != 4 || we->dims[2] != 1 || we->dims[3] != 1 ||
      wd->dims[0] != we->dims[0] || wd->dims[1] != 1)
    return make_error(s.label,
                      ": ExpandDepthwise needs constant float weights [C, Cin, 1, 1] and [C, 1, KH, KW]");
  const int64_t c = we->dims[0];
  for (const ConstTensorView* b : {be, bd})
    if (b != nullptr && (b->dtype != DType::float32 || b->numel() != c))
      return make_error(s.label, ": ExpandDepthwise biases must be constant float [", c, "]");
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  if (a->ceil_mode) return make_error(s.label, ": Conv has no ceil_mode");
  auto act_d = parse_epilogue(s);
  if (!act_d) return act_d.error();
  // The expansion's activation, stored under fused::kExpandPrefix, read through the same parser.
  Node e;
  for (const auto& [name, v] : s.node.attrs.items())
    if (name.rfind(fused::kExpandPrefix, 0) == 0)
      e.attrs.set(name.substr(std::strlen(fused::kExpandPrefix)), v);
  auto act_e = parse_epilogue(KernelSetup{e, s.label, s.inputs, s.constants, s.opset});
  if (!act_e) return act_e.error();
  auto k = std::make_unique<ExpandDepthwise>(*ops, std::move(*a), *act_e, *act_d, we->dims, wd->dims);
  k->pack(we->as<float>(), be != nullptr ? be->as<float>() : nullptr, wd->as<float>(),
          bd != nullptr ? bd->as<float>() : nullptr);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace weave::fast
