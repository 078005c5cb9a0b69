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
// Buffers and events are Payloads: values of the caller's own type (a GstBuffer reference in the
// plugin, plain values in tests) that the runner moves around without knowing them; whatever it
// drops, it destroys.
#pragma once

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/stream/ring_queue.h"
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

// A move-only value of any type; destroying the Payload destroys the value. get<T>() must name
// the type it was made from. Held inline (no allocation per buffer): the plugin's queue items
// are a buffer reference and its caps' tensor description.
class Payload {
 public:
  static constexpr std::size_t kInlineBytes = 192;

  Payload() = default;
  template <class T>
  requires(!std::is_same_v<std::decay_t<T>, Payload>) explicit Payload(T value) {
    static_assert(sizeof(T) <= kInlineBytes && alignof(T) <= alignof(std::max_align_t) &&
                      std::is_nothrow_move_constructible_v<T>,
                  "a Payload holds values of at most kInlineBytes that move without throwing");
    ::new (static_cast<void*>(bytes_)) T(std::move(value));
    ops_ = &kOps<T>;
  }
  Payload(Payload&& o) noexcept { take(o); }
  Payload& operator=(Payload&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload() { reset(); }

  template <class T>
  [[nodiscard]] T& get() {
    assert(ops_ == &kOps<T>);
    return *std::launder(reinterpret_cast<T*>(bytes_));
  }
  template <class T>
  [[nodiscard]] const T& get() const {
    return const_cast<Payload*>(this)->get<T>();
  }
  [[nodiscard]] bool empty() const { return ops_ == nullptr; }

 private:
  // How to move and destroy the held type; its address also tells the type.
  struct Ops {
    void (*move)(void* to, void* from) noexcept;
    void (*destroy)(void* value) noexcept;
  };
  template <class T>
  static constexpr Ops kOps{[](void* to, void* from) noexcept {
                              ::new (to) T(std::move(*static_cast<T*>(from)));
                              static_cast<T*>(from)->~T();
                            },
                            [](void* value) noexcept { static_cast<T*>(value)->~T(); }};

  void take(Payload& o) noexcept {
    if (o.ops_ == nullptr) return;
    o.ops_->move(bytes_, o.bytes_);
    ops_ = o.ops_;
    o.ops_ = nullptr;
  }
  void reset() noexcept {
    if (ops_ == nullptr) return;
    ops_->destroy(bytes_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) std::byte bytes_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

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
    uint64_t key = 0;              // set: the key the buffers share
    std::vector<Payload> buffers;  // set: one per input, in input order
    Payload event;                 // event
  };

  explicit StreamRunner(Options options);
  StreamRunner(const StreamRunner&) = delete;
  StreamRunner& operator=(const StreamRunner&) = delete;

  [[nodiscard]] int inputs() const { return inputs_; }
  // A new number of inputs (a model with other inputs); forgets everything like reset(). Call
  // while no producer or consumer is inside (e.g. in a stopped element).
  void set_inputs(int inputs);

  // ---- Settings (any thread; a larger queue or a leaky mode wakes blocked producers).
  void set_capacity(int capacity);
  [[nodiscard]] int capacity() const;
  void set_leaky(Leaky leaky);
  [[nodiscard]] Leaky leaky() const;

  // ---- Producer side.

  // Whether `input` takes buffers now (checked again by push): lets a producer report a flush,
  // an ended input or a stopped consumer before it looks at the buffer itself.
  [[nodiscard]] Push accepting(int input) const;
  // The code given to flush() or stop(), for a refused push.
  [[nodiscard]] int code() const;
  // Queues `buffer` for `input` with its timestamp (nullopt: pairs by arrival order). May block
  // while the queue is full (Leaky::none) until a buffer leaves, or a flush or stop, and while
  // other inputs flush (flush_input()).
  Push push(int input, std::optional<uint64_t> pts, Payload buffer);
  // Queues a serialized event in its place; false (event destroyed) while flushing. `input`: the
  // input it came from, which waits while other inputs flush; -1 for the caller's own events.
  bool push_event(Payload event, int input = -1);
  // Ends `input`: later buffers are refused with Push::eos. False while flushing.
  bool push_eos(int input);

  // ---- Control.

  // Accepts items again (state change to running, after a flush); inputs waiting for the end of
  // a flush go on.
  void start();
  // Refuses pushes with `code` and wakes everyone; the consumer's next() returns `flushing`.
  // Ends any flush of single inputs (a state change: everything stops).
  void flush(int code);
  // `input` starts flushing (it refuses pushes with `code` until its flush ends). True for the
  // first input of a flush: the runner flushed like flush(code); the caller forwards the flush
  // downstream and pauses the consumer. False when a flush was already going on.
  bool flush_input(int input, int code);
  // `input`'s flush ended. True when it was the last flushing input: the flush is over, and the
  // caller (consumer paused) calls reset(), may queue events of its own with push_event(), then
  // start(); inputs wait until start(). False while other inputs still flush, or without a flush.
  bool flush_input_done(int input);
  // The consumer cannot go on (e.g. downstream refused a buffer): producers get `code` back.
  void stop(int code);
  // Forgets everything queued or gathered (not counted as dropped) and every input's EOS. Call
  // while the consumer is not in next() (paused task, or stopped).
  void reset();

  // ---- Consumer side (one thread).

  // Blocks until the next step. Buffers go through the gather: only completed sets come out.
  Step next();

  // Buffers dropped: by a leaky queue or left without partners.
  [[nodiscard]] uint64_t dropped() const { return dropped_.load(); }
  // Buffers waiting in the queue now.
  [[nodiscard]] int queued() const;

 private:
  enum class ItemKind { buffer, event, eos };
  struct Item {
    ItemKind kind = ItemKind::buffer;
    int input = 0;
    std::optional<uint64_t> pts;
    Payload payload;  // the buffer or the event
  };

  [[nodiscard]] std::size_t gather_bound() const;
  [[nodiscard]] bool ahead(int input) const;
  void note_gathered();
  void wait_partner_flush(std::unique_lock<std::mutex>& lock, int input);
  [[nodiscard]] std::optional<Push> refusal(int input) const;
  // The oldest queued buffer, out of the queue (destroyed by the caller once unlocked), or none.
  Payload drop_oldest_locked();
  std::optional<Step> complete_set(Item item);

  int inputs_;
  mutable std::mutex mutex_;
  std::condition_variable added_;
  std::condition_variable removed_;
  // Guarded by mutex_.
  int capacity_;
  Leaky leaky_;
  std::size_t max_pending_;
  RingQueue<Item> queue_;
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
  TimestampGather<Payload> gather_;
  int eos_seen_ = 0;
  bool eos_done_ = false;

  std::atomic<uint64_t> dropped_{0};
};

}  // namespace weave::stream
