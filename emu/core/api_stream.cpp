// Driver entries: streams, host functions, events.
#include <chrono>
#include <thread>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/fresh_alloc.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/thread_state.hpp"
#include "core/events.hpp"

namespace cuda_shim::api {
namespace {

constexpr int kGreatestPriority = -5;  // cuCtxGetStreamPriorityRange of the measured device

Errc stream_create(CUstream* ph, unsigned flags, int priority, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(ph, api, "phStream"));
  if (flags & ~1u)
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_STREAM_DEFAULT (0) and CU_STREAM_NON_BLOCKING (1) exist",
                api, flags);
  // Out-of-range priorities are clamped, as the driver does.
  priority = std::max(kGreatestPriority, std::min(0, priority));
  // The handle is a value never given before, not the object's address (Registry::add_fresh),
  // so the stream itself can come from the ordinary heap.
  auto s = std::make_shared<Stream>(ctx, StreamKind::user, flags, priority);
  void* h = registry_fresh_handle();
  s->set_handle(h);
  ctx->track(s);
  *ph = static_cast<CUstream>(streams().add_as(h, std::move(s)));
  return Errc::success;
}

Errc query(CUstream h, bool pt, const char* api) {
  Stream* s = nullptr;
  TRY(resolve_stream(h, pt, api, s));
  TRY(cap::refuse_if_capturing(*s, api));
  return s->idle() ? Errc::success : Errc::not_ready;
}

Errc sync(CUstream h, bool pt, const char* api) {
  Stream* s = nullptr;
  TRY(resolve_stream(h, pt, api, s));
  TRY(not_in_host_function(api));
  TRY(cap::refuse_if_capturing(*s, api));
  s->synchronize();
  ev::host_synchronised.emit();  // observed frees are released down to each pool's threshold
  if (s->ctx()->faulted()) return s->ctx()->fault_error(api);  // a kernel of the wait faulted
  return Errc::success;
}

// IPC event counters (Event::shared): ready when the highest completed record has reached
// the records issued so far.
uint64_t issued(const uint64_t* w) { return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w[0])).load(); }
uint64_t completed_upto(const uint64_t* w) { return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w[1])).load(); }
void complete_record(uint64_t* w, uint64_t n) {
  std::atomic_ref<uint64_t> done(w[1]);
  for (uint64_t cur = done.load(); cur < n && !done.compare_exchange_weak(cur, n);) {
  }
}
void wait_shared(const uint64_t* w, uint64_t target) {
  for (unsigned spins = 0; completed_upto(w) < target; ++spins)
    std::this_thread::sleep_for(std::chrono::microseconds(spins < 100 ? 20 : 200));
}

// cuStreamWaitEvent where captures are involved: on an event recorded in a capture, the stream
// joins it (a fork); a capturing stream waiting on an event recorded outside its capture crosses
// the capture's boundary (CUDA_ERROR_STREAM_CAPTURE_ISOLATION, measured, and the capture ends
// invalidated). `done`: nothing is left for the ordinary path.
Errc wait_captured(Stream& s, Event& ev, const char* api, bool& done) {
  std::vector<void*> deps;
  auto from = ev.captured(&deps);
  auto mine = s.capture();
  done = from || mine;
  if (from && from->active()) return from->join(s, deps, api);
  if (from)
    return fail(Errc::invalid_value, "{}: the event was recorded in a stream capture that has ended; record it "
                "again outside a capture to wait on it", api);
  if (mine)
    return mine->refuse(Errc::stream_capture_isolation, api, "the capturing stream waits on an event recorded outside "
                        "its capture");
  return Errc::success;
}

