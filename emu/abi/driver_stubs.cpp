// Weak default stubs for the whole exported driver surface (driver_symbols.def): a symbol a
// client can dlsym or link against must exist even where the emulator has no implementation,
// and must answer CUDA_ERROR_NOT_SUPPORTED rather than crash. Implemented entries in other
// driver_*.cpp objects define strong symbols that replace these at link time (every object is
// linked directly, no archives, so the strong definition always wins).
//
// Deliberately free of <cuda.h>: these stubs have no real signature (`int f()`; callers'
// arguments are ignored, the int lands in eax as a CUresult would), which would clash with
// the header's declarations.
#include "abi/call.hpp"

namespace cuda_shim::abi {

int driver_not_supported(const char* api) noexcept {
  // CUDA_ERROR_NOT_SUPPORTED (801), explained and traced like any other refusal.
  return driver_call(api, [&] { return fail(Errc::not_supported, "{}: not implemented by cuda-shim yet", api); });
}

}  // namespace cuda_shim::abi

#define CU_SYM(name)                                                              \
  extern "C" __attribute__((weak, visibility("default"))) int name() noexcept { \
    return cuda_shim::abi::driver_not_supported(#name);                          \
  }
#include "abi/driver_symbols.def"
#undef CU_SYM
