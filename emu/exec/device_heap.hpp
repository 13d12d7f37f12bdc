// Device-side malloc and free (device_heap.cpp): the in-kernel heap of a context.
#pragma once
#include <cstdint>

namespace cuda_shim {
class Context;
}

namespace cuda_shim::exec {

// A 16-byte aligned block of `bytes` in ctx's heap, or 0 when none is free (or bytes is 0).
uint64_t device_malloc(Context& ctx, uint64_t bytes);
// Returns a block device_malloc gave; 0 and addresses it did not give are ignored.
void device_free(Context& ctx, uint64_t p);

}  // namespace cuda_shim::exec
