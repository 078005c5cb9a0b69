#include "core/stream/batch_group.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

namespace weave::stream {

// One frame handed to the group; lives on its caller's stack until run() returns.
struct BatchGroup::Member {
  std::span<const InputFrame> inputs;
  OutputSink* outputs = nullptr;
  FrameStats* stats = nullptr;
  int64_t rows = 0;
  std::optional<Expected<std::vector<Dims>>> result;  // set by the batch's leader
  bool batched = false;                               // its result came out of a batch
};

struct BatchGroup::Batch {
  std::vector<Member*> members;     // members[0] opened it and runs it
  std::condition_variable changed;  // a member joined (the leader waits) or results are in
  // When it runs at the latest: the earliest of its members' timeouts.
  std::chrono::steady_clock::time_point deadline;
  bool closing = false;  // run now (wake(): a member's stream flushes or stops)
  bool done = false;
};

namespace {

// Frames batch when every input has the same dtype, rank and dims past the first, and all
// inputs of a frame the same first dim (its rows). Rows of a frame that cannot batch: 0.
int64_t rows_of(std::span<const InputFrame> inputs) {
  if (inputs.empty() || inputs[0].view.dims.rank() == 0) return 0;
  const int64_t rows = inputs[0].view.dims[0];
  for (const auto& in : inputs)
    if (in.view.dims.rank() == 0 || in.view.dims[0] != rows) return 0;
  return rows;
}

bool same_rows_shape(std::span<const InputFrame> a, std::span<const InputFrame> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Dims& x = a[i].view.dims;
    const Dims& y = b[i].view.dims;
    if (a[i].view.dtype != b[i].view.dtype || x.rank() != y.rank()) return false;
    for (int d = 1; d < x.rank(); ++d)
      if (x[d] != y[d]) return false;
  }
  return true;
}

// One frame run alone, counted in its stream's statistics.
Expected<std::vector<Dims>> run_counted(FrameRunner& runner, std::span<const InputFrame> inputs,
                                        OutputSink& outputs, FrameStats& stats) {
  RunCost cost;
  auto r = runner.run(inputs, outputs, &cost);
  if (r) stats.add(cost);
  return r;
}

void ensure_size(AlignedBuffer& b, std::size_t bytes) {
  if (b.size() < bytes) b = AlignedBuffer(bytes, false);
}

// Outputs of the batched run, written into the group's scratch.
class ScratchSink final : public OutputSink {
 public:
  explicit ScratchSink(std::vector<AlignedBuffer>& outs) : outs_(outs) {}
  Expected<std::span<std::byte>> allocate(int index, DType, const Dims&, std::size_t bytes) override {
    auto& b = outs_[static_cast<std::size_t>(index)];
    ensure_size(b, bytes);
    return std::span<std::byte>(b.data(), bytes);
  }

 private:
  std::vector<AlignedBuffer>& outs_;
};

using GroupKey = std::pair<const Factory*, int>;
std::mutex registry_lock;
std::map<GroupKey, std::weak_ptr<BatchGroup>>& registry() {
  static std::map<GroupKey, std::weak_ptr<BatchGroup>> groups;
  return groups;
}

}  // namespace

BatchGroup::BatchGroup(std::shared_ptr<const Factory> factory, int size)
    : factory_(std::move(factory)), size_(size) {
  // What the model declares decides first: every input and output needs a dynamic first dim,
  // and when both name it, the same name (the batch). A run checks the dims it gets too.
  const Factory& f = *factory_;
  std::string batch_name;
  for (int i = 0; i < f.num_inputs(); ++i) {
    const TensorInfo& in = f.input_info(i);
    if (in.shape.empty() || in.shape[0] != kDynamic) {
      unbatchable_ = "model input '" + in.name + "' has shape " + shape_str(in.shape) +
                     ": its first dim is not dynamic, so frames cannot be joined along it; frames run alone";
      return;
    }
    if (batch_name.empty() && !in.dim_names.empty()) batch_name = in.dim_names[0];
  }
  for (int k = 0; k < f.num_outputs(); ++k) {
    const TensorInfo& out = f.output_info(k);
    const std::string name = out.dim_names.empty() ? std::string() : out.dim_names[0];
    if (out.shape.empty() || out.shape[0] != kDynamic ||
        (!batch_name.empty() && !name.empty() && name != batch_name)) {
      unbatchable_ = "output '" + out.name + "' has shape " + shape_str(out.shape, out.dim_names) +
                     ": its first dim is not the inputs' batch, so a batch cannot be split; frames run alone";
      return;
    }
  }
}