Errc wait_event(CUstream hs, CUevent he, unsigned flags, bool pt, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(hs, pt, api, s));
  Event* ev = nullptr;
  TRY(resolve_event(he, api, ev));
  if (flags & ~1u)  // CU_EVENT_WAIT_EXTERNAL
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_EVENT_WAIT_DEFAULT and CU_EVENT_WAIT_EXTERNAL exist", api, flags);
  if (cap::g_open.load(std::memory_order_acquire) || ev->captured()) [[unlikely]] {
    bool done = false;
    TRY(wait_captured(*s, *ev, api, done));
    if (done) return Errc::success;
  }
  if (uint64_t* w = ev->shared()) {
    // Another process may record it: the stream waits (on its worker) for the records issued now.
    uint64_t target = issued(w);
    if (completed_upto(w) >= target) return Errc::success;
    s->enqueue([w, target] { wait_shared(w, target); }, {}, false);
    return Errc::success;
  }
  auto snap = ev->snap();
  if (!snap.recorded) return Errc::success;  // nothing to wait for
  // Remember the ordering even when the work is done: stream-ordered reuse follows it.
  s->add_dep(snap.dep.stream, snap.dep.seq, snap.clock);
  if (snap.dep.done()) return Errc::success;
  s->enqueue(nullptr, {snap.dep}, true);
  return Errc::success;
}

template <class Get>
Errc stream_get(CUstream h, bool pt, const char* api, const void* out, Get get) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  TRY(need(out, api, "the output pointer"));
  get(*s);
  return Errc::success;
}

// Runs a user's host function on a stream worker, marked as such (not_in_host_function).
template <class F>
void run_host_function(F&& f) {
  ts().in_host_fn = true;
  f();
  ts().in_host_fn = false;
}

Errc host_func(CUstream h, CUhostFn fn, void* user, bool pt, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  TRY(need(reinterpret_cast<const void*>(fn), api, "fn"));
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(*s, api, seq));
  if (seq) [[unlikely]] {
    cap::Spec sp;
    sp.kind = cap::Kind::host;
    sp.host = CUDA_HOST_NODE_PARAMS{fn, user};
    sp.issue = [fn, user](CUstream st) { return host_func(st, fn, user, false, "cuGraphLaunch"); };
    return seq->add(*s, std::move(sp), api);
  }
  s->enqueue([fn, user] { run_host_function([&] { fn(user); }); }, {}, /*inline_ok=*/false);
  return Errc::success;
}

Errc add_callback(CUstream h, CUstreamCallback cb, void* user, unsigned flags, bool pt, const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));
  TRY(need(reinterpret_cast<const void*>(cb), api, "callback"));
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(*s, api, seq));
  if (seq) [[unlikely]]  // the driver refuses callbacks in a capture: cuLaunchHostFunc is their successor
    return seq->refuse(Errc::stream_capture_unsupported, api, "cuStreamAddCallback cannot be captured; use "
                       "cuLaunchHostFunc");
  s->enqueue([cb, user, h] { run_host_function([&] { cb(h, CUDA_SUCCESS, user); }); }, {}, false);
  return Errc::success;
}

Errc record(CUevent he, CUstream hs, unsigned flags, bool pt, const char* api) {
  Event* ev = nullptr;
  TRY(resolve_event(he, api, ev));
  Stream* s = nullptr;
  TRY(resolve_stream(hs, pt, api, s));
  if (flags & ~1u)  // CU_EVENT_RECORD_EXTERNAL
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_EVENT_RECORD_DEFAULT and CU_EVENT_RECORD_EXTERNAL exist", api, flags);
  if (s->ctx() != ev->ctx())
    return fail(Errc::invalid_handle, "{}: event and stream belong to different contexts", api);
  std::shared_ptr<cap::Sequence> cseq;
  TRY(cap::intercept(*s, api, cseq));
  if (cseq) [[unlikely]] {  // a capture's record makes no node: the event names the stream's nodes now
    if (!cseq->active())
      return fail(Errc::stream_capture_invalidated, "{}: the stream's capture was invalidated", api);
    ev->set_captured(cseq, cseq->deps(*s));
    return Errc::success;
  }
  const bool timing = ev->timing();
  uint64_t* w = ev->shared();
  uint64_t nth = w ? std::atomic_ref<uint64_t>(w[0]).fetch_add(1) + 1 : 0;
  // Nothing ahead of it in stream order: the record completes now, and now is its timestamp.
  if (uint64_t seq = s->try_mark_now()) {
    Event::TimePoint when{};
    if (timing) when = std::chrono::steady_clock::now();
    if (w) complete_record(w, nth);
    ev->set(*s, seq, when, nullptr);
    return Errc::success;
  }
  // Queued behind work: the worker takes the timestamp when the record's turn comes.
  std::shared_ptr<EventRecord> rec = timing ? std::make_shared<EventRecord>() : nullptr;
  uint64_t seq = s->enqueue([rec, w, nth] {
    if (rec) rec->when = std::chrono::steady_clock::now();
    if (w) complete_record(w, nth);
  }, {}, true);
  ev->set(*s, seq, {}, std::move(rec));
  return Errc::success;
}

}  // namespace

