// Runtime entries: graphs and stream capture. cudaGraph_t, cudaGraphNode_t, cudaGraphExec_t and
// cudaGraphEdgeData are the driver's types; the host, memset and instantiate parameters have the
// driver's layouts. Kernel nodes name their function as launches do (a __global__ stub or a
// cudaKernel_t), which the driver node holds as the CUfunction; the stub is remembered for
// cudaGraphKernelNodeGetParams.
#include <mutex>
#include <unordered_map>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
Errc graph_function_of(const void* func, const char* api, CUfunction& out);  // rt_module.cpp

namespace {

struct Stubs {
  std::mutex m;
  std::unordered_map<CUfunction, const void*> of;
};
Stubs& stubs() {
  static auto* s = new Stubs;
  return *s;
}

Errc kernel_params(const cudaKernelNodeParams* p, CUDA_KERNEL_NODE_PARAMS& out, const char* api) {
  TRY(need(p, api, "pNodeParams"));
  CUfunction f = nullptr;
  RT_TRY(graph_function_of(p->func, api, f));
  {
    auto& s = stubs();
    std::lock_guard lk(s.m);
    s.of[f] = p->func;
  }
  out = CUDA_KERNEL_NODE_PARAMS{f, p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y,
                                p->blockDim.z, p->sharedMemBytes, p->kernelParams, p->extra, nullptr, nullptr};
  return Errc::success;
}

CUgraphNode* cu(cudaGraphNode_t* p) { return reinterpret_cast<CUgraphNode*>(p); }
const CUgraphNode* cu(const cudaGraphNode_t* p) { return reinterpret_cast<const CUgraphNode*>(p); }
// cudaGraphEdgeData is laid out as CUgraphEdgeData.
CUgraphEdgeData* ce(cudaGraphEdgeData* p) { return reinterpret_cast<CUgraphEdgeData*>(p); }
const CUgraphEdgeData* ce(const cudaGraphEdgeData* p) { return reinterpret_cast<const CUgraphEdgeData*>(p); }
const CUgraphEdgeData** ce(const cudaGraphEdgeData** p) { return reinterpret_cast<const CUgraphEdgeData**>(p); }
cuuint64_t* cid(unsigned long long* p) { return reinterpret_cast<cuuint64_t*>(p); }

}  // namespace

Errc cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode m) noexcept {
  RT_TRY(rt::context("cudaStreamBeginCapture"));
  return api::cuStreamBeginCapture_v2(s, static_cast<CUstreamCaptureMode>(m));
}
Errc cudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode m) noexcept {
  RT_TRY(rt::context("cudaStreamBeginCapture"));
  return api::cuStreamBeginCapture_v2_ptsz(s, static_cast<CUstreamCaptureMode>(m));
}
Errc cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t* d, const cudaGraphEdgeData* e,
                                   size_t n, cudaStreamCaptureMode m) noexcept {
  RT_TRY(rt::context("cudaStreamBeginCaptureToGraph"));
  return api::cuStreamBeginCaptureToGraph(s, g, cu(d), ce(e), n, static_cast<CUstreamCaptureMode>(m));
}
Errc cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) noexcept {
  RT_TRY(rt::context("cudaStreamEndCapture"));
  return api::cuStreamEndCapture(s, g);
}
Errc cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* g) noexcept {
  RT_TRY(rt::context("cudaStreamEndCapture"));
  return api::cuStreamEndCapture_ptsz(s, g);
}
Errc cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* st, unsigned long long* id, cudaGraph_t* g,
                              const cudaGraphNode_t** d, const cudaGraphEdgeData** e, size_t* n) noexcept {
  RT_TRY(rt::context("cudaStreamGetCaptureInfo"));
  return api::cuStreamGetCaptureInfo_v3(s, reinterpret_cast<CUstreamCaptureStatus*>(st), cid(id), g,
                                        reinterpret_cast<const CUgraphNode**>(d), ce(e), n);
}
Errc cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, cudaStreamCaptureStatus* st, unsigned long long* id, cudaGraph_t* g,
                                   const cudaGraphNode_t** d, const cudaGraphEdgeData** e, size_t* n) noexcept {
  RT_TRY(rt::context("cudaStreamGetCaptureInfo"));
  return api::cuStreamGetCaptureInfo_v3_ptsz(s, reinterpret_cast<CUstreamCaptureStatus*>(st), cid(id), g,
                                             reinterpret_cast<const CUgraphNode**>(d), ce(e), n);
}
Errc cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* d, const cudaGraphEdgeData* e, size_t n,
                                         unsigned int f) noexcept {
  RT_TRY(rt::context("cudaStreamUpdateCaptureDependencies"));
  return api::cuStreamUpdateCaptureDependencies_v2(s, cu(d), ce(e), n, f);
}
Errc cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* m) noexcept {
  return api::cuThreadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode*>(m));
}

