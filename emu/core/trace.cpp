// Reporting for the abi layer: CUDA_SHIM_EXPLAIN prints why a call failed,
// CUDA_SHIM_TRACE prints every call.
#include <cstdio>

#include <fmt/format.h>

#include "abi/call.hpp"
#include "core/config.hpp"

namespace cuda_shim::abi {

bool tracing() noexcept { return Config::get().trace; }

void trace_ok(const char* api) noexcept { fmt::print(stderr, "cuda-shim: {} -> success\n", api); }

void report(const char* api, Errc e) noexcept {
  try {
    if (!explanation_set())
      set_explanation(e, fmt::format("{}: failed (no specific rule recorded)", api));
    const Config& c = Config::get();
    // NOT_READY is a normal answer of a query, not an error worth explaining.
    if ((c.explain && e != Errc::not_ready) || c.trace)
      fmt::print(stderr, "cuda-shim: {} -> error {}: {}\n", api, to_curesult(e), explanation());
  } catch (...) {
  }
}

}  // namespace cuda_shim::abi
