// The private table through which libnvidia-ml.so.1 (emu/nvml) reads the emulator's state inside
// libcuda.so.1: the devices' profile and who uses them. Obtained like the runtime's table, with
// cuGetExportTable(&t, &kNvmlTableId). Nothing in it creates a context or makes the calling
// process take part in the shared registry, as NVML does not count itself as a GPU process.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace cuda_shim::nvml_bridge {

// Random, fixed: {3e8f0b6c-91a4-4d27-b5e3-6a0c1f9d4b72}
inline constexpr CUuuid kNvmlTableId = {{0x3e, static_cast<char>(0x8f), 0x0b, 0x6c, static_cast<char>(0x91),
                                         static_cast<char>(0xa4), 0x4d, 0x27, static_cast<char>(0xb5),
                                         static_cast<char>(0xe3), 0x6a, 0x0c, 0x1f, static_cast<char>(0x9d), 0x4b,
                                         0x72}};
inline constexpr unsigned kNvmlTableVersion = 1;

struct DeviceInfo {
  char name[96];
  unsigned char uuid[16];  // cuDeviceGetUuid's bytes
  char pci_bus_id[32];     // cuDeviceGetPCIBusId's string
  int pci_domain, pci_bus, pci_device;
  uint64_t total_mem;      // cuDeviceTotalMem
  int cc_major, cc_minor;
  int sm_count;
  int clock_khz, mem_clock_khz, mem_bus_width;  // device attributes 13, 36, 37
  int numa_id;
};

struct ProcessInfo {
  unsigned pid;
  uint64_t bytes;
};

struct NvmlTable {
  size_t size;
  unsigned version;
  int (*device_count)() noexcept;
  int (*driver_version)() noexcept;  // cuDriverGetVersion's answer
  bool (*device)(int ordinal, DeviceInfo* out) noexcept;
  // The processes using device `ordinal` (at most cap written to out; the count returned) and
  // the memory they use together in *used; -1 on an internal failure.
  int (*processes)(int ordinal, ProcessInfo* out, int cap, uint64_t* used) noexcept;
};

}  // namespace cuda_shim::nvml_bridge
