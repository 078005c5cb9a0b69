// Publisher: a bounded queue of messages in front of a Transport, emptied by a thread of its
// own, so that a slow or absent broker never stalls the pipeline beyond the policy chosen:
//
//  - push() queues a message. While the destination is unreachable messages wait, up to
//    `queue_size` of them (counting those sent but not yet acknowledged). When the queue is full,
//    `drop_oldest` drops the oldest message (counted, and reported through on_event) and
//    `block` makes push() wait for room.
//  - The thread connects, reconnects with a growing pause (retry_min .. retry_max), hands the
//    queued messages over in order, and removes each one when the transport acknowledges it. A
//    message whose delivery failed, and every one not acknowledged when a connection is lost, is
//    sent again: at least once.
//  - flush() waits, up to a timeout, until every queued message is acknowledged (EOS), and says
//    how many are not; the destructor stops the thread without waiting.
// Nothing is dropped silently: stats() counts messages acknowledged, dropped and pending, and
// on_event reports connections lost and made and drops (at most one drop event per second).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/common/status.h"
#include "core/publish/transport.h"

namespace weave::publish {

enum class WhenFull { drop_oldest, block };

struct PublisherOptions {
  std::size_t queue_size = 1000;  // messages queued or not yet acknowledged, at most (>= 1)
  WhenFull when_full = WhenFull::drop_oldest;
  std::chrono::milliseconds retry_min{200}, retry_max{5000};
  std::size_t window = 64;  // messages handed over and not yet acknowledged, at most
};

struct PublisherStats {
  uint64_t queued = 0;       // push() calls that queued a message
  uint64_t delivered = 0;    // acknowledged by the destination
  uint64_t dropped = 0;      // dropped from a full queue (drop_oldest) or left at flush/stop
  uint64_t resent = 0;       // handed over again after a failure or a lost connection
  uint64_t pending = 0;      // in the queue now
  uint64_t connections = 0;  // connections made
  bool connected = false;
};

struct PublisherEvent {
  enum class Kind { connected, disconnected, dropped };
  Kind kind = Kind::connected;
  std::string detail;          // the destination (connected) or the reason (disconnected)
  uint64_t dropped_total = 0;  // messages dropped so far (dropped)
};

class Publisher {
 public:
  using EventFn = std::function<void(const PublisherEvent&)>;
  // Starts the thread, which connects in the background (an unreachable destination is not an
  // error here: messages queue until it is reached). on_event is called from that thread, and
  // for drops from the thread of push().
  Publisher(std::unique_ptr<Transport> transport, PublisherOptions options, EventFn on_event = {});
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Queues a message (key: the Kafka message key). false when interrupted (block policy, after
  // interrupt()) or stopped: then the message was not queued.
  bool push(std::string payload, std::string key = {});
  // Waits until the queue is empty or `timeout` has passed; returns the messages still queued.
  std::size_t flush(std::chrono::milliseconds timeout);
  // Releases a push() blocked on a full queue (a pipeline flushing or stopping); later pushes
  // block again after resume().
  void interrupt();
  void resume();
  [[nodiscard]] PublisherStats stats() const;
  [[nodiscard]] const std::string& describe() const { return transport_->describe(); }

 private:
  struct Entry {
    uint64_t seq;
    std::string payload, key;
    bool sent = false;
  };
  void run();
  void hand_over();
  // The queued entry `seq` if it is handed over and not yet acknowledged, else end (under mutex_).
  std::deque<Entry>::iterator in_flight(uint64_t seq);
  void on_delivered(uint64_t seq, bool ok);
  void on_lost(std::string_view why);
  void emit(const PublisherEvent& e);

  std::unique_ptr<Transport> transport_;
  const PublisherOptions options_;
  EventFn on_event_;
  Listener listener_;

  mutable std::mutex mutex_;
  std::condition_variable work_;  // the thread: new messages, stop
  std::condition_variable room_;  // push(): room in the queue; flush(): queue empty
  std::deque<Entry> queue_;       // in order of push; sent or not
  std::size_t in_flight_ = 0;     // entries with sent == true
  uint64_t next_seq_ = 0;
  PublisherStats stats_;
  bool stop_ = false;
  bool interrupted_ = false;
  bool connected_ = false;  // the thread's view (under mutex_ for stats)
  std::chrono::steady_clock::time_point last_drop_event_{};
  std::thread thread_;
};

}  // namespace weave::publish
