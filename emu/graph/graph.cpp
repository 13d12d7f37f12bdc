// The graph model: graphs, nodes and edges, cloning, topological order, instantiation and launch
// (graph.hpp). Rules and codes measured on an H200 (tests/probe/cases/graph.cases).
#include "graph/graph.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>

#include "abi/driver_api.hpp"
#include "core/context.hpp"

namespace cuda_shim::graph {

World& world() {
  static auto* w = new World;  // never destroyed: graphs may be destroyed by threads at exit
  return *w;
}

Errc find_graph(CUgraph h, const char* api, Graph*& out) {
  auto& w = world();
  auto* g = reinterpret_cast<const Graph*>(h);
  if (auto it = w.graphs.find(g); it != w.graphs.end()) {
    out = it->second.get();
    return Errc::success;
  }
  if (w.children.count(g)) {  // a child graph node's graph (cuGraphChildGraphNodeGetGraph)
    out = const_cast<Graph*>(g);
    return Errc::success;
  }
  return fail(Errc::invalid_value, "{}: {} is not a live graph", api, static_cast<const void*>(h));
}

Errc find_node(CUgraphNode h, const char* api, Node*& out) {
  auto* n = reinterpret_cast<const Node*>(h);
  if (!n || !world().nodes.count(n))
    return fail(Errc::invalid_value, "{}: {} is not a live graph node", api, static_cast<const void*>(h));
  out = const_cast<Node*>(n);
  return Errc::success;
}

Errc find_exec(CUgraphExec h, const char* api, Exec*& out) {
  auto& w = world();
  auto it = w.execs.find(reinterpret_cast<const Exec*>(h));
  if (it == w.execs.end())
    return fail(Errc::invalid_value, "{}: {} is not a live executable graph", api, static_cast<const void*>(h));
  out = it->second.get();
  return Errc::success;
}

Errc find_step(Exec& x, const Node* n, const char* api, Step*& out) {
  for (auto& st : x.steps)
    if (st.origin == n) {
      out = &st;
      return Errc::success;
    }
  return fail(Errc::invalid_value, "{}: the node is not part of the executable graph's graph", api);
}

Errc host_spec(CUhostFn fn, void* user, cap::Spec& s, const char* api) {
  TRY(need(reinterpret_cast<const void*>(fn), api, "the host function"));
  s.kind = cap::Kind::host;
  s.host = CUDA_HOST_NODE_PARAMS{fn, user};
  s.issue = [fn, user](CUstream st) { return api::cuLaunchHostFunc(st, fn, user); };
  return Errc::success;
}

Errc event_spec(CUevent e, bool record, cap::Spec& s, const char* api) {
  Event* ev = nullptr;
  TRY(resolve_event(e, api, ev));
  s.kind = record ? cap::Kind::event_record : cap::Kind::wait_event;
  s.event = e;
  if (record)
    s.issue = [e](CUstream st) { return api::cuEventRecord(e, st); };
  else
    s.issue = [e](CUstream st) { return api::cuStreamWaitEvent(st, e, 0); };
  return Errc::success;
}

Graph* new_graph() {
  auto& w = world();
  auto g = std::make_unique<Graph>();
  g->id = w.next_graph_id++;
  Graph* p = g.get();
  w.graphs.emplace(p, std::move(g));
  return p;
}

namespace {

void forget_nodes(const Graph& g) {
  auto& w = world();
  for (auto& n : g.nodes) {
    w.nodes.erase(n.get());
    if (n->child) {
      w.children.erase(n->child.get());
      forget_nodes(*n->child);
    }
  }
}

Node* make_node(Graph* g, cap::Spec spec) {
  auto& w = world();
  auto n = std::make_unique<Node>();
  n->spec = std::move(spec);
  n->owner = g;
  n->id = w.next_node_id++;
  Node* p = n.get();
  g->nodes.push_back(std::move(n));
  w.nodes.insert(p);
  return p;
}

}  // namespace

void destroy_graph(Graph* g) {
  auto& w = world();
  for (auto& [p, e] : w.execs)
    if (e->from == g) e->from = nullptr;
  forget_nodes(*g);
  release_all(g->user_refs);
  w.graphs.erase(g);
}

void retain(UserObject* u, unsigned n) { u->refs += n; }

void release(UserObject* u, unsigned n) {
  if (u->dead) return;
  u->refs = n >= u->refs ? 0 : u->refs - n;
  if (u->refs) return;
  world().user_objects.erase(u);
  u->dead = true;
  // CU_USER_OBJECT_NO_DESTRUCTOR_SYNC: the destructor may run on any thread, at any later time;
  // here it runs now, in the releasing call.
  if (u->destroy) u->destroy(u->ptr);
}

void release_all(UserRefs& refs) {
  UserRefs r;
  r.swap(refs);
  for (auto [u, n] : r) release(u, n);
}

Errc add_node(Graph* g, cap::Spec spec, const CUgraphNode* deps, size_t n, const char* api, Node*& out) {
  if (n && !deps) return fail(Errc::invalid_value, "{}: numDependencies is {} but dependencies is NULL", api, n);
  std::vector<Node*> d;
  for (size_t i = 0; i < n; ++i) {
    Node* x = nullptr;
    TRY(find_node(deps[i], api, x));
    if (x->owner != g)
      return fail(Errc::invalid_value, "{}: dependencies[{}] is a node of another graph", api, i);
    if (std::find(d.begin(), d.end(), x) != d.end())
      return fail(Errc::invalid_value, "{}: dependencies[{}] repeats a dependency", api, i);
    d.push_back(x);
  }
  out = add_node_unchecked(g, std::move(spec), d);
  return Errc::success;
}

Node* add_node_unchecked(Graph* g, cap::Spec spec, const std::vector<Node*>& deps) {
  Node* n = make_node(g, std::move(spec));
  n->deps = deps;
  for (Node* d : deps) d->out.push_back(n);
  return n;
}

void remove_node(Node* n) {
  for (Node* d : n->deps) std::erase(d->out, n);
  for (Node* o : n->out) std::erase(o->deps, n);
  auto& w = world();
  w.nodes.erase(n);
  if (n->child) {
    w.children.erase(n->child.get());
    forget_nodes(*n->child);
  }
  std::erase_if(n->owner->nodes, [n](const std::unique_ptr<Node>& p) { return p.get() == n; });
}

std::unique_ptr<Graph> clone(const Graph& g, std::unordered_map<const Node*, Node*>* map) {
  auto& w = world();
  auto c = std::make_unique<Graph>();
  c->id = w.next_graph_id++;
  for (auto [u, n] : g.user_refs) {
    retain(u, n);
    c->user_refs[u] += n;
  }
  std::unordered_map<const Node*, Node*> local;
  auto& m = map ? *map : local;
  for (auto& n : g.nodes) {
    std::vector<Node*> deps;
    for (Node* d : n->deps) deps.push_back(m.at(d));
    Node* x = add_node_unchecked(c.get(), n->spec, deps);
    if (n->child) {
      x->child = clone(*n->child, nullptr);
      w.children.insert(x->child.get());
    }
    m[n.get()] = x;
  }
  return c;
}

bool topo_order(const Graph& g, std::vector<const Node*>& out) {
  std::unordered_map<const Node*, size_t> waiting;
  std::deque<const Node*> ready;
  for (auto& n : g.nodes) {
    waiting[n.get()] = n->deps.size();
    if (n->deps.empty()) ready.push_back(n.get());
  }
  out.clear();
  while (!ready.empty()) {
    const Node* n = ready.front();
    ready.pop_front();
    out.push_back(n);
    for (const Node* o : n->out)
      if (--waiting[o] == 0) ready.push_back(o);
  }
  return out.size() == g.nodes.size();
}

namespace {

// Appends g's nodes' work in a topological order, child graphs inlined in place of their node.
Errc flatten(const Graph& g, std::vector<Step>& steps, const char* api) {
  std::vector<const Node*> order;
  if (!topo_order(g, order)) return fail(Errc::invalid_value, "{}: the graph has a cycle", api);
  for (const Node* n : order) {
    if (n->child)
      TRY(flatten(*n->child, steps, api));
    else if (n->spec.issue)
      steps.push_back(Step{n, n->spec, true});
  }
  return Errc::success;
}

}  // namespace

Errc instantiate(Graph* g, uint64_t flags, const char* api, Exec*& out) {
  auto x = std::make_unique<Exec>();
  TRY(flatten(*g, x->steps, api));
  const bool allocates = std::any_of(x->steps.begin(), x->steps.end(),
                                     [](const Step& s) { return s.spec.kind == cap::Kind::mem_alloc; });
  if (allocates)
    for (auto& [p, e] : world().execs)
      if (e->from == g)  // measured: its allocations' addresses belong to one executable graph at a time
        return fail(Errc::not_supported, "{}: the graph has allocation nodes and is instantiated already; destroy that "
                    "executable graph first", api);
  x->from = g;
  std::vector<const Node*> order;
  topo_order(*g, order);
  for (const Node* n : order) x->shape.push_back(static_cast<CUgraphNodeType>(n->spec.kind));
  x->flags = flags;
  for (auto [u, n] : g->user_refs) {  // an executable graph holds its graph's user objects
    retain(u, n);
    x->user_refs[u] += n;
  }
  auto& w = world();
  x->id = w.next_exec_id++;
  out = x.get();
  w.execs.emplace(out, std::move(x));
  return Errc::success;
}

Errc launch(Exec& x, CUstream hs, bool per_thread, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(hs, per_thread, api, s));
  if (auto seq = s->capture())  // measured: not captured as a child graph; the capture ends invalidated
    return seq->refuse(Errc::stream_capture_unsupported, api, "an executable graph launched into a capturing stream");
  if (!hs && per_thread) hs = CU_STREAM_PER_THREAD;
  for (Step& st : x.steps)
    if (st.enabled && st.spec.precheck) TRY(st.spec.precheck());
  // Ordered after this graph's previous launch, wherever that went.
  if (x.last_stream && x.last_stream != s && x.last_stream->completed() < x.last_seq)
    s->enqueue(nullptr, {Dep{x.last_stream, x.last_seq}}, true);
  for (Step& st : x.steps)
    if (st.enabled) TRY(st.spec.issue(hs));
  x.last_stream = s;
  x.last_seq = s->mark();
  return Errc::success;
}

