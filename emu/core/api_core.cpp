// Driver entries: init, versions, errors, devices, primary contexts, contexts.
#include <algorithm>
#include <cstring>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/fresh_alloc.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/events.hpp"
#include "core/usage.hpp"

namespace cuda_shim::api {

struct ErrText {
  int code;
  const char* name;
  const char* text;
};
constexpr ErrText kErrText[] = {
#define CU_ERR(code, name, text) {code, name, text},
#include "core/driver_errors.def"
#undef CU_ERR
};
namespace {
const ErrText* find_err(int code) {
  for (auto& e : kErrText)
    if (e.code == code) return &e;
  return nullptr;
}

Driver& drv() { return Driver::get(); }

// Validates a context handle given explicitly by the user.
Errc lookup_ctx(CUcontext h, const char* api, std::shared_ptr<Context>& out) {
  TRY(drv().require_init(api));
  out = contexts().find(h);
  if (!out) return fail(Errc::invalid_context, "{}: {} is not a live context", api, static_cast<void*>(h));
  return Errc::success;
}

}  // namespace

Errc cuInit(unsigned int Flags) noexcept {
  if (Flags != 0) return fail(Errc::invalid_value, "cuInit: Flags must be 0 (got {:#x})", Flags);
  if (drv().device_count() == 0)
    return fail(Errc::no_device, "cuInit: the emulator is configured with 0 devices (CUDA_SHIM_DEVICES=0)");
  return drv().init(Flags);
}

Errc cuDriverGetVersion(int* driverVersion) noexcept {
  TRY(need(driverVersion, "cuDriverGetVersion", "driverVersion"));
  *driverVersion = drv().driver_version();
  return Errc::success;
}

Errc cuGetErrorName(CUresult error, const char** pStr) noexcept {
  TRY(need(pStr, "cuGetErrorName", "pStr"));
  const ErrText* e = find_err(static_cast<int>(error));
  if (!e) {
    *pStr = nullptr;
    return fail(Errc::invalid_value, "cuGetErrorName: {} is not a CUresult value", static_cast<int>(error));
  }
  *pStr = e->name;
  return Errc::success;
}

Errc cuGetErrorString(CUresult error, const char** pStr) noexcept {
  TRY(need(pStr, "cuGetErrorString", "pStr"));
  const ErrText* e = find_err(static_cast<int>(error));
  if (!e) {
    *pStr = nullptr;
    return fail(Errc::invalid_value, "cuGetErrorString: {} is not a CUresult value", static_cast<int>(error));
  }
  *pStr = e->text;
  return Errc::success;
}

Errc cuDeviceGet(CUdevice* device, int ordinal) noexcept {
  TRY(drv().require_init("cuDeviceGet"));
  TRY(need(device, "cuDeviceGet", "device"));
  Device* d = nullptr;
  TRY(drv().device(ordinal, d, "cuDeviceGet"));
  *device = ordinal;
  return Errc::success;
}

Errc cuDeviceGetCount(int* count) noexcept {
  TRY(drv().require_init("cuDeviceGetCount"));
  TRY(need(count, "cuDeviceGetCount", "count"));
  *count = drv().device_count();
  return Errc::success;
}

Errc cuDeviceGetName(char* name, int len, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDeviceGetName"));
  TRY(need(name, "cuDeviceGetName", "name"));
  if (len <= 0) return fail(Errc::invalid_value, "cuDeviceGetName: len must be positive (got {})", len);
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDeviceGetName"));
  size_t n = std::min(static_cast<size_t>(len - 1), d->cfg.name.size());
  std::memcpy(name, d->cfg.name.data(), n);
  name[n] = '\0';
  return Errc::success;
}

static Errc get_uuid(CUuuid* uuid, CUdevice dev, const char* api) {
  TRY(drv().require_init(api));
  TRY(need(uuid, api, "uuid"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, api));
  std::memcpy(uuid->bytes, d->uuid, 16);
  return Errc::success;
}
Errc cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) noexcept { return get_uuid(uuid, dev, "cuDeviceGetUuid"); }
Errc cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) noexcept { return get_uuid(uuid, dev, "cuDeviceGetUuid_v2"); }

