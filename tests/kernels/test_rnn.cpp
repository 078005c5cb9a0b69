#define BOOST_TEST_MODULE kernel_rnn
#include <cmath>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

float sig(float x) {
  return 1.f / (1.f + std::exp(-x));
}

struct LstmCfg {
  int64_t seq, batch, I, H;
  int dirs = 1;
  bool reverse = false;
  bool bias = true, peep = false, init = false, lens = false;
  int64_t layout = 0;
};

// Straightforward LSTM on layout-0 tensors, one (direction, batch) at a time.
// Returns Y [seq, dirs, batch, H] and Y_h, Y_c [dirs, batch, H].
void naive_lstm(const LstmCfg& c, const float* x, const float* W, const float* R, const float* B,
                const int32_t* lens, const float* h0, const float* c0, const float* P, std::vector<float>& Y,
                std::vector<float>& Yh, std::vector<float>& Yc) {
  const int64_t H = c.H, I = c.I;
  Y.assign(c.seq * c.dirs * c.batch * H, 0.f);
  Yh.assign(c.dirs * c.batch * H, 0.f);
  Yc.assign(c.dirs * c.batch * H, 0.f);
  for (int d = 0; d < c.dirs; ++d)
    for (int64_t b = 0; b < c.batch; ++b) {
      std::vector<float> h(H), cs(H), nh(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0 ? h0[(d * c.batch + b) * H + j] : 0.f;
        cs[j] = c0 ? c0[(d * c.batch + b) * H + j] : 0.f;
      }
      const int64_t len = lens ? lens[b] : c.seq;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = (c.reverse || d == 1) ? len - 1 - s : s;
        for (int64_t j = 0; j < H; ++j) {
          float g[4];
          for (int q = 0; q < 4; ++q) {
            const int64_t row = d * 4 * H + q * H + j;
            double a = B ? B[d * 8 * H + q * H + j] + B[d * 8 * H + 4 * H + q * H + j] : 0.0;
            for (int64_t k = 0; k < I; ++k) a += double(x[(t * c.batch + b) * I + k]) * W[row * I + k];
            for (int64_t k = 0; k < H; ++k) a += double(h[k]) * R[row * H + k];
            g[q] = static_cast<float>(a);
          }
          const float* p = P ? P + d * 3 * H : nullptr;
          const float it = sig(g[0] + (p ? p[j] * cs[j] : 0.f));
          const float ft = sig(g[2] + (p ? p[2 * H + j] * cs[j] : 0.f));
          const float cn = ft * cs[j] + it * std::tanh(g[3]);
          const float ot = sig(g[1] + (p ? p[H + j] * cn : 0.f));
          nh[j] = ot * std::tanh(cn);
          cs[j] = cn;
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) Y[((t * c.dirs + d) * c.batch + b) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        Yh[(d * c.batch + b) * H + j] = h[j];
        Yc[(d * c.batch + b) * H + j] = cs[j];
      }
    }
}

// Layout-0 [A, B, H] -> layout-1 [B, A, H] (swap the first two axes).
Tensor swap01(const Tensor& t) {
  const Dims& d = t.dims();
  Dims o = d;
  std::swap(o[0], o[1]);
  Tensor r(DType::float32, o);
  int64_t inner = 1;
  for (int i = 2; i < d.rank(); ++i) inner *= d[i];
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t k = 0; k < inner; ++k)
        r.as<float>()[(b * d[0] + a) * inner + k] = t.as<float>()[(a * d[1] + b) * inner + k];
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(lstm_hand_computed_two_steps) {
  // I = H = 1; W (i,o,f,c) = 0.5, -0.5, 1, 2; R = 0.1, 0.2, 0.3, 0.4; Wb_i = 0.1, Rb_f = 0.2.
  KernelCase k{
      "LSTM",
      {},
      14,
      ins(make_f32({2, 1, 1}, {1, -2}), make_f32({1, 4, 1}, {0.5f, -0.5f, 1, 2}),
          make_f32({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f}), make_f32({1, 8}, {0.1f, 0, 0, 0, 0, 0, 0.2f, 0})),
      {false, true, true, true},
      3};
  k.attrs.set("hidden_size", int64_t{1});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({2, 1, 1, 1}));
  check_close((*r)[0], {0.20871128f, -0.14588437f});
  check_close((*r)[1], {-0.14588437f});
  check_close((*r)[2], {-0.19998211f});
}