Errc cudaGraphCreate(cudaGraph_t* g, unsigned int f) noexcept { return api::cuGraphCreate(g, f); }
Errc cudaGraphDestroy(cudaGraph_t g) noexcept { return api::cuGraphDestroy(g); }
Errc cudaGraphClone(cudaGraph_t* c, cudaGraph_t g) noexcept { return api::cuGraphClone(c, g); }
Errc cudaGraphInstantiate(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long f) noexcept {
  RT_TRY(rt::context("cudaGraphInstantiate"));
  return api::cuGraphInstantiateWithFlags(x, g, f);
}
Errc cudaGraphInstantiateWithFlags(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long f) noexcept {
  RT_TRY(rt::context("cudaGraphInstantiateWithFlags"));
  return api::cuGraphInstantiateWithFlags(x, g, f);
}
Errc cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaGraphLaunch"));
  return api::cuGraphLaunch(x, s);
}
Errc cudaGraphLaunch_ptsz(cudaGraphExec_t x, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaGraphLaunch"));
  return api::cuGraphLaunch_ptsz(x, s);
}
Errc cudaGraphUpload(cudaGraphExec_t x, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaGraphUpload"));
  return api::cuGraphUpload(x, s);
}
Errc cudaGraphUpload_ptsz(cudaGraphExec_t x, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaGraphUpload"));
  return api::cuGraphUpload_ptsz(x, s);
}
Errc cudaGraphExecDestroy(cudaGraphExec_t x) noexcept { return api::cuGraphExecDestroy(x); }
Errc cudaGraphExecGetFlags(cudaGraphExec_t x, unsigned long long* f) noexcept {
  return api::cuGraphExecGetFlags(x, reinterpret_cast<cuuint64_t*>(f));
}
Errc cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo* info) noexcept {
  return api::cuGraphExecUpdate_v2(x, g, reinterpret_cast<CUgraphExecUpdateResultInfo*>(info));
}
Errc cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* n) noexcept {
  return api::cuGraphGetNodes(g, cu(nodes), n);
}
Errc cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* n) noexcept {
  return api::cuGraphGetRootNodes(g, cu(nodes), n);
}
Errc cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* e,
                       size_t* n) noexcept {
  return api::cuGraphGetEdges_v2(g, cu(from), cu(to), ce(e), n);
}
Errc cudaGraphNodeGetDependencies(cudaGraphNode_t h, cudaGraphNode_t* d, cudaGraphEdgeData* e, size_t* n) noexcept {
  return api::cuGraphNodeGetDependencies_v2(h, cu(d), ce(e), n);
}
Errc cudaGraphNodeGetDependentNodes(cudaGraphNode_t h, cudaGraphNode_t* d, cudaGraphEdgeData* e, size_t* n) noexcept {
  return api::cuGraphNodeGetDependentNodes_v2(h, cu(d), ce(e), n);
}
Errc cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                              const cudaGraphEdgeData* e, size_t n) noexcept {
  return api::cuGraphAddDependencies_v2(g, cu(from), cu(to), ce(e), n);
}
Errc cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                 const cudaGraphEdgeData* e, size_t n) noexcept {
  return api::cuGraphRemoveDependencies_v2(g, cu(from), cu(to), ce(e), n);
}
Errc cudaGraphNodeGetType(cudaGraphNode_t h, cudaGraphNodeType* t) noexcept {
  return api::cuGraphNodeGetType(h, reinterpret_cast<CUgraphNodeType*>(t));
}
Errc cudaGraphDestroyNode(cudaGraphNode_t h) noexcept { return api::cuGraphDestroyNode(h); }
Errc cudaGraphAddEmptyNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n) noexcept {
  return api::cuGraphAddEmptyNode(cu(out), g, cu(d), n);
}
Errc cudaGraphAddHostNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                          const cudaHostNodeParams* p) noexcept {
  return api::cuGraphAddHostNode(cu(out), g, cu(d), n, reinterpret_cast<const CUDA_HOST_NODE_PARAMS*>(p));
}
Errc cudaGraphHostNodeGetParams(cudaGraphNode_t h, cudaHostNodeParams* p) noexcept {
  return api::cuGraphHostNodeGetParams(h, reinterpret_cast<CUDA_HOST_NODE_PARAMS*>(p));
}
Errc cudaGraphAddChildGraphNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                cudaGraph_t child) noexcept {
  return api::cuGraphAddChildGraphNode(cu(out), g, cu(d), n, child);
}
Errc cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t h, cudaGraph_t* g) noexcept {
  return api::cuGraphChildGraphNodeGetGraph(h, g);
}
Errc cudaGraphAddEventRecordNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                 cudaEvent_t e) noexcept {
  return api::cuGraphAddEventRecordNode(cu(out), g, cu(d), n, e);
}
Errc cudaGraphAddEventWaitNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                               cudaEvent_t e) noexcept {
  return api::cuGraphAddEventWaitNode(cu(out), g, cu(d), n, e);
}

