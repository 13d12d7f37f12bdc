// libnvidia-ml.so.1: initialization, system queries, device handles and identity, memory and
// processes. Every answer comes from libcuda.so.1's view (nvml_table.hpp), so NVML and the
// driver agree: names, UUIDs, PCI ids, memory used by every process on each device.
#include <strings.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <cuda.h>

#include "nvml/nvml_internal.hpp"
#include "core/limits.hpp"

namespace cuda_shim::nvml {
namespace {

using nvml_bridge::DeviceInfo;
using nvml_bridge::NvmlTable;

struct DeviceSlot {
  int ordinal;
};
DeviceSlot g_devices[kMaxDevices] = {};  // handles point here; the pointer says which device

std::mutex g_mu;
int g_refs = 0;  // nvmlInit calls not yet matched by nvmlShutdown
std::atomic<const NvmlTable*> g_table{nullptr};

nvmlReturn_t init() noexcept {
  std::lock_guard lk(g_mu);
  if (g_refs++ > 0) return NVML_SUCCESS;
  const void* t = nullptr;
  // Our own libcuda answers this id; any other driver (a real one found first) does not.
  if (cuGetExportTable(&t, &nvml_bridge::kNvmlTableId) != CUDA_SUCCESS || !t ||
      static_cast<const NvmlTable*>(t)->size < sizeof(NvmlTable)) {
    g_refs = 0;
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  for (int i = 0; i < kMaxDevices; ++i) g_devices[i].ordinal = i;
  g_table.store(static_cast<const NvmlTable*>(t), std::memory_order_release);
  return NVML_SUCCESS;
}

// The driver version NVML reports: what driver 580.159.04 (measured, CUDA 13.0) says, unless
// CUDA_SHIM_NVML_DRIVER_VERSION names another.
std::string driver_version_string() {
  if (const char* e = std::getenv("CUDA_SHIM_NVML_DRIVER_VERSION"); e && *e) return e;
  return "580.159.04";
}

void uuid_string(const unsigned char u[16], char out[48]) {
  std::snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

nvmlDevice_t handle_of(int ordinal) { return reinterpret_cast<nvmlDevice_t>(&g_devices[ordinal]); }

}  // namespace

const NvmlTable* table() noexcept { return g_table.load(std::memory_order_acquire); }

nvmlReturn_t device(nvmlDevice_t h, int& ordinal, DeviceInfo* info) noexcept {
  const NvmlTable* t = table();
  if (!t) return NVML_ERROR_UNINITIALIZED;
  auto* p = reinterpret_cast<const DeviceSlot*>(h);
  if (p < g_devices || p >= g_devices + kMaxDevices ||
      (reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(g_devices)) % sizeof(DeviceSlot))
    return NVML_ERROR_INVALID_ARGUMENT;
  ordinal = static_cast<int>(p - g_devices);
  if (ordinal >= t->device_count()) return NVML_ERROR_INVALID_ARGUMENT;
  if (info && !t->device(ordinal, info)) return NVML_ERROR_UNKNOWN;
  return NVML_SUCCESS;
}

nvmlReturn_t copy_string(const char* s, char* out, unsigned length) noexcept {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  size_t n = std::strlen(s);
  if (length < n + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s, n + 1);
  return NVML_SUCCESS;
}

}  // namespace cuda_shim::nvml

using namespace cuda_shim::nvml;
using cuda_shim::nvml_bridge::DeviceInfo;
using cuda_shim::nvml_bridge::ProcessInfo;

// ---- initialization -------------------------------------------------------------------------
NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) { return init(); }
NVML_EXPORT nvmlReturn_t nvmlInit(void) { return init(); }
NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { return init(); }

NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard lk(g_mu);
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  if (--g_refs == 0) g_table.store(nullptr, std::memory_order_release);
  return NVML_SUCCESS;
}

NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt Request Issue";
    case 12: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires restart";
    case 17: return "The operating system has blocked the request.";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 19: return "In use by another client";
    case 20: return "Insufficient Memory";
    case 21: return "No data";
    case 22: return "The requested vgpu operation is not available on target device, becasue ECC is enabled";
    case 23: return "Ran out of critical resources, other than memory";
    case 24: return "The requested frequency is not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case 26: return "Deprecated";
    case 27: return "Not ready";
    case 28: return "GPU not found";
    case 29: return "Invalid state";
    default: return "Unknown Error";
  }
}

// ---- system ---------------------------------------------------------------------------------
NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!table()) return NVML_ERROR_UNINITIALIZED;
  return copy_string(driver_version_string().c_str(), version, length);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  if (!table()) return NVML_ERROR_UNINITIALIZED;
  // NVML's version is the CUDA major version before the driver's: "13.580.159.04".
  std::string v = std::to_string(table()->driver_version() / 1000) + "." + driver_version_string();
  return copy_string(v.c_str(), version, length);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  if (!table()) return NVML_ERROR_UNINITIALIZED;
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  *v = table()->driver_version();
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) { return nvmlSystemGetCudaDriverVersion(v); }

