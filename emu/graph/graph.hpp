// CUDA graphs: nodes with their dependencies (a DAG), built node by node or by stream capture,
// instantiated into an executable graph whose launch issues every node's work on the launch
// stream in a topological order. A node's work is a cap::Spec (core/capture.hpp), made by the
// room that owns the operation (copies and fills in memory, kernels in exec, host functions and
// events in core), so a launch repeats exactly the calls that were captured or described.
//
// Every graph, node and executable graph lives in one table under one lock (graphs are not
// thread-safe objects in CUDA either; the lock only keeps a bad program from corrupting ours).
// Handles are the objects' addresses, looked up in the table before use.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/capture.hpp"
#include "core/errc.hpp"
#include "core/stream.hpp"

namespace cuda_shim::graph {

struct Graph;

// A user object (cuUserObjectCreate): a pointer and its destructor, run when the last reference
// goes (the caller's, a graph's, or an executable graph's).
struct UserObject {
  void* ptr = nullptr;
  CUhostFn destroy = nullptr;
  unsigned refs = 0;  // under the world lock
  // Destroyed (its destructor ran). The object is kept, never freed: a graph may still name it
  // after a caller released more references than it held (CU_GRAPH_USER_OBJECT_MOVE of
  // references it then released), and a release through that name must find it dead, not find
  // whatever reused its memory.
  bool dead = false;
};
using UserRefs = std::unordered_map<UserObject*, unsigned>;
void retain(UserObject* u, unsigned n);
void release(UserObject* u, unsigned n);  // runs the destructor when the count reaches 0
void release_all(UserRefs& refs);

struct Node {
  cap::Spec spec;
  Graph* owner = nullptr;
  std::vector<Node*> deps;  // incoming edges, in the order they were added
  std::vector<Node*> out;   // outgoing edges
  std::unique_ptr<Graph> child;  // a child-graph node's graph (the driver keeps a copy)
  uint64_t id = 0;
};

struct Graph {
  std::vector<std::unique_ptr<Node>> nodes;  // creation order: the order GetNodes reports
  uint32_t id = 0;
  bool capturing = false;  // the graph of an open capture sequence
  UserRefs user_refs;      // references this graph owns (cuGraphRetainUserObject)
};

// One step of an executable graph: a node's work, and the node it was instantiated from.
struct Step {
  const Node* origin;
  cap::Spec spec;
  bool enabled = true;  // cuGraphNodeSetEnabled: a disabled step is skipped at launch
};

struct Exec {
  std::vector<Step> steps;  // topological order, child graphs inlined
  const Graph* from = nullptr;  // the graph it was made from, while that lives
  uint64_t flags = 0;
  uint32_t id = 0;
  std::vector<CUgraphNodeType> shape;  // per top-level node in topological order (cuGraphExecUpdate)
  // The last launch's end in stream order: a launch on another stream waits for it (an
  // executable graph never runs concurrently with itself).
  std::shared_ptr<Stream> last_stream;
  uint64_t last_seq = 0;
  UserRefs user_refs;  // the graph's references, taken at instantiation
};

// The table of live objects and its lock.
struct World {
  std::recursive_mutex m;
  std::unordered_map<const Graph*, std::unique_ptr<Graph>> graphs;  // top-level graphs (handles)
  std::unordered_set<const Node*> nodes;                             // every live node, child graphs' too
  std::unordered_map<const Exec*, std::unique_ptr<Exec>> execs;
  std::unordered_set<const Graph*> children;  // child graphs (reachable through their node)
  std::unordered_set<const UserObject*> user_objects;           // the live ones
  std::vector<std::unique_ptr<UserObject>> user_object_store;  // every one ever made (UserObject::dead)
  uint32_t next_graph_id = 1;
  uint32_t next_exec_id = 1;
  uint64_t next_node_id = 1;
};
World& world();
using Lock = std::lock_guard<std::recursive_mutex>;
inline std::recursive_mutex& mtx() { return world().m; }

// Lookups (the lock held by the caller). Each answers INVALID_VALUE for a handle it does not know.
Errc find_graph(CUgraph h, const char* api, Graph*& out);
Errc find_node(CUgraphNode h, const char* api, Node*& out);
Errc find_exec(CUgraphExec h, const char* api, Exec*& out);
// The step of x instantiated from node n.
Errc find_step(Exec& x, const Node* n, const char* api, Step*& out);

// Node work the graph room makes itself: a host function, an event record or wait.
Errc host_spec(CUhostFn fn, void* user, cap::Spec& s, const char* api);
Errc event_spec(CUevent e, bool record, cap::Spec& s, const char* api);

Graph* new_graph();  // registered as a handle
void destroy_graph(Graph* g);
// A node with `spec` after `deps` (all of g, no repeats): the checks of every cuGraphAdd*Node.
Errc add_node(Graph* g, cap::Spec spec, const CUgraphNode* deps, size_t n, const char* api, Node*& out);
// The same, for nodes the graph room made itself (capture): deps known valid.
Node* add_node_unchecked(Graph* g, cap::Spec spec, const std::vector<Node*>& deps);
void remove_node(Node* n);
std::unique_ptr<Graph> clone(const Graph& g, std::unordered_map<const Node*, Node*>* map);
// g's nodes in a topological order (creation order among ready nodes); false on a cycle.
bool topo_order(const Graph& g, std::vector<const Node*>& out);
Errc instantiate(Graph* g, uint64_t flags, const char* api, Exec*& out);
Errc launch(Exec& x, CUstream s, bool per_thread, const char* api);
// Writes the dot text of g (cuGraphDebugDotPrint).
std::string dot(const Graph& g, unsigned flags);

}  // namespace cuda_shim::graph
