// cuGetExportTable, the private runtime table, and the cuShim* extensions.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi/call.hpp"
#include "abi/inspect_table.hpp"
#include "nvml/nvml_table.hpp"
#include "abi/rt_table.hpp"
#include "abi/runtime_api.hpp"
#include "abi/trace_args.hpp"
#include "cuda_shim_ext.h"
#include "external/external.hpp"
#include "hosting/hosting.hpp"
#include "memory/managed.hpp"
#include "ipc/logical_endpoint.hpp"
#include "ipc/registry.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/address_space.hpp"
#include "memory/array.hpp"
#include "memory/pool.hpp"
#include "exec/launch.hpp"
#include "module/link.hpp"
#include "vmm/vmm.hpp"

namespace cuda_shim::abi {
namespace {

// The runtime's door: like driver_call, plus the runtime's last-error rule (every
// failing call except a query's "not ready" becomes the thread's last error).
template <class F>
cudaError_t runtime_call(const char* api, F&& body, const char* params = nullptr) noexcept {
  int e = call(api, static_cast<F&&>(body), /*runtime=*/true, params);
  if (e == 0) return cudaSuccess;
  Errc ec = static_cast<Errc>(e);
  if (ec != Errc::not_ready) rtapi::set_last_error(ec);
  return static_cast<cudaError_t>(to_cuda_error(ec));
}

#define RT_ENTRY(name, params, args)                                                       \
  cudaError_t rt_##name params noexcept {                                                  \
    return runtime_call(                                                                   \
        #name,                                                                             \
        [&](auto&... sink_) {                                                              \
          if constexpr (sizeof...(sink_) == 0) return rtapi::name args;                    \
          else (sink_.put args, ...);                                                      \
        },                                                                                 \
        #params);                                                                          \
  }
#include "abi/runtime_entries.def"
#undef RT_ENTRY

cudaError_t rt_not_supported(const char* api) noexcept {
  return runtime_call(api, [&] { return fail(Errc::not_supported, "{}: not implemented by cuda-shim yet", api); });
}
const char* rt_error_name(cudaError_t e) noexcept { return rtapi::error_name(e); }
const char* rt_error_string(cudaError_t e) noexcept { return rtapi::error_string(e); }
cudaError_t rt_get_last_error() noexcept { return static_cast<cudaError_t>(to_cuda_error(rtapi::get_last_error(true))); }
cudaError_t rt_peek_last_error() noexcept { return static_cast<cudaError_t>(to_cuda_error(rtapi::get_last_error(false))); }

const rt_bridge::RuntimeTable kRuntimeTable = {
    sizeof(rt_bridge::RuntimeTable),
    rt_bridge::kRuntimeTableVersion,
#define RT_ENTRY(name, params, args) &rt_##name,
#include "abi/runtime_entries.def"
#undef RT_ENTRY
#define RT_HOST(ret, name, params, args) &rtapi::name,
#include "abi/runtime_hosting.def"
#undef RT_HOST
    &rt_not_supported,
    &rt_error_name,
    &rt_error_string,
    &rt_get_last_error,
    &rt_peek_last_error,
};

}  // namespace
}  // namespace cuda_shim::abi

namespace cuda_shim::nvml_bridge {
extern const NvmlTable kNvmlTable;  // driver_nvml.cpp
}
namespace cuda_shim::inspect_bridge {
extern const InspectTable kInspectTable;  // driver_inspect.cpp
}

using cuda_shim::Errc;

extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuGetExportTable(const void** ppExportTable,
                                                                                   const CUuuid* pExportTableId) {
  // Our libcudart asking libcuda for the runtime inside it is the emulator talking to itself:
  // answered outside the call wrapper, so it never shows in traces or explanations.
  if (ppExportTable && pExportTableId &&
      std::memcmp(pExportTableId, &cuda_shim::rt_bridge::kRuntimeTableId, sizeof(CUuuid)) == 0) {
    *ppExportTable = &cuda_shim::abi::kRuntimeTable;
    return CUDA_SUCCESS;
  }
  // Likewise our libnvidia-ml.so.1 (emu/nvml) reading the devices and their users.
  if (ppExportTable && pExportTableId &&
      std::memcmp(pExportTableId, &cuda_shim::nvml_bridge::kNvmlTableId, sizeof(CUuuid)) == 0) {
    *ppExportTable = &cuda_shim::nvml_bridge::kNvmlTable;
    return CUDA_SUCCESS;
  }
  // And `cuda-shim smi` reading the registry.
  if (ppExportTable && pExportTableId &&
      std::memcmp(pExportTableId, &cuda_shim::inspect_bridge::kInspectTableId, sizeof(CUuuid)) == 0) {
    *ppExportTable = &cuda_shim::inspect_bridge::kInspectTable;
    return CUDA_SUCCESS;
  }
  return static_cast<CUresult>(cuda_shim::abi::driver_call("cuGetExportTable", [&]() -> Errc {
    if (!ppExportTable || !pExportTableId)
      return cuda_shim::fail(Errc::invalid_value, "cuGetExportTable: ppExportTable and pExportTableId must not be NULL");
    // NVIDIA's private tables, the ones its own runtime asks for (emu/hosting, docs/dark-api.md).
    if (const auto* t = cuda_shim::hosting::find_table(*pExportTableId)) {
      *ppExportTable = t->table;
      return Errc::success;
    }
    *ppExportTable = nullptr;
    const auto* b = reinterpret_cast<const unsigned char*>(pExportTableId->bytes);
    std::string id;
    for (int i = 0; i < 16; ++i) id += fmt::format("{:02x}", b[i]);
    return cuda_shim::fail(Errc::invalid_value, "cuGetExportTable: unknown export table id {} (cuda-shim hosts the "
                           "private tables NVIDIA's CUDA 13 runtime asks for, listed in docs/dark-api.md; this one "
                           "is not among them)", id);
  }));
}

