// What the NVML entry points share: the library's init state, device handles and the table
// through which libcuda.so.1 answers (nvml/nvml_table.hpp).
#pragma once
#include "nvml/nvml_table.hpp"
#include "nvml/nvml_api.h"

#define NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace cuda_shim::nvml {

// The table when nvmlInit has succeeded (and nvmlShutdown not yet undone it), else null.
const nvml_bridge::NvmlTable* table() noexcept;

// UNINITIALIZED before nvmlInit; INVALID_ARGUMENT for a NULL or foreign handle (NVML's code);
// else success with the device's ordinal and profile.
nvmlReturn_t device(nvmlDevice_t h, int& ordinal, nvml_bridge::DeviceInfo* info = nullptr) noexcept;

// Copies s (with its terminator) into out of `length` bytes: INSUFFICIENT_SIZE when it does
// not fit, as NVML answers short buffers.
nvmlReturn_t copy_string(const char* s, char* out, unsigned length) noexcept;

}  // namespace cuda_shim::nvml
