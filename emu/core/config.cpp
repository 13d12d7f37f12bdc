#include "core/config.hpp"
#include "core/limits.hpp"
#include "core/profile.hpp"

#include <cstdlib>
#include <utility>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace cuda_shim {
namespace {

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t\r\n");
  auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool parse_bool(const std::string& v) { return v == "1" || v == "true" || v == "yes" || v == "on"; }

bool parse_u64(const std::string& v, uint64_t& out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 0);
  if (errno || *end) return false;
  out = x;
  return true;
}


// "file:line" for a configuration file, the variable's name for the environment.
std::string where(const std::string& origin, int lineno) {
  return origin.rfind("CUDA_SHIM_", 0) == 0 ? origin : fmt::format("{}:{}", origin, lineno);
}

// The file's `profile = ...` (the last one) and its line: a profile is applied before every
// other setting, wherever the line stands, so that the file's own keys override it.
std::string profile_key(const std::string& text, int& lineno) {
  std::istringstream in(text);
  std::string line, found;
  for (int no = 1; std::getline(in, line); ++no) {
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    auto eq = line.find('=');
    if (eq != std::string::npos && trim(line.substr(0, eq)) == "profile") {
      found = trim(line.substr(eq + 1));
      lineno = no;
    }
  }
  return found;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash == 0 ? 1 : slash);
}

}  // namespace

Config::Config() { apply_profile("h200"); }

bool Config::apply_profile(const std::string& what, const std::string& dir) {
  Profile p;
  if (!load_profile(what, p, warnings, dir)) return false;
  profile = what;
  profile_origin = p.origin;
  attr = p.attr;
  attr_valid = p.attr_valid;
  device_default = DeviceConfig{};
  device_default.name = p.device_name;
  device_default.total_mem = p.total_mem;
  devices = p.devices;
  devices_per_host_numa_node = p.devices_per_host_numa_node;
  // The managed-memory knobs start from the profile's attributes; CUDA_SHIM_* overrides them.
  concurrent_managed_access = p.attr_valid[89] ? (p.attr[89] != 0) : 0;  // CONCURRENT_MANAGED_ACCESS
  pageable_memory_access = p.attr_valid[88] ? (p.attr[88] != 0) : 0;     // PAGEABLE_MEMORY_ACCESS
  device.clear();
  return true;
}

void Config::apply_file_text(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    line = trim(line);
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) {
      warnings.push_back(fmt::format("{}: expected key = value", where(origin, lineno)));
      continue;
    }
    std::string key = trim(line.substr(0, eq)), val = trim(line.substr(eq + 1));
    uint64_t n = 0;
    if (key == "devices") {
      if (parse_u64(val, n) && n <= kMaxDevices)
        devices = static_cast<int>(n);
      else  // say what would have been accepted, and what is used instead
        warnings.push_back(fmt::format("{}: devices = '{}' is not a device count: 0 to {} are valid (keeping {})",
                                       where(origin, lineno), val, kMaxDevices, devices));
    } else if (key == "driver_version") {
      if (parse_u64(val, n) && n >= 1000 && n < 100000)
        driver_version = static_cast<int>(n);
      else
        warnings.push_back(fmt::format("{}: driver_version = '{}' is not a driver version: 1000 to 99999 as "
                                       "cuDriverGetVersion reports it (13030 for 13.3) are valid (keeping {})",
                                       where(origin, lineno), val, driver_version));
    } else if (key == "explain") {
      explain = parse_bool(val);
    } else if (key == "trace") {
      // on/off, or where to write the trace ("-" or a path)
      bool named = !val.empty() && val != "0" && val != "false" && val != "no" && val != "off" && !parse_bool(val);
      trace = named || parse_bool(val);
      trace_to = named ? val : std::string();
    } else if (key == "strict") {
      if (val == "abort") strict = 2;
      else if (parse_bool(val) || val == "0" || val == "false" || val == "no" || val == "off" || val.empty())
        strict = parse_bool(val) ? 1 : 0;
      else
        warnings.push_back(fmt::format("{}: strict = '{}': 0, 1 or abort are valid (keeping {})",
                                       where(origin, lineno), val, strict));
    } else if (key == "concurrent_managed_access") {
      concurrent_managed_access = parse_bool(val) ? 1 : 0;
    } else if (key == "pageable_memory_access") {
      pageable_memory_access = parse_bool(val) ? 1 : 0;
    } else if (key == "profile") {
      // Applied before the rest (Config::get), so that this file's other keys override it.
    } else if (key == "faults") {
      faults = val;  // parsed, and reported if bad, by the fault engine at the first call
    } else if (key == "kernels" && (val == "run" || val == "refuse" || val == "skip")) {
      kernels = val == "run" ? KernelPolicy::run : val == "skip" ? KernelPolicy::skip : KernelPolicy::refuse;
    } else if (key == "exec_threads") {
      uint64_t n = 0;
      if (!parse_u64(val, n) || n > 4096)
        warnings.push_back(fmt::format("{}: exec_threads = {} is not a thread count (0: the cores)", where(origin, lineno), val));
      else
        exec_threads = static_cast<unsigned>(n);
    } else if (key == "kernel_timeout") {
      uint64_t n = 0;
      if (!parse_u64(val, n) || n > 86400)
        warnings.push_back(fmt::format("{}: kernel_timeout = {} is not a number of seconds (0: none)", where(origin, lineno), val));
      else
        kernel_timeout = static_cast<unsigned>(n);
    } else if (key.rfind("device.", 0) == 0) {
      // device.N.field
      auto dot = key.find('.', 7);
      uint64_t idx = 0;
      if (dot == std::string::npos || !parse_u64(key.substr(7, dot - 7), idx) || idx >= kMaxDevices) {
        warnings.push_back(fmt::format("{}: bad device key '{}'", where(origin, lineno), key));
        continue;
      }
      if (device.size() <= idx) device.resize(idx + 1, device_default);
      std::string field = key.substr(dot + 1);
      if (field == "name") device[idx].name = val.substr(0, 255);
      else if (field == "total_mem" && parse_u64(val, n) && n > 0) device[idx].total_mem = n;
      else if (field == "numa_id" && parse_u64(val, n) && n < 1024) device[idx].numa_id = static_cast<int>(n);
      else if (field == "concurrent_managed_access") device[idx].concurrent_managed_access = parse_bool(val) ? 1 : 0;
      else if (field == "pageable_memory_access") device[idx].pageable_memory_access = parse_bool(val) ? 1 : 0;
      else warnings.push_back(fmt::format("{}: bad device field '{}'", where(origin, lineno), key));
    } else {
      warnings.push_back(fmt::format("{}: unknown or invalid setting '{}'", where(origin, lineno), line));
    }
  }
}

