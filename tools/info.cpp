// cuda-shim-info: what the driver says about its devices, printed the way
// `nvidia-smi -L` and the head of `nvidia-smi` would. It uses only the public
// driver API, so it runs unchanged on NVIDIA's libcuda.so.1 too.
//
//   cuda-shim-info                  summary
//   cuda-shim-info -L               one line per device
//   cuda-shim-info --profiles       the device profiles CUDA_SHIM_PROFILE can name
//   cuda-shim-info --profile NAME   one profile, resolved (no driver needed)
#include <cuda.h>

#include "nvml/nvml_table.hpp"
#include "core/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* error_name(CUresult r) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) return "unrecognized CUresult";
  return name;
}

// Reports a failed call and returns false; the caller decides whether to go on.
bool ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  const char* text = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS || text == nullptr) text = "";
  std::fprintf(stderr, "cuda-shim-info: %s failed: %s (%d): %s\n", what, error_name(r),
               static_cast<int>(r), text);
  return false;
}

// 13000 -> "13.0", 13030 -> "13.3" (the encoding is 1000 * major + 10 * minor).
std::string format_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// nvidia-smi's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string format_uuid(const CUuuid& u) {
  static const int groups[] = {4, 2, 2, 2, 6};
  std::string s = "GPU";
  int i = 0;
  for (int g : groups) {
    s += '-';
    for (int k = 0; k < g; ++k, ++i) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(u.bytes[i]));
      s += hex;
    }
  }
  return s;
}

// An attribute value, or -1 with the failure reported (one odd attribute should not hide
// the rest of the listing).
int attribute(CUdevice dev, CUdevice_attribute a, const char* what) {
  int v = -1;
  if (!ok(cuDeviceGetAttribute(&v, a, dev), what)) return -1;
  return v;
}

const char* yes_no(int v) { return v < 0 ? "?" : (v ? "yes" : "no"); }

struct Device {
  char name[256] = {};
  std::string uuid = "GPU-?";
  bool good = true;
};

Device query_basic(CUdevice dev) {
  Device d;
  d.good &= ok(cuDeviceGetName(d.name, sizeof d.name, dev), "cuDeviceGetName");
  CUuuid u;
  if (ok(cuDeviceGetUuid(&u, dev), "cuDeviceGetUuid_v2"))
    d.uuid = format_uuid(u);
  else
    d.good = false;
  return d;
}

// Warnings as the driver prints them; the status says whether there were any.
int report(const std::vector<std::string>& warnings) {
  for (auto& w : warnings) std::fprintf(stderr, "cuda-shim-info: profile: %s\n", w.c_str());
  return warnings.empty() ? 0 : 1;
}

// --profiles: the built-in profiles, then the user directory's.
int list_profiles() {
  std::vector<std::string> warnings;
  auto line = [&](const std::string& what, const char* where) {
    cuda_shim::Profile p;
    if (cuda_shim::load_profile(what, p, warnings))
      std::printf("%-28s %-9s %s\n", what.c_str(), where,
                  p.description.empty() ? "(no description)" : p.description.c_str());
  };
  for (auto& b : cuda_shim::builtin_profiles()) line(b.name, "built-in");
  std::string dir = cuda_shim::user_profile_dir();
  std::vector<std::string> mine;
  std::error_code ec;
  if (!dir.empty())
    for (auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".profile") mine.push_back(e.path().stem().string());
  std::sort(mine.begin(), mine.end());
  for (auto& m : mine) {
    bool shadowed = false;
    for (auto& b : cuda_shim::builtin_profiles()) shadowed |= m == b.name;
    if (shadowed)
      std::printf("%-28s %-9s (not used: the built-in profile of this name comes first)\n", m.c_str(), "user");
    else
      line(m, "user");
  }
  std::printf("\nCUDA_SHIM_PROFILE=NAME (default h200) picks one; user profiles: %s/NAME.profile, or any file by its "
              "path.\n", dir.empty() ? "$XDG_CONFIG_HOME/cuda-shim/profiles" : dir.c_str());
  return report(warnings);
}

