#include "core/driver.hpp"

#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "core/context.hpp"
#include "core/events.hpp"

namespace cuda_shim {
namespace {

constexpr int kAttrHostNumaId = 134;                 // CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID
constexpr int kAttrPageableMemoryAccess = 88;          // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS
constexpr int kAttrConcurrentManagedAccess = 89;       // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
constexpr int kAttrLogicalEndpointUnicast = 153;     // CUDA 13.3
constexpr int kAttrLogicalEndpointMulticast = 154;   // CUDA 13.3
constexpr int kAttrLogicalEndpointCountedOps = 155;  // CUDA 13.3
constexpr int kAttrLogicalEndpointUnicastOnOwner = 156;  // CUDA 13.3
constexpr int kAttrPciBusId = 33;
constexpr int kAttrPciDeviceId = 34;
constexpr int kAttrPciDomainId = 50;

// Stable per-ordinal UUID: a user sees the same GPU-… string in every run.
void make_uuid(int ordinal, const std::string& name, unsigned char out[16]) {
  uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
  auto mix = [&](unsigned char c) {
    h1 = (h1 ^ c) * 1099511628211ull;
    h2 = (h2 ^ h1) * 0xff51afd7ed558ccdull;
  };
  for (char c : std::string("cuda-shim")) mix(static_cast<unsigned char>(c));
  for (char c : name) mix(static_cast<unsigned char>(c));
  for (int i = 0; i < 4; ++i) mix(static_cast<unsigned char>(ordinal >> (8 * i)));
  std::memcpy(out, &h1, 8);
  std::memcpy(out + 8, &h2, 8);
  out[6] = static_cast<unsigned char>((out[6] & 0x0f) | 0x40);  // looks like a v4 UUID
  out[8] = static_cast<unsigned char>((out[8] & 0x3f) | 0x80);
}

}  // namespace

std::atomic<Driver*> g_driver{nullptr};

Driver& Driver::create() {
  static Driver* d = [] {
    auto* x = new Driver();  // leaked on purpose
    g_driver.store(x, std::memory_order_release);
    return x;
  }();
  return *d;
}

Driver::Driver() : cfg_(Config::get()) {
  for (int i = 0; i < cfg_.devices; ++i) {
    auto d = std::make_unique<Device>();
    d->ordinal = i;
    d->cfg = cfg_.device[i];
    // The device profile's attributes (profiles/*.profile); the per-device ones follow.
    static_assert(std::tuple_size_v<decltype(cfg_.attr)> == Device::kMaxAttr);
    d->attr = cfg_.attr;
    d->attr_valid = cfg_.attr_valid;
    d->attr[kAttrHostNumaId] = d->cfg.numa_id;
    // Profile knobs: an older or differently attached GPU (CONCURRENT_MANAGED_ACCESS 0: the host
    // may not touch managed memory while the device runs; PAGEABLE_MEMORY_ACCESS 1: the device
    // reaches plain malloc'd memory, as with HMM or ATS).
    d->attr[kAttrConcurrentManagedAccess] = d->cfg.concurrent_managed_access;
    d->attr[kAttrPageableMemoryAccess] = d->cfg.pageable_memory_access;
    d->attr_valid[kAttrHostNumaId] = true;
    // PCI location: the profile's is the first device's (the measured H200 sits at 0000:00:06.0);
    // further devices follow it, 32 to a bus (a PCI device number has 5 bits), then the next buses.
    const int slot = d->attr[kAttrPciDeviceId] + i;
    d->pci_domain = d->attr[kAttrPciDomainId];
    d->pci_bus = d->attr[kAttrPciBusId] + slot / 32;
    d->pci_device = slot % 32;
    d->attr[kAttrPciBusId] = d->pci_bus;
    d->attr[kAttrPciDeviceId] = d->pci_device;
    d->pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", d->pci_domain, d->pci_bus, d->pci_device);
    // Logical endpoints (13.3): supported, counted operations included; attributes a 13.0
    // driver does not know answer INVALID_VALUE there (measured on the H200).
    // A profile may say a device lacks one (its value when it lists it).
    for (int a : {kAttrLogicalEndpointUnicast, kAttrLogicalEndpointMulticast, kAttrLogicalEndpointCountedOps,
                  kAttrLogicalEndpointUnicastOnOwner}) {
      d->attr[a] = cfg_.driver_version >= 13030 ? (cfg_.attr_valid[a] ? cfg_.attr[a] : 1) : 0;
      d->attr_valid[a] = cfg_.driver_version >= 13030;
    }
    make_uuid(i, d->cfg.name, d->uuid);
    devices_.push_back(std::move(d));
  }
}

Errc Driver::init(unsigned flags) {
  if (flags != 0)
    return fail(Errc::invalid_value, "cuInit: Flags must be 0 (got {:#x})", flags);
  initialized_.store(true, std::memory_order_release);
  ev::driver_initialised.emit();
  return Errc::success;
}

Errc Driver::not_initialized(const char* api) noexcept {
  return fail(Errc::not_initialized, "{}: cuInit has not been called in this process", api);
}

Errc Driver::device(int ordinal, Device*& out, const char* api) const noexcept {
  if (Errc e = require_init(api); e != Errc::success) return e;
  if (ordinal < 0 || ordinal >= device_count())
    return fail(Errc::invalid_device, "{}: device ordinal {} is out of range (this emulator has {} device{})",
                api, ordinal, device_count(), device_count() == 1 ? "" : "s");
  out = devices_[ordinal].get();
  return Errc::success;
}

int driver_version_reported() noexcept { return Config::get().driver_version; }

}  // namespace cuda_shim
