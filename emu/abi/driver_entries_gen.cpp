// The extern "C" driver entries: one wrapper per CU_ENTRY, all through driver_call.
// They cannot throw (driver_call is noexcept); they carry no noexcept themselves only
// because their declarations in cuda.h, as in NVIDIA's, have none.
// The second lambda decodes the arguments for the trace; the door calls it only while tracing.
#include "abi/call.hpp"
#include "abi/driver_api.hpp"
#include "abi/trace_args.hpp"

#define CU_ENTRY(name, params, args)                                                      \
  extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI name params {        \
    return static_cast<CUresult>(cuda_shim::abi::driver_call(                             \
        #name, [&] { return cuda_shim::api::name args; },                                 \
        [&](cuda_shim::abi::ArgSink& sink_) {                                             \
          sink_.begin(#params);                                                           \
          sink_.put args;                                                                 \
        }));                                                                              \
  }
#include "abi/driver_entries.def"
#undef CU_ENTRY
