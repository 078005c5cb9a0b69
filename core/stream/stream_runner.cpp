#include "core/stream/stream_runner.h"

#include <algorithm>

namespace weave::stream {

StreamRunner::StreamRunner(Options options)
    : inputs_(std::max(1, options.inputs)),
      capacity_(std::max(1, options.capacity)),
      leaky_(options.leaky),
      max_pending_(options.max_pending),
      eos_(static_cast<std::size_t>(inputs_), false),
      input_flushing_(static_cast<std::size_t>(inputs_), false),
      held_(static_cast<std::size_t>(inputs_), 0),
      gathered_(static_cast<std::size_t>(inputs_), 0),
      seq_(static_cast<std::size_t>(inputs_), 0),
      gather_(inputs_, gather_bound()) {
  gather_max_ = gather_bound();
}

void StreamRunner::set_inputs(int inputs) {
  reset();
  std::lock_guard lock(mutex_);
  inputs_ = std::max(1, inputs);
  eos_.assign(static_cast<std::size_t>(inputs_), false);
  input_flushing_.assign(static_cast<std::size_t>(inputs_), false);
  hold_ = false;
  held_.assign(static_cast<std::size_t>(inputs_), 0);
  gathered_.assign(static_cast<std::size_t>(inputs_), 0);
  seq_.assign(static_cast<std::size_t>(inputs_), 0);
  gather_max_ = gather_bound();
  gather_ = TimestampGather<Payload>(inputs_, gather_max_);
}

// ---- Settings

void StreamRunner::set_capacity(int capacity) {
  std::lock_guard lock(mutex_);
  capacity_ = std::max(1, capacity);
  gather_max_ = gather_bound();  // the consumer applies it at its next step
  removed_.notify_all();
}

int StreamRunner::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

void StreamRunner::set_leaky(Leaky leaky) {
  std::lock_guard lock(mutex_);
  leaky_ = leaky;
  removed_.notify_all();
}

Leaky StreamRunner::leaky() const {
  std::lock_guard lock(mutex_);
  return leaky_;
}

// ---- Producer side

Push StreamRunner::accepting(int input) const {
  std::lock_guard lock(mutex_);
  // Other inputs flushing: push() waits for the end of their flush rather than refusing.
  if (hold_ && input >= 0 && input < inputs_ && !input_flushing_[static_cast<std::size_t>(input)])
    return Push::queued;
  return refusal(input).value_or(Push::queued);
}

int StreamRunner::code() const {
  std::lock_guard lock(mutex_);
  return code_;
}

Push StreamRunner::push(int input, std::optional<uint64_t> pts, Payload buffer) {
  Payload dropped;  // leaky=downstream's oldest buffer: destroyed after the lock is released
  std::unique_lock lock(mutex_);
  wait_partner_flush(lock, input);
  if (auto r = refusal(input)) return *r;
  while (queued_buffers_ >= capacity_ || ahead(input)) {
    if (queued_buffers_ < capacity_) {  // only this input is ahead: wait for its partners
      removed_.wait(lock);
      wait_partner_flush(lock, input);  // a partner started flushing: this buffer waits it out
      if (auto r = refusal(input); r && *r != Push::eos) return *r;
      continue;
    }
    if (leaky_ == Leaky::upstream) {
      ++dropped_;
      return Push::dropped;  // `buffer` is destroyed on return
    }
    if (leaky_ == Leaky::downstream) {
      dropped = drop_oldest_locked();
      continue;
    }
    removed_.wait(lock);
    wait_partner_flush(lock, input);
    if (auto r = refusal(input); r && *r != Push::eos) return *r;
  }
  queue_.push_back(Item{ItemKind::buffer, input, pts, std::move(buffer)});
  ++queued_buffers_;
  ++held_[static_cast<std::size_t>(input)];
  added_.notify_one();
  return Push::queued;
}

bool StreamRunner::push_event(Payload event, int input) {
  std::unique_lock lock(mutex_);
  if (input >= 0 && input < inputs_) wait_partner_flush(lock, input);
  if (flushing_) return false;
  queue_.push_back(Item{ItemKind::event, 0, std::nullopt, std::move(event)});
  added_.notify_one();
  return true;
}

bool StreamRunner::push_eos(int input) {
  std::unique_lock lock(mutex_);
  if (input < 0 || input >= inputs_) return false;
  wait_partner_flush(lock, input);
  eos_[static_cast<std::size_t>(input)] = true;
  removed_.notify_all();  // inputs waiting for this one's buffers go on
  if (flushing_) return false;
  queue_.push_back(Item{ItemKind::eos, input, std::nullopt, Payload()});
  added_.notify_one();
  return true;
}

// ---- Control

void StreamRunner::start() {
  std::lock_guard lock(mutex_);
  flushing_ = false;
  hold_ = false;
  code_ = 0;
  removed_.notify_all();
}

void StreamRunner::flush(int code) {
  std::lock_guard lock(mutex_);
  flushing_ = true;
  hold_ = false;
  std::fill(input_flushing_.begin(), input_flushing_.end(), false);
  code_ = code;
  added_.notify_all();
  removed_.notify_all();
}

bool StreamRunner::flush_input(int input, int code) {
  std::lock_guard lock(mutex_);
  if (input < 0 || input >= inputs_ || input_flushing_[static_cast<std::size_t>(input)]) return false;
  const bool first = !hold_;
  input_flushing_[static_cast<std::size_t>(input)] = true;
  if (first) {
    hold_ = true;
    flushing_ = true;
    code_ = code;
    added_.notify_all();
  }
  removed_.notify_all();  // a waiting push of this input returns `flushing`
  return first;
}

bool StreamRunner::flush_input_done(int input) {
  std::lock_guard lock(mutex_);
  if (input < 0 || input >= inputs_ || !hold_) return false;
  input_flushing_[static_cast<std::size_t>(input)] = false;
  removed_.notify_all();  // this input now waits for its partners instead of being refused
  if (std::find(input_flushing_.begin(), input_flushing_.end(), true) != input_flushing_.end()) return false;
  flushing_ = false;  // the caller's own events are accepted; inputs wait in hold_ until start()
  return true;
}

void StreamRunner::stop(int code) {
  std::lock_guard lock(mutex_);
  code_ = code;
  removed_.notify_all();
}

void StreamRunner::reset() {
  // Destroyed after the lock is released: a payload's destructor is the caller's code.
  std::vector<Item> old;
  std::vector<Payload> gathered;
  {
    std::lock_guard lock(mutex_);
    queue_.drain([&old](Item item) { old.push_back(std::move(item)); });
    queued_buffers_ = 0;
    std::fill(eos_.begin(), eos_.end(), false);
    std::fill(held_.begin(), held_.end(), 0);
    std::fill(gathered_.begin(), gathered_.end(), 0);
    removed_.notify_all();
  }
  gather_.reset(gathered);
  std::fill(seq_.begin(), seq_.end(), 0);
  eos_seen_ = 0;
  eos_done_ = false;
}

// ---- Consumer side

StreamRunner::Step StreamRunner::next() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mutex_);
      added_.wait(lock, [&] { return flushing_ || !queue_.empty(); });
      if (flushing_) return Step{};
      item = queue_.pop_front();
      if (item.kind == ItemKind::buffer) {
        --queued_buffers_;
        // Handed to the gather: counted there until note_gathered() has the exact figure.
        --held_[static_cast<std::size_t>(item.input)];
        ++gathered_[static_cast<std::size_t>(item.input)];
        removed_.notify_all();
      }
      gather_.set_max_pending(gather_max_);
    }
    switch (item.kind) {
      case ItemKind::buffer:
        if (auto set = complete_set(std::move(item))) return std::move(*set);
        continue;
      case ItemKind::event: {
        Step step;
        step.kind = StepKind::event;
        step.event = std::move(item.payload);
        return step;
      }
      case ItemKind::eos:
        if (++eos_seen_ < inputs_ || eos_done_) continue;
        {
          // Sets that can no longer complete.
          std::vector<Payload> left;
          gather_.reset(left);
          dropped_ += left.size();
          note_gathered();
        }
        eos_done_ = true;
        return Step{StepKind::eos, 0, {}, Payload()};
    }
  }
}

