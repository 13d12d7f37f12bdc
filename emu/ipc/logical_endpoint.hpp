// Logical endpoints (CUDA 13.3): what the emulator offers beyond the driver API, through
// cuda_shim_ext.h. The driver entries themselves are cuda_shim::api::cuLogicalEndpoint*.
#pragma once
#include <cstdint>
#include <string>

#include "core/errc.hpp"

namespace cuda_shim::ipc {

// A fabric access through id le_id, as a kernel's fabric put/get would make it: reads or
// writes [offset, offset + size) of the memory bound on device dev (-1: a unicast endpoint's
// owner; for a write to a multicast endpoint, every team device's replica), in whichever
// process bound it. INVALID_VALUE for an id not seen ready or a range not entirely bound.
Errc endpoint_access(uint32_t le_id, int dev, uint64_t offset, void* buf, uint64_t size, bool write,
                     const char* api);
// Every endpoint of the emulated fabric: ids per process, type, team, readiness, bindings.
std::string endpoint_state();

}  // namespace cuda_shim::ipc
