// Driver entries: user objects, the way a library ties resources to a graph's lifetime
// (cuda.core's graph builder keeps its kernels' arguments alive with one). A reference is held
// by the caller, by a graph (cuGraphRetainUserObject), and by each executable graph made from that
// graph; the destructor runs when the last one goes.
#include "abi/driver_api.hpp"
#include "graph/graph.hpp"

namespace cuda_shim::api {
namespace {

using graph::Lock;

Errc find_user(CUuserObject h, const char* api, graph::UserObject*& out) {
  auto* u = reinterpret_cast<graph::UserObject*>(h);
  if (!u || !graph::world().user_objects.count(u))
    return fail(Errc::invalid_value, "{}: {} is not a live user object", api, static_cast<const void*>(h));
  out = u;
  return Errc::success;
}

}  // namespace

Errc cuUserObjectCreate(CUuserObject* out, void* ptr, CUhostFn destroy, unsigned int refs, unsigned int flags) noexcept {
  const char* api = "cuUserObjectCreate";
  TRY(need(out, api, "object_out"));
  TRY(need(reinterpret_cast<const void*>(destroy), api, "destroy"));
  if (flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
    return fail(Errc::invalid_value, "{}: flags must be CU_USER_OBJECT_NO_DESTRUCTOR_SYNC (got {:#x})", api, flags);
  if (refs == 0) return fail(Errc::invalid_value, "{}: initialRefcount is 0", api);
  Lock lk(graph::mtx());
  auto& w = graph::world();
  w.user_object_store.push_back(std::make_unique<graph::UserObject>(graph::UserObject{ptr, destroy, refs}));
  graph::UserObject* u = w.user_object_store.back().get();
  w.user_objects.insert(u);
  *out = reinterpret_cast<CUuserObject>(u);
  return Errc::success;
}

Errc cuUserObjectRetain(CUuserObject h, unsigned int n) noexcept {
  Lock lk(graph::mtx());
  graph::UserObject* u = nullptr;
  TRY(find_user(h, "cuUserObjectRetain", u));
  if (n == 0) return fail(Errc::invalid_value, "cuUserObjectRetain: count is 0");
  graph::retain(u, n);
  return Errc::success;
}

Errc cuUserObjectRelease(CUuserObject h, unsigned int n) noexcept {
  Lock lk(graph::mtx());
  graph::UserObject* u = nullptr;
  TRY(find_user(h, "cuUserObjectRelease", u));
  if (n == 0) return fail(Errc::invalid_value, "cuUserObjectRelease: count is 0");
  graph::release(u, n);
  return Errc::success;
}

Errc cuGraphRetainUserObject(CUgraph hg, CUuserObject h, unsigned int n, unsigned int flags) noexcept {
  const char* api = "cuGraphRetainUserObject";
  Lock lk(graph::mtx());
  graph::Graph* g = nullptr;
  graph::UserObject* u = nullptr;
  TRY(graph::find_graph(hg, api, g));
  TRY(find_user(h, api, u));
  if (n == 0) return fail(Errc::invalid_value, "{}: count is 0", api);
  if (flags & ~unsigned{CU_GRAPH_USER_OBJECT_MOVE})
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_GRAPH_USER_OBJECT_MOVE exists", api, flags);
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) graph::retain(u, n);  // MOVE: the caller's references pass to the graph
  g->user_refs[u] += n;
  return Errc::success;
}

Errc cuGraphReleaseUserObject(CUgraph hg, CUuserObject h, unsigned int n) noexcept {
  const char* api = "cuGraphReleaseUserObject";
  Lock lk(graph::mtx());
  graph::Graph* g = nullptr;
  graph::UserObject* u = nullptr;
  TRY(graph::find_graph(hg, api, g));
  TRY(find_user(h, api, u));
  auto it = g->user_refs.find(u);
  if (n == 0 || it == g->user_refs.end() || it->second < n)
    return fail(Errc::invalid_value, "{}: the graph holds {} references to the object, fewer than {}", api,
                it == g->user_refs.end() ? 0 : it->second, n);
  if ((it->second -= n) == 0) g->user_refs.erase(it);
  graph::release(u, n);
  return Errc::success;
}

}  // namespace cuda_shim::api
