// NVML (libnvidia-ml.so.1) answers from the driver's view: the same devices, UUIDs, PCI ids and
// memory as the driver API, every process using a device, NVML's codes for bad input.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.hpp"
#include "multiprocess.hpp"
#include "nvml/nvml_api.h"

#include "abi_sizes.inc"

namespace {

constexpr size_t kBytes = 64u << 20;

// A registry of this binary's own (inherited by its children): tests beside it stay out.
const bool kIsolated = [] {
  std::string name = "cuda-shim-nvmltest-" + std::to_string(::getpid());
  return setenv("CUDA_SHIM_REGISTRY", name.c_str(), 0) == 0;
}();

struct NvmlSession {
  NvmlSession() { REQUIRE(nvmlInit_v2() == NVML_SUCCESS); }
  ~NvmlSession() { nvmlShutdown(); }
};

nvmlDevice_t dev0() {
  nvmlDevice_t d = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
  return d;
}

bool has_pid(nvmlDevice_t d, unsigned pid, unsigned long long* bytes = nullptr) {
  nvmlProcessInfo_t p[16];
  unsigned n = 16;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p) == NVML_SUCCESS);
  for (unsigned i = 0; i < n; ++i)
    if (p[i].pid == pid) {
      if (bytes) *bytes = p[i].usedGpuMemory;
      CHECK(p[i].gpuInstanceId == 0xffffffffu);
      return true;
    }
  return false;
}

}  // namespace

TEST_CASE("NVML is reference-counted and refuses calls before nvmlInit") {
  unsigned n = 0;
  CHECK(nvmlShutdown() == NVML_ERROR_UNINITIALIZED);
  CHECK(nvmlDeviceGetCount_v2(&n) == NVML_ERROR_UNINITIALIZED);
  CHECK(nvmlDeviceGetFanSpeed(nullptr, &n) == NVML_ERROR_UNINITIALIZED);
  REQUIRE(nvmlInit_v2() == NVML_SUCCESS);
  REQUIRE(nvmlInitWithFlags(0) == NVML_SUCCESS);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
  CHECK(nvmlDeviceGetCount_v2(&n) == NVML_SUCCESS);  // one init still holds
  CHECK(nvmlShutdown() == NVML_SUCCESS);
  CHECK(nvmlDeviceGetCount_v2(&n) == NVML_ERROR_UNINITIALIZED);
  CHECK(std::string(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED)) == "Not Supported");
}

