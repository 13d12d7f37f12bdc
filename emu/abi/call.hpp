// The one door between the C ABI and the emulator. Every extern "C" entry is
// `noexcept` and runs its body through driver_call / runtime_call, which
//  - forgets the previous call's "why" flag (the text stays for cuShimGetLastExplanation),
//  - turns an escaping exception into CUDA_ERROR_UNKNOWN instead of crashing the host,
//  - translates Errc once (core/errc.def),
//  - records a generic reason if the body failed without one, traces, and prints the
//    reason when CUDA_SHIM_EXPLAIN=1.
//
// With trace, strict mode and fault injection off, a successful call costs the body plus one
// store (the "why" flag) and one predictable branch (g_hooks); bench_stream's
// BM_Emu_CallOverhead measures it. The entries' bodies also decode their arguments for the trace
// when called with an ArgSink (abi/trace_args.hpp): the same object, so the decoding costs the
// call nothing until the hooked path asks for it. An injected fault (abi/faults.hpp) fails the
// call before its body runs, so the call changes nothing, as one refused by validation.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

#include "abi/faults.hpp"
#include "core/errc.hpp"

namespace cuda_shim::abi {

// Out-of-line so the hot path stays small: reporting happens only on failure or trace.
// `runtime`: name the error as the runtime does (cudaError_t) rather than as the driver.
// `injected`: the failure came from a fault rule (the trace says so).
void report(const char* api, Errc e, bool runtime, bool injected = false) noexcept;
bool tracing() noexcept;

// Decodes a call's arguments into the trace (abi/trace_args.hpp).
class ArgSink;
using ArgFormatter = void (*)(const void* formatter, ArgSink& sink);

// The one branch a call pays for every observing feature (fault injection, trace, strict mode):
// true until the settings have been read, then only while one of them is on. Relaxed: a stale
// true only takes the hooked path, which does the same work plus the bookkeeping.
extern std::atomic<bool> g_hooks;
// Recomputes g_hooks after a feature is switched (cuShimSetFaults, the settings read once).
void refresh_hooks() noexcept;
// The hooked path (abi/driver_call_hooks.cpp): numbers the call (core/call_info.hpp), injects
// faults, runs the body through `run(body)`, traces (decoding the arguments through `fmt`, when
// given) and reports.
int call_hooked(const char* api, Errc (*run)(void*), void* body, bool runtime, ArgFormatter fmt = nullptr,
                const char* params = nullptr) noexcept;

// `params`: the entry's parameter list as written ("(CUdeviceptr* dptr, size_t bytesize)") when
// `body(sink)` decodes the arguments into an ArgSink; null when it does not.
template <class F>
inline int call(const char* api, F&& body, bool runtime = false, const char* params = nullptr) noexcept {
  using Body = std::remove_cvref_t<F>;
  if (g_hooks.load(std::memory_order_relaxed)) [[unlikely]] {
    ArgFormatter af = nullptr;
    if constexpr (std::is_invocable_v<Body&, ArgSink&>)
      af = [](const void* b, ArgSink& s) { (*static_cast<Body*>(const_cast<void*>(b)))(s); };
    return call_hooked(
        api, [](void* b) -> Errc { return (*static_cast<Body*>(b))(); },
        const_cast<Body*>(std::addressof(body)), runtime, af, params);
  }
  clear_explanation();
  Errc e;
  try {
    e = body();
  } catch (const std::bad_alloc&) {
    e = fail(Errc::out_of_memory, "{}: the emulator ran out of host memory", api);
  } catch (...) {
    e = fail(Errc::unknown, "{}: internal emulator error (exception)", api);
  }
  if (e != Errc::success) [[unlikely]]
    report(api, e, runtime);
  return static_cast<int>(e);
}

// Driver entries: CUresult.
template <class F>
inline int driver_call(const char* api, F&& body, const char* params = nullptr) noexcept {
  int e = call(api, static_cast<F&&>(body), false, params);
  return e == 0 ? 0 : to_curesult(static_cast<Errc>(e));
}

// Unsupported driver symbols (weak stubs in driver_stubs.cpp): CUDA_ERROR_NOT_SUPPORTED.
int driver_not_supported(const char* api) noexcept;

}  // namespace cuda_shim::abi