Errc cuStreamCreate(CUstream* ph, unsigned int Flags) noexcept { return stream_create(ph, Flags, 0, "cuStreamCreate"); }
Errc cuStreamCreateWithPriority(CUstream* ph, unsigned int flags, int priority) noexcept {
  return stream_create(ph, flags, priority, "cuStreamCreateWithPriority");
}

Errc cuStreamDestroy_v2(CUstream h) noexcept {
  TRY(Driver::get().require_init("cuStreamDestroy"));
  auto v = reinterpret_cast<uintptr_t>(h);
  if (v <= 2)
    return fail(Errc::invalid_handle, "cuStreamDestroy: {} is a default-stream handle, which cannot be destroyed",
                static_cast<void*>(h));
  auto s = streams().remove(h);
  if (!s) return fail(Errc::invalid_handle, "cuStreamDestroy: {} is not a live stream", static_cast<void*>(h));
  // Managed memory attached to it reverts to its default association after the stream's work.
  ev::stream_destroyed.emit(s);
  // Work already queued still completes (the worker holds its own reference).
  return Errc::success;
}

Errc cuStreamQuery(CUstream h) noexcept { return query(h, false, "cuStreamQuery"); }
Errc cuStreamQuery_ptsz(CUstream h) noexcept { return query(h, true, "cuStreamQuery"); }
Errc cuStreamSynchronize(CUstream h) noexcept { return sync(h, false, "cuStreamSynchronize"); }
Errc cuStreamSynchronize_ptsz(CUstream h) noexcept { return sync(h, true, "cuStreamSynchronize"); }
Errc cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) noexcept { return wait_event(s, e, f, false, "cuStreamWaitEvent"); }
Errc cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) noexcept { return wait_event(s, e, f, true, "cuStreamWaitEvent"); }

Errc cuStreamGetPriority(CUstream h, int* p) noexcept {
  return stream_get(h, false, "cuStreamGetPriority", p, [&](Stream& s) { *p = s.priority(); });
}
Errc cuStreamGetPriority_ptsz(CUstream h, int* p) noexcept {
  return stream_get(h, true, "cuStreamGetPriority", p, [&](Stream& s) { *p = s.priority(); });
}
// NONE, ACTIVE, or INVALIDATED (a capture some call invalidated, until cuStreamEndCapture).
static CUstreamCaptureStatus capture_status(const Stream& s) {
  auto c = s.capture();
  if (!c) return CU_STREAM_CAPTURE_STATUS_NONE;
  return c->active() ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_INVALIDATED;
}
Errc cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus* st) noexcept {
  return stream_get(h, false, "cuStreamIsCapturing", st, [&](Stream& s) { *st = capture_status(s); });
}
Errc cuStreamIsCapturing_ptsz(CUstream h, CUstreamCaptureStatus* st) noexcept {
  return stream_get(h, true, "cuStreamIsCapturing", st, [&](Stream& s) { *st = capture_status(s); });
}

