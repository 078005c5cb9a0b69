// Gathering one item per input by timestamp, for models with several inputs fed by separate
// streams (GStreamer sink pads, or an application's own queues). Inputs arrive in any order and
// at different times; a set is released as soon as every input has an item with the same key
// (a timestamp, or a per-input sequence number for untimed data).
//
// Policy, chosen so that memory stays bounded and streams cannot stall each other forever:
//  - keys only move forward: when the set for key k completes, incomplete sets with keys
//    below k are discarded, and items arriving later with a key <= k are discarded at once;
//  - a second item for an input and key already held replaces the first (which is discarded);
//  - at most `max_pending` incomplete sets are held; beyond that the oldest is discarded.
// Discarded items are handed back to the caller (who owns them: unref, count as dropped).
//
// Header-only because the item type is the caller's (e.g. a GstBuffer* in the plugin); core
// code never sees what the items are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace weave {

template <class T>
class TimestampGather {
 public:
  struct Set {
    uint64_t key = 0;
    std::vector<T> items;  // one per input, in input order
  };

  explicit TimestampGather(int inputs, std::size_t max_pending = 16)
      : inputs_(inputs < 1 ? 1 : inputs), max_pending_(max_pending < 1 ? 1 : max_pending) {}

  [[nodiscard]] int inputs() const { return inputs_; }
  // Incomplete sets currently held.
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }
  // Items of `input` held in incomplete sets.
  [[nodiscard]] int held(int input) const {
    int n = 0;
    for (const auto& [key, slots] : pending_)
      n += slots.items[static_cast<std::size_t>(input)].has_value() ? 1 : 0;
    return n;
  }
  void set_max_pending(std::size_t n) { max_pending_ = n < 1 ? 1 : n; }

  // Adds `item` for `input` (0-based) at `key`. Returns the set this completes, if any;
  // discarded items are appended to `dropped`. An out-of-range input is discarded too.
  [[nodiscard]] std::optional<Set> push(int input, uint64_t key, T item, std::vector<T>& dropped) {
    if (input < 0 || input >= inputs_ || (has_completed_ && key <= last_completed_)) {
      dropped.push_back(std::move(item));
      return std::nullopt;
    }
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      if (pending_.size() >= max_pending_) {
        // The oldest set is the least likely to complete; if the new key is older still, it
        // is the one to go.
        if (key < pending_.begin()->first) {
          dropped.push_back(std::move(item));
          return std::nullopt;
        }
        discard(pending_.begin(), dropped);
      }
      it = pending_.emplace(key, Slots(static_cast<std::size_t>(inputs_))).first;
    }
    Slots& slots = it->second;
    auto& slot = slots.items[static_cast<std::size_t>(input)];
    if (slot) {
      dropped.push_back(std::move(*slot));
    } else {
      ++slots.count;
    }
    slot = std::move(item);
    if (slots.count < inputs_) return std::nullopt;

    Set set;
    set.key = key;
    set.items.reserve(static_cast<std::size_t>(inputs_));
    for (auto& s : slots.items) set.items.push_back(std::move(*s));
    // Everything older than the completed key can no longer complete in order.
    while (pending_.begin() != it) discard(pending_.begin(), dropped);
    pending_.erase(it);
    has_completed_ = true;
    last_completed_ = key;
    return set;
  }

  // Hands back every held item and forgets the key history (flush, EOS, new segment).
  void reset(std::vector<T>& dropped) {
    while (!pending_.empty()) discard(pending_.begin(), dropped);
    has_completed_ = false;
    last_completed_ = 0;
  }

 private:
  struct Slots {
    explicit Slots(std::size_t n) : items(n) {}
    std::vector<std::optional<T>> items;
    int count = 0;
  };
  using Iter = typename std::map<uint64_t, Slots>::iterator;

  void discard(Iter it, std::vector<T>& dropped) {
    for (auto& s : it->second.items)
      if (s) dropped.push_back(std::move(*s));
    pending_.erase(it);
  }

  int inputs_;
  std::size_t max_pending_;
  std::map<uint64_t, Slots> pending_;
  bool has_completed_ = false;
  uint64_t last_completed_ = 0;
};

}  // namespace weave
