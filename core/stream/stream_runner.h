// The streaming side of a model element, without GStreamer: producers (one per input, e.g. sink
// pads) push buffers, serialized events and end-of-stream into a bounded queue; one consumer (the
// element's own thread) takes steps out of it -- a set of buffers with one per input gathered by
// timestamp, an event in its place in the stream, or "every input ended".
//
//  - Backpressure: at most `capacity` buffers wait (events do not count). When full, a push
//    blocks (Leaky::none), drops the incoming buffer (upstream) or the oldest queued buffer
//    (downstream); drops are counted. With several inputs and Leaky::none, an input also waits
//    while `capacity` of its buffers are queued or held by the gather for a partner, so one
//    input running ahead of the others blocks instead of pushing the gather past its bound
//    (which would discard sets that were about to complete). That wait stops once any input
//    has ended (the others' unmatched buffers can no longer complete) and while every input is
//    at its bound (timestamps that do not meet: the gather then discards its oldest sets, which
//    is the only way on).
//  - Gathering: sets complete by key (a timestamp, else a per-input sequence number), with the
//    policy of TimestampGather (keys only move forward, bounded pending sets); buffers left
//    without partners are dropped and counted. With one input every buffer is a set of its own,
//    in order, whatever its timestamp (several buffers may share one, e.g. batches of crops of
//    one frame).
//  - Flushing: flush() wakes every waiting producer and the consumer; pushes are refused until
//    start(). stop(code) is the consumer's failure: producers get the code back until start().
//  - Flushes of single inputs (a flush event on one sink pad of several, e.g. a seek that reached
//    the sources of every input): the first input to start flushing flushes the runner
//    (flush_input() says so: forward the flush downstream once), and the flush ends when the
//    last flushing input ends its own (flush_input_done()). Meanwhile an input whose flush is over,
//    or that never flushed, waits in push()/push_event()/push_eos() instead of being refused:
//    refusing a buffer with "flushing" would make upstream stop streaming for good.
//  - End of stream: once an input had EOS its later buffers are refused; the consumer sees one
//    `eos` step when every input has ended (after the sets before it).
//
// Buffer and Event are the caller's own move-only RAII types (a GstBuffer reference in the
// plugin, plain vectors in tests): whatever the runner drops, it destroys.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/stream/timestamp_gather.h"

namespace weave::stream {

enum class Leaky { none, upstream, downstream };

// What became of a push.
enum class Push {
  queued,    // in the queue
  dropped,   // leaky=upstream and the queue was full: the buffer was dropped (counted)
  flushing,  // refused: flushing (the code given to flush())
  eos,       // refused: this input already had EOS
  stopped,   // refused: the consumer stopped with a code (stop())
};

template <class Buffer, class Event>
class StreamRunner {
 public:
  struct Options {
    int inputs = 1;
    int capacity = 4;
    Leaky leaky = Leaky::none;
    std::size_t max_pending = 16;  // incomplete sets held by the gather
  };

  enum class StepKind { set, event, eos, flushing };
  struct Step {
    StepKind kind = StepKind::flushing;
    uint64_t key = 0;             // set: the key the buffers share
    std::vector<Buffer> buffers;  // set: one per input, in input order
    std::optional<Event> event;   // event
  };

  explicit StreamRunner(Options options)
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

  StreamRunner(const StreamRunner&) = delete;
  StreamRunner& operator=(const StreamRunner&) = delete;

  [[nodiscard]] int inputs() const { return inputs_; }

  // A new number of inputs (a model with other inputs); forgets everything like reset(). Call
  // while no producer or consumer is inside (e.g. in a stopped element).
  void set_inputs(int inputs) {
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
    gather_ = TimestampGather<Buffer>(inputs_, gather_max_);
  }

  // ---- Settings (any thread; a larger queue or a leaky mode wakes blocked producers).
  void set_capacity(int capacity) {
    std::lock_guard lock(mutex_);
    capacity_ = std::max(1, capacity);
    gather_max_ = gather_bound();  // the consumer applies it at its next step
    removed_.notify_all();
  }
  [[nodiscard]] int capacity() const {
    std::lock_guard lock(mutex_);
    return capacity_;
  }
  void set_leaky(Leaky leaky) {
    std::lock_guard lock(mutex_);
    leaky_ = leaky;
    removed_.notify_all();
  }
  [[nodiscard]] Leaky leaky() const {
    std::lock_guard lock(mutex_);
    return leaky_;
  }

  // ---- Producer side.

