// Device memory for other rooms (module variables): cuMemAlloc's rules without its entry.
#pragma once
#include <cuda.h>

#include <memory>

#include "core/errc.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim {
class Context;
}

namespace cuda_shim::mem {

// bytes of ctx's device memory (charged, 512-byte granular, as cuMemAlloc). A module_owned
// range belongs to a loaded module: cuMemFree refuses it, and the module frees it with free_owned.
Errc alloc_device(const std::shared_ptr<Context>& ctx, size_t bytes, const char* api, CUdeviceptr& out,
                  bool module_owned = false);
// The range alone: charged to ctx's device (Range::accounted) and backed, not entered in the
// address space (the caller does, or keeps it to itself: a CUDA array's memory). Giving it back
// is the caller's: uncharge(ordinal, accounted).
Errc device_range(const std::shared_ptr<Context>& ctx, size_t bytes, const char* api, RangePtr& out);
// Frees a module_owned range (device or managed) allocated at base: uncharged and unmapped.
void free_owned(CUdeviceptr base) noexcept;

}  // namespace cuda_shim::mem
