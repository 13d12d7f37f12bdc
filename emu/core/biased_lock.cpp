#include "core/biased_lock.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace cuda_shim {

namespace biased_detail {

__thread uint64_t t_id __attribute__((tls_model("initial-exec"))) = 0;

uint64_t assign_id() noexcept {
  static std::atomic<uint64_t> next{0};
  t_id = next.fetch_add(1, std::memory_order_relaxed) + 1;
  return t_id;
}

namespace {
long membarrier(int cmd) noexcept { return ::syscall(SYS_membarrier, cmd, 0, 0); }

bool probe() noexcept {
#if defined(__SANITIZE_THREAD__)
  return false;
#else
  if (const char* e = std::getenv("CUDA_SHIM_BIASED_LOCKS"); e && *e == '0') return false;
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
}
}  // namespace

bool enabled() noexcept {
  static const bool on = probe();
  return on;
}

void heavy_fence() noexcept {
  // Registration belongs to the address space: a forked child must register again.
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  if (errno == EPERM && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
      membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
    return;
  // Biases are granted only where this worked at start; losing it later leaves no safe way
  // on, and a silent data race is worse than stopping.
  std::abort();
}

}  // namespace biased_detail

void BiasedLock::lock_slow(uint64_t me) noexcept {
  slow_.lock();
  const uint64_t o = owner_.load(std::memory_order_relaxed);
  if (o == kRevoked || o == me) return;  // (me: never; a revoker holds slow_ until kRevoked is stored)
  if (o == 0) {
    // The first locker takes the bias; this section already holds the fallback lock.
    owner_.store(biased_detail::enabled() ? me : kRevoked, std::memory_order_relaxed);
    return;
  }
  // Another thread holds the bias: revoke it, waiting for it to leave its section.
  revoking_.store(true, std::memory_order_relaxed);
  biased_detail::heavy_fence();
  for (unsigned spins = 0; in_.load(std::memory_order_acquire);)
    if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      spins = 0;
      ::sched_yield();
    }
  owner_.store(kRevoked, std::memory_order_release);
}

}  // namespace cuda_shim