NVML_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  if (!table()) return NVML_ERROR_UNINITIALIZED;
  if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  char path[64], buf[1024] = {};
  std::snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
  FILE* f = std::fopen(path, "rb");
  if (!f) return NVML_ERROR_NOT_FOUND;
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // NVML gives the executable's path, cut to fit the buffer.
  std::strncpy(name, buf, length - 1);
  name[length - 1] = 0;
  return NVML_SUCCESS;
}

// ---- devices --------------------------------------------------------------------------------
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  const auto* t = table();
  if (!t) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(t->device_count());
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  const auto* t = table();
  if (!t) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= static_cast<unsigned>(t->device_count())) return NVML_ERROR_INVALID_ARGUMENT;
  *device = handle_of(static_cast<int>(index));
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  const auto* t = table();
  if (!t) return NVML_ERROR_UNINITIALIZED;
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < t->device_count(); ++i) {
    DeviceInfo d;
    char s[48];
    if (!t->device(i, &d)) continue;
    uuid_string(d.uuid, s);
    if (strcasecmp(s, uuid) == 0) {
      *device = handle_of(i);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* id, nvmlDevice_t* device) {
  const auto* t = table();
  if (!t) return NVML_ERROR_UNINITIALIZED;
  if (!id || !device) return NVML_ERROR_INVALID_ARGUMENT;
  // domain:bus:device.function (4 or 8 domain digits) or bus:device.function, any case.
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
    domain = 0;
    if (std::sscanf(id, "%x:%x.%x", &bus, &dev, &fn) != 3) return NVML_ERROR_NOT_FOUND;
  }
  for (int i = 0; i < t->device_count(); ++i) {
    DeviceInfo d;
    if (t->device(i, &d) && static_cast<int>(domain) == d.pci_domain && static_cast<int>(bus) == d.pci_bus &&
        static_cast<int>(dev) == d.pci_device && fn == 0) {
      *device = handle_of(i);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* id, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(id, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* name, unsigned int length) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  return copy_string(d.name, name, length);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int length) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  char s[48];
  uuid_string(d.uuid, s);
  return copy_string(s, uuid, length);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t h, char* serial, unsigned int length) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  // A board serial of 13 digits, as NVIDIA prints on its boards; derived from the UUID (stable).
  unsigned long long v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | d.uuid[i];
  char s[32];
  std::snprintf(s, sizeof s, "1654%09llu", v % 1000000000ull);
  return copy_string(s, serial, length);
}

namespace {
nvmlReturn_t pci_info(nvmlDevice_t h, nvmlPciInfo_t* pci) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  // NVML writes the domain with 8 digits ("00000000:00:06.0"), the legacy field with 4 (the
  // form cuDeviceGetPCIBusId gives).
  std::snprintf(pci->busId, sizeof pci->busId, "%08x:%02x:%02x.0", d.pci_domain, d.pci_bus, d.pci_device);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04x:%02x:%02x.0", d.pci_domain, d.pci_bus,
                d.pci_device);
  pci->domain = static_cast<unsigned>(d.pci_domain);
  pci->bus = static_cast<unsigned>(d.pci_bus);
  pci->device = static_cast<unsigned>(d.pci_device);
  pci->pciDeviceId = 0x233510de;     // H200 SXM (device 0x2335, vendor NVIDIA 0x10de)
  pci->pciSubSystemId = 0x18be10de;
  return NVML_SUCCESS;
}
}  // namespace
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t* pci) { return pci_info(h, pci); }
// What cuda.core.system's Device.pci_info reads. Measured: a version other than
// nvmlPciInfoExt_v1 is ARGUMENT_VERSION_MISMATCH (unlike nvmlDeviceGetMemoryInfo_v2's).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t h, nvmlPciInfoExt_t* ext) {
  nvmlPciInfo_t pci;
  if (nvmlReturn_t r = pci_info(h, ext ? &pci : nullptr)) return r;
  if (ext->version != nvmlPciInfoExt_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  ext->domain = pci.domain;
  ext->bus = pci.bus;
  ext->device = pci.device;
  ext->pciDeviceId = pci.pciDeviceId;
  ext->pciSubSystemId = pci.pciSubSystemId;
  ext->baseClass = 3;  // display controller: 3D controller (measured)
  ext->subClass = 2;
  std::memcpy(ext->busId, pci.busId, sizeof ext->busId);
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t h, nvmlPciInfo_t* pci) { return pci_info(h, pci); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t h, nvmlPciInfo_t* pci) { return pci_info(h, pci); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t h, unsigned int* index) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (!index) return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned>(o);
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t h, unsigned int* minor) {
  return nvmlDeviceGetIndex(h, minor);  // /dev/nvidia<N>: the emulated devices are numbered in order
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int* major, int* minor) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = d.cc_major;
  *minor = d.cc_minor;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t h, unsigned int* arch) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  if (!arch) return NVML_ERROR_INVALID_ARGUMENT;
  int cc = d.cc_major * 10 + d.cc_minor;
  *arch = cc >= 100 ? NVML_DEVICE_ARCH_BLACKWELL : cc >= 90 ? NVML_DEVICE_ARCH_HOPPER
        : cc == 89 ? NVML_DEVICE_ARCH_ADA : cc >= 80 ? NVML_DEVICE_ARCH_AMPERE
        : cc == 75 ? NVML_DEVICE_ARCH_TURING : cc >= 70 ? NVML_DEVICE_ARCH_VOLTA : NVML_DEVICE_ARCH_UNKNOWN;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t h, int* type) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (!type) return NVML_ERROR_INVALID_ARGUMENT;
  *type = NVML_BRAND_NVIDIA;  // data-center boards
  return NVML_SUCCESS;
}