TEST_CASE("NVML's devices are the driver's") {
  NvmlSession s;
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int cu_count = 0;
  unsigned count = 0;
  REQUIRE(cuDeviceGetCount(&cu_count) == CUDA_SUCCESS);
  REQUIRE(nvmlDeviceGetCount_v2(&count) == NVML_SUCCESS);
  CHECK(static_cast<int>(count) == cu_count);
  int v = 0, cv = 0;
  CHECK(nvmlSystemGetCudaDriverVersion_v2(&v) == NVML_SUCCESS);
  CHECK(cuDriverGetVersion(&cv) == CUDA_SUCCESS);
  CHECK(v == cv);
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    REQUIRE(nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS);
    char name[96], cu_name_buf[96], uuid[96], bus[32];
    REQUIRE(nvmlDeviceGetName(d, name, sizeof name) == NVML_SUCCESS);
    REQUIRE(cuDeviceGetName(cu_name_buf, sizeof cu_name_buf, static_cast<CUdevice>(i)) == CUDA_SUCCESS);
    CHECK(std::string(name) == cu_name_buf);
    CUuuid u{};
    REQUIRE(cuDeviceGetUuid(&u, static_cast<CUdevice>(i)) == CUDA_SUCCESS);
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    char want[48];
    std::snprintf(want, sizeof want, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    REQUIRE(nvmlDeviceGetUUID(d, uuid, sizeof uuid) == NVML_SUCCESS);
    CHECK(std::string(uuid) == want);
    nvmlDevice_t again = nullptr;
    CHECK(nvmlDeviceGetHandleByUUID(uuid, &again) == NVML_SUCCESS);
    CHECK(again == d);
    REQUIRE(cuDeviceGetPCIBusId(bus, sizeof bus, static_cast<CUdevice>(i)) == CUDA_SUCCESS);
    nvmlPciInfo_t pci{};
    REQUIRE(nvmlDeviceGetPciInfo_v3(d, &pci) == NVML_SUCCESS);
    CHECK(strcasecmp(pci.busIdLegacy, bus) == 0);
    CHECK(strcasecmp(pci.busId + 4, bus) == 0);  // the same with an 8-digit domain
    CHECK(nvmlDeviceGetHandleByPciBusId_v2(bus, &again) == NVML_SUCCESS);
    CHECK(again == d);
    CHECK(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &again) == NVML_SUCCESS);
    unsigned idx = 99;
    CHECK(nvmlDeviceGetIndex(d, &idx) == NVML_SUCCESS);
    CHECK(idx == i);
    int maj = 0, min = 0, cmaj = 0, cmin = 0;
    CHECK(nvmlDeviceGetCudaComputeCapability(d, &maj, &min) == NVML_SUCCESS);
    cuDeviceGetAttribute(&cmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, static_cast<CUdevice>(i));
    cuDeviceGetAttribute(&cmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, static_cast<CUdevice>(i));
    CHECK((maj == cmaj && min == cmin));
    nvmlPciInfoExt_t ext{};
    CHECK(nvmlDeviceGetPciInfoExt(d, &ext) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);  // measured
    CHECK(nvmlDeviceGetPciInfoExt(d, nullptr) == NVML_ERROR_INVALID_ARGUMENT);
    ext.version = nvmlPciInfoExt_v1;
    CHECK(nvmlDeviceGetPciInfoExt(d, &ext) == NVML_SUCCESS);
    CHECK(std::string(ext.busId) == pci.busId);
    CHECK((ext.baseClass == 3 && ext.subClass == 2 && ext.pciDeviceId == pci.pciDeviceId));
    unsigned mig = 9, mig_pending = 9, multi = 9;  // measured on an H100: MIG off, one GPU per board
    CHECK(nvmlDeviceGetMigMode(d, &mig, &mig_pending) == NVML_SUCCESS);
    CHECK((mig == 0 && mig_pending == 0));
    CHECK(nvmlDeviceGetMultiGpuBoard(d, &multi) == NVML_SUCCESS);
    CHECK(multi == 0);
    nvmlMemory_t m{};
    size_t total = 0;
    REQUIRE(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
    REQUIRE(cuDeviceTotalMem(&total, static_cast<CUdevice>(i)) == CUDA_SUCCESS);
    CHECK(m.free + m.used == m.total);
    // The v2 struct tells the driver's reservation apart: the rest is cuDeviceTotalMem (measured).
    nvmlMemory_v2_t m2{};
    m2.version = nvmlMemory_v2;
    REQUIRE(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_SUCCESS);
    CHECK(m2.total == m.total);
    CHECK(m2.total - m2.reserved == total);
    CHECK(m2.used + m2.reserved == m.used);
  }
}