Errc cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDeviceTotalMem"));
  TRY(need(bytes, "cuDeviceTotalMem", "bytes"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDeviceTotalMem"));
  *bytes = d->cfg.total_mem;
  return Errc::success;
}

Errc cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDeviceGetAttribute"));
  TRY(need(pi, "cuDeviceGetAttribute", "pi"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDeviceGetAttribute"));
  int a = static_cast<int>(attrib);
  if (a < 0 || a >= Device::kMaxAttr || !d->attr_valid[a]) {
    if (a >= 153 && a <= 156)
      return fail(Errc::invalid_value, "cuDeviceGetAttribute: attribute {} (logical endpoints) exists from driver "
                  "13.3; this emulated driver reports {} (CUDA_SHIM_DRIVER_VERSION)", a, drv().driver_version());
    return fail(Errc::invalid_value, "cuDeviceGetAttribute: {} is not a CUdevice_attribute this driver knows", a);
  }
  *pi = d->attr[a];
  return Errc::success;
}

Errc cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDeviceGetPCIBusId"));
  TRY(need(pciBusId, "cuDeviceGetPCIBusId", "pciBusId"));
  if (len <= 0) return fail(Errc::invalid_value, "cuDeviceGetPCIBusId: len must be positive (got {})", len);
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDeviceGetPCIBusId"));
  size_t n = std::min(static_cast<size_t>(len - 1), d->pci_bus_id.size());
  std::memcpy(pciBusId, d->pci_bus_id.data(), n);
  pciBusId[n] = '\0';
  // The driver writes what fits, but a short buffer is still an error.
  if (n < d->pci_bus_id.size())
    return fail(Errc::invalid_value, "cuDeviceGetPCIBusId: len {} is too short for '{}' ({} bytes with the terminator)",
                len, d->pci_bus_id, d->pci_bus_id.size() + 1);
  return Errc::success;
}

Errc cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) noexcept {
  TRY(drv().require_init("cuDeviceGetByPCIBusId"));
  TRY(need(dev, "cuDeviceGetByPCIBusId", "dev"));
  TRY(need(pciBusId, "cuDeviceGetByPCIBusId", "pciBusId"));
  // Accept domain:bus:device.function and bus:device.function, any case, as the driver does.
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    domain = 0;
    if (std::sscanf(pciBusId, "%x:%x.%x", &bus, &device, &function) != 3)
      return fail(Errc::invalid_value, "cuDeviceGetByPCIBusId: '{}' is not a PCI bus id", pciBusId);
  }
  for (int i = 0; i < drv().device_count(); ++i) {
    Device& d = drv().dev(i);
    if (static_cast<int>(domain) == d.pci_domain && static_cast<int>(bus) == d.pci_bus &&
        static_cast<int>(device) == d.pci_device && function == 0) {
      *dev = i;
      return Errc::success;
    }
  }
  return fail(Errc::invalid_device, "cuDeviceGetByPCIBusId: no emulated device at '{}'", pciBusId);
}

Errc cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDeviceComputeCapability"));
  TRY(need(major, "cuDeviceComputeCapability", "major"));
  TRY(need(minor, "cuDeviceComputeCapability", "minor"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDeviceComputeCapability"));
  *major = d->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
  *minor = d->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
  return Errc::success;
}

Errc cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) noexcept {
  TRY(drv().require_init("cuDeviceCanAccessPeer"));
  TRY(need(canAccessPeer, "cuDeviceCanAccessPeer", "canAccessPeer"));
  Device* a = nullptr;
  Device* b = nullptr;
  TRY(drv().device(dev, a, "cuDeviceCanAccessPeer"));
  TRY(drv().device(peerDev, b, "cuDeviceCanAccessPeer"));
  *canAccessPeer = dev != peerDev ? 1 : 0;  // emulated devices share host memory
  return Errc::success;
}