// The set that buffer `item` completes, if any.
std::optional<StreamRunner::Step> StreamRunner::complete_set(Item item) {
  Step step;
  if (inputs_ == 1) {
    note_gathered();
    step.kind = StepKind::set;
    step.key = item.pts.value_or(seq_[0]++);
    step.buffers.push_back(std::move(item.payload));
    return step;
  }
  auto& seq = seq_[static_cast<std::size_t>(item.input)];
  const uint64_t key = item.pts ? *item.pts : seq++;
  std::vector<Payload> dropped;
  auto set = gather_.push(item.input, key, std::move(item.payload), dropped);
  dropped_ += dropped.size();
  note_gathered();
  if (!set) return std::nullopt;
  step.kind = StepKind::set;
  step.key = set->key;
  step.buffers = std::move(set->items);
  return step;
}

int StreamRunner::queued() const {
  std::lock_guard lock(mutex_);
  return queued_buffers_;
}

// ---- Private

// The gather holds at most one incomplete set per held buffer: with every input within
// `capacity`, inputs x capacity sets never need discarding.
std::size_t StreamRunner::gather_bound() const {
  return std::max(max_pending_, static_cast<std::size_t>(inputs_) * static_cast<std::size_t>(capacity_) + 1);
}

// Input `input` has `capacity` buffers queued or waiting for partners (Leaky::none, several
// inputs, none ended).
bool StreamRunner::ahead(int input) const {
  if (inputs_ == 1 || leaky_ != Leaky::none) return false;
  if (std::find(eos_.begin(), eos_.end(), true) != eos_.end()) return false;
  auto full = [&](int i) {
    const auto k = static_cast<std::size_t>(i);
    return held_[k] + gathered_[k] >= capacity_;
  };
  if (!full(input)) return false;
  for (int j = 0; j < inputs_; ++j)
    if (j != input && !full(j)) return true;  // a partner may still come
  return false;                               // every input is stuck: nothing would meet
}

