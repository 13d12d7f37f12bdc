// Runtime entries: legacy CUDA IPC. The runtime's handle types have the driver's layout;
// these forward after the runtime's implicit initialization.
#include <cstring>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle));
static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle));

Errc cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) noexcept {
  RT_TRY(rt::context("cudaIpcGetEventHandle"));
  return api::cuIpcGetEventHandle(reinterpret_cast<CUipcEventHandle*>(handle), event);
}
Errc cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) noexcept {
  RT_TRY(rt::context("cudaIpcOpenEventHandle"));
  CUipcEventHandle h;
  std::memcpy(&h, &handle, sizeof h);
  return api::cuIpcOpenEventHandle(reinterpret_cast<CUevent*>(event), h);
}
Errc cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) noexcept {
  RT_TRY(rt::context("cudaIpcGetMemHandle"));
  return api::cuIpcGetMemHandle(reinterpret_cast<CUipcMemHandle*>(handle), reinterpret_cast<CUdeviceptr>(devPtr));
}
Errc cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle, unsigned int flags) noexcept {
  const char* api = "cudaIpcOpenMemHandle";
  RT_TRY(rt::context(api));
  RT_TRY(need(devPtr, api, "devPtr"));
  CUipcMemHandle h;
  std::memcpy(&h, &handle, sizeof h);
  CUdeviceptr d = 0;
  Errc e = api::cuIpcOpenMemHandle_v2(&d, h, flags);
  if (e == Errc::success) *devPtr = reinterpret_cast<void*>(d);  // measured: untouched on failure
  return e;
}
Errc cudaIpcCloseMemHandle(void* devPtr) noexcept {
  RT_TRY(rt::context("cudaIpcCloseMemHandle"));
  return api::cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(devPtr));
}

}  // namespace cuda_shim::rtapi
