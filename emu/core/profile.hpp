// Device profiles: named machines as data (profiles/*.profile, embedded at build time, or a
// user's file read at run time). A profile is `key = value` lines over a base profile:
//   base = h200                               the profile this one changes (none: h200 itself)
//   description = ...                         one line for `cuda-shim info --profiles`
//   name = NVIDIA H100 80GB HBM3              cuDeviceGetName
//   total_mem = 85017493504                   cuDeviceTotalMem, bytes
//   devices = 72                              cuDeviceGetCount
//   devices_per_host_numa_node = 2            HOST_NUMA_ID = ordinal / 2 (0: every device on node 0)
//   CU_DEVICE_ATTRIBUTE_<NAME> = <int>|none   an attribute's value; none: INVALID_VALUE
// Depends on nothing else of the emulator, so cuda-shim-info and the unit tests link it alone.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cuda_shim {

struct Profile {
  static constexpr int kMaxAttr = 256;  // Device::kMaxAttr
  std::string name;                     // what was asked for: a name or a path
  std::string origin;                   // "built-in" or the file's path
  std::vector<std::string> chain;       // this profile, then its bases (names or paths)
  std::string description;
  std::string device_name;
  uint64_t total_mem = 0;
  int devices = 1;
  int devices_per_host_numa_node = 0;
  std::array<int, kMaxAttr> attr{};
  std::array<bool, kMaxAttr> attr_valid{};
};

struct BuiltinProfile {
  const char* name;
  const char* text;
};
// The profiles compiled in (generated from profiles/*.profile by cmake/profiles.cmake).
const std::vector<BuiltinProfile>& builtin_profiles();
// Where `CUDA_SHIM_PROFILE=NAME` also looks: $XDG_CONFIG_HOME/cuda-shim/profiles (else
// ~/.config/cuda-shim/profiles), as NAME.profile. Empty when neither variable is set.
std::string user_profile_dir();

// Loads `what`: a built-in name, else NAME.profile in the user directory, else (when it holds
// a '/') a file path, relative to `dir` if given and relative. Bad lines become warnings
// ("file:line: ...") and are skipped; returns false (out untouched) when the profile or one
// of its bases cannot be found or read, with the reason in warnings.
bool load_profile(const std::string& what, Profile& out, std::vector<std::string>& warnings,
                  const std::string& dir = "");

// CU_DEVICE_ATTRIBUTE_ names, without the prefix: -1 / nullptr when unknown.
int attribute_number(const std::string& name);
const char* attribute_name(int number);

}  // namespace cuda_shim
