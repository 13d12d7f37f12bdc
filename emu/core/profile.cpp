#include "core/profile.hpp"
#include "core/limits.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#ifndef CUDA_SHIM_ENABLE_13030_API
#define CUDA_SHIM_ENABLE_13030_API 1  // the 13.3 attribute names are checked too
#endif
#include <cuda.h>

namespace cuda_shim {
namespace {

struct AttrName {
  const char* name;
  int number;
};
constexpr AttrName kAttrNames[] = {
#define DEV_ATTR_NAME(n, v) {#n, v},
#include "core/device_attr_names.def"
#undef DEV_ATTR_NAME
};
// The table is typed by hand from cuda.h's numbers; the compiler holds it to them.
#define DEV_ATTR_NAME(n, v) static_assert(CU_DEVICE_ATTRIBUTE_##n == (v) && (v) < Profile::kMaxAttr);
#include "core/device_attr_names.def"
#undef DEV_ATTR_NAME

constexpr const char* kPrefix = "CU_DEVICE_ATTRIBUTE_";
constexpr int kMaxDepth = 8;  // base chains longer than this are a cycle in practice

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool parse_i64(const std::string& v, long long& out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 0);
  if (errno || *end) return false;
  out = x;
  return true;
}

struct Source {
  std::string label;  // what messages name: "h100.profile (built in)" or the path
  std::string origin; // "built-in" or the path
  std::string dir;    // where a relative `base` path is looked up
  std::string text;
};

bool read_file(const std::string& path, std::string& text) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  text = ss.str();
  return true;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
}

