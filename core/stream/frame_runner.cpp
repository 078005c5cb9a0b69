#include "core/stream/frame_runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

namespace weave::stream {

Expected<std::unique_ptr<FrameRunner>> FrameRunner::create(std::shared_ptr<const Factory> factory,
                                                           const ExecutorOptions& options,
                                                           std::shared_ptr<FrameStats> stats) {
  auto ex = Executor::create(std::move(factory), options);
  if (!ex) return ex.error();
  if (!stats) stats = std::make_shared<FrameStats>();
  return std::make_unique<FrameRunner>(std::move(*ex), std::move(stats));
}

// Binds the input in place when its data is aligned to the element and covers the tensor, else
// copies it in (the executor counts that copy).
Status FrameRunner::feed(int index, const InputFrame& in, uint64_t& copies, uint64_t& bytes) {
  if (in.merged) {
    ++copies;
    bytes += in.capacity;
  }
  const bool aligned = reinterpret_cast<std::uintptr_t>(in.view.data) % bind_alignment(in.view.dtype) == 0;
  if (aligned && in.capacity >= in.view.bytes()) return executor_.bind_input(index, in.view, in.capacity);
  return executor_.set_input(index, in.view);
}

Expected<std::vector<Dims>> FrameRunner::run(std::span<const InputFrame> inputs, OutputSink& outputs,
                                             RunCost* cost) {
  if (!failed_.empty()) return make_error(failed_);
  try {
    RunCost mine;
    auto dims = run_frame(inputs, outputs, cost != nullptr ? *cost : mine);
    if (dims && cost == nullptr) stats_->add(mine);
    return dims;
  } catch (const std::bad_alloc&) {
    // Inputs copied into buffers sized for a huge bound, a new plan's arena: the executor may be
    // half way through growing, so it is not used again.
    failed_ =
        "cannot allocate the memory a frame needs (a bound beyond memory? max-shape); the runner stopped";
    return make_error(failed_);
  }
}

Expected<std::vector<Dims>> FrameRunner::run_frame(std::span<const InputFrame> inputs, OutputSink& outputs,
                                                   RunCost& cost) {
  const int n_out = executor_.factory().num_outputs();
  if (static_cast<int>(inputs.size()) != executor_.factory().num_inputs())
    return make_error("the model takes ", executor_.factory().num_inputs(), " inputs, got ", inputs.size());
  // No binding may outlive the caller's mappings, whatever happens below.
  struct Unbind {
    Executor& ex;
    ~Unbind() { ex.unbind_all(); }
  } unbind{executor_};

  uint64_t extra_in = 0, extra_out = 0, extra_bytes = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    WEAVE_TRY(feed(static_cast<int>(i), inputs[i], extra_in, extra_bytes));

  std::vector<std::span<std::byte>> memory(static_cast<std::size_t>(n_out));
  std::vector<bool> bound(static_cast<std::size_t>(n_out), false);
  for (int k = 0; k < n_out; ++k) {
    auto dims = executor_.output_dims(k);
    if (!dims) return dims.error();
    const DType dtype = executor_.factory().output_info(k).dtype;
    const std::size_t bytes = static_cast<std::size_t>(dims->numel()) * dtype_size(dtype);
    auto mem = outputs.allocate(k, dtype, *dims, bytes);
    if (!mem) return mem.error();
    memory[static_cast<std::size_t>(k)] = *mem;
    if (bytes == 0) continue;
    if (mem->size() < bytes)
      return make_error("output '", executor_.factory().output_info(k).name, "': ", mem->size(),
                        " bytes given for ", bytes);
    // Not expected to fail (the memory is the caller's, aligned or not); copied after the run then.
    bound[static_cast<std::size_t>(k)] =
        executor_.bind_output(k, TensorView{mem->data(), dtype, *dims}, mem->size()).ok();
  }

  const auto t0 = std::chrono::steady_clock::now();
  if (Status st = executor_.run(); !st) return make_error("Inference failed: ", st.message());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<Dims> dims(static_cast<std::size_t>(n_out));
  for (int k = 0; k < n_out; ++k) {
    auto out = executor_.output(k);
    if (!out) return out.error();
    const auto ku = static_cast<std::size_t>(k);
    dims[ku] = out->dims;
    if (!bound[ku] && !memory[ku].empty() && out->bytes() > 0) {
      std::memcpy(memory[ku].data(), out->data, std::min(out->bytes(), memory[ku].size()));
      ++extra_out;
      extra_bytes += out->bytes();
    }
  }
  const CopyStats& c = executor_.stats().last_run;
  cost = RunCost{ms, c.input_copies + extra_in, c.output_copies + extra_out, c.bytes_copied + extra_bytes};
  return dims;
}

}  // namespace weave::stream
