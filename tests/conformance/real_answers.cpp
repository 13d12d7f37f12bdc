// Reads the recorded real-driver probe run once (real_answers.hpp). Records are one JSON object
// a line whose values never hold quotes or commas, as difftest writes them.
#include "real_answers.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#ifndef CUDA_SHIM_PROBE_DATA
#error "CUDA_SHIM_PROBE_DATA names the recorded probe run (tests/CMakeLists.txt)"
#endif

namespace real {
namespace {

struct Data {
  std::string header;
  std::map<std::string, std::vector<std::string>, std::less<>> cases;  // op records, init and exit left out
};

const Data& data() {
  static Data d;
  static std::once_flag once;
  std::call_once(once, [] {
    // CUDA_SHIM_PROBE_DATA in the environment reads another run (a new case before it is recorded).
    const char* alt = getenv("CUDA_SHIM_PROBE_DATA");
    std::ifstream in(alt && *alt ? alt : CUDA_SHIM_PROBE_DATA);
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("{\"probe\":\"header\"", 0) == 0) { d.header = l; continue; }
      if (l.rfind("{\"case\":\"", 0) != 0) continue;
      size_t e = l.find('"', 9);
      if (e == std::string::npos) continue;
      if (l.find("\"op\":\"init\"") != std::string::npos || l.find("\"op\":\"exit\"") != std::string::npos) continue;
      d.cases[l.substr(9, e - 9)].push_back(l);
    }
  });
  return d;
}

std::string value(const std::string& rec, std::string_view key) {
  std::string k = "\"" + std::string(key) + "\":";
  size_t p = rec.find(k);
  if (p == std::string::npos) return "";
  p += k.size();
  size_t e = rec.find_first_of(",}", p);
  std::string v = rec.substr(p, e - p);
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

const std::string& record(std::string_view name, int k) {
  const Data& d = data();
  auto it = d.cases.find(name);
  std::string where = "probe case '" + std::string(name) + "'";
  if (it == d.cases.end())
    throw std::runtime_error(where + " is not in " CUDA_SHIM_PROBE_DATA ": record it on a GPU (docs/probe.md)");
  const auto& v = it->second;
  for (auto& r : v)
    if (r.find("\"skip\":") != std::string::npos) throw std::runtime_error(where + " was skipped where it was recorded: " + r);
  size_t i = k < 0 ? v.size() - 1 : static_cast<size_t>(k);
  if (v.empty() || i >= v.size()) throw std::runtime_error(where + " has no op " + std::to_string(k));
  if (value(v[i], "rc").empty()) throw std::runtime_error(where + " op " + std::to_string(i) + " has no code: " + v[i]);
  return v[i];
}

}  // namespace

int code(std::string_view name, int k) { return std::stoi(value(record(name, k), "rc")); }
std::string field(std::string_view name, int k, std::string_view key) { return value(record(name, k), key); }
const std::string& header() { return data().header; }

}  // namespace real
