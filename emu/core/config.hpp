// Emulator configuration: built-in defaults (the measured H200, ../shared/REAL_DRIVER.md),
// then the CUDA_SHIM_CONFIG file, then CUDA_SHIM_* environment variables. Read once.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cuda_shim {

struct DeviceConfig {
  std::string name = "NVIDIA H200";
  uint64_t total_mem = 150109880320ull;
  int numa_id = 0;
  // Device profile knobs (the H200's values by default): CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
  // and _PAGEABLE_MEMORY_ACCESS. -1: not set for this device (the process-wide setting applies).
  int concurrent_managed_access = -1;
  int pageable_memory_access = -1;
};

struct Config {
  int devices = 1;
  int driver_version = 13030;  // what cuDriverGetVersion reports
  bool explain = false;        // print why each failing call failed
  bool trace = false;          // print every call
  int concurrent_managed_access = 1;  // every device's, unless device.N.* says otherwise
  int pageable_memory_access = 0;
  // Kernel launches (device code never runs): false refuses them (CUDA_ERROR_NOT_SUPPORTED,
  // explained), true completes them as no-ops in stream order. CUDA_SHIM_KERNELS=refuse|skip.
  bool skip_kernels = false;
  std::vector<DeviceConfig> device;  // size == devices
  std::vector<std::string> warnings; // problems found while reading; printed once

  static const Config& get();
  // Parse `key = value` lines (# comments). Unknown keys become warnings.
  void apply_file_text(const std::string& text, const std::string& origin);
  void apply_env();
  void finalize();
};

}  // namespace cuda_shim
