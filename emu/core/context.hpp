// Contexts, the per-thread context stack, and the objects that resolve user handles
// (CUcontext, CUstream, CUevent) through registries.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/errc.hpp"
#include "core/registry.hpp"
#include "core/spinlock.hpp"
#include "core/stream.hpp"
#include "core/thread_state.hpp"

namespace cuda_shim {

struct Device;

class Context : public std::enable_shared_from_this<Context> {
 public:
  Context(Device* dev, unsigned flags, bool primary);
  Device* device() const { return dev_; }
  int ordinal() const { return ordinal_; }
  bool primary() const { return primary_; }
  uint64_t id() const { return id_; }
  unsigned flags() const { return flags_.load(); }
  void set_flags(unsigned f) { flags_.store(f); }
  // A primary context whose refcount fell to zero is inactive: its handle stays valid
  // for retain, but work submitted through it fails.
  bool active() const { return active_.load(std::memory_order_acquire); }
  void set_active(bool a);  // also invalidates every thread's cached handles

  // The legacy default stream of this context (created with the context).
  Stream& legacy() { return *legacy_; }
  std::shared_ptr<Stream> legacy_ptr() { return legacy_; }
  Stream* legacy_raw() const { return legacy_.get(); }
  // This thread's per-thread default stream in this context.
  std::shared_ptr<Stream> per_thread();
  Stream* per_thread_raw();  // the same, through the thread's cache
  void track(const std::shared_ptr<Stream>& s);
  // Every stream of the context that is still alive (for synchronize and legacy rules).
  std::vector<std::shared_ptr<Stream>> streams();
  void synchronize();
  // Drop streams and per-thread state (destroy / primary reset).
  void teardown();
  // cuCtxDestroy: the context is gone for good; break the context <-> legacy stream cycle.
  void retire() { legacy_.reset(); }
  void init_legacy();

  size_t limit[16] = {};

  // A kernel fault (illegal address, assert, ...) corrupts the context, as on a GPU: from then
  // on every call that needs the context answers the fault's code (sticky), until the context is
  // destroyed or, for a primary context, reset.
  bool faulted() const { return fault_.load(std::memory_order_acquire) != 0; }
  void set_fault(Errc e, std::string what);
  Errc fault_error(const char* api) const;
  Errc fault_code() const { return static_cast<Errc>(fault_.load(std::memory_order_acquire)); }


  // Peer access (cuCtxEnablePeerAccess): the ids of the contexts whose memory this one's
  // device may reach directly. Copies never need it; fills of another device's memory do.
  bool peer_enabled(uint64_t peer_id) const;
  // Enables or disables; false when it already was in that state.
  bool set_peer(uint64_t peer_id, bool on);
  // A context that goes (destroy, primary reset) is no one's peer any more.
  static void forget_peer(uint64_t peer_id);

