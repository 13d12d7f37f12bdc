// Driver entries: graphs built node by node, their structure, node parameters, cloning and the
// dot print. Codes measured on an H200 (tests/probe/cases/graph.cases): a bad or NULL handle,
// a repeated or foreign dependency, an edge that exists already or does not exist: all
// CUDA_ERROR_INVALID_VALUE.
#include <cstdio>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "exec/launch.hpp"
#include "graph/graph.hpp"
#include "memory/copy.hpp"
#include "memory/graph_memory.hpp"

namespace cuda_shim::api {
namespace {

using graph::Graph;
using graph::Lock;
using graph::mtx;
using graph::Node;

// Every cuGraphAdd*Node: the graph, the output, the dependencies, then the node.
Errc add(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps, size_t n, cap::Spec spec, const char* api) {
  TRY(need(out, api, "phGraphNode"));
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  Node* node = nullptr;
  TRY(graph::add_node(g, std::move(spec), deps, n, api, node));
  *out = reinterpret_cast<CUgraphNode>(node);
  return Errc::success;
}

cap::Spec simple(cap::Kind k) {
  cap::Spec s;
  s.kind = k;
  s.issue = [](CUstream) { return Errc::success; };
  return s;
}

Errc host_spec(const CUDA_HOST_NODE_PARAMS* p, cap::Spec& s, const char* api) {
  TRY(need(p, api, "nodeParams"));
  return graph::host_spec(p->fn, p->userData, s, api);
}

using graph::event_spec;

CUDA_KERNEL_NODE_PARAMS v2_of(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  return CUDA_KERNEL_NODE_PARAMS{p.func, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ,
                                 p.sharedMemBytes, p.kernelParams, p.extra, nullptr, nullptr};
}

Errc kernel_spec(const CUDA_KERNEL_NODE_PARAMS* p, cap::Spec& s, const char* api) {
  TRY(need(p, api, "nodeParams"));
  return module::kernel_node(*p, s, api);
}

// A node of kind k, for the GetParams/SetParams entries.
Errc node_of(CUgraphNode h, cap::Kind k, const char* api, Node*& n) {
  TRY(graph::find_node(h, api, n));
  if (n->spec.kind != k)
    return fail(Errc::invalid_value, "{}: the node is of another type (CUgraphNodeType {})", api,
                static_cast<int>(n->spec.kind));
  return Errc::success;
}

// GetNodes / GetRootNodes: the count alone, or up to *n handles (the rest NULL, *n the count).
Errc list(const std::vector<const Node*>& v, CUgraphNode* out, size_t* n, const char* api) {
  TRY(need(n, api, "numNodes"));
  if (!out) {
    *n = v.size();
    return Errc::success;
  }
  for (size_t i = 0; i < *n; ++i) out[i] = i < v.size() ? reinterpret_cast<CUgraphNode>(const_cast<Node*>(v[i])) : nullptr;
  if (*n > v.size()) *n = v.size();
  return Errc::success;
}

Errc edges(CUgraph hg, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data, size_t* n, const char* api) {
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  TRY(need(n, api, "numEdges"));
  std::vector<std::pair<Node*, Node*>> e;
  for (auto& x : g->nodes)
    for (Node* d : x->deps) e.emplace_back(d, x.get());
  if (!from && !to) {
    *n = e.size();
    return Errc::success;
  }
  if (!from || !to) return fail(Errc::invalid_value, "{}: from and to must both be given or both be NULL", api);
  for (size_t i = 0; i < *n; ++i) {
    from[i] = i < e.size() ? reinterpret_cast<CUgraphNode>(e[i].first) : nullptr;
    to[i] = i < e.size() ? reinterpret_cast<CUgraphNode>(e[i].second) : nullptr;
    if (data) data[i] = CUgraphEdgeData{};
  }
  if (*n > e.size()) *n = e.size();
  return Errc::success;
}

Errc neighbours(CUgraphNode h, bool deps, CUgraphNode* out, CUgraphEdgeData* data, size_t* n, const char* api) {
  Lock lk(mtx());
  Node* x = nullptr;
  TRY(graph::find_node(h, api, x));
  TRY(need(n, api, deps ? "numDependencies" : "numDependentNodes"));
  const auto& v = deps ? x->deps : x->out;
  if (!out) {
    *n = v.size();
    return Errc::success;
  }
  for (size_t i = 0; i < *n; ++i) {
    out[i] = i < v.size() ? reinterpret_cast<CUgraphNode>(v[i]) : nullptr;
    if (data) data[i] = CUgraphEdgeData{};
  }
  if (*n > v.size()) *n = v.size();
  return Errc::success;
}

Errc change_deps(CUgraph hg, const CUgraphNode* from, const CUgraphNode* to, size_t n, bool add, const char* api) {
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  if (n && (!from || !to)) return fail(Errc::invalid_value, "{}: from and to may not be NULL", api);
  std::vector<std::pair<Node*, Node*>> pairs;
  for (size_t i = 0; i < n; ++i) {
    Node *a = nullptr, *b = nullptr;
    TRY(graph::find_node(from[i], api, a));
    TRY(graph::find_node(to[i], api, b));
    if (a->owner != g || b->owner != g) return fail(Errc::invalid_value, "{}: edge {} joins nodes of another graph", api, i);
    if (a == b) return fail(Errc::invalid_value, "{}: edge {} joins a node to itself", api, i);
    bool has = std::find(b->deps.begin(), b->deps.end(), a) != b->deps.end();
    if (add && has) return fail(Errc::invalid_value, "{}: edge {} exists already", api, i);
    if (!add && !has) return fail(Errc::invalid_value, "{}: edge {} does not exist", api, i);
    pairs.emplace_back(a, b);
  }
  for (auto [a, b] : pairs) {
    if (add) {
      b->deps.push_back(a);
      a->out.push_back(b);
    } else {
      std::erase(b->deps, a);
      std::erase(a->out, b);
    }
  }
  return Errc::success;
}

template <class F>
Errc with_node(CUgraphNode h, cap::Kind k, const char* api, F f) {
  Lock lk(mtx());
  Node* n = nullptr;
  TRY(node_of(h, k, api, n));
  return f(*n);
}

// GetParams: a node's parameters as its Spec holds them.
template <class T>
Errc get_field(CUgraphNode h, cap::Kind k, T* out, T cap::Spec::*field, const char* api) {
  TRY(need(out, api, "the output"));
  return with_node(h, k, api, [&](Node& n) {
    *out = n.spec.*field;
    return Errc::success;
  });
}

// SetParams: the node's work replaced by a Spec made (and checked) from the new parameters.
Errc set_spec(CUgraphNode h, cap::Kind k, cap::Spec s, const char* api) {
  return with_node(h, k, api, [&](Node& n) {
    n.spec = std::move(s);
    return Errc::success;
  });
}

}  // namespace

Errc cuGraphCreate(CUgraph* out, unsigned int flags) noexcept {
  const char* api = "cuGraphCreate";
  TRY(need(out, api, "phGraph"));
  if (flags) return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  Lock lk(mtx());
  *out = reinterpret_cast<CUgraph>(graph::new_graph());
  return Errc::success;
}

Errc cuGraphDestroy(CUgraph hg) noexcept {
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, "cuGraphDestroy", g));
  if (!graph::world().graphs.count(g))
    return fail(Errc::invalid_value, "cuGraphDestroy: the graph belongs to a child graph node; destroy that node");
  if (g->capturing)
    return fail(Errc::invalid_value, "cuGraphDestroy: the graph is being captured into; end the capture first");
  graph::destroy_graph(g);
  return Errc::success;
}

