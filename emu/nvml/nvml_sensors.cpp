// Sensors and settings of an idle board. Nothing runs on an emulated GPU, so these are constant
// values a real idle board reports (tools/probe/probe_nvml.h100.txt, driver 580) (documented as such in README's NVML section), rather than
// NOT_SUPPORTED: a real GPU answers them and monitoring tools (gpustat, nvitop) expect numbers.
#include "nvml/nvml_internal.hpp"

using namespace cuda_shim::nvml;
using cuda_shim::nvml_bridge::DeviceInfo;

namespace {
// The device is valid and the output pointer is not NULL.
nvmlReturn_t check(nvmlDevice_t h, const void* out, DeviceInfo* info = nullptr) {
  int o = 0;
  if (nvmlReturn_t r = device(h, o, info)) return r;
  return out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

template <class T>
nvmlReturn_t answer(nvmlDevice_t h, T* out, T value) {
  if (nvmlReturn_t r = check(h, out)) return r;
  *out = value;
  return NVML_SUCCESS;
}
}  // namespace

NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int* temp) {
  if (nvmlReturn_t r = check(h, temp)) return r;
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = 39;  // °C, as an idle H100 read (probe_nvml.h100.txt)
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
  return answer(h, u, nvmlUtilization_t{0, 0});
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t h, unsigned int* u, unsigned int* period_us) {
  if (nvmlReturn_t r = check(h, u)) return r;
  if (!period_us) return NVML_ERROR_INVALID_ARGUMENT;
  *u = 0;
  *period_us = 100000;  // measured (H100, driver 580)
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t h, unsigned int* u, unsigned int* period_us) {
  return nvmlDeviceGetEncoderUtilization(h, u, period_us);
}

// Milliwatts: an idle H100/H200 board read 90 to 110 W of its 700 W limit (measured).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int* mw) { return answer(h, mw, 90000u); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int* mw) {
  return answer(h, mw, 700000u);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t h, unsigned int* mw) {
  return answer(h, mw, 700000u);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t h, unsigned int* mw) {
  return answer(h, mw, 700000u);
}

namespace {
// MHz: the profile's clock rates (graphics = SM); the current clocks equal the maximum, as
// measured on an H100 whose process held a context.
nvmlReturn_t clock(nvmlDevice_t h, int type, unsigned int* mhz, bool max) {
  DeviceInfo d;
  if (nvmlReturn_t r = check(h, mhz, &d)) return r;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *mhz = static_cast<unsigned>(d.clock_khz / 1000); break;
    case NVML_CLOCK_MEM: *mhz = static_cast<unsigned>(d.mem_clock_khz / 1000); break;
    case NVML_CLOCK_VIDEO: *mhz = 1545u; break;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}
}  // namespace
NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int* mhz) {
  return clock(h, type, mhz, false);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int* mhz) {
  return clock(h, type, mhz, true);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t h, unsigned int* bits) {
  DeviceInfo d;
  if (nvmlReturn_t r = check(h, bits, &d)) return r;
  *bits = static_cast<unsigned>(d.mem_bus_width);
  return NVML_SUCCESS;
}

// A data-center board: no fan of its own (the chassis cools it), as NVML answers for an SXM H200.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t h, unsigned int* speed) {
  if (nvmlReturn_t r = check(h, speed)) return r;
  return NVML_ERROR_NOT_SUPPORTED;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t h, int* p) { return answer(h, p, 0); }  // P0
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t h, int* m) { return answer(h, m, 0); }     // DEFAULT
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t h, int* m) { return answer(h, m, 1); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t h, int* m) { return answer(h, m, 0); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t h, int* m) { return answer(h, m, 0); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t h, int* current, int* pending) {
  if (nvmlReturn_t r = check(h, current)) return r;
  if (!pending) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = 1;  // CU_DEVICE_ATTRIBUTE_ECC_ENABLED is 1 in the profile
  return NVML_SUCCESS;
}

// PCIe: an H200 SXM links at Gen5 x16.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t h, unsigned int* w) { return answer(h, w, 16u); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t h, unsigned int* w) { return answer(h, w, 16u); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t h, unsigned int* g) { return answer(h, g, 5u); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t h, unsigned int* g) { return answer(h, g, 5u); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t h, nvmlBAR1Memory_t* m) {
  constexpr unsigned long long total = 256ull << 30, used = 2ull << 20;  // an H200's BAR1 aperture
  return answer(h, m, nvmlBAR1Memory_t{total, total - used, used});
}

// No NVLink is emulated between devices (they share host memory): NVLink and fabric state are
// NOT_SUPPORTED, as for a board without NVLink.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int link, int* active) {
  if (nvmlReturn_t r = check(h, active)) return r;
  return NVML_ERROR_NOT_SUPPORTED;
}

// One GPU per board, MIG off (current and pending), as the measured H100 answers.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t h, unsigned int* multi) { return answer(h, multi, 0u); }
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int* current, unsigned int* pending) {
  if (nvmlReturn_t r = check(h, current)) return r;
  if (!pending) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = 0;  // NVML_DEVICE_MIG_DISABLE
  return NVML_SUCCESS;
}