extern "C" __attribute__((visibility("default"))) size_t cuShimGetLastExplanation(char* buf, size_t len) {
  const std::string& s = cuda_shim::explanation();
  if (buf && len) {
    size_t n = s.size() < len - 1 ? s.size() : len - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

extern "C" __attribute__((visibility("default"))) int cuShimGetLastExplanationCode(void) {
  return cuda_shim::explanation().empty() ? 0 : cuda_shim::to_curesult(cuda_shim::explanation_code());
}

namespace {
size_t copy_out(const std::string& s, char* buf, size_t len) {
  if (buf && len) {
    size_t n = s.size() < len - 1 ? s.size() : len - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}
}  // namespace

extern "C" __attribute__((visibility("default"))) size_t cuShimIpcState(char* buf, size_t len) {
  try {
    return copy_out(cuda_shim::ipc::dump(), buf, len);
  } catch (...) {
    return 0;
  }
}

extern "C" __attribute__((visibility("default"))) size_t cuShimCollectGarbage(char* buf, size_t len) {
  try {
    return copy_out(cuda_shim::ipc::collect_garbage(), buf, len);
  } catch (...) {
    return 0;
  }
}

extern "C" __attribute__((visibility("default"))) int cuShimRegistryCheck(char* buf, size_t len) {
  try {
    std::string report;
    int n = cuda_shim::ipc::check(report);
    copy_out(report, buf, len);
    return n;
  } catch (...) {
    copy_out("cuShimRegistryCheck: out of memory while checking the registry\n", buf, len);
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) size_t cuShimLogicalEndpointState(char* buf, size_t len) {
  try {
    return copy_out(cuda_shim::ipc::endpoint_state(), buf, len);
  } catch (...) {
    return 0;
  }
}

extern "C" __attribute__((visibility("default"))) int cuShimLogicalEndpointAccess(unsigned int leId, int dev,
                                                                                  unsigned long long offset, void* buf,
                                                                                  unsigned long long size, int write) {
  return cuda_shim::abi::driver_call("cuShimLogicalEndpointAccess", [&] {
    return cuda_shim::ipc::endpoint_access(leId, dev, offset, buf, size, write != 0, "cuShimLogicalEndpointAccess");
  });
}

extern "C" __attribute__((visibility("default"))) int cuShimGetObjectCounts(CUshimObjectCounts* c, size_t size) {
  if (!c || size < sizeof(CUshimObjectCounts)) return -1;
  using namespace cuda_shim;
  *c = CUshimObjectCounts{};
  c->contexts = contexts().size();
  c->streams = streams().size();
  c->events = events().size();
  c->memPools = mem::live_pool_count();
  c->vmmHandles = vmm::handle_count();
  c->vmmReservations = vmm::reservation_count();
  c->externalMemories = ext::live_memory_count();
  c->externalSemaphores = ext::live_semaphore_count();
  c->arrays = mem::arrays().size() + mem::mipmapped_arrays().size();
  c->addressRanges = mem::AddressSpace::get().count();
  for (int d = 0; d < Driver::get().device_count(); ++d) c->deviceBytesCharged += mem::charged(d);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int cuShimGetVersion(void) { return 100; }

// Never a rule's target itself (not a CUDA entry point), so a rule set cannot lock itself in.
extern "C" __attribute__((visibility("default"))) int cuShimSetFaults(const char* spec) {
  return cuda_shim::abi::driver_call("cuShimSetFaults", [&] { return cuda_shim::abi::set_faults(spec); });
}

// ---- exportable semaphores (the other API's side of an external semaphore) -----------------
namespace {
using cuda_shim::fail;
using cuda_shim::ext::SharedSemaphore;

cuda_shim::Errc semaphore_of(int fd, const char* api, std::shared_ptr<SharedSemaphore>& out) {
  auto o = cuda_shim::ext::identify(fd);
  if (o.exporter != cuda_shim::ext::Exporter::shim_semaphore || o.info.size < 4096 ||
      !(out = SharedSemaphore::map(fd)))
    return fail(Errc::invalid_value, "{}: fd {} is {}, not a semaphore made by cuShimExportableSemaphoreCreate", api,
                fd, o.describe());
  return Errc::success;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int cuShimExportableSemaphoreCreate(int* fd, int timeline,
                                                                                      unsigned long long initial) {
  return cuda_shim::abi::driver_call("cuShimExportableSemaphoreCreate", [&]() -> Errc {
    TRY(cuda_shim::need(fd, "cuShimExportableSemaphoreCreate", "fd"));
    return cuda_shim::ext::create_semaphore_object(timeline != 0, initial, "cuShimExportableSemaphoreCreate", *fd);
  });
}

extern "C" __attribute__((visibility("default"))) int cuShimExportableSemaphoreSignal(int fd, unsigned long long value) {
  return cuda_shim::abi::driver_call("cuShimExportableSemaphoreSignal", [&]() -> Errc {
    std::shared_ptr<SharedSemaphore> s;
    TRY(semaphore_of(fd, "cuShimExportableSemaphoreSignal", s));
    s->signal(value, s->timeline());
    return Errc::success;
  });
}

extern "C" __attribute__((visibility("default"))) int cuShimExportableSemaphoreGetValue(int fd,
                                                                                        unsigned long long* value) {
  return cuda_shim::abi::driver_call("cuShimExportableSemaphoreGetValue", [&]() -> Errc {
    TRY(cuda_shim::need(value, "cuShimExportableSemaphoreGetValue", "value"));
    std::shared_ptr<SharedSemaphore> s;
    TRY(semaphore_of(fd, "cuShimExportableSemaphoreGetValue", s));
    *value = s->value();
    return Errc::success;
  });
}

extern "C" __attribute__((visibility("default"))) int cuShimExportableSemaphoreWait(int fd, unsigned long long value,
                                                                                    unsigned int timeoutMs) {
  return cuda_shim::abi::driver_call("cuShimExportableSemaphoreWait", [&]() -> Errc {
    std::shared_ptr<SharedSemaphore> s;
    TRY(semaphore_of(fd, "cuShimExportableSemaphoreWait", s));
    if (!s->wait(value, s->timeline(), static_cast<long>(timeoutMs)))
      return fail(Errc::not_ready, "cuShimExportableSemaphoreWait: the semaphore did not reach {} within {} ms", value,
                  timeoutMs);
    return Errc::success;
  });
}

// ---- managed memory ---------------------------------------------------------------------------
extern "C" __attribute__((visibility("default"))) int cuShimGetManagedAttachment(unsigned long long ptr,
                                                                                 unsigned int* flags,
                                                                                 unsigned long long* streamId) {
  return cuda_shim::abi::driver_call("cuShimGetManagedAttachment", [&]() -> Errc {
    TRY(cuda_shim::need(flags, "cuShimGetManagedAttachment", "flags"));
    TRY(cuda_shim::need(streamId, "cuShimGetManagedAttachment", "streamId"));
    unsigned f = 0;
    uint64_t id = 0;
    TRY(cuda_shim::mem::attachment(static_cast<uintptr_t>(ptr), f, id));
    *flags = f;
    *streamId = id;
    return Errc::success;
  });
}

extern "C" __attribute__((visibility("default"))) unsigned long long cuShimManagedViolations(void) {
  return cuda_shim::mem::managed_violations();
}

extern "C" __attribute__((visibility("default"))) size_t cuShimGetLastManagedViolation(char* buf, size_t len) {
  try {
    return copy_out(cuda_shim::mem::last_managed_violation(), buf, len);
  } catch (...) {
    return 0;
  }
}

// ---- kernel launches (the launch policy's record) ------------------------------------------
extern "C" __attribute__((visibility("default"))) unsigned long long cuShimGetLaunchCount(void) {
  return cuda_shim::module::launch_count();
}

extern "C" __attribute__((visibility("default"))) int cuShimGetLaunchRecord(unsigned long long index,
                                                                            CUshimLaunchRecord* rec, char* name,
                                                                            size_t len) {
  return cuda_shim::abi::driver_call("cuShimGetLaunchRecord", [&]() -> Errc {
    if (!rec) return cuda_shim::fail(Errc::invalid_value, "cuShimGetLaunchRecord: rec is NULL");
    std::string n;
    if (!cuda_shim::module::launch_record(index, *rec, n))
      return cuda_shim::fail(Errc::invalid_value, "cuShimGetLaunchRecord: launch {} is not kept ({} launches so far; "
                             "the most recent 4096 are kept)", index, cuda_shim::module::launch_count());
    copy_out(n, name, len);
    return Errc::success;
  });
}

// The JIT linker's joining, for libnvJitLink.so.13 (emu/nvjitlink/): module/link.hpp.
namespace {
template <class T>
T* malloc_copy(const void* data, size_t bytes) noexcept {
  void* p = std::malloc(bytes ? bytes : 1);
  if (p && bytes) std::memcpy(p, data, bytes);
  return static_cast<T*>(p);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int cuShimLinkInputPtx(int type, const void* data, size_t size,
                                                                         const char* name, int cc, char** ptx,
                                                                         size_t* ptxSize) {
  const char* api = "cuShimLinkInputPtx";
  return cuda_shim::abi::driver_call(api, [&]() -> cuda_shim::Errc {
    TRY(cuda_shim::need(data, api, "data"));
    TRY(cuda_shim::need(ptx, api, "ptx"));
    TRY(cuda_shim::need(ptxSize, api, "ptxSize"));
    std::string out;
    TRY(cuda_shim::module::link_input_ptx(type, data, size, name, cc, out, api));
    char* p = malloc_copy<char>(out.c_str(), out.size() + 1);
    if (!p) return cuda_shim::fail(cuda_shim::Errc::out_of_memory, "{}: no memory for {} bytes", api, out.size());
    *ptx = p;
    *ptxSize = out.size();
    return cuda_shim::Errc::success;
  });
}

extern "C" __attribute__((visibility("default"))) int cuShimLinkPtx(const char* const* ptx, unsigned int n, int cc,
                                                                    int maxRegisters, char** joined, size_t* joinedSize, void** image,
                                                                    size_t* imageSize) {
  const char* api = "cuShimLinkPtx";
  return cuda_shim::abi::driver_call(api, [&]() -> cuda_shim::Errc {
    if (n) TRY(cuda_shim::need(ptx, api, "ptx"));
    TRY(cuda_shim::need(joined, api, "joined"));
    TRY(cuda_shim::need(joinedSize, api, "joinedSize"));
    TRY(cuda_shim::need(image, api, "image"));
    TRY(cuda_shim::need(imageSize, api, "imageSize"));
    std::vector<std::string> inputs;
    for (unsigned i = 0; i < n; ++i) {
      TRY(cuda_shim::need(ptx[i], api, "ptx[i]"));
      inputs.emplace_back(ptx[i]);
    }
    std::string text;
    std::vector<uint8_t> bin;
    TRY(cuda_shim::module::link_ptx(inputs, cc, maxRegisters, text, bin, api));
    char* t = malloc_copy<char>(text.c_str(), text.size() + 1);
    void* b = malloc_copy<void>(bin.data(), bin.size());
    if (!t || !b) {
      std::free(t);
      std::free(b);
      return cuda_shim::fail(cuda_shim::Errc::out_of_memory, "{}: no memory for the linked image", api);
    }
    *joined = t;
    *joinedSize = text.size();
    *image = b;
    *imageSize = bin.size();
    return cuda_shim::Errc::success;
  });
}