std::string builtin_names() {
  std::string s;
  for (auto& b : builtin_profiles()) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

// Finds `what`: a built-in name first (so a name means the same machine everywhere), then the
// user directory, then a path.
bool find(const std::string& what, const std::string& dir, Source& src, std::vector<std::string>& warnings) {
  const bool is_path = what.find('/') != std::string::npos;
  if (!is_path) {
    for (auto& b : builtin_profiles())
      if (what == b.name) {
        src = {fmt::format("{}.profile (built in)", b.name), "built-in", "", b.text};
        return true;
      }
    std::string udir = user_profile_dir();
    if (!udir.empty() && !what.empty()) {
      std::string path = udir + "/" + what + ".profile";
      if (read_file(path, src.text)) {
        src.label = src.origin = path;
        src.dir = udir;
        return true;
      }
    }
    warnings.push_back(fmt::format("profile '{}' is not a built-in profile ({}) and {} has no {}.profile; "
                                   "a file of your own is named by its path (CUDA_SHIM_PROFILE=./{}.profile)",
                                   what, builtin_names(), udir.empty() ? "the user profile directory" : udir,
                                   what, what));
    return false;
  }
  std::string path = what[0] == '/' || dir.empty() ? what : dir + "/" + what;
  if (!read_file(path, src.text)) {
    warnings.push_back(fmt::format("profile file {}: cannot open", path));
    return false;
  }
  src.label = src.origin = path;
  src.dir = dir_of(path);
  return true;
}

// The root of every chain: no attributes, one device, nothing named (h200.profile fills it).
void reset(Profile& p) {
  p = Profile{};
}

bool load(const std::string& what, const std::string& dir, int depth, Profile& out,
          std::vector<std::string>& warnings) {
  Source src;
  if (!find(what, dir, src, warnings)) return false;

  struct Line {
    int no;
    std::string key, val;
  };
  std::vector<Line> lines;
  std::string base = "h200";  // a file that names no base changes the H200
  // Read in place (string_views into the text): every process parses its profile at its first
  // call, so this is on cuInit's path.
  const std::string_view text = src.text;
  int no = 0;
  for (size_t at = 0; at < text.size();) {
    ++no;
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(at, nl - at);
    at = nl + 1;
    if (auto h = raw.find('#'); h != std::string_view::npos) raw = raw.substr(0, h);
    const std::string line = trim(std::string(raw));
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) {
      warnings.push_back(fmt::format("{}:{}: expected key = value, got '{}'", src.label, no, line));
      continue;
    }
    Line l{no, trim(line.substr(0, eq)), trim(line.substr(eq + 1))};
    if (l.key == "base")
      base = l.val;
    else
      lines.push_back(std::move(l));
  }

  Profile p;
  if (base == "none") {
    reset(p);
  } else {
    if (depth >= kMaxDepth) {
      warnings.push_back(fmt::format("{}: base = {}: more than {} profiles deep (do two profiles name each other?)",
                                     src.label, base, kMaxDepth));
      return false;
    }
    if (!load(base, src.dir, depth + 1, p, warnings)) {
      warnings.push_back(fmt::format("{}: its base profile '{}' did not load", src.label, base));
      return false;
    }
  }
  p.name = what;
  p.origin = src.origin;
  p.description.clear();  // it describes its own file, not the base's
  p.chain.insert(p.chain.begin(), what);

  for (const Line& l : lines) {
    auto bad = [&](const char* expected) {
      warnings.push_back(fmt::format("{}:{}: {} = '{}': {} (line ignored)", src.label, l.no, l.key, l.val, expected));
    };
    long long n = 0;
    if (l.key == "description") {
      p.description = l.val;
    } else if (l.key == "name") {
      if (l.val.empty() || l.val.size() > 255) bad("a device name of 1 to 255 characters");
      else p.device_name = l.val;
    } else if (l.key == "total_mem") {
      if (parse_i64(l.val, n) && n > 0) p.total_mem = static_cast<uint64_t>(n);
      else bad("a byte count above 0");
    } else if (l.key == "devices") {
      if (parse_i64(l.val, n) && n >= 0 && n <= kMaxDevices) p.devices = static_cast<int>(n);
      else bad(fmt::format("a device count, 0 to {}", kMaxDevices).c_str());
    } else if (l.key == "devices_per_host_numa_node") {
      if (parse_i64(l.val, n) && n >= 0 && n <= kMaxDevices) p.devices_per_host_numa_node = static_cast<int>(n);
      else bad("0 (every device on host NUMA node 0) or how many devices share one node");
    } else if (l.key.rfind(kPrefix, 0) == 0) {
      int a = attribute_number(l.key.substr(std::char_traits<char>::length(kPrefix)));
      if (a < 0) {
        warnings.push_back(fmt::format("{}:{}: {} is not a CUdevice_attribute this emulator knows (line ignored)",
                                       src.label, l.no, l.key));
      } else if (l.val == "none") {
        p.attr[a] = 0;
        p.attr_valid[a] = false;
      } else if (parse_i64(l.val, n) && n >= INT32_MIN && n <= INT32_MAX) {
        p.attr[a] = static_cast<int>(n);
        p.attr_valid[a] = true;
      } else {
        bad("an int (decimal or 0x hex), or none for an attribute the device does not report");
      }
    } else {
      warnings.push_back(fmt::format("{}:{}: unknown key '{}': a profile holds base, description, name, total_mem, "
                                     "devices, devices_per_host_numa_node and CU_DEVICE_ATTRIBUTE_* (line ignored)",
                                     src.label, l.no, l.key));
    }
  }
  out = std::move(p);
  return true;
}

}  // namespace

std::string user_profile_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/cuda-shim/profiles";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/cuda-shim/profiles";
  return {};
}

bool load_profile(const std::string& what, Profile& out, std::vector<std::string>& warnings, const std::string& dir) {
  return load(what, dir, 0, out, warnings);
}

int attribute_number(const std::string& name) {
  // Sorted once: a profile names some 200 attributes, each looked up here.
  static const std::vector<std::pair<std::string_view, int>> sorted = [] {
    std::vector<std::pair<std::string_view, int>> v;
    for (const auto& a : kAttrNames) v.emplace_back(a.name, a.number);
    std::sort(v.begin(), v.end());
    return v;
  }();
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair<std::string_view, int>(name, INT_MIN));
  return it != sorted.end() && it->first == name ? it->second : -1;
}

const char* attribute_name(int number) {
  for (const auto& a : kAttrNames)
    if (a.number == number) return a.name;
  return nullptr;
}

}  // namespace cuda_shim
