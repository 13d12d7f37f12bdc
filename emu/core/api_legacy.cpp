// Older driver entry points: same behaviour as their current versions. Calls are
// qualified: argument-dependent lookup would also find the extern "C" entries.
#include "abi/driver_api.hpp"

namespace cuda_shim::api {

Errc cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) noexcept {
  return api::cuCtxCreate_v4(pctx, nullptr, flags, dev);
}
Errc cuCtxDestroy(CUcontext ctx) noexcept { return api::cuCtxDestroy_v2(ctx); }
Errc cuCtxPushCurrent(CUcontext ctx) noexcept { return api::cuCtxPushCurrent_v2(ctx); }
Errc cuCtxPopCurrent(CUcontext* pctx) noexcept { return api::cuCtxPopCurrent_v2(pctx); }
Errc cuDevicePrimaryCtxRelease(CUdevice dev) noexcept { return api::cuDevicePrimaryCtxRelease_v2(dev); }
Errc cuDevicePrimaryCtxReset(CUdevice dev) noexcept { return api::cuDevicePrimaryCtxReset_v2(dev); }
Errc cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) noexcept {
  return api::cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
Errc cuStreamDestroy(CUstream s) noexcept { return api::cuStreamDestroy_v2(s); }
Errc cuEventDestroy(CUevent e) noexcept { return api::cuEventDestroy_v2(e); }
Errc cuEventElapsedTime(float* ms, CUevent a, CUevent b) noexcept { return api::cuEventElapsedTime_v2(ms, a, b); }

}  // namespace cuda_shim::api
