// Device usage across processes, read from the registry segment: every live process's contexts
// and device memory per device. Feeds cuMemGetInfo (through core/usage.hpp's hooks, installed
// here) and NVML's memory and process queries.
#pragma once
#include <cstdint>
#include <vector>

namespace cuda_shim::ipc {

struct ProcessUse {
  int pid = 0;
  uint64_t bytes = 0;  // device memory, rounded to the allocation granularity as a GPU charges it
};

// The live processes holding a context or memory on device `ordinal` (out may be null) and the
// memory they use together. Never makes this process take part: a process without a context of
// its own (NVML) only looks. False when no registry can be read; then only this process is known
// (it is listed if it has a context there).
bool device_users(int ordinal, std::vector<ProcessUse>* out, uint64_t& used);

}  // namespace cuda_shim::ipc
