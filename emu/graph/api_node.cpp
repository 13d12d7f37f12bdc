// Driver entries: nodes described by the generic CUgraphNodeParams (cuGraphAddNode,
// cuGraphNodeSetParams, cuGraphExecNodeSetParams), the executable graph's event nodes, and nodes
// enabled or disabled in an executable graph. Each kind goes through the same checks as its own
// cuGraphAdd*Node entry.
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "exec/launch.hpp"
#include "external/external.hpp"
#include "graph/graph.hpp"
#include "memory/copy.hpp"
#include "memory/graph_memory.hpp"

namespace cuda_shim::api {
namespace {

using graph::Exec;
using graph::Graph;
using graph::Lock;
using graph::mtx;
using graph::Node;

// The Spec of every kind whose work needs no graph of its own (all but child graphs).
Errc spec_of(CUgraphNodeParams& p, cap::Spec& s, const char* api) {
  switch (p.type) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
      s.kind = cap::Kind::empty;
      s.issue = [](CUstream) { return Errc::success; };
      return Errc::success;
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const auto& k = p.kernel;
      CUDA_KERNEL_NODE_PARAMS v{k.func, k.gridDimX, k.gridDimY, k.gridDimZ, k.blockDimX, k.blockDimY, k.blockDimZ,
                                k.sharedMemBytes, k.kernelParams, k.extra, k.kern, k.ctx};
      return module::kernel_node(v, s, api);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: return mem::copy_node(p.memcpy.copyParams, s, api);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const auto& m = p.memset;
      return mem::fill_node(CUDA_MEMSET_NODE_PARAMS{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height}, s, api);
    }
    case CU_GRAPH_NODE_TYPE_HOST: return graph::host_spec(p.host.fn, p.host.userData, s, api);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return graph::event_spec(p.eventRecord.event, true, s, api);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return graph::event_spec(p.eventWait.event, false, s, api);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return mem::graph_free_spec(p.free.dptr, /*captured=*/false, s, api);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      std::shared_ptr<Context> ctx;
      TRY(require_context(api, ctx));
      const auto& a = p.alloc;
      CUDA_MEM_ALLOC_NODE_PARAMS v{a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize, 0};
      TRY(mem::graph_alloc_spec(v, ctx, s, api));
      p.alloc.dptr = s.alloc.dptr;  // an output, as cuGraphAddMemAllocNode's
      return Errc::success;
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
      return ext::signal_node(p.extSemSignal.extSemArray, p.extSemSignal.paramsArray, p.extSemSignal.numExtSems, s, api);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
      return ext::wait_node(p.extSemWait.extSemArray, p.extSemWait.paramsArray, p.extSemWait.numExtSems, s, api);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      return fail(Errc::not_supported, "{}: {} nodes are not implemented by cuda-shim yet", api,
                  p.type == CU_GRAPH_NODE_TYPE_CONDITIONAL ? "conditional" : "batch memory operation");
    default:
      return fail(Errc::invalid_value, "{}: nodeParams->type {} is not a CUgraphNodeType", api, static_cast<int>(p.type));
  }
}

Errc add_node(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps, size_t n, CUgraphNodeParams* p, const char* api) {
  TRY(need(out, api, "phGraphNode"));
  TRY(need(p, api, "nodeParams"));
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  cap::Spec s;
  Graph* child = nullptr;
  if (p->type == CU_GRAPH_NODE_TYPE_GRAPH) {
    TRY(graph::find_graph(p->graph.graph, api, child));
    if (child == g) return fail(Errc::invalid_value, "{}: a graph cannot be its own child", api);
    if (p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
      return fail(Errc::not_supported, "{}: only CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE is implemented by cuda-shim", api);
    s.kind = cap::Kind::graph;
  } else {
    TRY(spec_of(*p, s, api));
  }
  Node* node = nullptr;
  TRY(graph::add_node(g, std::move(s), deps, n, api, node));
  if (child) {
    node->child = graph::clone(*child, nullptr);
    graph::world().children.insert(node->child.get());
    p->graph.graph = reinterpret_cast<CUgraph>(node->child.get());
  }
  *out = reinterpret_cast<CUgraphNode>(node);
  return Errc::success;
}

// The step of a kernel, memcpy or memset node in an executable graph (the kinds that can be disabled).
Errc switchable_step(CUgraphExec hx, CUgraphNode h, const char* api, graph::Step*& st) {
  Exec* x = nullptr;
  Node* n = nullptr;
  TRY(graph::find_exec(hx, api, x));
  TRY(graph::find_node(h, api, n));
  const auto k = n->spec.kind;
  if (k != cap::Kind::kernel && k != cap::Kind::memcpy && k != cap::Kind::memset)
    return fail(Errc::invalid_value, "{}: only kernel, memcpy and memset nodes can be disabled", api);
  return graph::find_step(*x, n, api, st);
}

// The kinds whose parameters a graph or an executable graph takes anew.
bool settable(CUgraphNodeType t) {
  return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY || t == CU_GRAPH_NODE_TYPE_MEMSET ||
         t == CU_GRAPH_NODE_TYPE_HOST || t == CU_GRAPH_NODE_TYPE_EVENT_RECORD || t == CU_GRAPH_NODE_TYPE_WAIT_EVENT;
}

}  // namespace

Errc cuGraphAddNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUgraphNodeParams* p) noexcept {
  return add_node(out, g, d, n, p, "cuGraphAddNode");
}
Errc cuGraphAddNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData*, size_t n,
                       CUgraphNodeParams* p) noexcept {
  return add_node(out, g, d, n, p, "cuGraphAddNode");
}

