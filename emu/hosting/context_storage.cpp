// Context-local storage (table c693336e..., "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301"): NVIDIA's
// runtime keeps its per-context state (streams it made, loaded modules, ...) as a value the
// driver stores for it under a key, with a destructor to run when the context goes.
//
// Values live here, keyed by the context's id (ids are never reused, handles are). As NVIDIA's
// driver does, the destructors run when the context goes (cuCtxDestroy, primary release to 0,
// reset): at ev::context_teardown, first among its listeners (ev::kFirst), while the context's
// streams, modules and memory are still there, in the thread tearing it down and outside this
// file's lock (a destructor may call back into the driver, storage calls included).
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "abi/call.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/events.hpp"
#include "hosting/hosting.hpp"

namespace cuda_shim::hosting {
namespace {

struct Value {
  void* value = nullptr;
  ClsDestructor dtor = nullptr;
};

struct Slots {
  CUcontext handle = nullptr;
  std::unordered_map<void*, Value> values;
};

struct Pending {  // a destructor to run, outside the lock
  ClsDestructor dtor;
  CUcontext ctx;
  void* key;
  void* value;
};

std::mutex g_m;
std::unordered_map<uint64_t, Slots>& table() {
  static auto* t = new std::unordered_map<uint64_t, Slots>();  // never destroyed: exit order
  return *t;
}

// The context is going: its values leave the table and their destructors run, in this thread.
void on_teardown(Context* ctx) noexcept {
  std::vector<Pending> pending;
  try {
    std::lock_guard lk(g_m);
    auto it = table().find(ctx->id());
    if (it == table().end()) return;
    for (auto& [k, v] : it->second.values)
      if (v.dtor) pending.push_back({v.dtor, it->second.handle, k, v.value});
    table().erase(it);
  } catch (...) {
    return;
  }
  for (auto& d : pending) d.dtor(d.ctx, d.key, d.value);
}
[[maybe_unused]] const ev::Registration kOnTeardown{ev::context_teardown, &on_teardown, ev::kFirst};

// The context a storage call names: its argument, or the current one when that is NULL.
Errc resolve(CUcontext h, const char* api, std::shared_ptr<Context>& out, CUcontext& handle) {
  TRY(Driver::get().require_init(api));
  if (h) {
    out = contexts().find(h);
    if (!out) return fail(Errc::invalid_context, "{}: {} is not a live context", api, static_cast<void*>(h));
    handle = h;
    return Errc::success;
  }
  out = current_context();
  if (!out)
    return fail(Errc::invalid_context, "{}: the context argument is NULL and no context is current on this thread",
                api);
  handle = reinterpret_cast<CUcontext>(out.get());
  return Errc::success;
}

// One storage call: the context it names, then `body(context, handle)` under the lock.
template <class Body>
CUresult storage_call(const char* api, CUcontext ctx, Body body) {
  return static_cast<CUresult>(abi::driver_call(api, [&]() -> Errc {
    std::shared_ptr<Context> c;
    CUcontext h = nullptr;
    TRY(resolve(ctx, api, c, h));
    std::lock_guard lk(g_m);
    return body(c, h);
  }));
}

}  // namespace

CUresult CUDAAPI cls_put(CUcontext ctx, void* key, void* value, ClsDestructor dtor) {
  return storage_call("CONTEXT_LOCAL_STORAGE[0] (put)", ctx, [&](const std::shared_ptr<Context>& c, CUcontext h) {
    Slots& s = table()[c->id()];
    s.handle = h;
    s.values[key] = Value{value, dtor};
    return Errc::success;
  });
}

CUresult CUDAAPI cls_delete(CUcontext ctx, void* key) {
  return storage_call("CONTEXT_LOCAL_STORAGE[1] (delete)", ctx, [&](const std::shared_ptr<Context>& c, CUcontext) {
    auto it = table().find(c->id());
    if (it != table().end()) it->second.values.erase(key);  // the caller's destructor is not run
    return Errc::success;
  });
}

CUresult CUDAAPI cls_get(void** value, CUcontext ctx, void* key) {
  static constexpr const char* api = "CONTEXT_LOCAL_STORAGE[2] (get)";
  if (!value)  // checked before the context is looked at
    return static_cast<CUresult>(abi::driver_call(api, [&] { return need(value, api, "value"); }));
  return storage_call(api, ctx, [&](const std::shared_ptr<Context>& c, CUcontext h) -> Errc {
    auto it = table().find(c->id());
    if (it != table().end()) {
      auto v = it->second.values.find(key);
      if (v != it->second.values.end()) {
        *value = v->second.value;
        return Errc::success;
      }
    }
    // The real driver's answer for a key never put (the runtime then puts one).
    return fail(Errc::invalid_handle, "{}: context {} holds no value under key {}", api, static_cast<void*>(h), key);
  });
}

}  // namespace cuda_shim::hosting