Errc cuGraphClone(CUgraph* out, CUgraph hg) noexcept {
  const char* api = "cuGraphClone";
  TRY(need(out, api, "phGraphClone"));
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, api, g));
  auto c = graph::clone(*g, nullptr);
  Graph* p = c.get();
  graph::world().graphs.emplace(p, std::move(c));
  *out = reinterpret_cast<CUgraph>(p);
  return Errc::success;
}

Errc cuGraphNodeFindInClone(CUgraphNode* out, CUgraphNode orig, CUgraph cloned) noexcept {
  const char* api = "cuGraphNodeFindInClone";
  TRY(need(out, api, "phNode"));
  Lock lk(mtx());
  Node* n = nullptr;
  Graph* g = nullptr;
  TRY(graph::find_node(orig, api, n));
  TRY(graph::find_graph(cloned, api, g));
  // A clone copies nodes in creation order: the node at the same position.
  auto& src = n->owner->nodes;
  for (size_t i = 0; i < src.size() && i < g->nodes.size(); ++i)
    if (src[i].get() == n && g->nodes[i]->spec.kind == n->spec.kind) {
      *out = reinterpret_cast<CUgraphNode>(g->nodes[i].get());
      return Errc::success;
    }
  return fail(Errc::invalid_value, "{}: the graph is not a clone of the node's graph", api);
}

