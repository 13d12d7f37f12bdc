#include "core/usage.hpp"
#include "core/limits.hpp"

#include <atomic>
#include <mutex>

namespace cuda_shim::usage {
namespace {
std::atomic<const Hooks*> g_hooks{nullptr};
std::mutex g_mu;  // keeps the hook's calls in the order of the counts they carry
int g_live[kMaxDevices] = {};
}  // namespace

void install(const Hooks* h) noexcept { g_hooks.store(h, std::memory_order_release); }

void context_live(int ordinal, int delta, const char* api) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return;
  std::lock_guard lk(g_mu);
  int n = g_live[ordinal] += delta;
  if (n < 0) n = g_live[ordinal] = 0;
  if (const Hooks* h = g_hooks.load(std::memory_order_acquire); h && h->contexts) h->contexts(ordinal, n, api);
}

int live_contexts(int ordinal) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return 0;
  std::lock_guard lk(g_mu);
  return g_live[ordinal];
}

bool device_used(int ordinal, uint64_t& used) noexcept {
  const Hooks* h = g_hooks.load(std::memory_order_acquire);
  return h && h->device_used && h->device_used(ordinal, used);
}

}  // namespace cuda_shim::usage