Errc cuStreamGetFlags(CUstream h, unsigned int* f) noexcept {
  return stream_get(h, false, "cuStreamGetFlags", f, [&](Stream& s) { *f = s.flags(); });
}
Errc cuStreamGetFlags_ptsz(CUstream h, unsigned int* f) noexcept {
  return stream_get(h, true, "cuStreamGetFlags", f, [&](Stream& s) { *f = s.flags(); });
}
Errc cuStreamGetId(CUstream h, unsigned long long* id) noexcept {
  return stream_get(h, false, "cuStreamGetId", id, [&](Stream& s) { *id = s.id(); });
}
Errc cuStreamGetId_ptsz(CUstream h, unsigned long long* id) noexcept {
  return stream_get(h, true, "cuStreamGetId", id, [&](Stream& s) { *id = s.id(); });
}
Errc cuStreamGetCtx(CUstream h, CUcontext* c) noexcept {
  return stream_get(h, false, "cuStreamGetCtx", c, [&](Stream& s) { *c = reinterpret_cast<CUcontext>(s.ctx()); });
}
Errc cuStreamGetCtx_ptsz(CUstream h, CUcontext* c) noexcept {
  return stream_get(h, true, "cuStreamGetCtx", c, [&](Stream& s) { *c = reinterpret_cast<CUcontext>(s.ctx()); });
}
Errc cuStreamGetDevice(CUstream h, CUdevice* d) noexcept {
  return stream_get(h, false, "cuStreamGetDevice", d, [&](Stream& s) { *d = s.ctx()->ordinal(); });
}
Errc cuStreamGetDevice_ptsz(CUstream h, CUdevice* d) noexcept {
  return stream_get(h, true, "cuStreamGetDevice", d, [&](Stream& s) { *d = s.ctx()->ordinal(); });
}

// Green contexts are not emulated: every stream belongs to an ordinary context, for which the
// driver answers NULL (measured on an H200: the NULL, legacy, per-thread and created streams).
// cuBLAS 13 asks in cublasCreate.
Errc cuStreamGetGreenCtx(CUstream h, CUgreenCtx* g) noexcept {
  return stream_get(h, false, "cuStreamGetGreenCtx", g, [&](Stream&) { *g = nullptr; });
}

Errc cuLaunchHostFunc(CUstream h, CUhostFn fn, void* u) noexcept { return host_func(h, fn, u, false, "cuLaunchHostFunc"); }
Errc cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void* u) noexcept { return host_func(h, fn, u, true, "cuLaunchHostFunc"); }
Errc cuStreamAddCallback(CUstream h, CUstreamCallback cb, void* u, unsigned int f) noexcept {
  return add_callback(h, cb, u, f, false, "cuStreamAddCallback");
}
Errc cuStreamAddCallback_ptsz(CUstream h, CUstreamCallback cb, void* u, unsigned int f) noexcept {
  return add_callback(h, cb, u, f, true, "cuStreamAddCallback");
}

Errc cuEventCreate(CUevent* ph, unsigned int Flags) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuEventCreate", ctx));
  TRY(need(ph, "cuEventCreate", "phEvent"));
  if (Flags & ~0x7u)
    return fail(Errc::invalid_value, "cuEventCreate: flags {:#x} contain unknown bits (valid: BLOCKING_SYNC 0x1, "
                "DISABLE_TIMING 0x2, INTERPROCESS 0x4)", Flags);
  if ((Flags & 0x4u) && !(Flags & 0x2u))
    return fail(Errc::invalid_value, "cuEventCreate: CU_EVENT_INTERPROCESS requires CU_EVENT_DISABLE_TIMING");
  auto ev = std::make_shared<Event>(Flags, ctx);
  *ph = static_cast<CUevent>(events().add_fresh(ev));
  return Errc::success;
}