Errc cuGraphNodeSetParams(CUgraphNode h, CUgraphNodeParams* p) noexcept {
  const char* api = "cuGraphNodeSetParams";
  TRY(need(p, api, "nodeParams"));
  Lock lk(mtx());
  Node* n = nullptr;
  TRY(graph::find_node(h, api, n));
  if (static_cast<int>(p->type) != static_cast<int>(n->spec.kind))
    return fail(Errc::invalid_value, "{}: nodeParams->type {} is not the node's type {}", api, static_cast<int>(p->type),
                static_cast<int>(n->spec.kind));
  if (!settable(p->type))
    return fail(Errc::invalid_value, "{}: the parameters of a node of type {} cannot be changed", api,
                static_cast<int>(p->type));
  cap::Spec s;
  TRY(spec_of(*p, s, api));
  n->spec = std::move(s);
  return Errc::success;
}

Errc cuGraphExecNodeSetParams(CUgraphExec hx, CUgraphNode h, CUgraphNodeParams* p) noexcept {
  const char* api = "cuGraphExecNodeSetParams";
  TRY(need(p, api, "nodeParams"));
  Lock lk(mtx());
  Exec* x = nullptr;
  Node* n = nullptr;
  TRY(graph::find_exec(hx, api, x));
  TRY(graph::find_node(h, api, n));
  if (static_cast<int>(p->type) != static_cast<int>(n->spec.kind) || !settable(p->type))
    return fail(Errc::invalid_value, "{}: nodeParams->type {} does not match a node whose parameters an executable "
                "graph can take", api, static_cast<int>(p->type));
  cap::Spec s;
  TRY(spec_of(*p, s, api));
  graph::Step* st = nullptr;
  TRY(graph::find_step(*x, n, api, st));
  st->spec = std::move(s);
  return Errc::success;
}

Errc cuGraphExecEventRecordNodeSetEvent(CUgraphExec hx, CUgraphNode h, CUevent e) noexcept {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
  p.eventRecord.event = e;
  return api::cuGraphExecNodeSetParams(hx, h, &p);
}
Errc cuGraphExecEventWaitNodeSetEvent(CUgraphExec hx, CUgraphNode h, CUevent e) noexcept {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  p.eventWait.event = e;
  return api::cuGraphExecNodeSetParams(hx, h, &p);
}

Errc cuGraphAddExternalSemaphoresSignalNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                                            const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphAddExternalSemaphoresSignalNode";
  TRY(need(p, api, "nodeParams"));
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
  gp.extSemSignal = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2{p->extSemArray, p->paramsArray, p->numExtSems};
  return add_node(out, g, d, n, &gp, api);
}
Errc cuGraphAddExternalSemaphoresWaitNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                                          const CUDA_EXT_SEM_WAIT_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphAddExternalSemaphoresWaitNode";
  TRY(need(p, api, "nodeParams"));
  CUgraphNodeParams gp{};
  gp.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT;
  gp.extSemWait = CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2{p->extSemArray, p->paramsArray, p->numExtSems};
  return add_node(out, g, d, n, &gp, api);
}

// An external-semaphore node's arrays, as its GetParams reports them.
template <class Out, class Params>
Errc sem_params(CUgraphNode h, cap::Kind k, Out* out, const char* api) {
  TRY(need(out, api, "params_out"));
  Lock lk(mtx());
  Node* n = nullptr;
  TRY(graph::find_node(h, api, n));
  if (n->spec.kind != k)
    return fail(Errc::invalid_value, "{}: the node is of another type (CUgraphNodeType {})", api,
                static_cast<int>(n->spec.kind));
  *out = Out{n->spec.sems, static_cast<const Params*>(n->spec.sem_params), n->spec.sem_count};
  return Errc::success;
}
Errc cuGraphExternalSemaphoresSignalNodeGetParams(CUgraphNode h, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* out) noexcept {
  return sem_params<CUDA_EXT_SEM_SIGNAL_NODE_PARAMS, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS>(
      h, cap::Kind::ext_sem_signal, out, "cuGraphExternalSemaphoresSignalNodeGetParams");
}
Errc cuGraphExternalSemaphoresWaitNodeGetParams(CUgraphNode h, CUDA_EXT_SEM_WAIT_NODE_PARAMS* out) noexcept {
  return sem_params<CUDA_EXT_SEM_WAIT_NODE_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS>(
      h, cap::Kind::ext_sem_wait, out, "cuGraphExternalSemaphoresWaitNodeGetParams");
}

// Kernel, memcpy and memset nodes can be disabled in an executable graph (a disabled node does
// nothing at launch; its dependencies still order the rest). Measured: any other kind -> 1, for
// the query too.
Errc cuGraphNodeSetEnabled(CUgraphExec hx, CUgraphNode h, unsigned int on) noexcept {
  Lock lk(mtx());
  graph::Step* st = nullptr;
  TRY(switchable_step(hx, h, "cuGraphNodeSetEnabled", st));
  st->enabled = on != 0;
  return Errc::success;
}

Errc cuGraphNodeGetEnabled(CUgraphExec hx, CUgraphNode h, unsigned int* on) noexcept {
  TRY(need(on, "cuGraphNodeGetEnabled", "isEnabled"));
  Lock lk(mtx());
  graph::Step* st = nullptr;
  TRY(switchable_step(hx, h, "cuGraphNodeGetEnabled", st));
  *on = st->enabled ? 1 : 0;
  return Errc::success;
}

}  // namespace cuda_shim::api
