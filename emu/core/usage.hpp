// Who uses which device, across processes: what cuMemGetInfo's free memory and NVML's process
// list are made of. A real GPU sees every process's contexts and allocations; here each process
// keeps its own, and the IPC layer (which holds the per-user shared registry) publishes them and
// sums everyone's. Core only counts this process's live contexts per device and calls the hooks
// the IPC layer installs; without hooks a process sees itself alone.
#pragma once
#include <cstdint>

namespace cuda_shim::usage {

struct Hooks {
  // The number of this process's live contexts on `ordinal` changed to `live`. Called under a
  // core lock, in order, so the last call carries the current count. `api` names the caller.
  void (*contexts)(int ordinal, int live, const char* api) noexcept;
  // Device memory in use on `ordinal` by every live process (each rounded as the driver
  // charges); false when unknown (then the caller counts this process alone).
  bool (*device_used)(int ordinal, uint64_t& used) noexcept;
};

// Set once by the IPC layer (a static initializer of libcuda.so.1).
void install(const Hooks* h) noexcept;

// A context of this process on `ordinal` became live (+1) or went away (-1): cuCtxCreate,
// cuCtxDestroy, primary retain to 1 / release to 0 / reset.
void context_live(int ordinal, int delta, const char* api) noexcept;
int live_contexts(int ordinal) noexcept;

// Every process's device memory on `ordinal`; false when only this process can be counted.
bool device_used(int ordinal, uint64_t& used) noexcept;

}  // namespace cuda_shim::usage
