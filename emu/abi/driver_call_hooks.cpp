// The door's hooked path (abi/call.hpp): taken only while fault injection, trace or strict mode
// is on, or before the settings have been read. Everything an observing feature needs from a
// call happens here, so that with all of them off a call pays one predictable branch.
#include <mutex>

#include "abi/call.hpp"
#include "core/call_info.hpp"
#include "core/config.hpp"

namespace cuda_shim::abi {

std::atomic<bool> g_hooks{true};

namespace {
// Trace or strict mode: features that need every call numbered (faults alone do not).
bool observing() noexcept {
  static const bool on = [] {
    const Config& c = Config::get();
    return c.trace || c.strict != 0;
  }();
  return on;
}
}  // namespace

void refresh_hooks() noexcept {
  g_hooks.store(observing() || g_fault_check.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

int call_hooked(const char* api, Errc (*run)(void*), void* body, bool runtime) noexcept {
  static std::once_flag settings;
  std::call_once(settings, [] {
    (void)inject_slow(nullptr, false);  // loads the fault rules (a null name matches none)
    refresh_hooks();
  });
  const bool numbered = observing();
  CallInfo outer{};
  if (numbered) outer = detail::enter_call(api);
  clear_explanation();
  Errc e = Errc::success;
  if (g_fault_check.load(std::memory_order_relaxed)) {
    e = inject_slow(api, runtime);
    if (e != Errc::success) {
      report(api, e, runtime, /*injected=*/true);
      if (numbered) detail::leave_call(outer);
      return static_cast<int>(e);
    }
  }
  try {
    e = run(body);
  } catch (const std::bad_alloc&) {
    e = fail(Errc::out_of_memory, "{}: the emulator ran out of host memory", api);
  } catch (...) {
    e = fail(Errc::unknown, "{}: internal emulator error (exception)", api);
  }
  if (e != Errc::success)
    report(api, e, runtime);
  else if (tracing())
    trace_ok(api);
  if (numbered) detail::leave_call(outer);
  return static_cast<int>(e);
}

}  // namespace cuda_shim::abi