// ---- adding nodes ------------------------------------------------------------------------------
Errc cuGraphAddEmptyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n) noexcept {
  Lock lk(mtx());
  return add(out, g, d, n, simple(cap::Kind::empty), "cuGraphAddEmptyNode");
}

Errc cuGraphAddHostNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                        const CUDA_HOST_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphAddHostNode";
  cap::Spec s;
  TRY(host_spec(p, s, api));
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}

Errc cuGraphAddKernelNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                             const CUDA_KERNEL_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphAddKernelNode";
  cap::Spec s;
  TRY(kernel_spec(p, s, api));
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}
Errc cuGraphAddKernelNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                          const CUDA_KERNEL_NODE_PARAMS_v1* p) noexcept {
  TRY(need(p, "cuGraphAddKernelNode", "nodeParams"));
  auto v2 = v2_of(*p);
  return api::cuGraphAddKernelNode_v2(out, g, d, n, &v2);
}

Errc cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, const CUDA_MEMCPY3D* p,
                          CUcontext ctx) noexcept {
  const char* api = "cuGraphAddMemcpyNode";
  TRY(need(p, api, "copyParams"));
  cap::Spec s;
  TRY(mem::copy_node(*p, s, api));
  s.ctx = ctx;
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}

Errc cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                          const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) noexcept {
  const char* api = "cuGraphAddMemsetNode";
  TRY(need(p, api, "memsetParams"));
  cap::Spec s;
  TRY(mem::fill_node(*p, s, api));
  s.ctx = ctx;
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}

Errc cuGraphAddChildGraphNode(CUgraphNode* out, CUgraph hg, const CUgraphNode* d, size_t n, CUgraph child) noexcept {
  const char* api = "cuGraphAddChildGraphNode";
  Lock lk(mtx());
  Graph* c = nullptr;
  TRY(graph::find_graph(child, api, c));
  if (child == hg) return fail(Errc::invalid_value, "{}: a graph cannot be its own child", api);
  cap::Spec s;
  s.kind = cap::Kind::graph;
  TRY(add(out, hg, d, n, std::move(s), api));
  Node* x = reinterpret_cast<Node*>(*out);
  x->child = graph::clone(*c, nullptr);  // the node holds a copy, as the driver's does
  graph::world().children.insert(x->child.get());
  return Errc::success;
}

Errc cuGraphAddEventRecordNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUevent e) noexcept {
  const char* api = "cuGraphAddEventRecordNode";
  cap::Spec s;
  TRY(event_spec(e, true, s, api));
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}
Errc cuGraphAddEventWaitNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUevent e) noexcept {
  const char* api = "cuGraphAddEventWaitNode";
  cap::Spec s;
  TRY(event_spec(e, false, s, api));
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}

Errc cuGraphAddMemAllocNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                            CUDA_MEM_ALLOC_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphAddMemAllocNode";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(p, api, "nodeParams"));
  TRY(need(out, api, "phGraphNode"));
  Lock lk(mtx());
  Graph* gr = nullptr;
  TRY(graph::find_graph(g, api, gr));
  cap::Spec s;
  TRY(mem::graph_alloc_spec(*p, ctx, s, api));
  const CUdeviceptr dptr = s.alloc.dptr;
  TRY(add(out, g, d, n, std::move(s), api));
  p->dptr = dptr;
  return Errc::success;
}

Errc cuGraphAddMemFreeNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUdeviceptr p) noexcept {
  const char* api = "cuGraphAddMemFreeNode";
  cap::Spec s;
  TRY(mem::graph_free_spec(p, /*captured=*/false, s, api));
  Lock lk(mtx());
  return add(out, g, d, n, std::move(s), api);
}

