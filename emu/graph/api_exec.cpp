// Driver entries: executable graphs. Instantiation copies each node's work in a topological
// order (a cycle is CUDA_ERROR_INVALID_VALUE, measured); a launch issues it on the launch stream;
// an executable graph outlives the graph it came from (measured). cuGraphExecUpdate takes the
// parameters of a graph of the same shape, else CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE with the
// reason (topology changed, node type changed: measured).
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "exec/launch.hpp"
#include "graph/graph.hpp"
#include "memory/copy.hpp"

namespace cuda_shim::api {
namespace {

using graph::Exec;
using graph::Graph;
using graph::Lock;
using graph::mtx;
using graph::Node;

// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | UPLOAD | DEVICE_LAUNCH | USE_NODE_PRIORITY
constexpr uint64_t kInstantiateFlags = 0x1 | 0x2 | 0x4 | 0x8;

Errc inst(CUgraphExec* out, CUgraph hg, uint64_t flags, const char* api) {
  TRY(need(out, api, "phGraphExec"));
  if (flags & ~kInstantiateFlags)
    return fail(Errc::invalid_value, "{}: flags {:#x} contain unknown bits (valid: AUTO_FREE_ON_LAUNCH 0x1, UPLOAD "
                "0x2, DEVICE_LAUNCH 0x4, USE_NODE_PRIORITY 0x8)", api, flags);
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  Exec* x = nullptr;
  TRY(graph::instantiate(g, flags, api, x));
  *out = reinterpret_cast<CUgraphExec>(x);
  return Errc::success;
}

Errc run(CUgraphExec hx, CUstream s, bool pt, const char* api) {
  Lock lk(mtx());
  Exec* x = nullptr;
  TRY(graph::find_exec(hx, api, x));
  return graph::launch(*x, s, pt, api);
}

Errc upload(CUgraphExec hx, CUstream hs, bool pt, const char* api) {
  Lock lk(mtx());
  Exec* x = nullptr;
  TRY(graph::find_exec(hx, api, x));
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(hs, pt, api, s));
  if (auto seq = s->capture())
    return seq->refuse(Errc::stream_capture_unsupported, api, "an upload into a capturing stream");
  s->mark();  // nothing to upload: a position in stream order
  return Errc::success;
}

// The step instantiated from node h (a node of the graph x came from).
template <class F>
Errc set_step(CUgraphExec hx, CUgraphNode h, cap::Kind k, const char* api, F make) {
  cap::Spec s;
  TRY(make(s));
  Lock lk(mtx());
  Exec* x = nullptr;
  TRY(graph::find_exec(hx, api, x));
  Node* n = nullptr;
  TRY(graph::find_node(h, api, n));
  if (n->spec.kind != k)
    return fail(Errc::invalid_value, "{}: the node is of another type (CUgraphNodeType {})", api,
                static_cast<int>(n->spec.kind));
  graph::Step* st = nullptr;
  TRY(graph::find_step(*x, n, api, st));
  st->spec = std::move(s);
  return Errc::success;
}

void report(CUgraphExecUpdateResultInfo* info, CUgraphExecUpdateResult r, const Node* n) {
  if (!info) return;
  info->result = r;
  info->errorNode = reinterpret_cast<CUgraphNode>(const_cast<Node*>(n));
  info->errorFromNode = nullptr;
}

Errc update(CUgraphExec hx, CUgraph hg, CUgraphExecUpdateResultInfo* info, const char* api) {
  Lock lk(mtx());
  Exec* x = nullptr;
  Graph* g = nullptr;
  TRY(graph::find_exec(hx, api, x));
  TRY(graph::find_graph(hg, api, g));
  std::vector<const Node*> order;
  if (!graph::topo_order(*g, order) || order.size() != x->shape.size()) {
    report(info, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, nullptr);
    return fail(Errc::graph_exec_update_failure, "{}: the graph has {} nodes; the executable graph was made from {}",
                api, order.size(), x->shape.size());
  }
  for (size_t i = 0; i < order.size(); ++i)
    if (static_cast<CUgraphNodeType>(order[i]->spec.kind) != x->shape[i]) {
      report(info, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, order[i]);
      return fail(Errc::graph_exec_update_failure, "{}: node {} changed its type", api, i);
    }
  Exec* fresh = nullptr;
  TRY(graph::instantiate(g, x->flags, api, fresh));
  x->steps = std::move(fresh->steps);
  graph::world().execs.erase(fresh);
  report(info, CU_GRAPH_EXEC_UPDATE_SUCCESS, nullptr);
  return Errc::success;
}

}  // namespace

