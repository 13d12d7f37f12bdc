// Who uses which device, across processes: what cuMemGetInfo's free memory and NVML's process
// list are made of. A real GPU sees every process's contexts and allocations; here each process
// keeps its own, and the IPC layer (which holds the per-user shared registry) publishes them and
// sums everyone's. Core only counts this process's live contexts per device, emits
// ev::contexts_live with each count and asks ev::device_used (core/events.hpp), which the IPC
// layer listens to and answers; without it a process sees itself alone.
#pragma once
#include <cstdint>

namespace cuda_shim::usage {

// A context of this process on `ordinal` became live (+1) or went away (-1): cuCtxCreate,
// cuCtxDestroy, primary retain to 1 / release to 0 / reset.
void context_live(int ordinal, int delta, const char* api) noexcept;
int live_contexts(int ordinal) noexcept;

// Every process's device memory on `ordinal`; false when only this process can be counted.
bool device_used(int ordinal, uint64_t& used) noexcept;

}  // namespace cuda_shim::usage
