// Stream capture: cuStreamBeginCapture / EndCapture and the sequence behind them (core/capture.hpp
// says how the other rooms hand it their operations). Codes measured on an H200
// (tests/probe/cases/graph.cases): the legacy stream cannot capture (900), a stream captures once
// (401), only the origin stream ends a capture (903, and the capture is invalidated), an
// invalidated capture ends with 901 and no graph, one whose forked streams did not join back with
// 904; every stream leaves the capture when it ends.
#include <algorithm>
#include <atomic>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/events.hpp"
#include "graph/graph.hpp"

namespace cuda_shim::graph {
namespace {

std::atomic<uint64_t> g_next_capture_id{1};

class Seq final : public cap::Sequence, public std::enable_shared_from_this<Seq> {
 public:
  Seq(std::shared_ptr<Stream> origin, cap::Mode mode, Graph* g, bool own_graph)
      : origin_(std::move(origin)), mode_(mode), thread_(std::this_thread::get_id()), graph_(g),
        own_graph_(own_graph), id_(g_next_capture_id.fetch_add(1)) {}

  Errc add(Stream& s, cap::Spec spec, const char* api) override {
    std::lock_guard lk(world().m);
    if (!open_ || !valid_)
      return fail(Errc::stream_capture_invalidated, "{}: the stream's capture was invalidated by an earlier call", api);
    Node* n = add_node_unchecked(graph_, std::move(spec), part(s).deps);
    part(s).deps = {n};
    return Errc::success;
  }
  // valid_ is atomic: callers may hold the world lock or not.
  Errc refuse(Errc code, const char* api, const char* why) override {
    valid_ = false;
    return fail(code, "{}: {}; the capture is invalidated (cuStreamEndCapture will answer "
                "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)", api, why);
  }
  std::vector<void*> deps(const Stream& s) override {
    std::lock_guard lk(world().m);
    std::vector<void*> v;
    for (Node* n : part(s).deps) v.push_back(n);
    return v;
  }
  Errc join(Stream& s, const std::vector<void*>& d, const char* api) override {
    std::lock_guard lk(world().m);
    if (!open_ || !valid_)
      return fail(Errc::stream_capture_invalidated, "{}: the event's capture was invalidated", api);
    if (auto c = s.capture(); c && c.get() != this)
      return refuse(Errc::stream_capture_merge, api, "the stream takes part in another capture");
    if (!s.capture()) {
      s.set_capture(shared_from_this());
      parts_.push_back(Part{&s, s.weak_from_this(), {}});
    }
    auto& mine = part(s).deps;
    for (void* p : d)
      if (world().nodes.count(static_cast<Node*>(p)) && std::find(mine.begin(), mine.end(), p) == mine.end())
        mine.push_back(static_cast<Node*>(p));
    return Errc::success;
  }
  bool active() const override { return open_ && valid_; }
  cap::Mode mode() const override { return mode_; }
  std::thread::id thread() const override { return thread_; }
  const Context* context() const override { return origin_->ctx(); }
  bool origin_blocking() const override { return origin_->blocking(); }

  // ---- for the entries below (the world lock held) ----
  struct Part {
    const Stream* s;
    std::weak_ptr<Stream> ref;
    std::vector<Node*> deps;
    std::vector<CUgraphNode> shown;  // what cuStreamGetCaptureInfo last handed out
    std::vector<CUgraphEdgeData> edges;
  };
  Part& part(const Stream& s) {
    for (auto& p : parts_)
      if (p.s == &s) return p;
    parts_.push_back(Part{&s, {}, {}});
    return parts_.back();
  }
  void invalidate() { valid_ = false; }
  bool valid() const { return valid_; }
  const std::shared_ptr<Stream>& origin() const { return origin_; }
  Graph* graph() const { return graph_; }
  uint64_t id() const { return id_; }
  // A stream other than the origin that did not join back: an operation of it (its current
  // dependencies) that the origin's dependencies do not reach.
  bool unjoined() {
    std::unordered_set<const Node*> seen;
    std::vector<const Node*> todo(part(*origin_).deps.begin(), part(*origin_).deps.end());
    while (!todo.empty()) {
      const Node* n = todo.back();
      todo.pop_back();
      if (!seen.insert(n).second) continue;
      for (const Node* d : n->deps) todo.push_back(d);
    }
    for (auto& p : parts_)
      if (p.s != origin_.get())
        for (const Node* n : p.deps)
          if (!seen.count(n)) return true;
    return false;
  }
  // Every stream leaves the capture; the sequence is closed.
  void end() {
    open_ = false;
    for (auto& p : parts_)
      if (auto s = p.ref.lock()) s->set_capture(nullptr);
    origin_->set_capture(nullptr);
    graph_->capturing = false;
    cap::closed(this);
  }
  bool owns_graph() const { return own_graph_; }
  void adopt(Stream& s) { parts_.push_back(Part{&s, s.weak_from_this(), {}}); }