// ---- primary contexts -------------------------------------------------------------
namespace {
constexpr unsigned kCtxFlagsMask = 0x07 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80;  // sched|map_host|lmem|coredump|user_coredump|sync_memops

std::shared_ptr<Context> primary_of(Device& d) {
  // Caller holds d.primary_mutex.
  if (!d.primary) {
    d.primary = make_fresh<Context>(&d, d.primary_flags, true);
    d.primary->init_legacy();
    d.primary->set_active(false);
    contexts().add(d.primary);
  }
  return d.primary;
}
}  // namespace

}  // namespace cuda_shim::api
namespace cuda_shim {
std::shared_ptr<Context> primary_context(int ordinal) {
  Device* d = nullptr;
  if (Driver::get().device(ordinal, d, "primary_context") != Errc::success) {
    clear_explanation();
    return nullptr;
  }
  std::lock_guard lk(d->primary_mutex);
  return api::primary_of(*d);
}
}  // namespace cuda_shim
namespace cuda_shim::api {

Errc cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) noexcept {
  TRY(drv().require_init("cuDevicePrimaryCtxRetain"));
  TRY(need(pctx, "cuDevicePrimaryCtxRetain", "pctx"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDevicePrimaryCtxRetain"));
  std::lock_guard lk(d->primary_mutex);
  auto ctx = primary_of(*d);
  if (d->primary_refcount++ == 0) {
    ctx->set_flags(d->primary_flags | 0x8);  // CU_CTX_MAP_HOST is always on
    ctx->set_active(true);
    usage::context_live(d->ordinal, +1, "cuDevicePrimaryCtxRetain");  // now visible to other processes
    ev::context_created.emit(ctx.get());
  }
  *pctx = reinterpret_cast<CUcontext>(ctx.get());
  return Errc::success;
}

Errc cuDevicePrimaryCtxRelease_v2(CUdevice dev) noexcept {
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDevicePrimaryCtxRelease"));
  std::lock_guard lk(d->primary_mutex);
  if (d->primary_refcount == 0)
    return fail(Errc::invalid_context, "cuDevicePrimaryCtxRelease: the primary context of device {} is not retained", dev);
  if (--d->primary_refcount == 0) {
    d->primary->teardown();
    d->primary->set_active(false);
    usage::context_live(d->ordinal, -1, "cuDevicePrimaryCtxRelease");
  }
  return Errc::success;
}

Errc cuDevicePrimaryCtxReset_v2(CUdevice dev) noexcept {
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDevicePrimaryCtxReset"));
  std::lock_guard lk(d->primary_mutex);
  if (d->primary) {
    d->primary->teardown();
    d->primary->set_active(false);
  }
  if (d->primary_refcount > 0) usage::context_live(d->ordinal, -1, "cuDevicePrimaryCtxReset");
  d->primary_refcount = 0;
  d->primary_flags = 0;
  return Errc::success;
}

Errc cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) noexcept {
  TRY(drv().require_init("cuDevicePrimaryCtxGetState"));
  TRY(need(flags, "cuDevicePrimaryCtxGetState", "flags"));
  TRY(need(active, "cuDevicePrimaryCtxGetState", "active"));
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDevicePrimaryCtxGetState"));
  std::lock_guard lk(d->primary_mutex);
  *flags = d->primary_flags;
  *active = d->primary_refcount > 0 ? 1 : 0;
  return Errc::success;
}

Errc cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) noexcept {
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuDevicePrimaryCtxSetFlags"));
  if ((flags & ~kCtxFlagsMask) || (flags & 0x7) == 3 || (flags & 0x7) > 4)
    return fail(Errc::invalid_value, "cuDevicePrimaryCtxSetFlags: flags {:#x} contain unknown bits or an invalid "
                "scheduling mode", flags);
  std::lock_guard lk(d->primary_mutex);
  d->primary_flags = flags;
  if (d->primary) d->primary->set_flags(flags | 0x8);
  return Errc::success;
}

// ---- contexts ---------------------------------------------------------------------
Errc cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) noexcept {
  TRY(drv().require_init("cuCtxCreate"));
  TRY(need(pctx, "cuCtxCreate", "pctx"));
  if ((flags & ~kCtxFlagsMask) || (flags & 0x7) == 3 || (flags & 0x7) > 4)
    return fail(Errc::invalid_value, "cuCtxCreate: flags {:#x} contain unknown bits or an invalid scheduling mode", flags);
  if (params && (params->execAffinityParams || params->numExecAffinityParams || params->cigParams))
    return fail(Errc::not_supported, "cuCtxCreate: execution affinity and CIG parameters are not emulated");
  Device* d = nullptr;
  TRY(drv().device(dev, d, "cuCtxCreate"));
  auto ctx = make_fresh<Context>(d, flags | 0x8, false);
  ctx->init_legacy();
  void* h = contexts().add(ctx);
  ctx_stack().push_back(h);
  *pctx = static_cast<CUcontext>(h);
  usage::context_live(d->ordinal, +1, "cuCtxCreate");
  ev::context_created.emit(ctx.get());
  return Errc::success;
}