// ---- structure ---------------------------------------------------------------------------------
Errc cuGraphGetNodes(CUgraph hg, CUgraphNode* nodes, size_t* n) noexcept {
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, "cuGraphGetNodes", g));
  std::vector<const Node*> v;
  for (auto& x : g->nodes) v.push_back(x.get());
  return list(v, nodes, n, "cuGraphGetNodes");
}
Errc cuGraphGetRootNodes(CUgraph hg, CUgraphNode* nodes, size_t* n) noexcept {
  Lock lk(mtx());
  Graph* g = nullptr;
  TRY(graph::find_graph(hg, "cuGraphGetRootNodes", g));
  std::vector<const Node*> v;
  for (auto& x : g->nodes)
    if (x->deps.empty()) v.push_back(x.get());
  return list(v, nodes, n, "cuGraphGetRootNodes");
}
Errc cuGraphGetEdges(CUgraph g, CUgraphNode* from, CUgraphNode* to, size_t* n) noexcept {
  return edges(g, from, to, nullptr, n, "cuGraphGetEdges");
}
Errc cuGraphGetEdges_v2(CUgraph g, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* e, size_t* n) noexcept {
  return edges(g, from, to, e, n, "cuGraphGetEdges");
}
Errc cuGraphNodeGetDependencies(CUgraphNode h, CUgraphNode* d, size_t* n) noexcept {
  return neighbours(h, true, d, nullptr, n, "cuGraphNodeGetDependencies");
}
Errc cuGraphNodeGetDependencies_v2(CUgraphNode h, CUgraphNode* d, CUgraphEdgeData* e, size_t* n) noexcept {
  return neighbours(h, true, d, e, n, "cuGraphNodeGetDependencies");
}
Errc cuGraphNodeGetDependentNodes(CUgraphNode h, CUgraphNode* d, size_t* n) noexcept {
  return neighbours(h, false, d, nullptr, n, "cuGraphNodeGetDependentNodes");
}
Errc cuGraphNodeGetDependentNodes_v2(CUgraphNode h, CUgraphNode* d, CUgraphEdgeData* e, size_t* n) noexcept {
  return neighbours(h, false, d, e, n, "cuGraphNodeGetDependentNodes");
}
Errc cuGraphAddDependencies(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, size_t n) noexcept {
  return change_deps(g, from, to, n, true, "cuGraphAddDependencies");
}
Errc cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData*,
                               size_t n) noexcept {
  return change_deps(g, from, to, n, true, "cuGraphAddDependencies");
}
Errc cuGraphRemoveDependencies(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, size_t n) noexcept {
  return change_deps(g, from, to, n, false, "cuGraphRemoveDependencies");
}
Errc cuGraphRemoveDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData*,
                                  size_t n) noexcept {
  return change_deps(g, from, to, n, false, "cuGraphRemoveDependencies");
}
Errc cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType* t) noexcept {
  const char* api = "cuGraphNodeGetType";
  TRY(need(t, api, "type"));
  Lock lk(mtx());
  Node* n = nullptr;
  TRY(graph::find_node(h, api, n));
  *t = static_cast<CUgraphNodeType>(n->spec.kind);
  return Errc::success;
}
Errc cuGraphDestroyNode(CUgraphNode h) noexcept {
  Lock lk(mtx());
  Node* n = nullptr;
  TRY(graph::find_node(h, "cuGraphDestroyNode", n));
  graph::remove_node(n);
  return Errc::success;
}

