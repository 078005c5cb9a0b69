// A FIFO in one growing array: pushes at the back, pops at the front and, rarely, removes from
// the middle, without allocating once it has grown to the most it held (a deque allocates and
// frees a node every few pushes). For queues bounded by a capacity, such as a model element's
// input queue: after the first frames, queueing a frame allocates nothing.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace weave::stream {

template <class T>
class RingQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) % slots_.size()] = std::move(value);
    ++size_;
  }
  [[nodiscard]] T& front() {
    assert(size_ > 0);
    return slots_[head_];
  }
  // Removes the front element (its slot keeps a moved-from value until reused).
  T pop_front() {
    assert(size_ > 0);
    T out = std::move(slots_[head_]);
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return out;
  }
  // Element i from the front.
  [[nodiscard]] T& operator[](std::size_t i) {
    assert(i < size_);
    return slots_[(head_ + i) % slots_.size()];
  }
  // Removes element i, the later ones moving up by one; returns it.
  T erase(std::size_t i) {
    T out = std::move((*this)[i]);
    for (std::size_t k = i; k + 1 < size_; ++k) (*this)[k] = std::move((*this)[k + 1]);
    --size_;
    return out;
  }
  // Moves every element out, front first, leaving the queue empty (with its storage).
  template <class F>
  void drain(F&& f) {
    while (size_ > 0) f(pop_front());
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 8 : 2 * slots_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace weave::stream
