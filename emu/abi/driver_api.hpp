// Declarations of the driver entries' implementations: for every
// CU_ENTRY(name, (params), (args)) in entries_*.def there is
//   Errc cuda_shim::api::name(params) noexcept
// defined in emu/<module>. The runtime layer calls these directly, without the C ABI.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include "core/errc.hpp"

namespace cuda_shim::api {
#define CU_ENTRY(name, params, args) Errc name params noexcept;
#include "abi/driver_entries.def"
#undef CU_ENTRY
}  // namespace cuda_shim::api
