// cuMemCreate's and cuMemSetAccess's argument checks (rules measured on the H200 and the H100,
// as in api_vmm.cpp): pure validation of a location and of an access descriptor.
#pragma once
#include <cstddef>

#include <cuda.h>

#include "core/errc.hpp"

namespace cuda_shim::vmm {

// Validates a cuMemCreate location; `id` comes back normalized (0 for HOST).
Errc check_create_location(const CUmemLocation& l, const char* api, int& id);

// One cuMemSetAccess descriptor; `any_device_located`: the range holds device memory, which the
// host cannot be given access to.
Errc check_access_desc(const CUmemAccessDesc& d, size_t i, bool any_device_located, const char* api);

}  // namespace cuda_shim::vmm
