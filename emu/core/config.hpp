// Emulator configuration: a device profile (profiles/*.profile; the measured H200 unless
// CUDA_SHIM_PROFILE or the file's `profile` names another), then the CUDA_SHIM_CONFIG file,
// then CUDA_SHIM_* environment variables. Read once.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cuda_shim {

struct DeviceConfig {
  std::string name;        // the profile's unless device.N.name says otherwise
  uint64_t total_mem = 0;  // the profile's unless device.N.total_mem says otherwise
  int numa_id = -1;        // -1: the profile's rule (finalize)
  // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS and _PAGEABLE_MEMORY_ACCESS. -1: not set for
  // this device (the process-wide setting, the profile's unless a knob says otherwise, applies).
  int concurrent_managed_access = -1;
  int pageable_memory_access = -1;
};

struct Config {
  Config();  // the default profile (h200), nothing else applied
  std::string profile = "h200";           // the profile in use: a name or a path
  std::string profile_origin = "built-in";  // or the file it was read from
  // The profile's device attributes; Driver copies them into every device, then sets the
  // per-device ones (PCI location, HOST_NUMA_ID) and the knobs below.
  std::array<int, 256> attr{};
  std::array<bool, 256> attr_valid{};
  DeviceConfig device_default;            // the profile's name and memory size
  int devices_per_host_numa_node = 0;     // HOST_NUMA_ID = ordinal / this (0: node 0 for all)
  int devices = 1;
  int driver_version = 13030;  // what cuDriverGetVersion reports
  bool explain = false;        // print why each failing call failed
  bool trace = false;          // trace every call (trace_to says where)
  // CUDA_SHIM_TRACE's value when it is not a plain on/off: "-" (JSON lines on stdout) or a file
  // (.json: a Chrome/Perfetto trace; otherwise JSON lines). Empty: the readable stderr form.
  std::string trace_to;
  // CUDA_SHIM_STRICT: 0 off, 1 report what the real driver accepts silently, 2 (abort) stop at
  // the first finding.
  int strict = 0;
  int concurrent_managed_access = 1;  // every device's, unless device.N.* says otherwise
  int pageable_memory_access = 0;
  // Kernel launches (CUDA_SHIM_KERNELS=run|refuse|skip): run them on the PTX engine (emu/exec/)
  // when the module has PTX, refuse them (CUDA_ERROR_NOT_SUPPORTED, explained), or complete them
  // as no-ops in stream order.
  enum class KernelPolicy { run, refuse, skip };
  KernelPolicy kernels = KernelPolicy::run;
  // Host threads a grid's blocks spread over (CUDA_SHIM_EXEC_THREADS); 0: the cores.
  unsigned exec_threads = 0;
  // A grid running longer than this many seconds stops with CUDA_ERROR_LAUNCH_TIMEOUT, as under a
  // display GPU's watchdog (CUDA_SHIM_KERNEL_TIMEOUT); 0, the default: no limit, as on a compute GPU.
  unsigned kernel_timeout = 0;
  // Fault-injection rules (CUDA_SHIM_FAULTS syntax, abi/faults.hpp); empty: none.
  std::string faults;
  std::vector<DeviceConfig> device;  // size == devices
  std::vector<std::string> warnings; // problems found while reading; printed once

  static const Config& get();
  // Parse `key = value` lines (# comments). Unknown keys become warnings.
  void apply_file_text(const std::string& text, const std::string& origin);
  void apply_env();
  // Takes every profile-given setting from profile `what` (profile.hpp says where it is looked
  // for; `dir`: where a relative path is). On failure nothing changes and warnings say why.
  bool apply_profile(const std::string& what, const std::string& dir = "");
  void finalize();
};

}  // namespace cuda_shim