std::shared_ptr<BatchGroup> BatchGroup::join(std::shared_ptr<const Factory> factory, int size) {
  std::lock_guard lock(registry_lock);
  auto& groups = registry();
  for (auto it = groups.begin(); it != groups.end();) it = it->second.expired() ? groups.erase(it) : ++it;
  const GroupKey key{factory.get(), size};
  if (auto group = groups[key].lock()) return group;
  auto group = std::make_shared<BatchGroup>(std::move(factory), size);
  groups[key] = group;
  return group;
}

std::string BatchGroup::unbatchable() const {
  std::lock_guard lock(lock_);
  return unbatchable_;
}

BatchGroup::Counts BatchGroup::counts() const {
  std::lock_guard lock(lock_);
  return counts_;
}

std::unique_ptr<BatchGroup::Scratch> BatchGroup::take_scratch() {
  if (spare_.empty()) return std::make_unique<Scratch>();
  auto s = std::move(spare_.back());
  spare_.pop_back();
  return s;
}

Expected<std::vector<Dims>> BatchGroup::run(FrameRunner& runner, std::span<const InputFrame> inputs,
                                            OutputSink& outputs, std::chrono::microseconds timeout,
                                            FrameStats& stats, int* batch_frames) {
  if (batch_frames != nullptr) *batch_frames = 1;
  Member me{inputs, &outputs, &stats, rows_of(inputs), std::nullopt};
  std::unique_lock lock(lock_);
  const bool alone = size_ < 2 || me.rows == 0 || !unbatchable_.empty() ||
                     (open_ && !same_rows_shape(open_->members[0]->inputs, inputs));
  if (alone) {
    lock.unlock();
    return run_counted(runner, inputs, outputs, stats);
  }

  const auto due = std::chrono::steady_clock::now() + timeout;
  if (open_) {  // join the batch gathering now; its leader runs it
    std::shared_ptr<Batch> batch = open_;
    batch->members.push_back(&me);
    if (due < batch->deadline) batch->deadline = due;  // no member waits longer than its own timeout
    if (static_cast<int>(batch->members.size()) >= size_) open_.reset();
    batch->changed.notify_all();
    batch->changed.wait(lock, [&] { return batch->done; });
    if (batch_frames != nullptr && me.batched) *batch_frames = static_cast<int>(batch->members.size());
    return std::move(*me.result);
  }

  // Open a batch and lead it.
  auto batch = std::make_shared<Batch>();
  batch->members.push_back(&me);
  batch->deadline = due;
  open_ = batch;
  while (static_cast<int>(batch->members.size()) < size_ && !batch->closing &&
         std::chrono::steady_clock::now() < batch->deadline)
    batch->changed.wait_until(lock, batch->deadline);
  if (open_ == batch) open_.reset();  // closed: later frames open the next one
  const auto n = batch->members.size();
  if (n == 1) {
    lock.unlock();
    return run_counted(runner, inputs, outputs, stats);
  }
  std::unique_ptr<Scratch> scratch = take_scratch();
  lock.unlock();
  bool batched = false;
  // Whatever happens, every member gets a result and is woken: they wait for nothing else.
  try {
    batched = run_batch(runner, *batch, *scratch);
  } catch (const std::exception& e) {
    for (Member* m : batch->members)
      if (!m->result) m->result = make_error("a batch of ", n, " frames failed: ", e.what());
  } catch (...) {
    for (Member* m : batch->members)
      if (!m->result) m->result = make_error("a batch of ", n, " frames failed");
  }
  lock.lock();
  spare_.push_back(std::move(scratch));
  if (batched) {
    ++counts_.batches;
    counts_.frames += n;
  }
  batch->done = true;
  batch->changed.notify_all();
  if (batch_frames != nullptr && batched) *batch_frames = static_cast<int>(n);
  return std::move(*me.result);
}

void BatchGroup::wake() {
  std::lock_guard lock(lock_);
  if (!open_) return;
  open_->closing = true;
  open_->changed.notify_all();
}

void BatchGroup::run_alone(FrameRunner& runner, Batch& batch) {
  for (Member* m : batch.members) m->result = run_counted(runner, m->inputs, *m->outputs, *m->stats);
}

void BatchGroup::stop_batching(std::string why) {
  std::lock_guard lock(lock_);
  unbatchable_ = std::move(why);
}

