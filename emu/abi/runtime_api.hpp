// Declarations of the runtime entries' implementations: for every
// RT_ENTRY(name, (params), (args)) in runtime_entries.def there is
//   Errc cuda_shim::rtapi::name(params) noexcept
// defined under emu/runtime/. They run inside libcuda.so.1.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "core/errc.hpp"

namespace cuda_shim::rtapi {
#define RT_ENTRY(name, params, args) Errc name params noexcept;
#include "abi/runtime_entries.def"
#undef RT_ENTRY

// Per-thread last error, as the runtime keeps it.
void set_last_error(Errc e) noexcept;
Errc get_last_error(bool reset) noexcept;
const char* error_name(int code) noexcept;
const char* error_string(int code) noexcept;
}  // namespace cuda_shim::rtapi