BOOST_AUTO_TEST_CASE(lstm_matches_naive) {
  const std::vector<LstmCfg> cfgs = {
      {3, 2, 4, 5},
      {4, 3, 2, 3, 1, true},                              // reverse
      {5, 2, 3, 4, 2, false, true, true, true, false},    // bidirectional, peepholes, initial states
      {4, 3, 3, 2, 2, false, false, false, false, true},  // sequence_lens, no bias
      {3, 2, 3, 4, 2, false, true, true, true, true, 1},  // layout 1 with everything
  };
  uint32_t seed = 100;
  for (const LstmCfg& c : cfgs) {
    Tensor x = random_f32({c.seq, c.batch, c.I}, seed++), W = random_f32({c.dirs, 4 * c.H, c.I}, seed++);
    Tensor R = random_f32({c.dirs, 4 * c.H, c.H}, seed++), B = random_f32({c.dirs, 8 * c.H}, seed++);
    Tensor h0 = random_f32({c.dirs, c.batch, c.H}, seed++), c0 = random_f32({c.dirs, c.batch, c.H}, seed++);
    Tensor P = random_f32({c.dirs, 3 * c.H}, seed++);
    std::vector<int32_t> lens(c.batch);
    for (int64_t b = 0; b < c.batch; ++b) lens[b] = static_cast<int32_t>(std::max<int64_t>(1, c.seq - b));
    std::vector<float> Y, Yh, Yc;
    naive_lstm(c, x.as<float>(), W.as<float>(), R.as<float>(), c.bias ? B.as<float>() : nullptr,
               c.lens ? lens.data() : nullptr, c.init ? h0.as<float>() : nullptr,
               c.init ? c0.as<float>() : nullptr, c.peep ? P.as<float>() : nullptr, Y, Yh, Yc);
    Tensor lens_t = Tensor::from<int32_t>(Dims{c.batch}, lens);
    const bool l1 = c.layout == 1;
    KernelCase k{"LSTM",
                 {},
                 14,
                 ins(l1 ? swap01(x) : copy(x), copy(W), copy(R), c.bias ? copy(B) : Tensor(),
                     c.lens ? std::move(lens_t) : Tensor(), c.init ? (l1 ? swap01(h0) : copy(h0)) : Tensor(),
                     c.init ? (l1 ? swap01(c0) : copy(c0)) : Tensor(), c.peep ? copy(P) : Tensor()),
                 {false, true, true, true, false, false, false, true},
                 3};
    k.attrs.set("hidden_size", c.H);
    k.attrs.set("layout", c.layout);
    k.attrs.set("direction", std::string(c.dirs == 2 ? "bidirectional" : c.reverse ? "reverse" : "forward"));
    auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
    REQUIRE_OK(r1);
    REQUIRE_OK(r2);
    for (int o = 0; o < 3; ++o) BOOST_CHECK_EQUAL(max_abs_diff((*r1)[o], (*r2)[o]), 0.0);
    if (l1) {
      // Y [batch, seq, dirs, H] -> compare against [seq, dirs, batch, H].
      const Tensor& y = (*r1)[0];
      for (int64_t t = 0; t < c.seq; ++t)
        for (int d = 0; d < c.dirs; ++d)
          for (int64_t b = 0; b < c.batch; ++b)
            for (int64_t j = 0; j < c.H; ++j)
              BOOST_CHECK_SMALL(y.as<float>()[((b * c.seq + t) * c.dirs + d) * c.H + j] -
                                    Y[((t * c.dirs + d) * c.batch + b) * c.H + j],
                                1e-5f);
      check_close(swap01((*r1)[1]), Yh);
      check_close(swap01((*r1)[2]), Yc);
    } else {
      check_close((*r1)[0], Y);
      check_close((*r1)[1], Yh);
      check_close((*r1)[2], Yc);
    }
  }
}

BOOST_AUTO_TEST_CASE(lstm_errors) {
  KernelCase k{"LSTM",
               {},
               14,
               ins(random_f32({2, 1, 3}, 1), random_f32({1, 8, 4}, 2), random_f32({1, 8, 2}, 3)),
               {false, true, true},
               3};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (LSTM)"));
  BOOST_CHECK(has(r.message(), "2x1x3"));
  BOOST_CHECK(has(r.message(), "1x8x4"));

  KernelCase a{"LSTM",
               {},
               14,
               ins(random_f32({2, 1, 4}, 1), random_f32({1, 8, 4}, 2), random_f32({1, 8, 2}, 3)),
               {false, true, true},
               3};
  a.attrs.set("activations", std::vector<std::string>{"Relu", "Tanh", "Tanh"});
  r = run_kernel(a);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "Relu"));
  a.attrs = {};
  a.attrs.set("hidden_size", int64_t{3});
  r = run_kernel(a);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "hidden_size"));
}

BOOST_AUTO_TEST_CASE(rnn_and_gru_one_step_by_hand) {
  // Hidden 1, input 1, one step: RNN h = tanh(x*w + h0*r + wb + rb).
  KernelCase r{"RNN",
               {},
               14,
               ins(make_f32({1, 1, 1}, {0.5f}), make_f32({1, 1, 1}, {2}), make_f32({1, 1, 1}, {3}),
                   make_f32({1, 2}, {0.1f, 0.2f}), Tensor(), make_f32({1, 1, 1}, {-0.25f})),
               {false, true, true, true, false, false},
               2};
  auto out = run_kernel(r);
  REQUIRE_OK(out);
  const float h = std::tanh(0.5f * 2 - 0.25f * 3 + 0.3f);
  check_close((*out)[0], {h});
  check_close((*out)[1], {h});
  // GRU with zero weights: z = r = 0.5, h~ = tanh(0) = 0, H = 0.5 * h0.
  KernelCase g{"GRU",
               {},
               14,
               ins(make_f32({1, 1, 1}, {1}), make_f32({1, 3, 1}, {0, 0, 0}), make_f32({1, 3, 1}, {0, 0, 0}),
                   Tensor(), Tensor(), make_f32({1, 1, 1}, {0.8f})),
               {false, true, true, false, false, false},
               2};
  out = run_kernel(g);
  REQUIRE_OK(out);
  check_close((*out)[1], {0.4f});
  g.attrs.set("activations", std::vector<std::string>{"Sigmoid", "Bogus"});
  BOOST_CHECK(!run_kernel(g).ok());
}