// --profile NAME: what the profile sets, every attribute marked where it differs from h200,
// then the profile's own file (its sources).
int print_profile(const std::string& what) {
  std::vector<std::string> warnings;
  cuda_shim::Profile p, h200;
  if (!cuda_shim::load_profile(what, p, warnings)) return report(warnings) | 1;
  cuda_shim::load_profile("h200", h200, warnings);
  std::string chain;
  for (auto& c : p.chain) chain += (chain.empty() ? "" : " <- ") + c;
  std::printf("Profile:     %s (%s)\n", what.c_str(), p.origin == "built-in" ? "built in" : p.origin.c_str());
  std::printf("Based on:    %s\n", chain.c_str());
  std::printf("Description: %s\n", p.description.c_str());
  std::printf("Devices:     %d", p.devices);
  if (p.devices_per_host_numa_node > 0)
    std::printf(" (%d to a host NUMA node)\n", p.devices_per_host_numa_node);
  else
    std::printf(" (host NUMA node 0)\n");
  std::printf("Name:        %s\n", p.device_name.c_str());
  std::printf("Memory:      %llu MiB (%llu bytes)\n", static_cast<unsigned long long>(p.total_mem >> 20),
              static_cast<unsigned long long>(p.total_mem));
  std::printf("Attributes (CU_DEVICE_ATTRIBUTE_*; * differs from h200, - not reported: INVALID_VALUE):\n");
  for (int a = 1; a < cuda_shim::Profile::kMaxAttr; ++a) {
    const char* name = cuda_shim::attribute_name(a);
    if (!name || (!p.attr_valid[a] && !h200.attr_valid[a])) continue;
    bool differs = p.attr_valid[a] != h200.attr_valid[a] || p.attr[a] != h200.attr[a];
    if (p.attr_valid[a])
      std::printf("  %c %-52s %d\n", differs ? '*' : ' ', name, p.attr[a]);
    else
      std::printf("  %c %-52s -\n", differs ? '*' : ' ', name);
  }
  std::string text;
  if (p.origin == "built-in") {
    for (auto& b : cuda_shim::builtin_profiles())
      if (what == b.name) text = b.text;
  } else {
    std::ifstream f(p.origin);
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  std::printf("\n--- %s ---\n%s", p.origin == "built-in" ? (what + ".profile").c_str() : p.origin.c_str(),
              text.c_str());
  return report(warnings);
}

}  // namespace

