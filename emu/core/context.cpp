#include "core/context.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/driver.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"

namespace cuda_shim {
namespace {
std::atomic<uint64_t> g_next_ctx_id{1};

// This thread's per-thread default streams, by context id.
struct PerThread {
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> by_ctx;
};
thread_local PerThread t_per_thread;
thread_local std::vector<void*> t_stack;
}  // namespace

Registry<Context>& contexts() {
  static auto* r = new Registry<Context>();
  return *r;
}
Registry<Stream>& streams() {
  static auto* r = new Registry<Stream>();
  return *r;
}
Registry<Event>& events() {
  static auto* r = new Registry<Event>();
  return *r;
}

Context::Context(Device* dev, unsigned flags, bool primary)
    : dev_(dev), flags_(flags), primary_(primary), id_(g_next_ctx_id.fetch_add(1)) {}

int Context::ordinal() const { return dev_->ordinal; }

void Context::init_legacy() {
  legacy_ = std::make_shared<Stream>(shared_from_this(), StreamKind::legacy, 0u, 0);
}

std::shared_ptr<Stream> Context::per_thread() {
  auto& slot = t_per_thread.by_ctx[id_];
  if (!slot) {
    slot = std::make_shared<Stream>(shared_from_this(), StreamKind::per_thread, 0u, 0);
    track(slot);
  }
  return slot;
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
  mem::pools_after_sync();
}

void Context::teardown() {
  synchronize();
  std::vector<std::shared_ptr<Stream>> gone;
  {
    std::lock_guard lk(m_);
    for (auto& w : streams_)
      if (auto s = w.lock()) gone.push_back(std::move(s));
    streams_.clear();
  }
  for (auto& s : gone) cuda_shim::streams().remove(s.get());
  t_per_thread.by_ctx.erase(id_);
  // A context's allocations die with it (cuCtxDestroy, primary release to zero, reset).
  mem::release_context(this);
}

std::vector<void*>& ctx_stack() { return t_stack; }

std::shared_ptr<Context> current_context() {
  if (t_stack.empty()) return nullptr;
  return contexts().find(t_stack.back());
}

Errc require_context(const char* api, std::shared_ptr<Context>& out) {
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  if (t_stack.empty())
    return fail(Errc::invalid_context, "{}: no context is current on this thread (call cuCtxSetCurrent, "
                "cuDevicePrimaryCtxRetain + cuCtxSetCurrent, or any runtime call first)", api);
  out = contexts().find(t_stack.back());
  if (!out)
    return fail(Errc::invalid_context, "{}: the current context {} has been destroyed", api, t_stack.back());
  if (!out->active())  // measured: 709 after cudaDeviceReset left the primary current
    return fail(Errc::context_is_destroyed, "{}: the current context is a primary context that was reset or "
                "released to a reference count of 0; retain it again (or call any runtime function)", api);
  return Errc::success;
}

Errc resolve_stream(const void* h, bool per_thread_default, const char* api, std::shared_ptr<Stream>& out) {
  auto v = reinterpret_cast<uintptr_t>(h);
  if (v == 0 || v == 1 || v == 2) {
    std::shared_ptr<Context> ctx;
    if (Errc e = require_context(api, ctx); e != Errc::success) return e;
    bool pt = v == 2 || (v == 0 && per_thread_default);
    out = pt ? ctx->per_thread() : ctx->legacy_ptr();
    return Errc::success;
  }
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  out = streams().find(h);
  if (!out) return fail(Errc::invalid_handle, "{}: stream {} is not a live stream (destroyed, or never created)", api, h);
  if (!out->ctx()->active() || !contexts().find(out->ctx()))
    return fail(Errc::invalid_context, "{}: stream {} belongs to a context that no longer exists", api, h);
  return Errc::success;
}

Errc resolve_event(const void* h, const char* api, std::shared_ptr<Event>& out) {
  if (Errc e = Driver::get().require_init(api); e != Errc::success) return e;
  out = events().find(h);
  if (!out) return fail(Errc::invalid_handle, "{}: event {} is not a live event (destroyed, or never created)", api, h);
  return Errc::success;
}

}  // namespace cuda_shim
