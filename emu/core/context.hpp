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
#include "core/stream.hpp"

namespace cuda_shim {

struct Device;

class Context : public std::enable_shared_from_this<Context> {
 public:
  Context(Device* dev, unsigned flags, bool primary);
  Device* device() const { return dev_; }
  int ordinal() const;
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

 private:
  Device* dev_;
  std::atomic<unsigned> flags_;
  bool primary_;
  uint64_t id_;
  std::atomic<bool> active_{true};
  std::shared_ptr<Stream> legacy_;
  std::mutex m_;
  std::vector<std::weak_ptr<Stream>> streams_;
};

Registry<Context>& contexts();
Registry<Stream>& streams();
Registry<Event>& events();

// Thread's context stack. Entries are handles, validated on every use.
std::vector<void*>& ctx_stack();
// The current context, validated; null when none (or it was destroyed).
std::shared_ptr<Context> current_context();
// The same without a reference count: valid until this thread's next API call.
Context* current_context_raw();
// The current context, or a recorded failure: CUDA_ERROR_INVALID_CONTEXT when none is
// current or it was destroyed, CUDA_ERROR_CONTEXT_IS_DESTROYED... per the real driver.
Errc require_context(const char* api, std::shared_ptr<Context>& out);
Errc require_context(const char* api, Context*& out);
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
// The same through this thread's cache of validated handles: no lock, no reference count
// on a hit. The stream stays alive until this thread's next API call.
Errc resolve_stream(const void* h, bool per_thread_default, const char* api, Stream*& out);
Errc resolve_event(const void* h, const char* api, std::shared_ptr<Event>& out);

// Synchronizing calls (stream, event, context, device synchronize) made from inside a host
// function would wait for the stream that runs it, for ever: CUDA_ERROR_NOT_PERMITTED, the code
// the documentation gives for CUDA calls from host functions (explained). Success elsewhere.
Errc not_in_host_function(const char* api);

// Called by teardown before a context's memory goes (cuCtxDestroy, primary release or reset), so
// higher rooms can drop what they keep per context (loaded modules). One hook; set once.
void set_context_teardown_hook(void (*hook)(const Context* ctx)) noexcept;

}  // namespace cuda_shim
