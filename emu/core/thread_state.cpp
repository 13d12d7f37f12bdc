#include "core/thread_state.hpp"

#include "core/context.hpp"

namespace cuda_shim {

__thread ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {
// Owns the thread's state and frees it at thread exit.
struct Holder {
  std::unique_ptr<ThreadState> p;
  ~Holder() {
    t_state = nullptr;
    p.reset();
  }
};
thread_local Holder t_holder;
}  // namespace

ThreadState& thread_state_slow() {
  if (!t_holder.p) t_holder.p = std::make_unique<ThreadState>();
  t_state = t_holder.p.get();
  return *t_state;
}

}  // namespace cuda_shim
