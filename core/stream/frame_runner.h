// One model run per gathered set of input frames, the way a streaming element needs it: inputs
// read in place when their memory allows (else copied once), outputs written straight into memory
// the caller provides once their dims are known (R7), every binding undone before the call
// returns, and the statistics an element shows (runs, time, copies). No GStreamer here: the
// caller maps its buffers and hands over plain views.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"

namespace weave::stream {

// One input as the caller mapped it.
struct InputFrame {
  ConstTensorView view;      // the negotiated dtype and dims over the mapped data
  std::size_t capacity = 0;  // bytes mapped (>= view.bytes())
  bool merged = false;       // mapping merged several memory blocks: one copy the caller made
};

// Memory for the outputs, asked for once the dims of a run are known.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Writable memory for output `index` of `bytes` (the exact size of `dims`; may be 0), valid
  // until the caller's run() returns. An error stops the run.
  [[nodiscard]] virtual Expected<std::span<std::byte>> allocate(int index, DType dtype, const Dims& dims,
                                                                std::size_t bytes) = 0;
};

// What one run cost: its time and the copies it made.
struct RunCost {
  double ms = 0.0;
  uint64_t input_copies = 0, output_copies = 0, bytes_copied = 0;
};

struct FrameStats {
  std::atomic<uint64_t> processed{0};
  std::atomic<double> total_ms{0.0};
  std::atomic<double> last_ms{0.0};
  std::atomic<uint64_t> input_copies{0};   // input tensors copied (not bound in place)
  std::atomic<uint64_t> output_copies{0};  // outputs copied into their memory after the run
  std::atomic<uint64_t> bytes_copied{0};

  // Counts one frame run at `cost`.
  void add(const RunCost& cost) {
    last_ms = cost.ms;
    total_ms = total_ms + cost.ms;
    ++processed;
    input_copies += cost.input_copies;
    output_copies += cost.output_copies;
    bytes_copied += cost.bytes_copied;
  }

  [[nodiscard]] double mean_ms() const {
    const uint64_t n = processed.load();
    return n == 0 ? 0.0 : total_ms.load() / static_cast<double>(n);
  }
};

class FrameRunner {
 public:
  // `stats` collects the runs (shared with the caller so that figures survive the runner, e.g.
  // an element's statistics across state changes); null: the runner keeps its own.
  [[nodiscard]] static Expected<std::unique_ptr<FrameRunner>> create(
      std::shared_ptr<const Factory> factory, const ExecutorOptions& options,
      std::shared_ptr<FrameStats> stats = nullptr);

  // Runs the model on `inputs` (one per model input, in order), writing output k into the memory
  // `outputs.allocate(k, ...)` returns. Returns the dims of every output. Errors name the output
  // or the step that failed; nothing stays bound either way. Running out of memory is an error
  // too, after which every run fails (make a new runner). With `cost`, the run's cost is
  // written there instead of being counted in stats() (a batch counts it per frame it ran).
  [[nodiscard]] Expected<std::vector<Dims>> run(std::span<const InputFrame> inputs, OutputSink& outputs,
                                                RunCost* cost = nullptr);

  [[nodiscard]] const FrameStats& stats() const { return *stats_; }
  [[nodiscard]] const Factory& factory() const { return executor_.factory(); }

  FrameRunner(Executor executor, std::shared_ptr<FrameStats> stats)
      : executor_(std::move(executor)), stats_(std::move(stats)) {}

 private:
  [[nodiscard]] Status feed(int index, const InputFrame& in, uint64_t& copies, uint64_t& bytes);
  [[nodiscard]] Expected<std::vector<Dims>> run_frame(std::span<const InputFrame> inputs, OutputSink& outputs,
                                                      RunCost& cost);

  Executor executor_;
  std::shared_ptr<FrameStats> stats_;
  std::string failed_;  // set when a run ran out of memory
};

}  // namespace weave::stream
