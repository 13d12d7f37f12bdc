#include "core/usage.hpp"
#include "core/events.hpp"
#include "core/limits.hpp"

#include <atomic>
#include <mutex>

namespace cuda_shim::usage {
namespace {
std::mutex g_mu;  // keeps contexts_live's calls in the order of the counts they carry
int g_live[kMaxDevices] = {};
}  // namespace

void context_live(int ordinal, int delta, const char* api) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return;
  std::lock_guard lk(g_mu);
  int n = g_live[ordinal] += delta;
  if (n < 0) n = g_live[ordinal] = 0;
  ev::contexts_live.emit(ordinal, n, api);
}

int live_contexts(int ordinal) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return 0;
  std::lock_guard lk(g_mu);
  return g_live[ordinal];
}

bool device_used(int ordinal, uint64_t& used) noexcept {
  return ev::device_used.get()(ordinal, used);
}

}  // namespace cuda_shim::usage
