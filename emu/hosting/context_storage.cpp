// Context-local storage (table c693336e..., "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301"): NVIDIA's
// runtime keeps its per-context state (streams it made, loaded modules, ...) as a value the
// driver stores for it under a key, with a destructor to run when the context goes.
//
// Values live here, keyed by the context's id (ids are never reused, handles are). The
// destructors run when a put replaces nothing and the context is seen gone: destroyed
// (cuCtxDestroy) or, for a primary context, released to zero or reset after it had been
// active. The core gives one teardown hook and the module room holds it, so the check is made
// at the next storage call (any context) rather than inside the teardown itself.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "abi/call.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "hosting/hosting.hpp"

namespace cuda_shim::hosting {
namespace {

struct Value {
  void* value = nullptr;
  ClsDestructor dtor = nullptr;
};

struct Slots {
  std::weak_ptr<Context> ctx;
  CUcontext handle = nullptr;
  bool seen_active = false;  // the context was active at some storage call
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

void drain(Slots& s, std::vector<Pending>& out) {
  for (auto& [k, v] : s.values)
    if (v.dtor) out.push_back({v.dtor, s.handle, k, v.value});
  s.values.clear();
}

// Caller holds g_m. Collects the values of contexts that are gone, or were reset since.
void sweep(std::vector<Pending>& out) {
  auto& t = table();
  for (auto it = t.begin(); it != t.end();) {
    auto c = it->second.ctx.lock();
    bool gone = !c || !contexts().find(it->second.handle);
    bool reset = c && it->second.seen_active && !c->active();
    if (gone || reset) {
      drain(it->second, out);
      if (gone) {
        it = t.erase(it);
        continue;
      }
      it->second.seen_active = false;
    } else if (c && c->active()) {
      it->second.seen_active = true;
    }
    ++it;
  }
}

void run(const std::vector<Pending>& p) {
  for (auto& d : p) d.dtor(d.ctx, d.key, d.value);
}

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

// One storage call: the context it names, then `body(context, handle, its slots or null)` under
// the lock; the destructors of values whose contexts are gone run afterwards, outside it.
template <class Body>
CUresult storage_call(const char* api, CUcontext ctx, Body body) {
  std::vector<Pending> pending;
  CUresult r = static_cast<CUresult>(abi::driver_call(api, [&]() -> Errc {
    std::shared_ptr<Context> c;
    CUcontext h = nullptr;
    TRY(resolve(ctx, api, c, h));
    std::lock_guard lk(g_m);
    sweep(pending);
    return body(c, h);
  }));
  run(pending);
  return r;
}

}  // namespace

CUresult CUDAAPI cls_put(CUcontext ctx, void* key, void* value, ClsDestructor dtor) {
  return storage_call("CONTEXT_LOCAL_STORAGE[0] (put)", ctx, [&](const std::shared_ptr<Context>& c, CUcontext h) {
    Slots& s = table()[c->id()];
    s.ctx = c;
    s.handle = h;
    s.seen_active = s.seen_active || c->active();
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
