// Process-wide driver state: initialization, the emulated devices and their profiles.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/errc.hpp"

namespace cuda_shim {

class Context;

struct Device {
  int ordinal = 0;
  DeviceConfig cfg;
  unsigned char uuid[16] = {};
  std::string pci_bus_id;  // "0000:00:06.0", as the measured H200 reports it
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  static constexpr int kMaxAttr = 256;
  std::array<int, kMaxAttr> attr{};
  std::array<bool, kMaxAttr> attr_valid{};

  // Primary context: one per device, same handle for the life of the process.
  std::mutex primary_mutex;
  std::shared_ptr<Context> primary;  // created on first retain, never destroyed
  int primary_refcount = 0;
  unsigned primary_flags = 0;

  int attribute(int a) const { return attr[a]; }
};

class Driver;
extern std::atomic<Driver*> g_driver;

class Driver {
 public:
  // Never destroyed: worker threads may outlive main(). The fast path is one load.
  static Driver& get() {
    Driver* d = g_driver.load(std::memory_order_acquire);
    return __builtin_expect(d != nullptr, 1) ? *d : create();
  }

  Errc init(unsigned flags);
  bool initialized() const noexcept { return initialized_.load(std::memory_order_acquire); }
  // The check almost every entry starts with: one load once cuInit has run.
  Errc require_init(const char* api) const noexcept {
    if (initialized()) [[likely]]
      return Errc::success;
    return not_initialized(api);
  }
  Errc device(int ordinal, Device*& out, const char* api) const noexcept;
  int device_count() const noexcept { return static_cast<int>(devices_.size()); }
  // A host NUMA node the emulated machine has: one that some device sits next to
  // (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID), the rule pools, VMM and managed advice share.
  bool host_numa_node(int id) const noexcept {
    for (auto& d : devices_)
      if (d->cfg.numa_id == id) return true;
    return false;
  }
  Device& dev(int ordinal) { return *devices_[ordinal]; }
  const Config& config() const noexcept { return cfg_; }
  int driver_version() const noexcept { return cfg_.driver_version; }

 private:
  Driver();
  static Driver& create();
  static Errc not_initialized(const char* api) noexcept;
  const Config& cfg_;
  std::atomic<bool> initialized_{false};
  std::vector<std::unique_ptr<Device>> devices_;
};

// What cuDriverGetVersion reports (also used before cuInit, e.g. by cuGetProcAddress).
int driver_version_reported() noexcept;

}  // namespace cuda_shim
