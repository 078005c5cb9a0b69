// Cross-stream batching (weaveinfer's batch-size): the runners of one process that run one model
// (one Factory) with the same batch size share a BatchGroup. A frame handed to it joins the batch
// that is gathering, or opens one; the thread that opened it waits until the batch holds `size`
// frames or `timeout` has passed since it opened, then runs them as one batch on its own runner
// -- inputs concatenated along their first dim -- and gives each member the rows of every output
// that are its own. A batch runs at the latest when the shortest timeout of its members is up
// (or at once after wake()), so a member waits at most its own timeout plus the batch's run, and
// gets what a run of its frame alone gives, up to float rounding; a stream that stops sending
// (end of stream, a flush, a slow source) never holds the others longer than that.
//
// Frames batch only with frames of the same dtypes and the same dims past the first (a stream
// whose caps differ runs alone). A model whose declared inputs or outputs lack a dynamic first
// dim never batches; one whose outputs turn out not to keep the batch first, or whose batch
// fails where its frames alone run, has that batch's frames run one by one and stops batching
// (unbatchable() says why). The price of a batch: one copy of every input into it and of every
// output out of it, counted in each member's FrameStats.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/common/buffer.h"
#include "core/common/status.h"
#include "core/stream/frame_runner.h"

namespace weave::stream {

class BatchGroup {
 public:
  // The group of `factory` and `size` in this process, made on first use; it lives while a
  // member holds it.
  [[nodiscard]] static std::shared_ptr<BatchGroup> join(std::shared_ptr<const Factory> factory, int size);

  // Runs `inputs` (one per model input, mapped by the caller, valid until this returns) in a batch
  // with other members' frames and writes output k into `outputs.allocate(k, ...)`, as
  // FrameRunner::run does. `runner` (the caller's, for its model) runs the batch when this call
  // opened it. The frame's run is counted in `stats`; `batch_frames` (optional) tells how many
  // frames its batch held (1: it ran alone).
  [[nodiscard]] Expected<std::vector<Dims>> run(FrameRunner& runner, std::span<const InputFrame> inputs,
                                                OutputSink& outputs, std::chrono::microseconds timeout,
                                                FrameStats& stats, int* batch_frames = nullptr);

  // Runs the batch gathering now at once, with the frames it has: a member's stream is flushing
  // or stopping and its thread must not wait out the timeout.
  void wake();

  [[nodiscard]] int size() const { return size_; }
  // Why the group stopped batching ("" while it batches).
  [[nodiscard]] std::string unbatchable() const;

  struct Counts {
    uint64_t batches = 0;  // runs of two frames or more
    uint64_t frames = 0;   // frames in them
  };
  [[nodiscard]] Counts counts() const;

  // Use join(). A model whose declared inputs or outputs do not all have a dynamic first dim
  // (the same named one, where named) is unbatchable from the start.
  BatchGroup(std::shared_ptr<const Factory> factory, int size);

 private:
  struct Member;
  struct Batch;
  // Inputs gathered and outputs before the split, kept between batches (no allocation per batch
  // once they are large enough).
  struct Scratch {
    std::vector<AlignedBuffer> inputs, outputs;
    std::vector<InputFrame> gathered;                  // the batch's inputs, over `inputs`
    std::vector<std::size_t> member_bytes, row_bytes;  // input bytes per member, output bytes per row
  };

  // Runs a batch of two or more frames and sets every member's result; false when the frames
  // ran one by one instead (the batch failed or could not be split).
  bool run_batch(FrameRunner& runner, Batch& batch, Scratch& scratch);
  void run_alone(FrameRunner& runner, Batch& batch);
  void stop_batching(std::string why);
  [[nodiscard]] std::unique_ptr<Scratch> take_scratch();  // call with lock_ held

  std::shared_ptr<const Factory> factory_;  // keeps the key's address from being reused
  const int size_;
  mutable std::mutex lock_;
  std::shared_ptr<Batch> open_;  // the batch gathering now
  std::vector<std::unique_ptr<Scratch>> spare_;
  std::string unbatchable_;
  Counts counts_;
};

}  // namespace weave::stream
