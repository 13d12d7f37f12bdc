// Runtime entries: the batch copies, prefetches and discards (CUDA 13.0), forwarded to the driver's
// forms (memory/api_batch.cpp, api_advise.cpp), whose codes the runtime's mirror (measured on the
// H200: tests/probe/cases/batch.cases). The runtime's structures have the driver's layout
// (cudaArray_t is a CUarray). Measured: the _ptsz forms of the prefetches and discards take a
// NULL stream as the per-thread stream; those of the copies refuse it, as the plain forms do.
#include <cstddef>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

static_assert(sizeof(cudaMemcpyAttributes) == sizeof(CUmemcpyAttributes));
static_assert(offsetof(cudaMemcpyAttributes, flags) == offsetof(CUmemcpyAttributes, flags));
static_assert(sizeof(cudaMemcpy3DBatchOp) == sizeof(CUDA_MEMCPY3D_BATCH_OP));
static_assert(offsetof(cudaMemcpy3DBatchOp, dst) == offsetof(CUDA_MEMCPY3D_BATCH_OP, dst));
static_assert(offsetof(cudaMemcpy3DBatchOp, extent) == offsetof(CUDA_MEMCPY3D_BATCH_OP, extent));
static_assert(offsetof(cudaMemcpy3DBatchOp, srcAccessOrder) == offsetof(CUDA_MEMCPY3D_BATCH_OP, srcAccessOrder));
static_assert(offsetof(cudaMemcpy3DOperand, op.array.offset) == offsetof(CUmemcpy3DOperand, op.array.offset));
static_assert(offsetof(cudaMemcpy3DOperand, op.ptr.locHint) == offsetof(CUmemcpy3DOperand, op.ptr.locHint));
static_assert(sizeof(cudaMemLocation) == sizeof(CUmemLocation));

CUdeviceptr* dps(const void* const* p) { return reinterpret_cast<CUdeviceptr*>(const_cast<void**>(p)); }
CUmemLocation* locs(cudaMemLocation* l) { return reinterpret_cast<CUmemLocation*>(l); }
CUstream per_thread(cudaStream_t s) { return s ? s : CU_STREAM_PER_THREAD; }

Errc copy(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, cudaMemcpyAttributes* attrs,
          size_t* idx, size_t n, CUstream s) {
  RT_TRY(rt::context("cudaMemcpyBatchAsync"));
  return api::cuMemcpyBatchAsync_v2(dps(dsts), dps(srcs), const_cast<size_t*>(sizes), count,
                                    reinterpret_cast<CUmemcpyAttributes*>(attrs), idx, n, s);
}
Errc copy_3d(size_t n, cudaMemcpy3DBatchOp* ops, unsigned long long flags, CUstream s) {
  RT_TRY(rt::context("cudaMemcpy3DBatchAsync"));
  return api::cuMemcpy3DBatchAsync_v2(n, reinterpret_cast<CUDA_MEMCPY3D_BATCH_OP*>(ops), flags, s);
}
Errc prefetch(void** p, size_t* sizes, size_t count, cudaMemLocation* l, size_t* idx, size_t n,
              unsigned long long flags, CUstream s) {
  RT_TRY(rt::context("cudaMemPrefetchBatchAsync"));
  return api::cuMemPrefetchBatchAsync(dps(p), sizes, count, locs(l), idx, n, flags, s);
}
Errc discard(void** p, size_t* sizes, size_t count, unsigned long long flags, CUstream s) {
  RT_TRY(rt::context("cudaMemDiscardBatchAsync"));
  return api::cuMemDiscardBatchAsync(dps(p), sizes, count, flags, s);
}
Errc discard_prefetch(void** p, size_t* sizes, size_t count, cudaMemLocation* l, size_t* idx, size_t n,
                      unsigned long long flags, CUstream s) {
  RT_TRY(rt::context("cudaMemDiscardAndPrefetchBatchAsync"));
  return api::cuMemDiscardAndPrefetchBatchAsync(dps(p), sizes, count, locs(l), idx, n, flags, s);
}

}  // namespace

Errc cudaMemcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                          struct cudaMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                          cudaStream_t stream) noexcept {
  return copy(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
}
Errc cudaMemcpyBatchAsync_ptsz(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                               struct cudaMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                               cudaStream_t stream) noexcept {
  return copy(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
}
Errc cudaMemcpy3DBatchAsync(size_t numOps, struct cudaMemcpy3DBatchOp* opList, unsigned long long flags,
                            cudaStream_t stream) noexcept {
  return copy_3d(numOps, opList, flags, stream);
}
Errc cudaMemcpy3DBatchAsync_ptsz(size_t numOps, struct cudaMemcpy3DBatchOp* opList, unsigned long long flags,
                                 cudaStream_t stream) noexcept {
  return copy_3d(numOps, opList, flags, stream);
}
Errc cudaMemPrefetchBatchAsync(void** dptrs, size_t* sizes, size_t count, struct cudaMemLocation* prefetchLocs,
                               size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                               cudaStream_t stream) noexcept {
  return prefetch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream);
}
Errc cudaMemPrefetchBatchAsync_ptsz(void** dptrs, size_t* sizes, size_t count, struct cudaMemLocation* prefetchLocs,
                                    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                                    cudaStream_t stream) noexcept {
  return prefetch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, per_thread(stream));
}
Errc cudaMemDiscardBatchAsync(void** dptrs, size_t* sizes, size_t count, unsigned long long flags,
                              cudaStream_t stream) noexcept {
  return discard(dptrs, sizes, count, flags, stream);
}
Errc cudaMemDiscardBatchAsync_ptsz(void** dptrs, size_t* sizes, size_t count, unsigned long long flags,
                                   cudaStream_t stream) noexcept {
  return discard(dptrs, sizes, count, flags, per_thread(stream));
}
Errc cudaMemDiscardAndPrefetchBatchAsync(void** dptrs, size_t* sizes, size_t count,
                                         struct cudaMemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                         size_t numPrefetchLocs, unsigned long long flags,
                                         cudaStream_t stream) noexcept {
  return discard_prefetch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream);
}
Errc cudaMemDiscardAndPrefetchBatchAsync_ptsz(void** dptrs, size_t* sizes, size_t count,
                                              struct cudaMemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                              size_t numPrefetchLocs, unsigned long long flags,
                                              cudaStream_t stream) noexcept {
  return discard_prefetch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                          per_thread(stream));
}

}  // namespace cuda_shim::rtapi