void Config::apply_env() {
  // One variable at a time, so a complaint names the variable rather than a line.
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"CUDA_SHIM_DEVICES", "devices"},
      {"CUDA_SHIM_DRIVER_VERSION", "driver_version"},
      {"CUDA_SHIM_EXPLAIN", "explain"},
      {"CUDA_SHIM_TRACE", "trace"},
      {"CUDA_SHIM_STRICT", "strict"},
      {"CUDA_SHIM_CONCURRENT_MANAGED_ACCESS", "concurrent_managed_access"},
      {"CUDA_SHIM_PAGEABLE_MEMORY_ACCESS", "pageable_memory_access"},
      {"CUDA_SHIM_KERNELS", "kernels"},
      {"CUDA_SHIM_EXEC_THREADS", "exec_threads"},
      {"CUDA_SHIM_KERNEL_TIMEOUT", "kernel_timeout"},
      {"CUDA_SHIM_FAULTS", "faults"},
  };
  for (const auto& [var, key] : kVars)
    if (const char* v = std::getenv(var)) apply_file_text(fmt::format("{} = {}\n", key, v), var);
}

void Config::finalize() {
  device.resize(devices, device_default);
  for (size_t i = 0; i < device.size(); ++i) {
    auto& d = device[i];
    if (d.numa_id < 0)  // the profile's machine: devices_per_host_numa_node to a host node
      d.numa_id = devices_per_host_numa_node > 0 ? static_cast<int>(i) / devices_per_host_numa_node : 0;
    if (d.concurrent_managed_access < 0) d.concurrent_managed_access = concurrent_managed_access;
    if (d.pageable_memory_access < 0) d.pageable_memory_access = pageable_memory_access;
  }
}

const Config& Config::get() {
  static const Config cfg = [] {
    Config c;
    std::string text, path;
    if (const char* p = std::getenv("CUDA_SHIM_CONFIG"); p && *p) {
      path = p;
      std::ifstream f(path);
      if (f) {
        std::stringstream ss;
        ss << f.rdbuf();
        text = ss.str();
      } else {
        c.warnings.push_back(fmt::format("CUDA_SHIM_CONFIG={}: cannot open", path));
        path.clear();
      }
    }
    // The profile first (the environment's over the file's), then the file, then the variables.
    // One that does not load leaves the default profile, as a bad setting leaves its default.
    int lineno = 0;
    std::string want = profile_key(text, lineno), origin = fmt::format("{}:{}", path, lineno), dir = dir_of(path);
    if (const char* e = std::getenv("CUDA_SHIM_PROFILE"); e && *e) {
      want = e;
      origin = "CUDA_SHIM_PROFILE";
      dir.clear();  // a relative path is the process's
    }
    if (!want.empty()) {
      const size_t before = c.warnings.size();
      if (!c.apply_profile(want, dir))
        c.warnings.push_back(fmt::format("profile = {} did not load (keeping the {} profile)", want, c.profile));
      // Say which setting chose the profile its problems come from.
      for (size_t i = before; i < c.warnings.size(); ++i)
        c.warnings[i] = fmt::format("{}: {}", origin, c.warnings[i]);
    }
    if (!path.empty()) c.apply_file_text(text, path);
    c.apply_env();
    c.finalize();
    for (auto& w : c.warnings) fmt::print(stderr, "cuda-shim: config: {}\n", w);
    return c;
  }();
  return cfg;
}

}  // namespace cuda_shim