// Consumer: publishes how many buffers of each input the gather holds.
void StreamRunner::note_gathered() {
  std::lock_guard lock(mutex_);
  for (int i = 0; i < inputs_; ++i) gathered_[static_cast<std::size_t>(i)] = gather_.held(i);
  removed_.notify_all();
}

// While a flush of single inputs goes on (or has ended and start() is to come), the other
// inputs wait; a flush(), start() or a flush of this input ends the wait.
void StreamRunner::wait_partner_flush(std::unique_lock<std::mutex>& lock, int input) {
  const auto k = static_cast<std::size_t>(input);
  if (input < 0 || input >= inputs_) return;
  removed_.wait(lock, [&] { return !hold_ || input_flushing_[k]; });
}

std::optional<Push> StreamRunner::refusal(int input) const {
  if (flushing_) return Push::flushing;
  if (input < 0 || input >= inputs_ || eos_[static_cast<std::size_t>(input)]) return Push::eos;
  if (code_ != 0) return Push::stopped;
  return std::nullopt;
}

Payload StreamRunner::drop_oldest_locked() {
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    if (queue_[i].kind != ItemKind::buffer) continue;
    --held_[static_cast<std::size_t>(queue_[i].input)];
    Item item = queue_.erase(i);
    --queued_buffers_;
    ++dropped_;
    return std::move(item.payload);
  }
  return Payload();
}

}  // namespace weave::stream
