// The extern "C" driver entries: one wrapper per CU_ENTRY, all through driver_call.
// They cannot throw (driver_call is noexcept); they carry no noexcept themselves only
// because their declarations in cuda.h, as in NVIDIA's, have none.
// Called with an ArgSink, the body decodes the arguments for the trace instead (abi/call.hpp):
// one object for both, so that with the trace off the call pays nothing for it.
#include "abi/call.hpp"
#include "abi/driver_api.hpp"
#include "abi/trace_args.hpp"

#define CU_ENTRY(name, params, args)                                                      \
  extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI name params {        \
    return static_cast<CUresult>(cuda_shim::abi::driver_call(                             \
        #name,                                                                            \
        [&](auto&... sink_) {                                                             \
          if constexpr (sizeof...(sink_) == 0) return cuda_shim::api::name args;          \
          else (sink_.put args, ...);                                                     \
        },                                                                                \
        #params));                                                                        \
  }
#include "abi/driver_entries.def"
#undef CU_ENTRY
