#include "core/context.hpp"
#include "core/fresh_alloc.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/driver.hpp"
#include "core/thread_state.hpp"
#include "core/events.hpp"

namespace cuda_shim {
namespace {
std::atomic<uint64_t> g_next_ctx_id{1};
}  // namespace

// Start at 1: the thread caches' empty slots hold epoch 0.
constinit std::atomic<uint64_t> g_ctx_epoch{1}, g_stream_epoch{1}, g_event_epoch{1};

Registry<Context>& contexts() {
  static auto* r = new Registry<Context>(g_ctx_epoch);
  return *r;
}
Registry<Stream>& streams() {
  static auto* r = new Registry<Stream>(g_stream_epoch);
  return *r;
}
Registry<Event>& events() {
  static auto* r = new Registry<Event>(g_event_epoch);
  return *r;
}

Context::Context(Device* dev, unsigned flags, bool primary)
    : dev_(dev), ordinal_(dev->ordinal), flags_(flags), primary_(primary), id_(g_next_ctx_id.fetch_add(1)) {}

void Context::set_active(bool a) {
  active_.store(a, std::memory_order_release);
  contexts().bump();
}

void Context::init_legacy() {
  legacy_ = make_fresh<Stream>(shared_from_this(), StreamKind::legacy, 0u, 0);
}

std::shared_ptr<Stream> Context::per_thread() {
  auto& slot = ts().per_thread[id_];
  if (!slot) {
    slot = make_fresh<Stream>(shared_from_this(), StreamKind::per_thread, 0u, 0);
    track(slot);
  }
  return slot;
}

Stream* Context::per_thread_raw() {
  ThreadState& t = ts();
  if (t.pt_ctx_id == id_ && t.pt_stream) return t.pt_stream;
  Stream* s = per_thread().get();  // owned by t.per_thread
  t.pt_ctx_id = id_;
  t.pt_stream = s;
  return s;
}

void Context::track(const std::shared_ptr<Stream>& s) {
  std::lock_guard lk(m_);
  // Forget streams that are gone so the list does not grow without bound.
  if (streams_.size() >= 64 && (streams_.size() & (streams_.size() - 1)) == 0)
    std::erase_if(streams_, [](auto& w) { return w.expired(); });
  streams_.push_back(s);
}

std::vector<std::shared_ptr<Stream>> Context::streams() {
  std::vector<std::shared_ptr<Stream>> out;
  std::lock_guard lk(m_);
  out.reserve(streams_.size());
  for (auto& w : streams_)
    if (auto s = w.lock()) out.push_back(std::move(s));
  return out;
}

void Context::synchronize() {
  if (legacy_) legacy_->synchronize();
  for (auto& s : streams()) s->synchronize();
  ev::host_synchronised.emit();
}

bool Context::peer_enabled(uint64_t peer_id) const {
  std::lock_guard lk(peers_m_);
  return std::find(peers_.begin(), peers_.end(), peer_id) != peers_.end();
}

bool Context::set_peer(uint64_t peer_id, bool on) {
  std::lock_guard lk(peers_m_);
  auto it = std::find(peers_.begin(), peers_.end(), peer_id);
  if (on == (it != peers_.end())) return false;
  if (on)
    peers_.push_back(peer_id);
  else
    peers_.erase(it);
  return true;
}

void Context::forget_peer(uint64_t peer_id) {
  contexts().for_each([&](const std::shared_ptr<Context>& c) { c->set_peer(peer_id, false); });
}

void Context::teardown() {
  synchronize();
  {
    std::lock_guard lk(peers_m_);
    peers_.clear();
  }
  forget_peer(id_);
  ev::context_teardown.emit(this);  // before the streams go: listeners may still use them
  std::vector<std::shared_ptr<Stream>> gone;
  {
    std::lock_guard lk(m_);
    for (auto& w : streams_)
      if (auto s = w.lock()) gone.push_back(std::move(s));
    streams_.clear();
  }
  for (auto& s : gone) cuda_shim::streams().remove(s->handle());  // user streams: fresh handle values
  ThreadState& t = ts();
  t.per_thread.erase(id_);
  if (t.pt_ctx_id == id_) t.pt_stream = nullptr;
  // A context's allocations die with it (cuCtxDestroy, primary release to zero, reset).
  ev::context_released.emit(this);
}

std::vector<void*>& ctx_stack() { return ts().stack; }

Context* current_context_slow(ThreadState& t) {
  if (t.stack.empty()) return nullptr;
  void* h = t.stack.back();
  const uint64_t e = contexts().epoch();  // read before the lookup: a later change re-validates
  std::shared_ptr<Context> c = contexts().find(h);
  t.ctx_ok = c && c->active();  // read after the epoch too: set_active bumps it after the store
  t.ctx = std::move(c);
  t.ctx_handle = h;
  t.ctx_epoch = e;
  return t.ctx.get();
}

std::shared_ptr<Context> current_context() {
  if (!current_context_raw()) return nullptr;
  return ts().ctx;
}

Errc require_context_slow(const char* api, Context*& out) {
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  ThreadState& t = ts();
  if (t.stack.empty())
    return fail(Errc::invalid_context, "{}: no context is current on this thread (call cuCtxSetCurrent, "
                "cuDevicePrimaryCtxRetain + cuCtxSetCurrent, or any runtime call first)", api);
  out = current_context_raw();
  if (!out)
    return fail(Errc::invalid_context, "{}: the current context {} has been destroyed", api, t.stack.back());
  if (!out->active())  // measured: 709 after cudaDeviceReset left the primary current
    return fail(Errc::context_is_destroyed, "{}: the current context is a primary context that was reset or "
                "released to a reference count of 0; retain it again (or call any runtime function)", api);
  if (out->faulted()) return out->fault_error(api);
  return Errc::success;
}

void Context::set_fault(Errc e, std::string what) {
  std::lock_guard lk(fault_m_);
  if (fault_.load(std::memory_order_relaxed)) return;  // the first fault is the one reported
  fault_what_ = std::move(what);
  fault_.store(static_cast<int>(e), std::memory_order_release);
}

Errc Context::fault_error(const char* api) const {
  std::lock_guard lk(fault_m_);
  return fail(static_cast<Errc>(fault_.load(std::memory_order_relaxed)),
              "{}: the context is unusable after a kernel fault (sticky, as on a GPU; destroy the context or reset "
              "the device): {}", api, fault_what_);
}

Errc require_context(const char* api, std::shared_ptr<Context>& out) {
  Context* c = nullptr;
  if (Errc e = require_context(api, c); e != Errc::success) return e;
  out = ts().ctx;
  return Errc::success;
}

Errc wrong_kind(const void* h, char want, const char* api) {
  // NVIDIA's driver reads a live object of another kind as the kind it expected and answers from
  // its fields; measured (H100, driver 580, difftest), only the answers that repeat are given.
  // Host memory (pinned or managed) was read as zeros there; other memory, and contexts, crash it.
  const char* other = events().find(h) ? "an event" : streams().find(h) ? "a stream" : ev::object_kind.get()(h);
  const char* kind = want == 's' ? "stream" : want == 'e' ? "event" : "context";
  Errc e = Errc::invalid_handle;
  if (!other) return e;
  const std::string_view o = other;
  if (want == 'c' && o != "a stream") e = Errc::context_is_destroyed;
  if (want == 'e') e = o == "host memory" ? Errc::invalid_context : Errc::context_is_destroyed;
  if (want == 's' && o != "host memory") e = o == "an event" ? Errc::context_is_destroyed : Errc::invalid_context;
  if (e == Errc::invalid_handle) return e;
  return fail(e, "{}: {} is {}, not a {}; NVIDIA's driver reads it as one and answers with this code", api, h,
              other, kind);
}

Errc resolve_stream_slow(const void* h, bool per_thread_default, const char* api, Stream*& out) {
  auto v = reinterpret_cast<uintptr_t>(h);
  if (v == 0 || v == 1 || v == 2) {
    Context* ctx = nullptr;
    if (Errc e = require_context(api, ctx); e != Errc::success) return e;
    bool pt = v == 2 || (v == 0 && per_thread_default);
    out = pt ? ctx->per_thread_raw() : &ctx->legacy();
    return Errc::success;
  }
  // A cache hit implies the driver was initialized when the slot was filled.
  ThreadState& t = ts();
  const uint64_t se = streams().epoch(), ce = contexts().epoch();
  for (unsigned k = 0; k < 4; ++k) {
    auto& slot = t.streams[k];
    if (slot.h == h && slot.stream_epoch == se && slot.ctx_epoch == ce && slot.s) {
      t.last_slot = k;
      out = slot.s.get();
      return Errc::success;
    }
  }
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  std::shared_ptr<Stream> s = streams().find(h);
  if (Errc e = s ? Errc::success : wrong_kind(h, 's', api); e != Errc::success && e != Errc::invalid_handle) return e;
  if (!s) return fail(Errc::invalid_handle, "{}: stream {} is not a live stream (destroyed, or never created)", api, h);
  if (!s->ctx()->active() || !contexts().find(s->ctx()))
    return fail(Errc::invalid_context, "{}: stream {} belongs to a context that no longer exists", api, h);
  t.last_slot = t.next_slot++ % 4;
  auto& slot = t.streams[t.last_slot];
  slot.h = h;
  slot.stream_epoch = se;
  slot.ctx_epoch = ce;
  slot.s = std::move(s);
  out = slot.s.get();
  return Errc::success;
}

Errc resolve_stream(const void* h, bool per_thread_default, const char* api, std::shared_ptr<Stream>& out) {
  Stream* s = nullptr;
  if (Errc e = resolve_stream(h, per_thread_default, api, s); e != Errc::success) return e;
  out = s->shared_from_this();
  return Errc::success;
}

Errc in_host_function(const char* api) {
  return fail(Errc::not_permitted, "{}: called from inside a host function (cuLaunchHostFunc / cuStreamAddCallback), "
              "whose stream cannot complete until it returns; host functions must not make CUDA calls", api);
}

Errc resolve_event(const void* h, const char* api, std::shared_ptr<Event>& out) {
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  out = events().find(h);
  if (Errc e = out ? Errc::success : wrong_kind(h, 'e', api); e != Errc::success && e != Errc::invalid_handle) return e;
  if (!out) return fail(Errc::invalid_handle, "{}: event {} is not a live event (destroyed, or never created)", api, h);
  return Errc::success;
}

Errc resolve_event_slow(const void* h, const char* api, Event*& out) {
  ThreadState& t = ts();
  const uint64_t epoch = events().epoch();  // bumped by every destroy; read before the lookup
  if (auto& slot = t.events[t.last_event ^ 1]; slot.h == h && slot.epoch == epoch && slot.e) {
    t.last_event ^= 1;
    out = slot.e.get();
    return Errc::success;
  }
  std::shared_ptr<Event> e;
  if (Errc r = resolve_event(h, api, e); r != Errc::success) return r;
  // Never the slot used last: a call that resolves two events keeps the first one's reference.
  t.last_event ^= 1;
  auto& slot = t.events[t.last_event];
  slot.h = h;
  slot.epoch = epoch;
  slot.e = std::move(e);
  out = slot.e.get();
  return Errc::success;
}

}  // namespace cuda_shim