// ---- memory and processes -------------------------------------------------------------------
namespace {
// What the driver keeps for itself: NVML's total is cuDeviceTotalMem plus this, and the v1
// struct counts it as used (measured on an H100, driver 580: 480 MiB; probe_nvml.h100.txt).
constexpr unsigned long long kReserved = 480ull << 20;

// The device's memory as the driver sees it (`total`, cuDeviceTotalMem) and what every process
// uses of it (`used`: what cuMemGetInfo subtracts from the total).
nvmlReturn_t memory(nvmlDevice_t h, unsigned long long& total, unsigned long long& used) {
  int o = 0;
  DeviceInfo d;
  if (nvmlReturn_t r = device(h, o, &d)) return r;
  uint64_t u = 0;
  if (table()->processes(o, nullptr, 0, &u) < 0) return NVML_ERROR_UNKNOWN;
  total = d.total_mem;
  used = u < total ? u : total;
  return NVML_SUCCESS;
}

template <class Info>
nvmlReturn_t processes(nvmlDevice_t h, unsigned int* count, Info* infos) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<ProcessInfo> list(64);
  int n = 0;
  while ((n = table()->processes(o, list.data(), static_cast<int>(list.size()), nullptr)) > static_cast<int>(list.size()))
    list.resize(static_cast<size_t>(n) * 2);
  if (n < 0) return NVML_ERROR_UNKNOWN;
  // Too small a buffer: the count needed, INSUFFICIENT_SIZE (infos may be NULL then).
  if (*count < static_cast<unsigned>(n)) {
    *count = static_cast<unsigned>(n);
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !infos) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < n; ++i) {
    Info x{};
    x.pid = list[i].pid;
    x.usedGpuMemory = list[i].bytes;
    if constexpr (sizeof(Info) > sizeof(nvmlProcessInfo_v1_t)) x.gpuInstanceId = x.computeInstanceId = 0xffffffffu;
    infos[i] = x;
  }
  *count = static_cast<unsigned>(n);
  return NVML_SUCCESS;
}

// Graphics and MPS clients: none on an emulated compute device.
nvmlReturn_t no_processes(nvmlDevice_t h, unsigned int* count) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = 0;
  return NVML_SUCCESS;
}
}  // namespace

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
  unsigned long long total = 0, used = 0;
  if (nvmlReturn_t r = memory(h, total, used)) return r;
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  // free is cuMemGetInfo's; the reservation is in total and in used (measured).
  *m = nvmlMemory_t{total + kReserved, total - used, used + kReserved};
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t* m) {
  unsigned long long total = 0, used = 0;
  if (nvmlReturn_t r = memory(h, total, used)) return r;
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  // Measured (driver 580, H100): a version other than nvmlMemory_v2 is FUNCTION_NOT_FOUND.
  if (m->version != nvmlMemory_v2) return NVML_ERROR_FUNCTION_NOT_FOUND;
  m->total = total + kReserved;
  m->reserved = kReserved;
  m->free = total - used;
  m->used = used;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t* p) {
  return processes(h, c, p);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t* p) {
  return processes(h, c, p);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_v1_t* p) {
  return processes(h, c, p);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t*) {
  return no_processes(h, c);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t*) {
  return no_processes(h, c);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_v1_t*) {
  return no_processes(h, c);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t*) {
  return no_processes(h, c);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_t*) {
  return no_processes(h, c);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t h, unsigned int* c, nvmlProcessInfo_v1_t*) {
  return no_processes(h, c);
}
