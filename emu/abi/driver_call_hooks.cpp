// The door's hooked path (abi/call.hpp): taken only while fault injection, trace or strict mode
// is on, or before the settings have been read. Everything an observing feature needs from a
// call happens here, so that with all of them off a call pays one predictable branch.
#include <mutex>

#include "abi/call.hpp"
#include "abi/trace_writer.hpp"
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

int call_hooked(const char* api, Errc (*run)(void*), void* body, bool runtime, ArgFormatter fmt,
                const char* params) noexcept {
  static std::once_flag settings;
  std::call_once(settings, [] {
    (void)inject_slow(nullptr, false);  // loads the fault rules (a null name matches none)
    trace::setup();                     // the stream-operation hooks of a JSON trace
    refresh_hooks();
  });
  const bool numbered = observing();
  CallInfo outer{};
  if (numbered) outer = detail::enter_call(api);
  // Only the outermost call is the user's: a nested door call is the emulator calling itself.
  const bool traced = numbered && !outer.api && tracing();
  const int64_t t0 = traced ? trace::begin_call() : 0;
  clear_explanation();
  Errc e = Errc::success;
  bool injected = false;
  if (g_fault_check.load(std::memory_order_relaxed)) {
    e = inject_slow(api, runtime);
    injected = e != Errc::success;
  }
  if (!injected) {
    try {
      e = run(body);
    } catch (const std::bad_alloc&) {
      e = fail(Errc::out_of_memory, "{}: the emulator ran out of host memory", api);
    } catch (...) {
      e = fail(Errc::unknown, "{}: internal emulator error (exception)", api);
    }
  }
  if (e != Errc::success) report(api, e, runtime, injected);
  // Written before leaving the call, so the event carries this call's id; the arguments are
  // decoded now that out-parameters hold what the call stored.
  if (traced) trace::end_call({api, current_call().id, runtime, e, injected, t0, fmt, body, params});
  if (numbered) detail::leave_call(outer);
  return static_cast<int>(e);
}

}  // namespace cuda_shim::abi