Errc cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph g, unsigned long long flags) noexcept {
  return inst(out, g, flags, "cuGraphInstantiateWithFlags");
}
Errc cuGraphInstantiate(CUgraphExec* out, CUgraph g, CUgraphNode* err, char* log, size_t size) noexcept {
  if (err) *err = nullptr;
  if (log && size) log[0] = 0;
  return inst(out, g, 0, "cuGraphInstantiate");
}
Errc cuGraphInstantiate_v2(CUgraphExec* out, CUgraph g, CUgraphNode* err, char* log, size_t size) noexcept {
  return api::cuGraphInstantiate(out, g, err, log, size);
}
Errc cuGraphInstantiateWithParams(CUgraphExec* out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS* p) noexcept {
  const char* api = "cuGraphInstantiateWithParams";
  TRY(need(p, api, "instantiateParams"));
  Errc e = inst(out, g, p->flags, api);
  p->hErrNode_out = nullptr;
  p->result_out = e == Errc::success ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  if (e == Errc::success && (p->flags & 0x2)) TRY(upload(*out, p->hUploadStream, false, api));
  return e;
}
Errc cuGraphInstantiateWithParams_ptsz(CUgraphExec* out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS* p) noexcept {
  return api::cuGraphInstantiateWithParams(out, g, p);
}

Errc cuGraphLaunch(CUgraphExec x, CUstream s) noexcept { return run(x, s, false, "cuGraphLaunch"); }
Errc cuGraphLaunch_ptsz(CUgraphExec x, CUstream s) noexcept { return run(x, s, true, "cuGraphLaunch"); }
Errc cuGraphUpload(CUgraphExec x, CUstream s) noexcept { return upload(x, s, false, "cuGraphUpload"); }
Errc cuGraphUpload_ptsz(CUgraphExec x, CUstream s) noexcept { return upload(x, s, true, "cuGraphUpload"); }

Errc cuGraphExecDestroy(CUgraphExec hx) noexcept {
  Lock lk(mtx());
  Exec* x = nullptr;
  TRY(graph::find_exec(hx, "cuGraphExecDestroy", x));
  graph::release_all(x->user_refs);
  graph::world().execs.erase(x);
  return Errc::success;
}

Errc cuGraphExecGetFlags(CUgraphExec hx, cuuint64_t* flags) noexcept {
  TRY(need(flags, "cuGraphExecGetFlags", "flags"));
  Lock lk(mtx());
  Exec* x = nullptr;
  TRY(graph::find_exec(hx, "cuGraphExecGetFlags", x));
  *flags = x->flags;
  return Errc::success;
}

Errc cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo* info) noexcept {
  return update(x, g, info, "cuGraphExecUpdate");
}
Errc cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode* err, CUgraphExecUpdateResult* r) noexcept {
  CUgraphExecUpdateResultInfo info{};
  Errc e = update(x, g, &info, "cuGraphExecUpdate");
  if (err) *err = info.errorNode;
  if (r) *r = info.result;
  return e;
}

Errc cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphExecKernelNodeSetParams";
  return set_step(x, n, cap::Kind::kernel, api, [&](cap::Spec& s) {
    TRY(need(p, api, "nodeParams"));
    return module::kernel_node(*p, s, api);
  });
}
Errc cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1* p) noexcept {
  TRY(need(p, "cuGraphExecKernelNodeSetParams", "nodeParams"));
  CUDA_KERNEL_NODE_PARAMS v2{p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                             p->sharedMemBytes, p->kernelParams, p->extra, nullptr, nullptr};
  return api::cuGraphExecKernelNodeSetParams_v2(x, n, &v2);
}
Errc cuGraphExecMemcpyNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_MEMCPY3D* p, CUcontext) noexcept {
  const char* api = "cuGraphExecMemcpyNodeSetParams";
  return set_step(x, n, cap::Kind::memcpy, api, [&](cap::Spec& s) {
    TRY(need(p, api, "copyParams"));
    return mem::copy_node(*p, s, api);
  });
}
Errc cuGraphExecMemsetNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) noexcept {
  const char* api = "cuGraphExecMemsetNodeSetParams";
  return set_step(x, n, cap::Kind::memset, api, [&](cap::Spec& s) {
    TRY(need(p, api, "memsetParams"));
    return mem::fill_node(*p, s, api);
  });
}
Errc cuGraphExecHostNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_HOST_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphExecHostNodeSetParams";
  return set_step(x, n, cap::Kind::host, api, [&](cap::Spec& s) {
    TRY(need(p, api, "nodeParams"));
    return graph::host_spec(p->fn, p->userData, s, api);
  });
}

}  // namespace cuda_shim::api
