// The occupancy calculator (occupancy.cpp): how many blocks of a kernel an SM holds at once.
#pragma once
#include <cstddef>
#include <cstdint>

#include "module/image.hpp"
#include "module/module.hpp"

namespace cuda_shim {
struct Device;
}

namespace cuda_shim::module {

// Blocks of `threads` threads with `dyn` bytes of dynamic shared memory one SM of d holds at once
// (0 when such a block cannot run at all).
int active_blocks(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn);
// Such blocks the whole device holds at once (active_blocks times the SMs): the largest grid a
// cooperative launch may have.
uint64_t resident_blocks(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn);
// Clusters of `cluster` such blocks the device holds at once (occupancy_clusters.cpp).
int active_clusters(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn,
                    unsigned cluster);

}  // namespace cuda_shim::module
