// What the runtime asks of the room above it (abi), which provides it when the library loads
// (an ev::Registration, core/events.hpp). Free of <cuda.h>: abi/driver_procaddr.cpp, which names
// every exported symbol, includes it.
#pragma once
#include "core/errc.hpp"
#include "core/events.hpp"

namespace cuda_shim::rt {

// cuGetProcAddress's lookup (abi/driver_procaddr.cpp), for cudaGetDriverEntryPoint: the table
// lives with the exports. Before it is provided: CUDA_ERROR_NOT_INITIALIZED, explained.
using ProcLookupFn = Errc(const char* symbol, void** pfn, int cudaVersion, unsigned long long flags,
                          int* symbolStatus, int driverVersion);
Errc no_proc_lookup(const char* symbol, void** pfn, int cudaVersion, unsigned long long flags, int* symbolStatus,
                    int driverVersion);
inline constinit ev::Query<ProcLookupFn> proc_lookup{&no_proc_lookup};

}  // namespace cuda_shim::rt
