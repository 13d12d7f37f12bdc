// The runtime's own state on top of the driver: the thread's selected device and the
// implicit initialization rule (the first call that needs a context initializes the
// driver and makes the device's primary context current, unless a driver-API context
// is already current, which the runtime then uses, as NVIDIA's runtime does).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <memory>

#include "core/context.hpp"
#include "core/errc.hpp"

namespace cuda_shim::rt {

#define RT_TRY(expr)                                      \
  do {                                                    \
    if (Errc e_ = (expr); e_ != Errc::success) return e_; \
  } while (0)

// cuInit(0) once per process (cheap afterwards).
Errc init();
// The context this thread's runtime work goes to; initializes lazily. `out` may be null.
Errc context_slow(const char* api, std::shared_ptr<Context>* out);
inline Errc context(const char* api, std::shared_ptr<Context>* out = nullptr) {
  // The thread's validated current context is live and active: nothing to initialize (a
  // validated context also means cuInit has run).
  if (!out) {
    const ThreadState& t = ts();
    if (ctx_cache_hit(t) && t.ctx_ok) [[likely]]
      return Errc::success;
  }
  return context_slow(api, out);
}
// The device the thread's runtime calls address: the current context's device when one
// is current, else the device chosen with cudaSetDevice (default 0). Needs cuInit.
int current_device();
// Retains (once per process, again after a reset) device `dev`'s primary context on
// behalf of the runtime and returns its handle. Does not make it current.
Errc primary(int dev, CUcontext& out, const char* api);
// Selects `dev` for this thread and makes its primary context current (cudaSetDevice).
Errc select_device(int dev, const char* api);
// The runtime no longer holds device `dev`'s primary context (after cudaDeviceReset).
void forget_primary(int dev);

using ::cuda_shim::need;

// A copy's kind must be one of cudaMemcpyKind's values.
inline Errc check_kind(cudaMemcpyKind kind, const char* api) {
  const int k = static_cast<int>(kind);
  if (k < cudaMemcpyHostToHost || k > cudaMemcpyDefault)
    return fail(Errc::rt_invalid_memcpy_direction, "{}: {} is not a cudaMemcpyKind (0..4)", api, k);
  return Errc::success;
}
// A copy into device memory the runtime names (a symbol, an array: to_device) takes HostToDevice,
// DeviceToDevice or Default; one out of it DeviceToHost, DeviceToDevice or Default (measured).
inline Errc check_direction(cudaMemcpyKind kind, bool to_device, const char* api, const char* what) {
  const cudaMemcpyKind host_side = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return fail(Errc::rt_invalid_memcpy_direction, "{}: kind {} cannot copy {} {} ({}, DeviceToDevice or Default)", api,
                static_cast<int>(kind), to_device ? "to" : "from", what,
                to_device ? "HostToDevice" : "DeviceToHost");
  return Errc::success;
}

}  // namespace cuda_shim::rt
