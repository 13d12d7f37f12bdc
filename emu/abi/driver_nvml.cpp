// The table libnvidia-ml.so.1 reads the emulator through (nvml_table.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "nvml/nvml_table.hpp"
#include "core/driver.hpp"
#include "ipc/usage.hpp"

namespace cuda_shim::nvml_bridge {
namespace {

int device_count() noexcept { return Driver::get().device_count(); }

int driver_version() noexcept { return driver_version_reported(); }

bool device(int ordinal, DeviceInfo* out) noexcept {
  Driver& drv = Driver::get();
  if (!out || ordinal < 0 || ordinal >= drv.device_count()) return false;
  const Device& d = drv.dev(ordinal);
  *out = DeviceInfo{};
  std::strncpy(out->name, d.cfg.name.c_str(), sizeof out->name - 1);
  std::memcpy(out->uuid, d.uuid, 16);
  std::strncpy(out->pci_bus_id, d.pci_bus_id.c_str(), sizeof out->pci_bus_id - 1);
  out->pci_domain = d.pci_domain;
  out->pci_bus = d.pci_bus;
  out->pci_device = d.pci_device;
  out->total_mem = d.cfg.total_mem;
  out->cc_major = d.attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
  out->cc_minor = d.attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
  out->sm_count = d.attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
  out->clock_khz = d.attr[CU_DEVICE_ATTRIBUTE_CLOCK_RATE];
  out->mem_clock_khz = d.attr[CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE];
  out->mem_bus_width = d.attr[CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH];
  out->numa_id = d.cfg.numa_id;
  return true;
}

int processes(int ordinal, ProcessInfo* out, int cap, uint64_t* used) noexcept {
  try {
    std::vector<ipc::ProcessUse> users;
    uint64_t u = 0;
    ipc::device_users(ordinal, &users, u);
    if (used) *used = u;
    // NVIDIA's NVML lists them in pid order (measured), not in registry-slot order.
    std::sort(users.begin(), users.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
    for (int i = 0; i < cap && i < static_cast<int>(users.size()); ++i)
      out[i] = ProcessInfo{static_cast<unsigned>(users[i].pid), users[i].bytes};
    return static_cast<int>(users.size());
  } catch (...) {
    return -1;
  }
}

}  // namespace

extern const NvmlTable kNvmlTable = {sizeof(NvmlTable), kNvmlTableVersion, &device_count, &driver_version, &device,
                                     &processes};

}  // namespace cuda_shim::nvml_bridge
