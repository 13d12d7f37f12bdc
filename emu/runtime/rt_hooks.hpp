// What the runtime takes from the room above it (abi), registered there when the library loads.
// Free of <cuda.h>: abi/driver_procaddr.cpp, which names every exported symbol, includes it.
#pragma once
#include "core/errc.hpp"

namespace cuda_shim::rt {

// cuGetProcAddress's lookup (abi/driver_procaddr.cpp), for cudaGetDriverEntryPoint: the table
// lives with the exports.
using ProcLookup = Errc (*)(const char* symbol, void** pfn, int cudaVersion, unsigned long long flags,
                            int* symbolStatus, int driverVersion);
void set_proc_lookup(ProcLookup f) noexcept;

}  // namespace cuda_shim::rt