 private:
  Device* dev_;
  int ordinal_;
  std::atomic<unsigned> flags_;
  bool primary_;
  uint64_t id_;
  std::atomic<bool> active_{true};
  std::atomic<int> fault_{0};
  mutable std::mutex fault_m_;
  std::string fault_what_;
  mutable SpinLock peers_m_;
  std::vector<uint64_t> peers_;
  std::shared_ptr<Stream> legacy_;
  std::mutex m_;
  std::vector<std::weak_ptr<Stream>> streams_;
};

Registry<Context>& contexts();
Registry<Stream>& streams();
Registry<Event>& events();
// Their epochs (Registry::epoch), kept in constant-initialized globals so that the hit paths
// below read each with one load, without reaching the registry.
extern std::atomic<uint64_t> g_ctx_epoch, g_stream_epoch, g_event_epoch;

// Thread's context stack. Entries are handles, validated on every use.
std::vector<void*>& ctx_stack();

// The thread's cache of its current context answers (no call, no lock, no reference count): the
// handle on top of the stack is the one validated last, and no context changed since.
inline bool ctx_cache_hit(const ThreadState& t) {
  return !t.stack.empty() && t.stack.back() == t.ctx_handle &&
         t.ctx_epoch == g_ctx_epoch.load(std::memory_order_acquire);
}
Context* current_context_slow(ThreadState& t);

// The current context, validated; null when none (or it was destroyed).
std::shared_ptr<Context> current_context();
// The same without a reference count: valid until this thread's next API call.
inline Context* current_context_raw() {
  ThreadState& t = ts();
  if (ctx_cache_hit(t)) [[likely]]
    return t.ctx.get();
  return current_context_slow(t);
}
// The current context, or a recorded failure: CUDA_ERROR_INVALID_CONTEXT when none is
// current or it was destroyed, CUDA_ERROR_CONTEXT_IS_DESTROYED... per the real driver.
// Also CUDA_ERROR_NOT_INITIALIZED before cuInit (a validated cache implies cuInit ran).
Errc require_context(const char* api, std::shared_ptr<Context>& out);
Errc require_context_slow(const char* api, Context*& out);
inline Errc require_context(const char* api, Context*& out) {
  ThreadState& t = ts();
  if (ctx_cache_hit(t) && t.ctx_ok) [[likely]] {
    out = t.ctx.get();
    if (out->faulted()) [[unlikely]]
      return out->fault_error(api);
    return Errc::success;
  }
  return require_context_slow(api, out);
}
// Device `ordinal`'s primary context, made (inactive, not retained) if it does not exist yet:
// for what the driver does without a current context (a library's managed variables).
std::shared_ptr<Context> primary_context(int ordinal);

// Resolve a CUstream argument: null means the current context's default stream
// (legacy, or the per-thread one when `per_thread_default` is set: the _ptsz/_ptds
// entry points), 0x1 = CU_STREAM_LEGACY, 0x2 = CU_STREAM_PER_THREAD.
// A live object of another kind (or host memory) passed where `want` ('s' stream, 'e' event,
// 'c' context) was expected: the code NVIDIA's driver answers (recorded with fail()), or
// invalid_handle, unrecorded, when it has no repeatable answer.
Errc wrong_kind(const void* h, char want, const char* api);
Errc resolve_stream(const void* h, bool per_thread_default, const char* api, std::shared_ptr<Stream>& out);
Errc resolve_stream_slow(const void* h, bool per_thread_default, const char* api, Stream*& out);
// The same through this thread's caches of validated handles: no lock, no call, no reference
// count on a hit. The stream stays alive until this thread's next API call.
inline Errc resolve_stream(const void* h, bool per_thread_default, const char* api, Stream*& out) {
  ThreadState& t = ts();
  const auto v = reinterpret_cast<uintptr_t>(h);
  if (v > 2) {
    const auto& slot = t.streams[t.last_slot];  // the stream resolved last
    if (slot.h == h && slot.stream_epoch == g_stream_epoch.load(std::memory_order_acquire) &&
        slot.ctx_epoch == g_ctx_epoch.load(std::memory_order_acquire)) [[likely]] {
      out = slot.s.get();
      return Errc::success;
    }
  } else if (ctx_cache_hit(t) && t.ctx_ok) {
    Context* c = t.ctx.get();
    if (v == 2 || (v == 0 && per_thread_default)) {
      if (t.pt_ctx_id == c->id() && t.pt_stream) {
        out = t.pt_stream;
        return Errc::success;
      }
    } else if (Stream* l = c->legacy_raw()) {
      out = l;
      return Errc::success;
    }
  }
  return resolve_stream_slow(h, per_thread_default, api, out);
}
Errc resolve_event(const void* h, const char* api, std::shared_ptr<Event>& out);
Errc resolve_event_slow(const void* h, const char* api, Event*& out);
// The same through this thread's cache: no lock, no call, no reference count on a hit. The
// event stays alive until this thread's next event lookup misses.
inline Errc resolve_event(const void* h, const char* api, Event*& out) {
  ThreadState& t = ts();
  const auto& slot = t.events[t.last_event];
  if (slot.h == h && slot.epoch == g_event_epoch.load(std::memory_order_acquire)) [[likely]] {
    out = slot.e.get();
    return Errc::success;
  }
  return resolve_event_slow(h, api, out);
}

// Synchronizing calls (stream, event, context, device synchronize) made from inside a host
// function would wait for the stream that runs it, for ever: CUDA_ERROR_NOT_PERMITTED, the code
// the documentation gives for CUDA calls from host functions (explained). Success elsewhere.
Errc in_host_function(const char* api);
inline Errc not_in_host_function(const char* api) {
  if (!ts().in_host_fn) [[likely]]
    return Errc::success;
  return in_host_function(api);
}

}  // namespace cuda_shim
