#include "core/publish/publisher.h"

#include <algorithm>
#include <utility>

namespace weave::publish {

Publisher::Publisher(std::unique_ptr<Transport> transport, PublisherOptions options, EventFn on_event)
    : transport_(std::move(transport)), options_(std::move(options)), on_event_(std::move(on_event)) {
  listener_.delivered = [this](uint64_t seq, bool ok, std::string_view) { on_delivered(seq, ok); };
  listener_.lost = [this](std::string_view why) { on_lost(why); };
  listener_.state = [this](bool up, std::string_view why) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.connected = up;
    }
    emit(PublisherEvent{up ? PublisherEvent::Kind::connected : PublisherEvent::Kind::disconnected,
                        up ? transport_->describe() : std::string(why), 0});
  };
  thread_ = std::thread([this] { run(); });
}

Publisher::~Publisher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  room_.notify_all();
  thread_.join();
}

void Publisher::emit(const PublisherEvent& e) {
  if (on_event_) on_event_(e);
}

bool Publisher::push(std::string payload, std::string key) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stop_) return false;
  const std::size_t most = std::max<std::size_t>(1, options_.queue_size);
  bool report = false;
  if (queue_.size() >= most) {
    if (options_.when_full == WhenFull::block) {
      room_.wait(lock, [&] { return stop_ || interrupted_ || queue_.size() < most; });
      if (stop_ || interrupted_) return false;
    } else {
      if (queue_.front().sent) --in_flight_;
      queue_.pop_front();
      ++stats_.dropped;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_drop_event_ >= std::chrono::seconds(1)) {
        last_drop_event_ = now;
        report = true;
      }
    }
  }
  queue_.push_back(Entry{next_seq_++, std::move(payload), std::move(key)});
  ++stats_.queued;
  const uint64_t dropped = stats_.dropped;
  lock.unlock();
  work_.notify_one();
  if (report) emit(PublisherEvent{PublisherEvent::Kind::dropped, {}, dropped});
  return true;
}

std::size_t Publisher::flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  work_.notify_one();
  room_.wait_for(lock, timeout, [&] { return queue_.empty(); });
  return queue_.size();
}

void Publisher::interrupt() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    interrupted_ = true;
  }
  room_.notify_all();
}

void Publisher::resume() {
  std::lock_guard<std::mutex> lock(mutex_);
  interrupted_ = false;
}

PublisherStats Publisher::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  PublisherStats s = stats_;
  s.pending = queue_.size();
  return s;
}

std::deque<Publisher::Entry>::iterator Publisher::in_flight(uint64_t seq) {
  const auto it = std::lower_bound(queue_.begin(), queue_.end(), seq,
                                   [](const Entry& e, uint64_t s) { return e.seq < s; });
  return it != queue_.end() && it->seq == seq && it->sent ? it : queue_.end();
}

void Publisher::on_delivered(uint64_t seq, bool ok) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = in_flight(seq);
    if (it == queue_.end()) return;  // dropped meanwhile, or stale
    --in_flight_;
    if (ok) {
      queue_.erase(it);
      ++stats_.delivered;
    } else {
      it->sent = false;  // sent again
      ++stats_.resent;
    }
  }
  room_.notify_all();
}

void Publisher::on_lost(std::string_view why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connected_ = false;
    stats_.connected = false;
    for (Entry& e : queue_)
      if (e.sent) {
        e.sent = false;
        ++stats_.resent;
      }
    in_flight_ = 0;
  }
  emit(PublisherEvent{PublisherEvent::Kind::disconnected, std::string(why), 0});
}

void Publisher::hand_over() {
  for (;;) {
    uint64_t seq = 0;
    std::string payload, key;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ || !connected_ || in_flight_ >= std::max<std::size_t>(1, options_.window)) return;
      const auto it = std::find_if(queue_.begin(), queue_.end(), [](const Entry& e) { return !e.sent; });
      if (it == queue_.end()) return;
      it->sent = true;
      ++in_flight_;
      seq = it->seq;
      payload = it->payload;  // a copy: the entry may be dropped while it is sent
      key = it->key;
    }
    const SendResult r = transport_->send(seq, payload, key);
    if (r == SendResult::sent) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (const auto it = in_flight(seq); it != queue_.end()) {
        it->sent = false;
        --in_flight_;
      }
    }
    return;  // busy: after a poll; lost: after a reconnect
  }
}

void Publisher::run() {
  auto pause = options_.retry_min;
  std::string last_failure;
  for (;;) {
    bool connected = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) break;
      connected = connected_;
    }
    if (!connected) {
      const Status st = transport_->connect(listener_);
      if (!st) {
        if (st.message() != last_failure) {  // once per outage and reason
          last_failure = st.message();
          emit(PublisherEvent{PublisherEvent::Kind::disconnected, st.message(), 0});
        }
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait_for(lock, pause, [&] { return stop_; });
        pause = std::min(pause * 2, options_.retry_max);
        continue;
      }
      last_failure.clear();
      pause = options_.retry_min;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        connected_ = true;
        stats_.connected = true;
        ++stats_.connections;
        for (Entry& e : queue_)
          if (e.sent) {  // not acknowledged before the connection was lost
            e.sent = false;
            ++stats_.resent;
          }
        in_flight_ = 0;
      }
      emit(PublisherEvent{PublisherEvent::Kind::connected, transport_->describe(), 0});
    }
    hand_over();
    bool empty = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      empty = queue_.empty();
    }
    transport_->poll(empty ? std::chrono::milliseconds(0) : std::chrono::milliseconds(20));
    if (empty) {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stop_ || !queue_.empty(); });
    }
  }
  transport_->close();
}

}  // namespace weave::publish
