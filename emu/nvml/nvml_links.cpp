// Links and fabric, as NCCL asks while it sets up a communicator: peer-to-peer status, field
// values, the GPU fabric, the confidential-computing state. Answers measured on an H200 with
// driver 580 (.gpuprobe/nvml_probe.py): a GPU with no NVLink and no fabric.
#include <time.h>

#include <cstring>

#include "nvml/nvml_internal.hpp"

using namespace cuda_shim::nvml;

namespace {

long long now_us() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<long long>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

// Fields a real idle board answers with constants: ECC mode current and pending (1, enabled) and
// the ECC error totals (0). Every other field answers NVML_ERROR_NOT_SUPPORTED in its entry:
// the emulator has no NVLink, C2C, energy or throttle counters to report.
bool static_field(unsigned id, nvmlFieldValue_t& v) {
  if (id < 1 || id > 6) return false;
  v.valueType = 3;  // unsigned long long
  v.value.ullVal = id <= 2 ? 1 : 0;
  return true;
}

}  // namespace

// Measured for a GPU with itself: READ, WRITE, NVLINK, ATOMICS and PCI report NOT_SUPPORTED,
// the indexes past them OK.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t idx,
                                                nvmlGpuP2PStatus_t* st) {
  int oa = 0, ob = 0;
  if (nvmlReturn_t r = device(a, oa)) return r;
  if (nvmlReturn_t r = device(b, ob)) return r;
  if (!st) return NVML_ERROR_INVALID_ARGUMENT;
  *st = idx >= 0 && idx <= 4 ? NVML_P2P_STATUS_NOT_SUPPORTED : NVML_P2P_STATUS_OK;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count, nvmlFieldValue_t* values) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (count < 0 || (count > 0 && !values)) return NVML_ERROR_INVALID_ARGUMENT;
  const long long t = now_us();
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.timestamp = t;
    v.latencyUsec = 0;
    v.nvmlReturn = static_field(v.fieldId, v) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

// nvmlGpuFabricInfo_v2 (36 bytes) and _v3 (40): a GPU outside any fabric, all zero after the
// version (state NOT_SUPPORTED, no clique, no cluster), as measured.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t h, void* info) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o)) return r;
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned version = 0;
  std::memcpy(&version, info, sizeof version);
  const unsigned size = version & 0xffffffu;
  if (version != (36u | (2u << 24)) && version != (40u | (3u << 24))) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  std::memset(static_cast<char*>(info) + sizeof version, 0, size - sizeof version);
  return NVML_SUCCESS;
}

// Measured: no confidential computing (every member 0).
NVML_EXPORT nvmlReturn_t nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t* st) {
  if (!st) return NVML_ERROR_INVALID_ARGUMENT;
  *st = nvmlConfComputeSystemState_t{0, 0, 0};
  return NVML_SUCCESS;
}
