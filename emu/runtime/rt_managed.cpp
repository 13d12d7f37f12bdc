// Runtime entries: managed memory and stream attachment (forwarders; the runtime's own rules
// are noted where they differ from the driver's).
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {

Errc cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) noexcept {
  const char* api = "cudaMallocManaged";
  RT_TRY(rt::context(api));
  RT_TRY(need(devPtr, api, "devPtr"));
  *devPtr = nullptr;
  // Measured: size 0 succeeds with NULL, before the flags are looked at (as cudaMalloc(0)).
  if (size == 0) return Errc::success;
  CUdeviceptr d = 0;
  RT_TRY(api::cuMemAllocManaged(&d, size, flags));
  *devPtr = reinterpret_cast<void*>(d);
  return Errc::success;
}

Errc cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamAttachMemAsync"));
  return api::cuStreamAttachMemAsync(stream, reinterpret_cast<CUdeviceptr>(devPtr), length, flags);
}
Errc cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamAttachMemAsync"));
  return api::cuStreamAttachMemAsync_ptsz(stream, reinterpret_cast<CUdeviceptr>(devPtr), length, flags);
}

}  // namespace cuda_shim::rtapi
