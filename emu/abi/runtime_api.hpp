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
// The registration ABI's entries that return something else (they cannot fail loudly: the
// generated code ignores their results, so failures surface at the first use of a symbol).
#define RT_HOST(ret, name, params, args) ret name params noexcept;
#include "abi/runtime_hosting.def"
#undef RT_HOST

// Per-thread last error, as the runtime keeps it.
void set_last_error(Errc e) noexcept;
Errc get_last_error(bool reset) noexcept;
const char* error_name(int code) noexcept;
const char* error_string(int code) noexcept;
}  // namespace cuda_shim::rtapi