// ---- node parameters ---------------------------------------------------------------------------
Errc cuGraphKernelNodeGetParams_v2(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS* p) noexcept {
  return get_field(h, cap::Kind::kernel, p, &cap::Spec::kernel, "cuGraphKernelNodeGetParams");
}
Errc cuGraphKernelNodeGetParams(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS_v1* p) noexcept {
  CUDA_KERNEL_NODE_PARAMS v{};
  TRY(need(p, "cuGraphKernelNodeGetParams", "nodeParams"));
  TRY(api::cuGraphKernelNodeGetParams_v2(h, &v));
  *p = CUDA_KERNEL_NODE_PARAMS_v1{v.func, v.gridDimX, v.gridDimY, v.gridDimZ, v.blockDimX, v.blockDimY, v.blockDimZ,
                                  v.sharedMemBytes, v.kernelParams, v.extra};
  return Errc::success;
}
Errc cuGraphKernelNodeSetParams_v2(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphKernelNodeSetParams";
  cap::Spec s;
  TRY(kernel_spec(p, s, api));
  return set_spec(h, cap::Kind::kernel, std::move(s), api);
}
Errc cuGraphKernelNodeSetParams(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v1* p) noexcept {
  TRY(need(p, "cuGraphKernelNodeSetParams", "nodeParams"));
  auto v2 = v2_of(*p);
  return api::cuGraphKernelNodeSetParams_v2(h, &v2);
}
Errc cuGraphMemcpyNodeGetParams(CUgraphNode h, CUDA_MEMCPY3D* p) noexcept {
  return get_field(h, cap::Kind::memcpy, p, &cap::Spec::copy, "cuGraphMemcpyNodeGetParams");
}
Errc cuGraphMemcpyNodeSetParams(CUgraphNode h, const CUDA_MEMCPY3D* p) noexcept {
  const char* api = "cuGraphMemcpyNodeSetParams";
  TRY(need(p, api, "nodeParams"));
  cap::Spec s;
  TRY(mem::copy_node(*p, s, api));
  return set_spec(h, cap::Kind::memcpy, std::move(s), api);
}
Errc cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS* p) noexcept {
  return get_field(h, cap::Kind::memset, p, &cap::Spec::fill, "cuGraphMemsetNodeGetParams");
}
Errc cuGraphMemsetNodeSetParams(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphMemsetNodeSetParams";
  TRY(need(p, api, "nodeParams"));
  cap::Spec s;
  TRY(mem::fill_node(*p, s, api));
  return set_spec(h, cap::Kind::memset, std::move(s), api);
}
Errc cuGraphHostNodeGetParams(CUgraphNode h, CUDA_HOST_NODE_PARAMS* p) noexcept {
  return get_field(h, cap::Kind::host, p, &cap::Spec::host, "cuGraphHostNodeGetParams");
}
Errc cuGraphHostNodeSetParams(CUgraphNode h, const CUDA_HOST_NODE_PARAMS* p) noexcept {
  const char* api = "cuGraphHostNodeSetParams";
  cap::Spec s;
  TRY(host_spec(p, s, api));
  return set_spec(h, cap::Kind::host, std::move(s), api);
}
Errc cuGraphChildGraphNodeGetGraph(CUgraphNode h, CUgraph* out) noexcept {
  TRY(need(out, "cuGraphChildGraphNodeGetGraph", "phGraph"));
  return with_node(h, cap::Kind::graph, "cuGraphChildGraphNodeGetGraph", [&](Node& n) {
    *out = reinterpret_cast<CUgraph>(n.child.get());
    return Errc::success;
  });
}
Errc cuGraphEventRecordNodeGetEvent(CUgraphNode h, CUevent* out) noexcept {
  return get_field(h, cap::Kind::event_record, out, &cap::Spec::event, "cuGraphEventRecordNodeGetEvent");
}
Errc cuGraphEventWaitNodeGetEvent(CUgraphNode h, CUevent* out) noexcept {
  return get_field(h, cap::Kind::wait_event, out, &cap::Spec::event, "cuGraphEventWaitNodeGetEvent");
}
Errc cuGraphEventRecordNodeSetEvent(CUgraphNode h, CUevent e) noexcept {
  cap::Spec s;
  TRY(event_spec(e, true, s, "cuGraphEventRecordNodeSetEvent"));
  return set_spec(h, cap::Kind::event_record, std::move(s), "cuGraphEventRecordNodeSetEvent");
}
Errc cuGraphEventWaitNodeSetEvent(CUgraphNode h, CUevent e) noexcept {
  cap::Spec s;
  TRY(event_spec(e, false, s, "cuGraphEventWaitNodeSetEvent"));
  return set_spec(h, cap::Kind::wait_event, std::move(s), "cuGraphEventWaitNodeSetEvent");
}
Errc cuGraphMemAllocNodeGetParams(CUgraphNode h, CUDA_MEM_ALLOC_NODE_PARAMS* p) noexcept {
  return get_field(h, cap::Kind::mem_alloc, p, &cap::Spec::alloc, "cuGraphMemAllocNodeGetParams");
}
Errc cuGraphMemFreeNodeGetParams(CUgraphNode h, CUdeviceptr* p) noexcept {
  return get_field(h, cap::Kind::mem_free, p, &cap::Spec::free_ptr, "cuGraphMemFreeNodeGetParams");
}

Errc cuGraphDebugDotPrint(CUgraph hg, const char* path, unsigned int flags) noexcept {
  const char* api = "cuGraphDebugDotPrint";
  std::string text;
  {
    Lock lk(mtx());
    Graph* g = nullptr;
    TRY(graph::find_graph(hg, api, g));
    TRY(need(path, api, "path"));
    text = graph::dot(*g, flags);
  }
  FILE* f = std::fopen(path, "w");
  if (!f) return fail(Errc::operating_system, "{}: cannot write {}", api, path);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return Errc::success;
}

}  // namespace cuda_shim::api