 private:
  std::shared_ptr<Stream> origin_;
  cap::Mode mode_;
  std::thread::id thread_;
  Graph* graph_;
  bool own_graph_;
  uint64_t id_;
  // Read without the lock by the checks other threads make (cap::check_unsafe); written under it.
  std::atomic<bool> open_{true};
  std::atomic<bool> valid_{true};
  std::vector<Part> parts_;
};

Errc begin(CUstream h, bool pt, CUgraph into, const CUgraphNode* deps, size_t n, unsigned mode, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  if (s->kind() == StreamKind::legacy)
    return fail(Errc::stream_capture_unsupported, "{}: the legacy default stream cannot be captured (use a stream "
                "of cuStreamCreate, or the per-thread default stream)", api);
  if (mode > 2) return fail(Errc::invalid_value, "{}: mode {} is not a CUstreamCaptureMode", api, mode);
  std::lock_guard lk(world().m);
  if (s->capture()) return fail(Errc::illegal_state, "{}: the stream is capturing already", api);
  Graph* g = nullptr;
  std::vector<Node*> start;
  if (into) {
    TRY(find_graph(into, api, g));
    if (n && !deps) return fail(Errc::invalid_value, "{}: numDependencies is {} but dependencies is NULL", api, n);
    for (size_t i = 0; i < n; ++i) {
      Node* x = nullptr;
      TRY(find_node(deps[i], api, x));
      if (x->owner != g) return fail(Errc::invalid_value, "{}: dependencies[{}] is a node of another graph", api, i);
      start.push_back(x);
    }
  } else {
    g = new_graph();
  }
  g->capturing = true;
  auto seq = std::make_shared<Seq>(s, static_cast<cap::Mode>(mode), g, into == nullptr);
  seq->adopt(*s);
  seq->part(*s).deps = start;
  s->set_capture(seq);
  cap::opened(seq);
  return Errc::success;
}

Errc end_capture(CUstream h, bool pt, CUgraph* out, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  if (out) *out = nullptr;
  std::lock_guard lk(world().m);
  auto hold = s->capture();
  Seq* q = static_cast<Seq*>(hold.get());
  if (!q) return fail(Errc::illegal_state, "{}: the stream is not capturing", api);
  if (q->origin().get() != s.get())
    return q->refuse(Errc::stream_capture_unmatched, api, "only the stream that began the capture ends it");
  const bool valid = q->valid();
  const bool unjoined = valid && q->unjoined();
  q->end();
  Graph* g = q->graph();
  if (!valid || unjoined) {
    if (q->owns_graph()) destroy_graph(g);
    if (!valid)
      return fail(Errc::stream_capture_invalidated, "{}: the capture was invalidated by an earlier call", api);
    return fail(Errc::stream_capture_unjoined, "{}: a stream forked into the capture did not join back into the "
                "stream that began it (record an event on it and wait on that event in the origin stream)", api);
  }
  if (out)
    *out = reinterpret_cast<CUgraph>(g);
  else if (q->owns_graph())
    destroy_graph(g);  // measured: a NULL phGraph is accepted; the graph is not kept
  return Errc::success;
}

// cuStreamGetCaptureInfo in its three forms: outputs other than the status are written only for a
// stream that is capturing (measured).
Errc capture_info(CUstream h, bool pt, CUstreamCaptureStatus* st, cuuint64_t* id, CUgraph* graph,
                  const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  TRY(need(st, api, "captureStatus_out"));
  std::lock_guard lk(world().m);
  auto hold = s->capture();
  Seq* q = static_cast<Seq*>(hold.get());
  if (!q) {
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    return Errc::success;
  }
  *st = q->active() ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  if (id) *id = q->id();
  if (!q->active()) return Errc::success;
  if (graph) *graph = reinterpret_cast<CUgraph>(q->graph());
  auto& p = q->part(*s);
  p.shown.clear();
  for (Node* d : p.deps) p.shown.push_back(reinterpret_cast<CUgraphNode>(d));
  p.edges.assign(p.deps.size(), CUgraphEdgeData{});
  if (deps) *deps = p.shown.empty() ? nullptr : p.shown.data();
  if (edges) *edges = p.edges.empty() ? nullptr : p.edges.data();
  if (n) *n = p.shown.size();
  return Errc::success;
}

Errc update_deps(CUstream h, bool pt, CUgraphNode* deps, size_t n, unsigned flags, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  if (flags > 1)
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_STREAM_ADD_CAPTURE_DEPENDENCIES and "
                "CU_STREAM_SET_CAPTURE_DEPENDENCIES exist", api, flags);
  if (n && !deps) return fail(Errc::invalid_value, "{}: numDependencies is {} but dependencies is NULL", api, n);
  std::lock_guard lk(world().m);
  auto hold = s->capture();
  Seq* q = static_cast<Seq*>(hold.get());
  if (!q) return fail(Errc::illegal_state, "{}: the stream is not capturing", api);
  if (!q->active()) return fail(Errc::stream_capture_invalidated, "{}: the stream's capture was invalidated", api);
  std::vector<Node*> add;
  for (size_t i = 0; i < n; ++i) {
    Node* x = nullptr;
    TRY(find_node(deps[i], api, x));
    if (x->owner != q->graph())
      return fail(Errc::invalid_value, "{}: dependencies[{}] is not a node of the capture's graph", api, i);
    add.push_back(x);
  }
  auto& mine = q->part(*s).deps;
  if (flags == 1) mine.clear();
  for (Node* x : add)
    if (std::find(mine.begin(), mine.end(), x) == mine.end()) mine.push_back(x);
  return Errc::success;
}

// A stream destroyed while it captures (measured: cuStreamDestroy succeeds): it leaves the capture;
// when it began it, the capture ends invalidated and its graph goes, so that nothing keeps the
// sequence open.
void on_stream_destroyed(const std::shared_ptr<Stream>& s) {
  if (!s->capture()) return;
  std::lock_guard lk(world().m);
  auto hold = s->capture();
  Seq* q = static_cast<Seq*>(hold.get());
  if (!q) return;
  if (q->origin() != s) {
    s->set_capture(nullptr);
    return;
  }
  q->invalidate();
  q->end();
  if (q->owns_graph()) destroy_graph(q->graph());
}
[[maybe_unused]] const ev::Registration kOnStreamDestroyed{ev::stream_destroyed, &on_stream_destroyed};

}  // namespace
}  // namespace cuda_shim::graph

