// The threads an op uses as a function of its work (core/common/parallel.h: threads_for,
// grain_for), on these 2-core machines: a Parallel that claims 16 threads records, for each
// for_range a kernel makes, how many threads the budget would lend it (min(threads, n / grain),
// as thread_budget.cpp and thread_pool.cpp do) and runs the chunks itself. Small ops must stay
// on one thread, large ones must get all 16, and the results must not change.
#define BOOST_TEST_MODULE kernel_thread_policy
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>

#include "core/common/parallel.h"
#include "tests/kernels/fast_compare.h"
#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

class RecordingParallel final : public Parallel {
 public:
  explicit RecordingParallel(int threads) : threads_(threads) {}
  [[nodiscard]] int threads() const override { return threads_; }
  void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const override {
    if (n <= 0) return;
    const int64_t chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
    most_ = std::max<int64_t>(most_, std::min<int64_t>(threads_, chunks));
    ++calls_;
    // In chunks of the length a pool would hand out, so a kernel that depends on the split
    // is caught by the comparison with the reference.
    const int64_t chunk = chunk_length(n, grain, threads_);
    for (int64_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk));
  }
  [[nodiscard]] int64_t most() const { return most_; }
  [[nodiscard]] int calls() const { return calls_; }

 private:
  int threads_;
  mutable int64_t most_ = 0;
  mutable int calls_ = 0;
};

// Threads the fast kernel used at most for `c` on a 16-thread Parallel. Its result must be
// exactly the one it computes on one thread: every output element belongs to one chunk,
// however the work is split (test_fast.cpp compares that one with the reference kernels).
int64_t threads_used(const KernelCase& c) {
  RecordingParallel par(16);
  auto split = run_kernel(c, "fast", par);
  BOOST_TEST_REQUIRE(split.ok(), c.op << ": " << (split.ok() ? "" : split.message()));
  auto serial = run_kernel(c, "fast", 1);
  BOOST_TEST_REQUIRE(serial.ok());
  check_close((*split)[0], (*serial)[0], 0.0, c.op + " split as for 16 threads");
  BOOST_TEST(par.calls() > 0);
  return par.most();
}

KernelCase conv(int64_t c, int64_t m, int64_t hw, int64_t k, int64_t group = 1) {
  KernelCase kc;
  kc.op = "Conv";
  kc.attrs.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  kc.attrs.set("group", group);
  kc.attrs.set("weave_layout", std::string("NHWC"));
  kc.inputs.push_back(random_f32(Dims{1, hw, hw, c}, 1));  // NHWC for the fast kernel
  kc.inputs.push_back(random_f32(Dims{m, c / group, k, k}, 2));
  kc.constant = {false, true};
  return kc;
}

}  // namespace

BOOST_AUTO_TEST_CASE(threads_grow_with_work_and_stop_at_the_cap) {
  const RecordingParallel p16(16), p2(2);
  int last = 0;
  for (double w = 1e3; w < 1e10; w *= 1.7) {
    const int t = threads_for(p16, w);
    BOOST_TEST(t >= last, "work " << w);  // never fewer threads for more work
    BOOST_TEST(t >= 1);
    BOOST_TEST(t <= 16);
    BOOST_TEST(threads_for(p2, w) <= 2);
    last = t;
  }
  BOOST_TEST(threads_for(p16, kMinWorkPerThread * 0.99) == 1);
  BOOST_TEST(threads_for(p16, kMinWorkPerThread * 3.5) == 3);
  BOOST_TEST(threads_for(p16, kMinWorkPerThread * 100) == 16);
  // The grain splits n items into at most that many chunks, and is the kernel's own when
  // every thread is justified.
  BOOST_TEST(grain_for(p16, 1000, kMinWorkPerThread * 4) == 250);
  BOOST_TEST(grain_for(p16, 1000, kMinWorkPerThread * 100, 3) == 3);
  BOOST_TEST(1000 / grain_for(p16, 1000, kMinWorkPerThread * 4) <= 4);
}

BOOST_AUTO_TEST_CASE(small_ops_stay_on_one_thread_large_ones_use_all) {
  if (!have_fast()) return;
  // A 3x3 convolution of 8 channels on 8x8 (74 kFLOP) against a 5x5 one of 64 on 56x56 (642
  // MFLOP; a 3x3 one may take Winograd, whose lanes are as many as this machine's cores).
  BOOST_TEST(threads_used(conv(8, 8, 8, 3)) == 1);
  BOOST_TEST(threads_used(conv(64, 64, 56, 5)) == 16);
  // In between, about work / kMinWorkPerThread: 1x1, 32 -> 64 channels on 28x28 is 3.2 MFLOP.
  const int64_t mid = threads_used(conv(32, 64, 28, 1));
  BOOST_TEST(mid >= 2);
  BOOST_TEST(mid <= 4);
  // Depthwise 3x3 over 32 channels of 14x14 (113 kFLOP), and over 256 of 112x112.
  BOOST_TEST(threads_used(conv(32, 32, 14, 3, 32)) == 1);
  BOOST_TEST(threads_used(conv(256, 256, 112, 3, 256)) == 16);
  // Elementwise: a thousand sigmoids, and four million.
  KernelCase small;
  small.op = "Sigmoid";
  small.inputs.push_back(random_f32(Dims{1000}, 3));
  BOOST_TEST(threads_used(small) == 1);
  KernelCase big;
  big.op = "Sigmoid";
  big.inputs.push_back(random_f32(Dims{4, 1 << 20}, 4));
  BOOST_TEST(threads_used(big) == 16);
  // Softmax rows: 4 rows of 100, and 3 x 197 rows of 197 (a ViT's attention).
  KernelCase few;
  few.op = "Softmax";
  few.inputs.push_back(random_f32(Dims{4, 100}, 5));
  BOOST_TEST(threads_used(few) == 1);
  KernelCase attention;
  attention.op = "Softmax";
  attention.inputs.push_back(random_f32(Dims{3, 197, 197}, 6));
  const int64_t att = threads_used(attention);
  BOOST_TEST(att >= 4);
}

// A fully connected layer at batch 1: [1, in] x [out, in]^T.
KernelCase batch_one_gemm(int64_t in, int64_t out, uint32_t seed) {
  KernelCase kc;
  kc.op = "Gemm";
  kc.attrs.set("transB", int64_t{1});
  kc.inputs.push_back(random_f32(Dims{1, in}, seed));
  kc.inputs.push_back(random_f32(Dims{out, in}, seed + 1));
  kc.constant = {false, true};
  return kc;
}

BOOST_AUTO_TEST_CASE(batch_one_products_count_the_weights_they_stream) {
  if (!have_fast()) return;
  // A classifier, 1280 -> 1000 (2.6 MFLOP, 5.1 MB of weights read once): memory-bound, so every
  // thread streams a share of the weights, where its arithmetic alone would justify 2.
  BOOST_TEST(threads_used(batch_one_gemm(1280, 1000, 7)) == 16);
  // 64 -> 48 (12 kB): one thread.
  BOOST_TEST(threads_used(batch_one_gemm(64, 48, 9)) == 1);
}