TEST_CASE("NVML answers bad input with its documented codes") {
  NvmlSession s;
  nvmlDevice_t d = dev0();
  unsigned n = 0;
  char buf[96];
  CHECK(nvmlDeviceGetCount_v2(nullptr) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetCount_v2(&n) == NVML_SUCCESS);
  nvmlDevice_t out = nullptr;
  CHECK(nvmlDeviceGetHandleByIndex_v2(n, &out) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetHandleByIndex_v2(0, nullptr) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &out) == NVML_ERROR_NOT_FOUND);
  CHECK(nvmlDeviceGetHandleByUUID(nullptr, &out) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetHandleByPciBusId_v2("0000:7f:1f.0", &out) == NVML_ERROR_NOT_FOUND);
  CHECK(nvmlDeviceGetName(nullptr, buf, sizeof buf) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetName(reinterpret_cast<nvmlDevice_t>(buf), buf, sizeof buf) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetName(d, nullptr, sizeof buf) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetName(d, buf, 4) == NVML_ERROR_INSUFFICIENT_SIZE);
  CHECK(nvmlDeviceGetUUID(d, buf, 40) == NVML_ERROR_INSUFFICIENT_SIZE);  // 40 characters and a NUL
  CHECK(nvmlDeviceGetUUID(d, buf, 41) == NVML_SUCCESS);
  CHECK(nvmlSystemGetDriverVersion(buf, 2) == NVML_ERROR_INSUFFICIENT_SIZE);
  CHECK(nvmlDeviceGetMemoryInfo(d, nullptr) == NVML_ERROR_INVALID_ARGUMENT);
  nvmlMemory_v2_t m2{};
  m2.version = 1;
  CHECK(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_ERROR_FUNCTION_NOT_FOUND);  // measured
  m2.version = nvmlMemory_v2;
  CHECK(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_SUCCESS);
  CHECK(m2.free + m2.used + m2.reserved == m2.total);
  CHECK(nvmlDeviceGetComputeRunningProcesses_v3(d, nullptr, nullptr) == NVML_ERROR_INVALID_ARGUMENT);
  unsigned t = 0;
  CHECK(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t) == NVML_SUCCESS);
  CHECK((t > 0 && t < 100));
  CHECK(nvmlDeviceGetFanSpeed(d, &t) == NVML_ERROR_NOT_SUPPORTED);
  int active = 0;
  CHECK(nvmlDeviceGetNvLinkState(d, 0, &active) == NVML_ERROR_NOT_SUPPORTED);
}

TEST_CASE("NVML sees every process's memory, as cuMemGetInfo does, and not itself") {
  REQUIRE(kIsolated);
  NvmlSession s;
  nvmlDevice_t d = dev0();
  CHECK_FALSE(has_pid(d, static_cast<unsigned>(::getpid())));  // NVML makes no context
  nvmlMemory_t m0{};
  REQUIRE(nvmlDeviceGetMemoryInfo(d, &m0) == NVML_SUCCESS);

  auto c = mp::spawn("device_memory_holder");
  c.ch.send_int(static_cast<int64_t>(kBytes));
  REQUIRE(c.ch.recv_int() == 0);
  nvmlMemory_t m1{};
  REQUIRE(nvmlDeviceGetMemoryInfo(d, &m1) == NVML_SUCCESS);
  CHECK(m1.used >= m0.used + kBytes);
  unsigned long long bytes = 0;
  CHECK(has_pid(d, static_cast<unsigned>(c.pid), &bytes));
  CHECK(bytes >= kBytes);
  // A buffer too short: the count needed.
  unsigned n = 0;
  CHECK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, nullptr) == NVML_ERROR_INSUFFICIENT_SIZE);
  CHECK(n >= 1);

  // This process's driver view agrees (its own context adds nothing until it allocates).
  conformance_primary_ctx();
  size_t f = 0, total = 0;
  REQUIRE(cuMemGetInfo(&f, &total) == CUDA_SUCCESS);
  nvmlMemory_t m2{};
  REQUIRE(nvmlDeviceGetMemoryInfo(d, &m2) == NVML_SUCCESS);
  CHECK(m2.free == f);
  CHECK(has_pid(d, static_cast<unsigned>(::getpid())));  // with a context it is a GPU process

  c.ch.send_int(0);
  CHECK(c.wait() == 0);
  CHECK_FALSE(has_pid(d, static_cast<unsigned>(c.pid)));
  nvmlMemory_t m3{};
  REQUIRE(nvmlDeviceGetMemoryInfo(d, &m3) == NVML_SUCCESS);
  CHECK(m3.used <= m0.used);
}