namespace cuda_shim::api {
using graph::begin;

Errc cuStreamBeginCapture(CUstream h) noexcept { return begin(h, false, nullptr, nullptr, 0, 0, "cuStreamBeginCapture"); }
Errc cuStreamBeginCapture_ptsz(CUstream h) noexcept {
  return begin(h, true, nullptr, nullptr, 0, 0, "cuStreamBeginCapture");
}
Errc cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m) noexcept {
  return begin(h, false, nullptr, nullptr, 0, static_cast<unsigned>(m), "cuStreamBeginCapture");
}
Errc cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m) noexcept {
  return begin(h, true, nullptr, nullptr, 0, static_cast<unsigned>(m), "cuStreamBeginCapture");
}
Errc cuStreamBeginCaptureToGraph(CUstream h, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData*, size_t n,
                                 CUstreamCaptureMode m) noexcept {
  if (!g) return fail(Errc::invalid_value, "cuStreamBeginCaptureToGraph: hGraph is NULL");
  return begin(h, false, g, d, n, static_cast<unsigned>(m), "cuStreamBeginCaptureToGraph");
}
Errc cuStreamBeginCaptureToGraph_ptsz(CUstream h, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData*, size_t n,
                                      CUstreamCaptureMode m) noexcept {
  if (!g) return fail(Errc::invalid_value, "cuStreamBeginCaptureToGraph: hGraph is NULL");
  return begin(h, true, g, d, n, static_cast<unsigned>(m), "cuStreamBeginCaptureToGraph");
}
Errc cuStreamEndCapture(CUstream h, CUgraph* g) noexcept { return graph::end_capture(h, false, g, "cuStreamEndCapture"); }
Errc cuStreamEndCapture_ptsz(CUstream h, CUgraph* g) noexcept {
  return graph::end_capture(h, true, g, "cuStreamEndCapture");
}

