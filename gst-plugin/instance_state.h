// The C++ state of an element instance. GObject allocates instances zeroed and runs no C++
// constructors, so each element keeps its C++ members in one struct held by an
// InstanceState<State> in its instance struct: construct() in instance_init, destroy() in
// finalize, `*self->state` or `self->state->` in between.
#pragma once

#include <new>

namespace weave::gst {

template <class State>
class InstanceState {
 public:
  void construct() { state_ = new (storage_) State(); }
  void destroy() {
    state_->~State();
    state_ = nullptr;
  }
  State* get() const { return state_; }
  State& operator*() const { return *state_; }
  State* operator->() const { return state_; }

 private:
  State* state_;  // constructed in storage_; not an owning heap pointer
  alignas(State) unsigned char storage_[sizeof(State)];
};

}  // namespace weave::gst