Errc cudaGraphAddKernelNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                            const cudaKernelNodeParams* p) noexcept {
  CUDA_KERNEL_NODE_PARAMS k{};
  TRY(kernel_params(p, k, "cudaGraphAddKernelNode"));
  return api::cuGraphAddKernelNode_v2(cu(out), g, cu(d), n, &k);
}
Errc cudaGraphKernelNodeGetParams(cudaGraphNode_t h, cudaKernelNodeParams* p) noexcept {
  TRY(need(p, "cudaGraphKernelNodeGetParams", "pNodeParams"));
  CUDA_KERNEL_NODE_PARAMS k{};
  TRY(api::cuGraphKernelNodeGetParams_v2(h, &k));
  const void* func = k.func;
  {
    auto& s = stubs();
    std::lock_guard lk(s.m);
    if (auto it = s.of.find(k.func); it != s.of.end()) func = it->second;
  }
  p->func = const_cast<void*>(func);
  p->gridDim = dim3(k.gridDimX, k.gridDimY, k.gridDimZ);
  p->blockDim = dim3(k.blockDimX, k.blockDimY, k.blockDimZ);
  p->sharedMemBytes = k.sharedMemBytes;
  p->kernelParams = k.kernelParams;
  p->extra = k.extra;
  return Errc::success;
}
Errc cudaGraphKernelNodeSetParams(cudaGraphNode_t h, const cudaKernelNodeParams* p) noexcept {
  CUDA_KERNEL_NODE_PARAMS k{};
  TRY(kernel_params(p, k, "cudaGraphKernelNodeSetParams"));
  return api::cuGraphKernelNodeSetParams_v2(h, &k);
}
Errc cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t h, const cudaKernelNodeParams* p) noexcept {
  CUDA_KERNEL_NODE_PARAMS k{};
  TRY(kernel_params(p, k, "cudaGraphExecKernelNodeSetParams"));
  return api::cuGraphExecKernelNodeSetParams_v2(x, h, &k);
}

