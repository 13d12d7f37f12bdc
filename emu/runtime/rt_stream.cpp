// Runtime entries: streams, host functions, events. cudaStream_t / cudaEvent_t are the
// driver's CUstream / CUevent; 0 is the default stream (legacy, or per-thread for the
// _ptsz entries), cudaStreamLegacy (0x1) and cudaStreamPerThread (0x2) are the driver's
// CU_STREAM_LEGACY / CU_STREAM_PER_THREAD. Every entry initializes the runtime's
// context first (the first runtime call in a thread may be any of these).
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {
// cudaStreamCallback_t and CUstreamCallback, cudaHostFn_t and CUhostFn: same ABI.
CUstreamCallback cu_cb(cudaStreamCallback_t cb) { return reinterpret_cast<CUstreamCallback>(cb); }
}  // namespace

Errc cudaStreamCreate(cudaStream_t* pStream) noexcept {
  RT_TRY(rt::context("cudaStreamCreate"));
  return api::cuStreamCreate(pStream, 0);
}
Errc cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamCreateWithFlags"));
  return api::cuStreamCreate(pStream, flags);
}
Errc cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) noexcept {
  RT_TRY(rt::context("cudaStreamCreateWithPriority"));
  return api::cuStreamCreateWithPriority(pStream, flags, priority);
}
Errc cudaStreamDestroy(cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaStreamDestroy"));
  return api::cuStreamDestroy_v2(stream);
}

Errc cudaStreamQuery(cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaStreamQuery"));
  return api::cuStreamQuery(s);
}
Errc cudaStreamQuery_ptsz(cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaStreamQuery"));
  return api::cuStreamQuery_ptsz(s);
}
Errc cudaStreamSynchronize(cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaStreamSynchronize"));
  return api::cuStreamSynchronize(s);
}
Errc cudaStreamSynchronize_ptsz(cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaStreamSynchronize"));
  return api::cuStreamSynchronize_ptsz(s);
}
Errc cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamWaitEvent"));
  return api::cuStreamWaitEvent(s, e, flags);
}
Errc cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamWaitEvent"));
  return api::cuStreamWaitEvent_ptsz(s, e, flags);
}

Errc cudaStreamGetPriority(cudaStream_t s, int* priority) noexcept {
  RT_TRY(rt::context("cudaStreamGetPriority"));
  return api::cuStreamGetPriority(s, priority);
}
Errc cudaStreamGetPriority_ptsz(cudaStream_t s, int* priority) noexcept {
  RT_TRY(rt::context("cudaStreamGetPriority"));
  return api::cuStreamGetPriority_ptsz(s, priority);
}
Errc cudaStreamGetFlags(cudaStream_t s, unsigned int* flags) noexcept {
  RT_TRY(rt::context("cudaStreamGetFlags"));
  return api::cuStreamGetFlags(s, flags);
}
Errc cudaStreamGetFlags_ptsz(cudaStream_t s, unsigned int* flags) noexcept {
  RT_TRY(rt::context("cudaStreamGetFlags"));
  return api::cuStreamGetFlags_ptsz(s, flags);
}
// cudaStreamCaptureStatus has the driver's values.
Errc cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* st) noexcept {
  RT_TRY(rt::context("cudaStreamIsCapturing"));
  return api::cuStreamIsCapturing(s, reinterpret_cast<CUstreamCaptureStatus*>(st));
}
Errc cudaStreamIsCapturing_ptsz(cudaStream_t s, cudaStreamCaptureStatus* st) noexcept {
  RT_TRY(rt::context("cudaStreamIsCapturing"));
  return api::cuStreamIsCapturing_ptsz(s, reinterpret_cast<CUstreamCaptureStatus*>(st));
}
Errc cudaStreamGetId(cudaStream_t s, unsigned long long* id) noexcept {
  RT_TRY(rt::context("cudaStreamGetId"));
  return api::cuStreamGetId(s, id);
}
Errc cudaStreamGetId_ptsz(cudaStream_t s, unsigned long long* id) noexcept {
  RT_TRY(rt::context("cudaStreamGetId"));
  return api::cuStreamGetId_ptsz(s, id);
}
Errc cudaStreamGetDevice(cudaStream_t s, int* device) noexcept {
  RT_TRY(rt::context("cudaStreamGetDevice"));
  return api::cuStreamGetDevice(s, device);
}
Errc cudaStreamGetDevice_ptsz(cudaStream_t s, int* device) noexcept {
  RT_TRY(rt::context("cudaStreamGetDevice"));
  return api::cuStreamGetDevice_ptsz(s, device);
}

Errc cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* userData, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamAddCallback"));
  return api::cuStreamAddCallback(s, cu_cb(cb), userData, flags);
}
Errc cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void* userData, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaStreamAddCallback"));
  return api::cuStreamAddCallback_ptsz(s, cu_cb(cb), userData, flags);
}
Errc cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* userData) noexcept {
  RT_TRY(rt::context("cudaLaunchHostFunc"));
  return api::cuLaunchHostFunc(s, fn, userData);
}
Errc cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void* userData) noexcept {
  RT_TRY(rt::context("cudaLaunchHostFunc"));
  return api::cuLaunchHostFunc_ptsz(s, fn, userData);
}

// ---- events ---------------------------------------------------------------------------
Errc cudaEventCreate(cudaEvent_t* event) noexcept {
  RT_TRY(rt::context("cudaEventCreate"));
  return api::cuEventCreate(event, cudaEventDefault);
}
Errc cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaEventCreateWithFlags"));
  return api::cuEventCreate(event, flags);  // cudaEvent* flags are CU_EVENT_* flags
}
Errc cudaEventDestroy(cudaEvent_t event) noexcept {
  RT_TRY(rt::context("cudaEventDestroy"));
  return api::cuEventDestroy_v2(event);
}
Errc cudaEventRecord(cudaEvent_t event, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaEventRecord"));
  return api::cuEventRecord(event, s);
}
Errc cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaEventRecord"));
  return api::cuEventRecord_ptsz(event, s);
}
Errc cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t s, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaEventRecordWithFlags"));
  return api::cuEventRecordWithFlags(event, s, flags);
}
Errc cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t s, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaEventRecordWithFlags"));
  return api::cuEventRecordWithFlags_ptsz(event, s, flags);
}
Errc cudaEventQuery(cudaEvent_t event) noexcept {
  RT_TRY(rt::context("cudaEventQuery"));
  return api::cuEventQuery(event);
}
Errc cudaEventSynchronize(cudaEvent_t event) noexcept {
  RT_TRY(rt::context("cudaEventSynchronize"));
  return api::cuEventSynchronize(event);
}
Errc cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) noexcept {
  RT_TRY(rt::context("cudaEventElapsedTime"));
  return api::cuEventElapsedTime_v2(ms, start, end);
}

}  // namespace cuda_shim::rtapi
