// The one door between the C ABI and the emulator. Every extern "C" entry is
// `noexcept` and runs its body through driver_call / runtime_call, which
//  - forgets the previous call's "why" flag (the text stays for cuShimGetLastExplanation),
//  - turns an escaping exception into CUDA_ERROR_UNKNOWN instead of crashing the host,
//  - translates Errc once (core/errc.def),
//  - records a generic reason if the body failed without one, traces, and prints the
//    reason when CUDA_SHIM_EXPLAIN=1.
//
// With trace, explain and fault injection off, a successful call costs the body plus one store
// (the "why" flag) and two predictable branches (the fault and trace flags); bench_stream's
// BM_Emu_CallOverhead measures it. An injected fault (abi/faults.hpp) fails the call before its
// body runs, so the call changes nothing, as one refused by validation.
#pragma once
#include <atomic>
#include <new>

#include "abi/faults.hpp"
#include "core/errc.hpp"

namespace cuda_shim::abi {

// Out-of-line so the hot path stays small: reporting happens only on failure or trace.
// `runtime`: name the error as the runtime does (cudaError_t) rather than as the driver.
// `injected`: the failure came from a fault rule (the trace says so).
void report(const char* api, Errc e, bool runtime, bool injected = false) noexcept;
bool tracing() noexcept;
void trace_ok(const char* api) noexcept;
// Set until the settings have been read, then only when CUDA_SHIM_TRACE is on: the one
// branch a successful call pays for tracing. Relaxed: a stale true only takes the slow path.
extern std::atomic<bool> g_trace_check;
// Reads the settings once (clearing g_trace_check when tracing is off), prints when on.
void trace_ok_slow(const char* api) noexcept;

template <class F>
inline int call(const char* api, F&& body, bool runtime = false) noexcept {
  clear_explanation();
  Errc e;
  if (g_fault_check.load(std::memory_order_relaxed)) [[unlikely]] {
    e = inject_slow(api, runtime);
    if (e != Errc::success) {
      report(api, e, runtime, /*injected=*/true);
      return static_cast<int>(e);
    }
  }
  try {
    e = body();
  } catch (const std::bad_alloc&) {
    e = fail(Errc::out_of_memory, "{}: the emulator ran out of host memory", api);
  } catch (...) {
    e = fail(Errc::unknown, "{}: internal emulator error (exception)", api);
  }
  if (e != Errc::success) [[unlikely]]
    report(api, e, runtime);
  else if (g_trace_check.load(std::memory_order_relaxed)) [[unlikely]]
    trace_ok_slow(api);
  return static_cast<int>(e);
}

// Driver entries: CUresult.
template <class F>
inline int driver_call(const char* api, F&& body) noexcept {
  int e = call(api, static_cast<F&&>(body));
  return e == 0 ? 0 : to_curesult(static_cast<Errc>(e));
}

// Unsupported driver symbols (weak stubs in driver_stubs.cpp): CUDA_ERROR_NOT_SUPPORTED.
int driver_not_supported(const char* api) noexcept;

}  // namespace cuda_shim::abi