Errc cuCtxDestroy_v2(CUcontext h) noexcept {
  TRY(drv().require_init("cuCtxDestroy"));
  if (!h) return fail(Errc::invalid_value, "cuCtxDestroy: ctx is NULL");
  auto ctx = contexts().find(h);
  if (Errc e = ctx ? Errc::success : wrong_kind(h, 'c', "cuCtxDestroy"); e != Errc::success && e != Errc::invalid_handle)
    return e;
  if (!ctx) return fail(Errc::invalid_context, "cuCtxDestroy: {} is not a live context", static_cast<void*>(h));
  if (ctx->primary())
    return fail(Errc::invalid_context, "cuCtxDestroy: {} is a primary context; release it with "
                "cuDevicePrimaryCtxRelease instead", static_cast<void*>(h));
  ctx->teardown();
  contexts().remove(h);
  ctx->retire();
  usage::context_live(ctx->ordinal(), -1, "cuCtxDestroy");
  auto& st = ctx_stack();
  if (!st.empty() && st.back() == h) st.pop_back();
  return Errc::success;
}

Errc cuCtxPushCurrent_v2(CUcontext h) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(lookup_ctx(h, "cuCtxPushCurrent", ctx));
  ctx_stack().push_back(h);
  return Errc::success;
}

Errc cuCtxPopCurrent_v2(CUcontext* pctx) noexcept {
  TRY(drv().require_init("cuCtxPopCurrent"));
  auto& st = ctx_stack();
  if (st.empty()) return fail(Errc::invalid_context, "cuCtxPopCurrent: the context stack of this thread is empty");
  if (pctx) *pctx = static_cast<CUcontext>(st.back());
  st.pop_back();
  return Errc::success;
}

Errc cuCtxSetCurrent(CUcontext h) noexcept {
  TRY(drv().require_init("cuCtxSetCurrent"));
  auto& st = ctx_stack();
  if (!h) {
    if (!st.empty()) st.pop_back();
    return Errc::success;
  }
  std::shared_ptr<Context> ctx;
  TRY(lookup_ctx(h, "cuCtxSetCurrent", ctx));
  if (st.empty()) st.push_back(h);
  else st.back() = h;
  return Errc::success;
}

Errc cuCtxGetCurrent(CUcontext* pctx) noexcept {
  TRY(drv().require_init("cuCtxGetCurrent"));
  TRY(need(pctx, "cuCtxGetCurrent", "pctx"));
  auto& st = ctx_stack();
  *pctx = st.empty() ? nullptr : static_cast<CUcontext>(st.back());
  return Errc::success;
}

Errc cuCtxGetDevice(CUdevice* device) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxGetDevice", ctx));
  TRY(need(device, "cuCtxGetDevice", "device"));
  *device = ctx->ordinal();
  return Errc::success;
}

Errc cuCtxGetDevice_v2(CUdevice* device, CUcontext h) noexcept {
  if (!h) return cuCtxGetDevice(device);
  std::shared_ptr<Context> ctx;
  TRY(lookup_ctx(h, "cuCtxGetDevice_v2", ctx));
  TRY(need(device, "cuCtxGetDevice_v2", "device"));
  *device = ctx->ordinal();
  return Errc::success;
}

Errc cuCtxGetFlags(unsigned int* flags) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxGetFlags", ctx));
  TRY(need(flags, "cuCtxGetFlags", "flags"));
  *flags = ctx->flags();
  return Errc::success;
}

Errc cuCtxSetFlags(unsigned int flags) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxSetFlags", ctx));
  if ((flags & ~kCtxFlagsMask) || (flags & 0x7) == 3 || (flags & 0x7) > 4)
    return fail(Errc::invalid_value, "cuCtxSetFlags: flags {:#x} contain unknown bits or an invalid scheduling mode", flags);
  ctx->set_flags(flags | 0x8);
  return Errc::success;
}

Errc cuCtxGetId(CUcontext h, unsigned long long* ctxId) noexcept {
  std::shared_ptr<Context> ctx;
  if (h) TRY(lookup_ctx(h, "cuCtxGetId", ctx));
  else TRY(require_context("cuCtxGetId", ctx));
  TRY(need(ctxId, "cuCtxGetId", "ctxId"));
  *ctxId = ctx->id();
  return Errc::success;
}