  // Whether `input` takes buffers now (checked again by push): lets a producer report a flush,
  // an ended input or a stopped consumer before it looks at the buffer itself.
  [[nodiscard]] Push accepting(int input) const {
    std::lock_guard lock(mutex_);
    // Other inputs flushing: push() waits for the end of their flush rather than refusing.
    if (hold_ && input >= 0 && input < inputs_ && !input_flushing_[static_cast<std::size_t>(input)])
      return Push::queued;
    return refusal(input).value_or(Push::queued);
  }
  // The code given to flush() or stop(), for a refused push.
  [[nodiscard]] int code() const {
    std::lock_guard lock(mutex_);
    return code_;
  }

  // Queues `buffer` for `input` with its timestamp (nullopt: pairs by arrival order). May block
  // while the queue is full (Leaky::none) until a buffer leaves, or a flush or stop, and while
  // other inputs flush (flush_input()).
  Push push(int input, std::optional<uint64_t> pts, Buffer buffer) {
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
        drop_oldest_locked();
        continue;
      }
      removed_.wait(lock);
      wait_partner_flush(lock, input);
      if (auto r = refusal(input); r && *r != Push::eos) return *r;
    }
    Item item;
    item.kind = ItemKind::buffer;
    item.input = input;
    item.pts = pts;
    item.buffer.emplace(std::move(buffer));
    queue_.push_back(std::move(item));
    ++queued_buffers_;
    ++held_[static_cast<std::size_t>(input)];
    added_.notify_one();
    return Push::queued;
  }

  // Queues a serialized event in its place; false (event destroyed) while flushing. `input`: the
  // input it came from, which waits while other inputs flush; -1 for the caller's own events.
  bool push_event(Event event, int input = -1) {
    std::unique_lock lock(mutex_);
    if (input >= 0 && input < inputs_) wait_partner_flush(lock, input);
    if (flushing_) return false;
    Item item;
    item.kind = ItemKind::event;
    item.event.emplace(std::move(event));
    queue_.push_back(std::move(item));
    added_.notify_one();
    return true;
  }

  // Ends `input`: later buffers are refused with Push::eos. False while flushing.
  bool push_eos(int input) {
    std::unique_lock lock(mutex_);
    if (input < 0 || input >= inputs_) return false;
    wait_partner_flush(lock, input);
    eos_[static_cast<std::size_t>(input)] = true;
    removed_.notify_all();  // inputs waiting for this one's buffers go on
    if (flushing_) return false;
    Item item;
    item.kind = ItemKind::eos;
    item.input = input;
    queue_.push_back(std::move(item));
    added_.notify_one();
    return true;
  }

  // ---- Control.

  // Accepts items again (state change to running, after a flush); inputs waiting for the end of
  // a flush go on.
  void start() {
    std::lock_guard lock(mutex_);
    flushing_ = false;
    hold_ = false;
    code_ = 0;
    removed_.notify_all();
  }
  // Refuses pushes with `code` and wakes everyone; the consumer's next() returns `flushing`.
  // Ends any flush of single inputs (a state change: everything stops).
  void flush(int code) {
    std::lock_guard lock(mutex_);
    flushing_ = true;
    hold_ = false;
    std::fill(input_flushing_.begin(), input_flushing_.end(), false);
    code_ = code;
    added_.notify_all();
    removed_.notify_all();
  }
  // `input` starts flushing (it refuses pushes with `code` until its flush ends). True for the
  // first input of a flush: the runner flushed like flush(code); the caller forwards the flush
  // downstream and pauses the consumer. False when a flush was already going on.
  bool flush_input(int input, int code) {
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
  // `input`'s flush ended. True when it was the last flushing input: the flush is over, and the
  // caller (consumer paused) calls reset(), may queue events of its own with push_event(), then
  // start(); inputs wait until start(). False while other inputs still flush, or without a flush.
  bool flush_input_done(int input) {
    std::lock_guard lock(mutex_);
    if (input < 0 || input >= inputs_ || !hold_) return false;
    input_flushing_[static_cast<std::size_t>(input)] = false;
    removed_.notify_all();  // this input now waits for its partners instead of being refused
    if (std::find(input_flushing_.begin(), input_flushing_.end(), true) != input_flushing_.end())
      return false;
    flushing_ = false;  // the caller's own events are accepted; inputs wait in hold_ until start()
    return true;
  }
  // The consumer cannot go on (e.g. downstream refused a buffer): producers get `code` back.
  void stop(int code) {
    std::lock_guard lock(mutex_);
    code_ = code;
    removed_.notify_all();
  }
  // Forgets everything queued or gathered (not counted as dropped) and every input's EOS. Call
  // while the consumer is not in next() (paused task, or stopped).
  void reset() {
    std::deque<Item> old;
    std::vector<Buffer> gathered;
    {
      std::lock_guard lock(mutex_);
      old.swap(queue_);
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

  // ---- Consumer side (one thread).

  // Blocks until the next step. Buffers go through the gather: only completed sets come out.
  Step next() {
    for (;;) {
      Item item;
      {
        std::unique_lock lock(mutex_);
        added_.wait(lock, [&] { return flushing_ || !queue_.empty(); });
        if (flushing_) return Step{};
        item = std::move(queue_.front());
        queue_.pop_front();
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
        case ItemKind::buffer: {
          if (inputs_ == 1) {
            note_gathered();
            Step step;
            step.kind = StepKind::set;
            step.key = item.pts.value_or(seq_[0]++);
            step.buffers.push_back(std::move(*item.buffer));
            return step;
          }
          auto& seq = seq_[static_cast<std::size_t>(item.input)];
          const uint64_t key = item.pts ? *item.pts : seq++;
          std::vector<Buffer> dropped;
          auto set = gather_.push(item.input, key, std::move(*item.buffer), dropped);
          dropped_ += dropped.size();
          note_gathered();
          if (!set) continue;
          Step step;
          step.kind = StepKind::set;
          step.key = set->key;
          step.buffers = std::move(set->items);
          return step;
        }
        case ItemKind::event: {
          Step step;
          step.kind = StepKind::event;
          step.event = std::move(item.event);
          return step;
        }
        case ItemKind::eos:
          if (++eos_seen_ < inputs_ || eos_done_) continue;
          {
            // Sets that can no longer complete.
            std::vector<Buffer> left;
            gather_.reset(left);
            dropped_ += left.size();
            note_gathered();
          }
          eos_done_ = true;
          return Step{StepKind::eos, 0, {}, std::nullopt};
      }
    }
  }

  // Buffers dropped: by a leaky queue or left without partners.
  [[nodiscard]] uint64_t dropped() const { return dropped_.load(); }
  // Buffers waiting in the queue now.
  [[nodiscard]] int queued() const {
    std::lock_guard lock(mutex_);
    return queued_buffers_;
  }

 private:
  enum class ItemKind { buffer, event, eos };
  struct Item {
    ItemKind kind = ItemKind::buffer;
    int input = 0;
    std::optional<uint64_t> pts;
    std::optional<Buffer> buffer;
    std::optional<Event> event;
  };

  // The gather holds at most one incomplete set per held buffer: with every input within
  // `capacity`, inputs x capacity sets never need discarding.
  [[nodiscard]] std::size_t gather_bound() const {
    return std::max(max_pending_,
                    static_cast<std::size_t>(inputs_) * static_cast<std::size_t>(capacity_) + 1);
  }
  // Input `input` has `capacity` buffers queued or waiting for partners (Leaky::none, several
  // inputs, none ended).
  [[nodiscard]] bool ahead(int input) const {
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
  void note_gathered() {
    std::lock_guard lock(mutex_);
    for (int i = 0; i < inputs_; ++i) gathered_[static_cast<std::size_t>(i)] = gather_.held(i);
    removed_.notify_all();
  }

  // While a flush of single inputs goes on (or has ended and start() is to come), the other
  // inputs wait; a flush(), start() or a flush of this input ends the wait.
  void wait_partner_flush(std::unique_lock<std::mutex>& lock, int input) {
    const auto k = static_cast<std::size_t>(input);
    if (input < 0 || input >= inputs_) return;
    removed_.wait(lock, [&] { return !hold_ || input_flushing_[k]; });
  }

  std::optional<Push> refusal(int input) const {
    if (flushing_) return Push::flushing;
    if (input < 0 || input >= inputs_ || eos_[static_cast<std::size_t>(input)]) return Push::eos;
    if (code_ != 0) return Push::stopped;
    return std::nullopt;
  }

  void drop_oldest_locked() {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->kind != ItemKind::buffer) continue;
      --held_[static_cast<std::size_t>(it->input)];
      queue_.erase(it);
      --queued_buffers_;
      ++dropped_;
      return;
    }
  }

  int inputs_;
  mutable std::mutex mutex_;
  std::condition_variable added_;
  std::condition_variable removed_;
  // Guarded by mutex_.
  int capacity_;
  Leaky leaky_;
  std::size_t max_pending_;
  std::deque<Item> queue_;
  int queued_buffers_ = 0;
  bool flushing_ = true;
  bool hold_ = false;  // a flush of single inputs: inputs not flushing wait (see flush_input)
  int code_ = 0;
  std::vector<bool> eos_;
  std::vector<bool> input_flushing_;
  std::vector<int> held_;      // per input: buffers in the queue
  std::vector<int> gathered_;  // per input: buffers the gather holds (published by the consumer)
  std::size_t gather_max_ = 0;
  // Consumer only.
  std::vector<uint64_t> seq_;
  TimestampGather<Buffer> gather_;
  int eos_seen_ = 0;
  bool eos_done_ = false;

  std::atomic<uint64_t> dropped_{0};
};

}  // namespace weave::stream