Errc cuStreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id) noexcept {
  return graph::capture_info(h, false, st, id, nullptr, nullptr, nullptr, nullptr, "cuStreamGetCaptureInfo");
}
Errc cuStreamGetCaptureInfo_ptsz(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id) noexcept {
  return graph::capture_info(h, true, st, id, nullptr, nullptr, nullptr, nullptr, "cuStreamGetCaptureInfo");
}
Errc cuStreamGetCaptureInfo_v2(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id, CUgraph* g,
                               const CUgraphNode** d, size_t* n) noexcept {
  return graph::capture_info(h, false, st, id, g, d, nullptr, n, "cuStreamGetCaptureInfo");
}
Errc cuStreamGetCaptureInfo_v2_ptsz(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id, CUgraph* g,
                                    const CUgraphNode** d, size_t* n) noexcept {
  return graph::capture_info(h, true, st, id, g, d, nullptr, n, "cuStreamGetCaptureInfo");
}
Errc cuStreamGetCaptureInfo_v3(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id, CUgraph* g,
                               const CUgraphNode** d, const CUgraphEdgeData** e, size_t* n) noexcept {
  return graph::capture_info(h, false, st, id, g, d, e, n, "cuStreamGetCaptureInfo");
}
Errc cuStreamGetCaptureInfo_v3_ptsz(CUstream h, CUstreamCaptureStatus* st, cuuint64_t* id, CUgraph* g,
                                    const CUgraphNode** d, const CUgraphEdgeData** e, size_t* n) noexcept {
  return graph::capture_info(h, true, st, id, g, d, e, n, "cuStreamGetCaptureInfo");
}

Errc cuStreamUpdateCaptureDependencies(CUstream h, CUgraphNode* d, size_t n, unsigned int f) noexcept {
  return graph::update_deps(h, false, d, n, f, "cuStreamUpdateCaptureDependencies");
}
Errc cuStreamUpdateCaptureDependencies_ptsz(CUstream h, CUgraphNode* d, size_t n, unsigned int f) noexcept {
  return graph::update_deps(h, true, d, n, f, "cuStreamUpdateCaptureDependencies");
}
Errc cuStreamUpdateCaptureDependencies_v2(CUstream h, CUgraphNode* d, const CUgraphEdgeData*, size_t n,
                                          unsigned int f) noexcept {
  return graph::update_deps(h, false, d, n, f, "cuStreamUpdateCaptureDependencies");
}
Errc cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream h, CUgraphNode* d, const CUgraphEdgeData*, size_t n,
                                               unsigned int f) noexcept {
  return graph::update_deps(h, true, d, n, f, "cuStreamUpdateCaptureDependencies");
}

// Measured: any value is taken (and handed back by the next exchange).
Errc cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) noexcept {
  TRY(need(mode, "cuThreadExchangeStreamCaptureMode", "mode"));
  auto prev = cap::thread_mode();
  cap::set_thread_mode(static_cast<cap::Mode>(*mode));
  *mode = static_cast<CUstreamCaptureMode>(prev);
  return Errc::success;
}

}  // namespace cuda_shim::api