// No profiler collects anything here; the driver's answers without one attached (measured on an
// H200): NOT_INITIALIZED before cuInit, INVALID_CONTEXT without a current context, else
// success, however often started or stopped.
Errc cuProfilerStart() noexcept {
  std::shared_ptr<Context> ctx;
  return require_context("cuProfilerStart", ctx);
}
Errc cuProfilerStop() noexcept {
  std::shared_ptr<Context> ctx;
  return require_context("cuProfilerStop", ctx);
}

Errc cuCtxSynchronize() noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxSynchronize", ctx));
  TRY(not_in_host_function("cuCtxSynchronize"));
  TRY(cap::refuse_if_context_captures(ctx.get(), "cuCtxSynchronize"));
  ctx->synchronize();
  if (ctx->faulted()) return ctx->fault_error("cuCtxSynchronize");
  return Errc::success;
}

Errc cuCtxSynchronize_v2(CUcontext h) noexcept {
  if (!h) return cuCtxSynchronize();
  std::shared_ptr<Context> ctx;
  TRY(lookup_ctx(h, "cuCtxSynchronize_v2", ctx));
  TRY(not_in_host_function("cuCtxSynchronize_v2"));
  TRY(cap::refuse_if_context_captures(ctx.get(), "cuCtxSynchronize_v2"));
  ctx->synchronize();
  if (ctx->faulted()) return ctx->fault_error("cuCtxSynchronize_v2");
  return Errc::success;
}

Errc cuCtxGetApiVersion(CUcontext h, unsigned int* version) noexcept {
  std::shared_ptr<Context> ctx;
  if (h) TRY(lookup_ctx(h, "cuCtxGetApiVersion", ctx));
  else TRY(require_context("cuCtxGetApiVersion", ctx));
  TRY(need(version, "cuCtxGetApiVersion", "version"));
  *version = 3020;  // contexts made through the current (v2+) API report 3020
  return Errc::success;
}

Errc cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxGetStreamPriorityRange", ctx));
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return Errc::success;
}

namespace {
// CUlimit defaults measured on the H200; 0 marks a limit the driver refuses there
// (CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH answers CUDA_ERROR_UNSUPPORTED_LIMIT on Hopper).
constexpr size_t kLimitDefault[] = {1024, 8650752, 8388608, 0, 2048, 64, 11796480, 232448};
constexpr int kLimitCount = sizeof(kLimitDefault) / sizeof(kLimitDefault[0]);
}  // namespace

Errc cuCtxGetLimit(size_t* pvalue, CUlimit limit) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxGetLimit", ctx));
  TRY(need(pvalue, "cuCtxGetLimit", "pvalue"));
  int l = static_cast<int>(limit);
  if (l < 0 || l >= kLimitCount)  // measured: a value outside the enum is INVALID_VALUE
    return fail(Errc::invalid_value, "cuCtxGetLimit: {} is not a CUlimit (0..{})", l, kLimitCount - 1);
  if (kLimitDefault[l] == 0)
    return fail(Errc::unsupported_limit, "cuCtxGetLimit: limit {} is not supported on this device", l);
  *pvalue = ctx->limit[l] ? ctx->limit[l] : kLimitDefault[l];
  return Errc::success;
}

Errc cuCtxSetLimit(CUlimit limit, size_t value) noexcept {
  std::shared_ptr<Context> ctx;
  TRY(require_context("cuCtxSetLimit", ctx));
  int l = static_cast<int>(limit);
  if (l < 0 || l >= kLimitCount)
    return fail(Errc::invalid_value, "cuCtxSetLimit: {} is not a CUlimit (0..{})", l, kLimitCount - 1);
  if (kLimitDefault[l] == 0)
    return fail(Errc::unsupported_limit, "cuCtxSetLimit: limit {} is not supported on this device", l);
  ctx->limit[l] = value;
  return Errc::success;
}

}  // namespace cuda_shim::api

namespace cuda_shim::abi {
const char* cu_error_name(int code) noexcept {
  for (auto& e : api::kErrText)
    if (e.code == code) return e.name;
  return "CUDA_ERROR_UNKNOWN";
}
}  // namespace cuda_shim::abi
