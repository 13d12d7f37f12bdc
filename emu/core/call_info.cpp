#include "core/call_info.hpp"

#include <atomic>

namespace cuda_shim {
namespace {
std::atomic<std::uint64_t> g_next_id{1};
thread_local CallInfo t_call;
}  // namespace

CallInfo current_call() noexcept { return t_call; }

namespace detail {
CallInfo enter_call(const char* api) noexcept {
  CallInfo prev = t_call;
  if (!prev.api) t_call = CallInfo{api, g_next_id.fetch_add(1, std::memory_order_relaxed)};
  return prev;
}
void leave_call(CallInfo previous) noexcept { t_call = previous; }
}  // namespace detail

}  // namespace cuda_shim
