#include "vmm/vmm_args.hpp"

#include "core/driver.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::vmm {
namespace {
int ndev() { return Driver::get().device_count(); }
}  // namespace

Errc check_create_location(const CUmemLocation& l, const char* api, int& id) {
  const int t = static_cast<int>(l.type);
  id = l.id;
  switch (t) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (l.id < 0 || l.id >= ndev())  // measured: INVALID_DEVICE
        return fail(Errc::invalid_device, "{}: prop->location.id {} is not a device ordinal (this emulator has {} "
                    "device{})", api, l.id, ndev(), ndev() == 1 ? "" : "s");
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST: id = 0; return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (!Driver::get().host_numa_node(l.id))  // measured
        return fail(Errc::invalid_value, "{}: prop->location.id {} is not a NUMA node of this host (CU_DEVICE_"
                    "ATTRIBUTE_HOST_NUMA_ID names the node next to each device)", api, l.id);
      return Errc::success;
    default:  // measured for NONE and HOST_NUMA_CURRENT
      return fail(Errc::invalid_value, "{}: prop->location.type {} ({}) cannot hold a cuMemCreate allocation (use "
                  "DEVICE, HOST or HOST_NUMA with a fixed id)", api, t, mem::location_name(t));
  }
}

Errc check_access_desc(const CUmemAccessDesc& d, size_t i, bool any_device_located, const char* api) {
  const unsigned f = static_cast<unsigned>(d.flags);
  if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    return fail(Errc::invalid_value, "{}: desc[{}].flags = {:#x} is not a CUmemAccess_flags (NONE 0, READ 1, "
                "READWRITE 3)", api, i, f);
  const int t = static_cast<int>(d.location.type);
  switch (t) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (d.location.id < 0 || d.location.id >= ndev())  // measured: INVALID_VALUE here
        return fail(Errc::invalid_value, "{}: desc[{}].location.id {} is not a device ordinal", api, i, d.location.id);
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (any_device_located)  // measured
        return fail(Errc::not_supported, "{}: desc[{}] gives the host ({}) access to device memory; only host-located "
                    "allocations can be reached by the host", api, i, mem::location_name(t));
      return Errc::success;
    default:  // measured for NONE and HOST_NUMA_CURRENT
      return fail(Errc::invalid_value, "{}: desc[{}].location.type {} ({}) cannot be given access (use DEVICE, HOST or "
                  "HOST_NUMA)", api, i, t, mem::location_name(t));
  }
}

}  // namespace cuda_shim::vmm
