// Runtime state: selected device, implicit initialization, last error, error texts.
#include "runtime/rt_state.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/thread_state.hpp"

namespace cuda_shim::rt {
namespace {

// Which primary contexts the runtime holds a reference on (one per process, as
// NVIDIA's runtime holds one), and their handles.
struct Held {
  std::mutex m;
  std::vector<CUcontext> handle;  // null: the runtime holds no reference
};
Held& held() {
  static auto* h = new Held();  // never destroyed: other threads may outlive main()
  return *h;
}

}  // namespace

Errc init() {
  if (Driver::get().initialized()) [[likely]]
    return Errc::success;
  return api::cuInit(0);
}

Errc primary(int dev, CUcontext& out, const char* api) {
  Device* d = nullptr;
  RT_TRY(Driver::get().device(dev, d, api));
  Held& h = held();
  std::lock_guard lk(h.m);
  if (h.handle.size() < static_cast<size_t>(Driver::get().device_count()))
    h.handle.resize(Driver::get().device_count(), nullptr);
  if (CUcontext c = h.handle[dev]) {
    // Still ours unless someone reset or over-released it (it is then inactive).
    auto ctx = contexts().find(c);
    if (ctx && ctx->active()) {
      out = c;
      return Errc::success;
    }
  }
  CUcontext c = nullptr;
  RT_TRY(api::cuDevicePrimaryCtxRetain(&c, dev));
  h.handle[dev] = c;
  out = c;
  return Errc::success;
}

void forget_primary(int dev) {
  Held& h = held();
  std::lock_guard lk(h.m);
  if (dev >= 0 && static_cast<size_t>(dev) < h.handle.size()) h.handle[dev] = nullptr;
}

Errc context_slow(const char* api, std::shared_ptr<Context>* out) {
  RT_TRY(init());
  auto& st = ctx_stack();
  if (!st.empty()) {
    Context* c = current_context_raw();  // the thread's validated cache: no lock on a hit
    if (!c)
      return fail(Errc::context_is_destroyed, "{}: the context current on this thread ({}) was destroyed with "
                  "cuCtxDestroy", api, st.back());
    if (!c->active()) {
      // A primary context whose references were dropped (cudaDeviceReset, or the
      // driver API released it): the runtime initializes it again.
      CUcontext h = nullptr;
      RT_TRY(primary(c->ordinal(), h, api));
    }
    if (out) *out = current_context();
    return Errc::success;
  }
  CUcontext h = nullptr;
  RT_TRY(primary(ts().device, h, api));
  RT_TRY(api::cuCtxSetCurrent(h));
  if (out) *out = contexts().find(h);
  return Errc::success;
}

int current_device() {
  if (Context* c = current_context_raw()) return c->ordinal();
  return ts().device;
}

Errc select_device(int dev, const char* api) {
  RT_TRY(init());
  CUcontext h = nullptr;
  RT_TRY(primary(dev, h, api));
  RT_TRY(api::cuCtxSetCurrent(h));
  ts().device = dev;
  return Errc::success;
}

}  // namespace cuda_shim::rt

// ---- last error and error texts ------------------------------------------------------
namespace cuda_shim::rtapi {
namespace {
struct ErrText {
  int code;
  const char* name;
  const char* text;
};
constexpr ErrText kRtErr[] = {
#define RT_ERR(code, name, text) {code, name, text},
#include "runtime/runtime_errors.def"
#undef RT_ERR
};
constexpr const char* kUnrecognized = "unrecognized error code";

const ErrText* find(int code) {
  auto it = std::lower_bound(std::begin(kRtErr), std::end(kRtErr), code,
                             [](const ErrText& e, int c) { return e.code < c; });
  return it != std::end(kRtErr) && it->code == code ? it : nullptr;
}
}  // namespace

void set_last_error(Errc e) noexcept { ts().last_error = e; }

Errc get_last_error(bool reset) noexcept {
  ThreadState& t = ts();
  Errc e = t.last_error;
  if (reset) t.last_error = Errc::success;
  return e;
}

const char* error_name(int code) noexcept {
  const ErrText* e = find(code);
  return e ? e->name : kUnrecognized;
}

const char* error_string(int code) noexcept {
  const ErrText* e = find(code);
  return e ? e->text : kUnrecognized;
}

}  // namespace cuda_shim::rtapi
