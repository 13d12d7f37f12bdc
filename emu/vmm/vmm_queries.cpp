// The vmm room's side of mem::VmmQueries (memory/address_space.hpp), registered when the library
// loads: what copies, fills and pointer queries in memory/ need to know about a mapping.
#include "memory/address_space.hpp"
#include "vmm/vmm.hpp"

namespace cuda_shim::vmm {
namespace {

constexpr mem::VmmQueries kQueries{
    .info =
        [](const Mapping& m) {
          const CUmemAllocationProp& p = m.alloc->prop;
          mem::MappingInfo i;
          i.host_located = m.alloc->host_located();
          i.host_access = m.host_access.load(std::memory_order_acquire) != 0;
          i.res_base = m.res_base;
          i.res_size = m.res_size;
          i.base = m.base;
          i.size = m.size;
          i.handle_types = static_cast<unsigned>(p.requestedHandleTypes);
          i.rdma = p.allocFlags.gpuDirectRDMACapable != 0;
          i.hw_decompress = (p.allocFlags.usage & CU_MEM_CREATE_USAGE_HW_DECOMPRESS) != 0;
          i.block_id = m.alloc->block_id;
          return i;
        },
    .device_access = [](const Mapping& m, int dev) { return m.device_access(dev); },
    .check_copy_access = check_copy_access,
    .reservation_at = reservation_at,
};

[[maybe_unused]] const ev::Registration kRegistered{mem::vmm_table, &kQueries};

}  // namespace
}  // namespace cuda_shim::vmm