Errc cuEventDestroy_v2(CUevent h) noexcept {
  TRY(Driver::get().require_init("cuEventDestroy"));
  auto ev = events().remove(h);
  if (!ev) return fail(Errc::invalid_handle, "cuEventDestroy: {} is not a live event", static_cast<void*>(h));
  ev->unshare();
  return Errc::success;
}

Errc cuEventRecord(CUevent e, CUstream s) noexcept { return record(e, s, 0, false, "cuEventRecord"); }
Errc cuEventRecord_ptsz(CUevent e, CUstream s) noexcept { return record(e, s, 0, true, "cuEventRecord"); }
Errc cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int f) noexcept {
  return record(e, s, f, false, "cuEventRecordWithFlags");
}
Errc cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int f) noexcept {
  return record(e, s, f, true, "cuEventRecordWithFlags");
}

Errc cuEventQuery(CUevent h) noexcept {
  Event* ev = nullptr;
  TRY(resolve_event(h, "cuEventQuery", ev));
  if (auto seq = ev->captured()) [[unlikely]] {
    if (seq->active())
      return seq->refuse(Errc::captured_event, "cuEventQuery", "the event was recorded in a capture still open");
    return fail(Errc::invalid_value, "cuEventQuery: the event was last recorded in a stream capture; it has no "
                "completion to report");
  }
  if (const uint64_t* w = ev->shared()) return completed_upto(w) >= issued(w) ? Errc::success : Errc::not_ready;
  // Never recorded: nothing pending.
  return ev->state() == Event::State::pending ? Errc::not_ready : Errc::success;
}

Errc cuEventSynchronize(CUevent h) noexcept {
  Event* ev = nullptr;
  TRY(resolve_event(h, "cuEventSynchronize", ev));
  TRY(not_in_host_function("cuEventSynchronize"));
  if (ev->captured()) [[unlikely]]
    return fail(Errc::invalid_value, "cuEventSynchronize: the event was last recorded in a stream capture; there is "
                "nothing to wait for");
  if (const uint64_t* w = ev->shared()) wait_shared(w, issued(w));
  switch (ev->observe_if_complete()) {
    case Event::State::never:
      return Errc::success;
    case Event::State::complete:
      break;
    case Event::State::pending: {
      auto snap = ev->snap();  // a reference: the wait may outlive a re-record or a destroy
      wait_dep(snap.dep);
      if (snap.dep.stream) snap.dep.stream->observe(snap.dep.seq);
      break;
    }
  }
  ev::host_synchronised.emit();
  if (Context* c = current_context_raw(); c && c->faulted()) return c->fault_error("cuEventSynchronize");
  return Errc::success;
}

Errc cuEventElapsedTime_v2(float* ms, CUevent hStart, CUevent hEnd) noexcept {
  const char* api = "cuEventElapsedTime";
  // The driver answers a NULL output with CUDA_ERROR_INVALID_HANDLE (measured), not INVALID_VALUE.
  if (!ms) return fail(Errc::invalid_handle, "{}: pMilliseconds is NULL", api);
  Event *a = nullptr, *b = nullptr;
  TRY(resolve_event(hStart, api, a));
  TRY(resolve_event(hEnd, api, b));
  if (!a->timing() || !b->timing())
    return fail(Errc::invalid_handle, "{}: an event created with CU_EVENT_DISABLE_TIMING has no timestamp", api);
  Event::TimePoint ta{}, tb{};
  auto sa = a->state(&ta), sb = b->state(&tb);
  if (sa == Event::State::never || sb == Event::State::never)
    return fail(Errc::invalid_handle, "{}: the {} event has never been recorded", api,
                sa != Event::State::never ? "end" : "start");
  if (sa != Event::State::complete || sb != Event::State::complete)
    return fail(Errc::not_ready, "{}: an event has not completed yet", api);
  std::chrono::duration<float, std::milli> d = tb - ta;
  *ms = d.count();
  return Errc::success;
}

}  // namespace cuda_shim::api