// A 1D copy node: both ends classified by address, as cudaMemcpyDefault does; the kind must be
// one of cudaMemcpyKind's values.
Errc cudaGraphAddMemcpyNode1D(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n, void* dst,
                              const void* src, size_t count, cudaMemcpyKind kind) noexcept {
  if (static_cast<unsigned>(kind) > cudaMemcpyDefault)
    return fail(Errc::rt_invalid_memcpy_direction, "cudaGraphAddMemcpyNode1D: kind {} is not a cudaMemcpyKind",
                static_cast<int>(kind));
  RT_TRY(rt::context("cudaGraphAddMemcpyNode1D"));
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  c.WidthInBytes = count;
  c.Height = 1;
  c.Depth = 1;
  return api::cuGraphAddMemcpyNode(cu(out), g, cu(d), n, &c, nullptr);
}
Errc cudaGraphAddMemsetNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                            const cudaMemsetParams* p) noexcept {
  RT_TRY(rt::context("cudaGraphAddMemsetNode"));
  return api::cuGraphAddMemsetNode(cu(out), g, cu(d), n, reinterpret_cast<const CUDA_MEMSET_NODE_PARAMS*>(p), nullptr);
}
Errc cudaGraphMemsetNodeGetParams(cudaGraphNode_t h, cudaMemsetParams* p) noexcept {
  return api::cuGraphMemsetNodeGetParams(h, reinterpret_cast<CUDA_MEMSET_NODE_PARAMS*>(p));
}
Errc cudaGraphDebugDotPrint(cudaGraph_t g, const char* path, unsigned int f) noexcept {
  return api::cuGraphDebugDotPrint(g, path, f);
}

// cudaMemAllocNodeParams is laid out as CUDA_MEM_ALLOC_NODE_PARAMS.
Errc cudaGraphAddMemAllocNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                              cudaMemAllocNodeParams* p) noexcept {
  RT_TRY(rt::context("cudaGraphAddMemAllocNode"));
  return api::cuGraphAddMemAllocNode(cu(out), g, cu(d), n, reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(p));
}
Errc cudaGraphMemAllocNodeGetParams(cudaGraphNode_t h, cudaMemAllocNodeParams* p) noexcept {
  return api::cuGraphMemAllocNodeGetParams(h, reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(p));
}
Errc cudaGraphAddMemFreeNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                             void* p) noexcept {
  RT_TRY(rt::context("cudaGraphAddMemFreeNode"));
  return api::cuGraphAddMemFreeNode(cu(out), g, cu(d), n, reinterpret_cast<CUdeviceptr>(p));
}
Errc cudaGraphMemFreeNodeGetParams(cudaGraphNode_t h, void* p) noexcept {
  return api::cuGraphMemFreeNodeGetParams(h, static_cast<CUdeviceptr*>(p));
}
Errc cudaDeviceGetGraphMemAttribute(int dev, cudaGraphMemAttributeType attr, void* v) noexcept {
  RT_TRY(rt::context("cudaDeviceGetGraphMemAttribute"));
  return api::cuDeviceGetGraphMemAttribute(dev, static_cast<CUgraphMem_attribute>(attr), v);
}
Errc cudaDeviceSetGraphMemAttribute(int dev, cudaGraphMemAttributeType attr, void* v) noexcept {
  RT_TRY(rt::context("cudaDeviceSetGraphMemAttribute"));
  return api::cuDeviceSetGraphMemAttribute(dev, static_cast<CUgraphMem_attribute>(attr), v);
}
Errc cudaDeviceGraphMemTrim(int dev) noexcept {
  RT_TRY(rt::context("cudaDeviceGraphMemTrim"));
  return api::cuDeviceGraphMemTrim(dev);
}

}  // namespace cuda_shim::rtapi