bool BatchGroup::run_batch(FrameRunner& runner, Batch& batch, Scratch& scratch) {
  const auto& members = batch.members;
  const Factory& model = runner.factory();
  const std::size_t n_in = members[0]->inputs.size();
  const auto n_out = static_cast<std::size_t>(model.num_outputs());
  scratch.inputs.resize(n_in);
  scratch.outputs.resize(n_out);

  int64_t rows = 0;
  for (const Member* m : members) rows += m->rows;
  // Gather: member after member along the first dim.
  std::vector<InputFrame>& gathered = scratch.gathered;
  std::vector<std::size_t>& member_bytes = scratch.member_bytes;
  gathered.resize(n_in);
  member_bytes.assign(members.size(), 0);
  for (std::size_t i = 0; i < n_in; ++i) {
    std::size_t total = 0;
    for (const Member* m : members) total += m->inputs[i].view.bytes();
    ensure_size(scratch.inputs[i], total);
    std::size_t at = 0;
    for (std::size_t j = 0; j < members.size(); ++j) {
      const ConstTensorView& v = members[j]->inputs[i].view;
      if (v.bytes() > 0) std::memcpy(scratch.inputs[i].data() + at, v.data, v.bytes());
      at += v.bytes();
      member_bytes[j] += v.bytes();
    }
    Dims dims = members[0]->inputs[i].view.dims;
    dims[0] = rows;
    gathered[i] = InputFrame{
        ConstTensorView{scratch.inputs[i].data(), members[0]->inputs[i].view.dtype, dims}, total, false};
  }

  ScratchSink sink(scratch.outputs);
  RunCost cost;
  auto dims = runner.run(gathered, sink, &cost);
  if (!dims) {
    // The frames may still run alone (a batch's memory is larger); if they do, stop batching.
    run_alone(runner, batch);
    if (std::all_of(members.begin(), members.end(), [](const Member* m) { return m->result->ok(); }))
      stop_batching("a batch of " + std::to_string(members.size()) + " frames failed (" + dims.message() +
                    ") where each frame alone ran; frames run alone");
    return false;
  }
  for (std::size_t k = 0; k < n_out; ++k) {
    const Dims& d = (*dims)[k];
    if (d.rank() == 0 || d[0] != rows) {
      stop_batching("output '" + model.output_info(static_cast<int>(k)).name + "' has dims " +
                    shape_str(d.span()) + " for a batch of " + std::to_string(rows) +
                    " rows: its first dim is not the batch, so a batch cannot be split; frames run alone");
      run_alone(runner, batch);
      return false;
    }
  }

  // Split: each member's rows of every output into its own memory.
  std::vector<std::size_t>& row_bytes = scratch.row_bytes;
  row_bytes.resize(n_out);
  for (std::size_t k = 0; k < n_out; ++k)
    row_bytes[k] = static_cast<std::size_t>((*dims)[k].numel() / rows) *
                   dtype_size(model.output_info(static_cast<int>(k)).dtype);
  int64_t first_row = 0;
  for (std::size_t j = 0; j < members.size(); ++j) {
    Member* m = members[j];
    std::vector<Dims> mine(n_out);
    std::size_t out_bytes = 0;
    for (std::size_t k = 0; k < n_out && !m->result; ++k) {
      const TensorInfo& info = model.output_info(static_cast<int>(k));
      Dims d = (*dims)[k];
      d[0] = m->rows;
      const std::size_t bytes = row_bytes[k] * static_cast<std::size_t>(m->rows);
      auto mem = m->outputs->allocate(static_cast<int>(k), info.dtype, d, bytes);
      if (!mem) {
        m->result = mem.error();
      } else if (mem->size() < bytes) {
        m->result = make_error("output '", info.name, "': ", mem->size(), " bytes given for ", bytes);
      } else if (bytes > 0) {
        std::memcpy(mem->data(),
                    scratch.outputs[k].data() + row_bytes[k] * static_cast<std::size_t>(first_row), bytes);
      }
      out_bytes += bytes;
      mine[k] = std::move(d);
    }
    first_row += m->rows;
    if (m->result) continue;  // its own memory failed it
    m->stats->add(RunCost{cost.ms, n_in, n_out, member_bytes[j] + out_bytes});
    m->result = std::move(mine);
    m->batched = true;
  }
  return true;
}

}  // namespace weave::stream
