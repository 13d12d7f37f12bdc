// A lock biased to the first thread that takes it: that thread locks and unlocks with plain
// loads and stores, no atomic read-modify-write, until another thread takes the lock once.
// Why: a pool's, a stream's and an event's locks are nearly always taken by one thread (the one
// that allocates, frees and records); a cudaMallocAsync+cudaFreeAsync pair took three
// uncontended exchanges and an event record+synchronize two. Without them, on a 2-core host:
// the pair 38.5 -> 34.7 ns, the event pair 28.9 -> 22.1 ns (bench_pool, bench_stream).
//
// How (an asymmetric Dekker handshake, as liburcu and folly use): the owner announces itself
// (in_ = 1) and then reads revoking_, with only a compiler barrier between. The first other
// thread takes the fallback lock, sets revoking_, and calls membarrier(PRIVATE_EXPEDITED),
// which runs a full fence on every thread of the process; after it, either the owner's read
// sees revoking_, or the revoker sees in_ and waits for the owner's unlock. The bias is then
// gone for good: everyone, the owner included, uses the fallback SpinLock. The owner's
// critical sections before that happened-before the revoker's (in_'s release store).
//
// No bias where it could not be revoked safely: membarrier unavailable (old kernels, seccomp),
// and under ThreadSanitizer, which cannot see the handshake's fence (it checks the plain
// SpinLock instead).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>

#include "core/spinlock.hpp"

namespace cuda_shim {

namespace biased_detail {
// This thread's id for biases: never 0, never reused (a new thread with an old pthread id
// must not inherit a bias: it would read the owner's data without synchronizing).
extern __thread uint64_t t_id __attribute__((tls_model("initial-exec")));
uint64_t assign_id() noexcept;
inline uint64_t self() noexcept {
  uint64_t id = t_id;
  return id ? id : assign_id();
}
// Whether biases may be granted (membarrier works here; not a TSan build).
bool enabled() noexcept;
// Runs a full memory fence on every running thread of the process.
void heavy_fence() noexcept;
}  // namespace biased_detail

class BiasedLock {
 public:
  [[gnu::always_inline]] void lock() noexcept {
    const uint64_t me = biased_detail::self();
    const uint64_t o = owner_.load(std::memory_order_relaxed);
    if (o == me) [[likely]] {
      in_.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the CPU fence is the revoker's membarrier
      if (!revoking_.load(std::memory_order_relaxed)) [[likely]]
        return;
      in_.store(0, std::memory_order_release);
    } else if (o == kRevoked && slow_.try_lock()) {  // shared for good: the plain lock, inline
      return;
    }
    lock_slow(me);
  }
  [[gnu::always_inline]] void unlock() noexcept {
    // in_ is written by the owner alone, and is 1 only while it holds the lock by its bias.
    if (in_.load(std::memory_order_relaxed) && owner_.load(std::memory_order_relaxed) == biased_detail::self()) {
      in_.store(0, std::memory_order_release);
      return;
    }
    slow_.unlock();
  }
  // For tests: whether a thread holds the bias.
  bool biased() const noexcept {
    const uint64_t o = owner_.load(std::memory_order_acquire);
    return o != 0 && o != kRevoked;
  }

 private:
  static constexpr uint64_t kRevoked = ~uint64_t(0);
  void lock_slow(uint64_t me) noexcept;

  std::atomic<uint64_t> owner_{0};   // 0: none yet; kRevoked: none ever again
  std::atomic<uint32_t> in_{0};      // the owner holds the lock through its bias
  std::atomic<bool> revoking_{false};
  SpinLock slow_;                    // everyone else, and everyone once revoked
};

}  // namespace cuda_shim

// std::lock_guard over a BiasedLock, inlined wherever it is used: GCC at -O2 kept the
// generic guard's constructor and destructor out of line (a call each around every pool
// and stream operation). Specializing a standard template for a program-defined type is
// allowed; the members are the standard ones.
template <>
class std::lock_guard<cuda_shim::BiasedLock> {
 public:
  using mutex_type = cuda_shim::BiasedLock;
  [[gnu::always_inline]] explicit lock_guard(mutex_type& m) : m_(m) { m_.lock(); }
  [[gnu::always_inline]] lock_guard(mutex_type& m, std::adopt_lock_t) noexcept : m_(m) {}
  [[gnu::always_inline]] ~lock_guard() { m_.unlock(); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  mutex_type& m_;
};