namespace {

const char* kind_name(cap::Kind k) {
  static const char* names[] = {"KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY", "WAIT_EVENT", "EVENT_RECORD",
                                "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE", "BATCH_MEM_OP",
                                "CONDITIONAL"};
  auto i = static_cast<size_t>(k);
  return i < std::size(names) ? names[i] : "UNKNOWN";
}

std::string label(const Node& n, unsigned flags) {
  const cap::Spec& s = n.spec;
  std::string t = fmt::format("{}\\n{}", kind_name(s.kind), n.id);
  if (s.kind == cap::Kind::kernel) t += "\\n" + s.label;
  if (!(flags & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE)) return t;
  switch (s.kind) {
    case cap::Kind::kernel:
      t += fmt::format("\\ngrid ({},{},{}) block ({},{},{}) shared {}", s.kernel.gridDimX, s.kernel.gridDimY,
                       s.kernel.gridDimZ, s.kernel.blockDimX, s.kernel.blockDimY, s.kernel.blockDimZ,
                       s.kernel.sharedMemBytes);
      break;
    case cap::Kind::memcpy:
      t += fmt::format("\\n{} x {} x {} bytes", s.copy.WidthInBytes, s.copy.Height, s.copy.Depth);
      break;
    case cap::Kind::memset:
      t += fmt::format("\\ndst {:#x} value {:#x} elem {} width {} height {}", s.fill.dst, s.fill.value,
                       s.fill.elementSize, s.fill.width, s.fill.height);
      break;
    case cap::Kind::mem_alloc:
      t += fmt::format("\\ndptr {:#x} bytes {}", s.alloc.dptr, s.alloc.bytesize);
      break;
    case cap::Kind::mem_free:
      t += fmt::format("\\ndptr {:#x}", s.free_ptr);
      break;
    default:
      break;
  }
  return t;
}

void dot_body(const Graph& g, unsigned flags, const std::string& prefix, std::string& out) {
  for (auto& n : g.nodes) {
    out += fmt::format("\t\"{}node_{}\" [label=\"{}\" shape=\"{}\"];\n", prefix, n->id, label(*n, flags),
                       n->child ? "box3d" : "rectangle");
    if (n->child) {
      out += fmt::format("\tsubgraph cluster_{}{} {{\n\tlabel=\"child graph {}\";\n", prefix, n->id, n->child->id);
      dot_body(*n->child, flags, fmt::format("{}{}_", prefix, n->id), out);
      out += "\t}\n";
    }
  }
  for (auto& n : g.nodes)
    for (const Node* d : n->deps) out += fmt::format("\t\"{}node_{}\" -> \"{}node_{}\";\n", prefix, d->id, prefix, n->id);
}

}  // namespace

std::string dot(const Graph& g, unsigned flags) {
  std::string out = fmt::format("digraph dot {{\n\tsubgraph cluster_graph_{} {{\n\tlabel=\"graph_{}\";\n", g.id, g.id);
  dot_body(g, flags, "", out);
  out += "\t}\n}\n";
  return out;
}

}  // namespace cuda_shim::graph
