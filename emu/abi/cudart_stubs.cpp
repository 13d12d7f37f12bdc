// Weak default stubs for every cudaError_t-returning runtime export (runtime_symbols.def,
// RT_SYM rows): cudaErrorNotSupported and the sticky-free "last error" set, instead of a
// missing symbol. Implemented entries in other cudart_*.cpp objects define strong symbols
// that replace these at link time. RT_SYM_SPECIAL rows (non-cudaError_t returns) get no
// stub here; they are written by hand.
//
// Deliberately free of NVIDIA-like headers: the stubs have no real signature (`int f()`).
namespace cuda_shim::rt_bridge {
int not_supported(const char* api) noexcept;  // cudaErrorNotSupported + sets the last error
}

#define RT_SYM(name)                                                              \
  extern "C" __attribute__((weak, visibility("default"))) int name() noexcept { \
    return cuda_shim::rt_bridge::not_supported(#name);                           \
  }
#define RT_SYM_SPECIAL(name)
#include "abi/runtime_symbols.def"
#undef RT_SYM
#undef RT_SYM_SPECIAL