int main(int argc, char** argv) {
  bool list_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-L") == 0 || std::strcmp(argv[i], "--list-gpus") == 0) {
      list_only = true;
    } else if (std::strcmp(argv[i], "--profiles") == 0) {
      return list_profiles();
    } else if (std::strcmp(argv[i], "--profile") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cuda-shim-info: --profile needs a name or a file (--profiles lists them)\n");
        return 2;
      }
      return print_profile(argv[i + 1]);
    } else if (std::strncmp(argv[i], "--profile=", 10) == 0) {
      return print_profile(argv[i] + 10);
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: cuda-shim-info [-L|--list-gpus] | --profiles | --profile NAME|FILE\n");
      return 0;
    } else {
      std::fprintf(stderr, "cuda-shim-info: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }

  if (!ok(cuInit(0), "cuInit")) return 1;
  int driver = 0, count = 0;
  if (!ok(cuDriverGetVersion(&driver), "cuDriverGetVersion")) return 1;
  if (!ok(cuDeviceGetCount(&count), "cuDeviceGetCount")) return 1;

  // Who uses the devices, as nvidia-smi shows it: read through the table our NVML uses (it makes
  // no context, so this tool is not listed itself).
  const void* table = nullptr;
  if (cuGetExportTable(&table, &cuda_shim::nvml_bridge::kNvmlTableId) != CUDA_SUCCESS) table = nullptr;
  auto print_usage = [t = static_cast<const cuda_shim::nvml_bridge::NvmlTable*>(table)](int ordinal) {
    cuda_shim::nvml_bridge::DeviceInfo info{};
    if (!t || !t->device(ordinal, &info)) return;
    cuda_shim::nvml_bridge::ProcessInfo procs[64];
    uint64_t used = 0;
    int n = t->processes(ordinal, procs, 64, &used);
    std::printf("  Memory used:           %llu MiB of %llu MiB (every process)\n",
                static_cast<unsigned long long>(used >> 20), static_cast<unsigned long long>(info.total_mem >> 20));
    std::printf("  Processes:             %d\n", n < 0 ? 0 : n);
    for (int k = 0; k < n && k < 64; ++k)
      std::printf("    pid %-10u %llu MiB\n", procs[k].pid, static_cast<unsigned long long>(procs[k].bytes >> 20));
  };

  bool all_good = true;
  if (list_only) {
    for (int i = 0; i < count; ++i) {
      CUdevice dev;
      if (!ok(cuDeviceGet(&dev, i), "cuDeviceGet")) return 1;
      Device d = query_basic(dev);
      all_good &= d.good;
      std::printf("GPU %d: %s (UUID: %s)\n", i, d.name, d.uuid.c_str());
    }
    return all_good ? 0 : 1;
  }

  // nvidia-smi's "CUDA Version" is the newest API the driver supports, which is what
  // cuDriverGetVersion answers; the headers line says what this tool was compiled for.
  std::printf("Driver Version: %s (cuDriverGetVersion %d)   CUDA Version: %s\n",
              format_version(driver).c_str(), driver, format_version(driver).c_str());
  std::printf("Built with CUDA headers: %s (CUDA_VERSION %d)\n",
              format_version(CUDA_VERSION).c_str(), CUDA_VERSION);
  std::printf("Devices: %d\n", count);

  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (!ok(cuDeviceGet(&dev, i), "cuDeviceGet")) return 1;
    Device d = query_basic(dev);
    all_good &= d.good;

    char bus[32] = "?";
    all_good &= ok(cuDeviceGetPCIBusId(bus, sizeof bus, dev), "cuDeviceGetPCIBusId");
    size_t bytes = 0;
    bool mem_ok = ok(cuDeviceTotalMem(&bytes, dev), "cuDeviceTotalMem_v2");
    all_good &= mem_ok;

    int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
    int minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
    int pools = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "MEMORY_POOLS_SUPPORTED");
    int pool_handles = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
                                 "MEMPOOL_SUPPORTED_HANDLE_TYPES");
    int vmm = attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                        "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
    int posix_fd = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                             "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED");
    int fabric = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
                           "HANDLE_TYPE_FABRIC_SUPPORTED");
    int ipc_events = attribute(dev, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, "IPC_EVENT_SUPPORTED");
    int numa = attribute(dev, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, "HOST_NUMA_ID");
    all_good &= major >= 0 && minor >= 0 && pools >= 0 && pool_handles >= 0 && vmm >= 0 &&
                posix_fd >= 0 && fabric >= 0 && ipc_events >= 0;

    std::printf("\nGPU %d: %s (UUID: %s)\n", i, d.name, d.uuid.c_str());
    std::printf("  PCI bus id:            %s\n", bus);
    if (mem_ok)
      std::printf("  Total memory:          %zu MiB (%zu bytes)\n", bytes >> 20, bytes);
    print_usage(i);
    std::printf("  Compute capability:    %d.%d\n", major, minor);
    std::printf("  Host NUMA node:        %d\n", numa);
    std::printf("  Memory pools:          %s (IPC handle types mask %d)\n", yes_no(pools),
                pool_handles);
    std::printf("  Virtual memory mgmt:   %s\n", yes_no(vmm));
    std::printf("  IPC: POSIX fd handles: %s, fabric handles: %s, events: %s\n", yes_no(posix_fd),
                yes_no(fabric), yes_no(ipc_events));
  }
  return all_good ? 0 : 1;
}
