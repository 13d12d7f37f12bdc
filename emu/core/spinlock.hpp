// A lock for critical sections of a few dozen instructions that are rarely contended
// (a pool's books): cheaper than a futex-based mutex when uncontended, and it yields
// the CPU rather than burning it when another thread holds it for long.
#pragma once
#include <atomic>
#include <thread>

namespace cuda_shim {

class SpinLock {
 public:
  void lock() noexcept {
    for (unsigned spins = 0; flag_.exchange(true, std::memory_order_acquire);) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept { return !flag_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace cuda_shim
