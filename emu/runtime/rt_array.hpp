// The runtime's channel formats as the driver's array formats (rt_array.cpp), shared with the
// external-memory entries that map mipmapped arrays.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace cuda_shim::rtapi {

// A channel format as the driver's (format, channel count); false when it has none.
bool to_driver_format(const cudaChannelFormatDesc& f, CUarray_format& fmt, unsigned& channels);
// The channel format an array of the driver's format reports (cudaArrayGetInfo).
cudaChannelFormatDesc from_driver_format(CUarray_format fmt, unsigned channels);

}  // namespace cuda_shim::rtapi
