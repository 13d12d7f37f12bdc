// Reporting for the abi layer: CUDA_SHIM_EXPLAIN prints why a call failed,
// CUDA_SHIM_TRACE prints every call.
#include <cstdio>

#include <fmt/format.h>

#include "abi/call.hpp"
#include "abi/runtime_api.hpp"
#include "core/config.hpp"

namespace cuda_shim::abi {

bool tracing() noexcept {
  static const bool on = Config::get().trace;  // settings are read once
  return on;
}

void trace_ok(const char* api) noexcept { fmt::print(stderr, "cuda-shim: {} -> success\n", api); }

const char* cu_error_name(int code) noexcept;  // api_core.cpp

void report(const char* api, Errc e, bool runtime, bool injected) noexcept {
  try {
    if (!explanation_set())
      set_explanation(e, fmt::format("{}: failed (no specific rule recorded)", api));
    const Config& c = Config::get();
    // NOT_READY is a normal answer of a query, not an error worth explaining.
    if ((c.explain && e != Errc::not_ready) || c.trace)
      fmt::print(stderr, "cuda-shim: {} -> {}{}: {}\n", api,
                 runtime ? rtapi::error_name(to_cuda_error(e)) : cu_error_name(to_curesult(e)),
                 injected ? " [injected]" : "", explanation());
  } catch (...) {
  }
}

}  // namespace cuda_shim::abi
