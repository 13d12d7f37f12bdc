// The fault engine: parses CUDA_SHIM_FAULTS-style rule sets and decides, at the ABI door,
// whether a call fails before its body runs (docs/faults.md). Only the exported entry points
// reach the door, so the emulator's calls to itself (the runtime reaching the driver's
// implementations inside libcuda) are never counted.
#include "abi/call.hpp"
#include "abi/faults.hpp"
#include "core/config.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace cuda_shim::abi {

std::atomic<bool> g_fault_check{true};

namespace {

struct Sym {
  const char* name;
  bool runtime;
};
// Every exported name whose calls pass through the door. cudaGetLastError and
// cudaPeekAtLastError report the last error and bypass it: they cannot be made to fail.
constexpr Sym kSyms[] = {
#define CU_SYM(n) {#n, false},
#include "abi/driver_symbols.def"
#undef CU_SYM
#define RT_SYM(n) {#n, true},
#define RT_SYM_SPECIAL(n)
#include "abi/runtime_symbols.def"
#undef RT_SYM
#undef RT_SYM_SPECIAL
};
bool injectable(std::string_view n) { return n != "cudaGetLastError" && n != "cudaPeekAtLastError"; }

struct ErrName {
  int code;
  const char* name;
};
constexpr ErrName kCuErrors[] = {
#define CU_ERR(code, name, text) {code, name},
#include "core/driver_errors.def"
#undef CU_ERR
};
constexpr ErrName kRtErrors[] = {
#define RT_ERR(code, name, text) {code, name},
#include "runtime/runtime_errors.def"
#undef RT_ERR
};
struct ErrcRow {
  Errc e;
  int cu, rt;
};
constexpr ErrcRow kErrc[] = {
#define ERRC(name, cu, rt) {Errc::name, cu, rt},
#include "core/errc.def"
#undef ERRC
};

// `sym` is `target` itself or one of its versions / per-thread variants: the name a program
// writes (cuMemAlloc) covers the symbol its header maps it to (cuMemAlloc_v2), and
// cuMemAllocFromPoolAsync covers cuMemAllocFromPoolAsync_ptsz.
bool covers(std::string_view target, std::string_view sym) {
  if (sym.substr(0, target.size()) != target) return false;
  std::string_view rest = sym.substr(target.size());
  while (!rest.empty()) {
    if (rest.substr(0, 5) == "_ptsz" || rest.substr(0, 5) == "_ptds") {
      rest.remove_prefix(5);
    } else if (rest.size() > 2 && rest.substr(0, 2) == "_v" && std::isdigit(static_cast<unsigned char>(rest[2]))) {
      rest.remove_prefix(2);
      while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) rest.remove_prefix(1);
    } else {
      return false;
    }
  }
  return true;
}

struct Rule {
  std::string text;    // as written, trimmed: quoted in explanations
  std::string origin;  // "CUDA_SHIM_FAULTS rule" or an alias
  Errc e = Errc::unknown;
  uint64_t lo = 1, hi = UINT64_MAX;  // 1-based call numbers, inclusive
  double p = -1;                     // >= 0: probability rule
};
struct Target {
  std::string name;
  std::atomic<uint64_t> calls{0};
  std::vector<Rule> rules;
};
struct RuleSet {
  uint64_t seed = 0;
  std::vector<std::unique_ptr<Target>> targets;
  std::unordered_map<std::string_view, std::vector<Target*>> by_symbol;  // keys: kSyms' literals
};

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

// Parses `spec` into `out`; on failure, `why` names the rule, its position and the problem.
// Which targets each exported symbol answers to (rebuilt whenever the targets change).
void index_symbols(RuleSet& s) {
  s.by_symbol.clear();
  for (const Sym& sym : kSyms)
    for (auto& t : s.targets)
      if (injectable(sym.name) && covers(t->name, sym.name)) s.by_symbol[sym.name].push_back(t.get());
}

bool parse(std::string_view spec, const char* origin, RuleSet& out, std::string& why) {
  size_t pos = 0;
  int index = 0;
  std::unordered_map<std::string, Target*> by_name;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string item = trim(spec.substr(pos, end - pos));
    ++index;
    size_t at = pos;  // where the rule's text starts, for the message
    while (at < end && std::isspace(static_cast<unsigned char>(spec[at]))) ++at;
    auto bad = [&](std::string_view problem) {
      why = fmt::format("rule {} '{}' (at character {}): {}", index, item, at + 1, problem);
      return false;
    };
    if (item.empty()) {
      if (end == spec.size() && index > 1) break;  // a trailing comma
      if (end == spec.size() && trim(spec).empty()) break;
      return bad("empty rule (rules are ENTRY:ERROR[@WHEN], separated by commas)");
    }
    if (item.rfind("seed", 0) == 0 && item.find(':') == std::string::npos) {
      auto eq = item.find('=');
      uint64_t s = 0;
      if (eq == std::string::npos || trim(item.substr(0, eq)) != "seed" || !parse_u64(trim(item.substr(eq + 1)), s))
        return bad("a seed is seed=N with N a decimal number");
      out.seed = s;
    } else {
      auto colon = item.find(':');
      if (colon == std::string::npos) return bad("expected ENTRY:ERROR[@WHEN]");
      std::string entry = trim(item.substr(0, colon));
      std::string rest = item.substr(colon + 1);
      std::string err = rest, when;
      bool has_when = false;
      if (auto at = rest.find('@'); at != std::string::npos) {
        err = rest.substr(0, at);
        when = trim(rest.substr(at + 1));
        has_when = true;
      }
      err = trim(err);
      // The entry: an exported name (or a name that some exported versions extend).
      bool any = false, runtime = false, exact_special = false;
      for (const Sym& s : kSyms)
        if (covers(entry, s.name)) {
          if (!injectable(s.name)) {
            exact_special = true;
            continue;
          }
          any = true;
          runtime = s.runtime;
        }
      if (!any)
        return bad(exact_special ? fmt::format("{} reports the last error and cannot be made to fail", entry)
                                 : fmt::format("'{}' is not an entry point libcuda.so.1 or libcudart.so.13 exports",
                                               entry));
      Rule r;
      r.text = item;
      r.origin = origin;
      // The error: a name of the entry's family, or * (the family's "unknown error").
      if (err == "*") {
        r.e = Errc::unknown;
      } else {
        int code = -1;
        const ErrName* b = runtime ? std::begin(kRtErrors) : std::begin(kCuErrors);
        const ErrName* z = runtime ? std::end(kRtErrors) : std::end(kCuErrors);
        for (const ErrName* n = b; n != z; ++n)
          if (err == n->name) code = n->code;
        if (code < 0)
          return bad(fmt::format("'{}' is not a {} name ({} is a {} entry)", err,
                                 runtime ? "cudaError_t" : "CUresult", entry, runtime ? "runtime" : "driver"));
        if (code == 0) return bad("success is not a fault");
        bool found = false;
        for (const ErrcRow& row : kErrc)
          if ((runtime ? row.rt : row.cu) == code) {
            r.e = row.e;
            found = true;
            break;
          }
        if (!found) return bad(fmt::format("'{}' is not an error the emulator can return", err));
      }
      // When: every call, the Nth, N-M, or p=F.
      if (has_when) {
        uint64_t a = 0, b = 0;
        if (when.rfind("p", 0) == 0 && when.find('=') != std::string::npos) {
          std::string v = trim(when.substr(when.find('=') + 1));
          char* e = nullptr;
          double p = v.empty() ? -1 : std::strtod(v.c_str(), &e);
          if (trim(when.substr(0, when.find('='))) != "p" || !e || *e || !(p >= 0 && p <= 1))
            return bad("a probability is p=F with F between 0 and 1");
          r.p = p;
        } else if (auto dash = when.find('-'); dash != std::string::npos) {
          if (!parse_u64(trim(when.substr(0, dash)), a) || !parse_u64(trim(when.substr(dash + 1)), b) || a == 0 ||
              b < a)
            return bad("a range is N-M with 1 <= N <= M (calls count from 1)");
          r.lo = a;
          r.hi = b;
        } else {
          if (!parse_u64(when, a) || a == 0) return bad("@WHEN is N, N-M or p=F (calls count from 1)");
          r.lo = r.hi = a;
        }
      }
      Target*& t = by_name[entry];
      if (!t) {
        out.targets.push_back(std::make_unique<Target>());
        t = out.targets.back().get();
        t->name = entry;
      }
      t->rules.push_back(std::move(r));
    }
    pos = end + 1;
  }
  index_symbols(out);
  return true;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Deterministic per (seed, entry, call number): the same seed fails the same calls, whatever
// the threads' interleaving of other entries.
bool draw(uint64_t seed, const std::string& name, uint64_t n, double p) {
  uint64_t h = seed;
  for (char c : name) h = mix(h ^ static_cast<unsigned char>(c));
  double u = static_cast<double>(mix(h ^ mix(n)) >> 11) * 0x1.0p-53;
  return u < p;
}

std::mutex g_m;
std::shared_ptr<RuleSet> g_set;  // guarded by g_m; null: no rules
std::once_flag g_loaded;

// CUDA_SHIM_LE_FAULT=illegal_state, spelled as rules (docs/logical-endpoints.md).
constexpr const char* kLeFaultAlias =
    "cuLogicalEndpointGetLimits:CUDA_ERROR_ILLEGAL_STATE,cuLogicalEndpointQuery:CUDA_ERROR_ILLEGAL_STATE,"
    "cuLogicalEndpointBindAddr:CUDA_ERROR_ILLEGAL_STATE,cuLogicalEndpointBindMem:CUDA_ERROR_ILLEGAL_STATE,"
    "cuLogicalEndpointUnbind:CUDA_ERROR_ILLEGAL_STATE";

void install(std::shared_ptr<RuleSet> s) {
  std::lock_guard lk(g_m);
  if (s && s->targets.empty()) s.reset();
  g_set = std::move(s);
  g_fault_check.store(g_set != nullptr, std::memory_order_relaxed);
  refresh_hooks();  // the door's one flag covers fault injection too
}

void load_env() noexcept {
  try {
    auto s = std::make_shared<RuleSet>();
    // CUDA_SHIM_FAULTS, or `faults =` in the configuration file (the variable wins).
    if (const std::string& v = Config::get().faults; !v.empty()) {
      std::string why;
      if (!parse(v.c_str(), "CUDA_SHIM_FAULTS rule", *s, why)) {
        // Never half-applied: one bad rule and no rule of the setting applies.
        std::fprintf(stderr, "cuda-shim: CUDA_SHIM_FAULTS: %s; the setting is ignored (no fault is injected)\n",
                     why.c_str());
        s = std::make_shared<RuleSet>();
      }
    }
    if (const char* le = std::getenv("CUDA_SHIM_LE_FAULT"); le && std::strcmp(le, "illegal_state") == 0) {
      std::string why;
      RuleSet alias;
      if (parse(kLeFaultAlias, "CUDA_SHIM_LE_FAULT=illegal_state, as rule", alias, why)) {
        for (auto& t : alias.targets) s->targets.push_back(std::move(t));
        index_symbols(*s);
      }
    }
    install(std::move(s));
  } catch (...) {
    install(nullptr);
  }
}

}  // namespace

Errc inject_slow(const char* api, bool runtime) noexcept {
  std::call_once(g_loaded, load_env);
  if (!api) return Errc::success;  // call_hooks.cpp: only load the rules
  std::shared_ptr<RuleSet> s;
  {
    std::lock_guard lk(g_m);
    s = g_set;
  }
  if (!s) return Errc::success;
  auto it = s->by_symbol.find(api);
  if (it == s->by_symbol.end()) return Errc::success;
  // Every target covering this symbol counts the call; the first matching rule fires.
  const Rule* hit = nullptr;
  uint64_t hit_n = 0;
  for (Target* t : it->second) {
    uint64_t n = t->calls.fetch_add(1, std::memory_order_relaxed) + 1;
    if (hit) continue;
    for (const Rule& r : t->rules) {
      bool fire = r.p >= 0 ? draw(s->seed, t->name, n, r.p) : (n >= r.lo && n <= r.hi);
      if (fire) {
        hit = &r;
        hit_n = n;
        break;
      }
    }
  }
  if (!hit) return Errc::success;
  return fail(hit->e, "{}: injected by {} '{}' (call #{}); the call did nothing, as one refused by validation", api,
              hit->origin, hit->text, hit_n);
}

Errc set_faults(const char* spec) noexcept {
  std::call_once(g_loaded, load_env);
  try {
    auto s = std::make_shared<RuleSet>();
    std::string why;
    if (spec && !parse(spec, "cuShimSetFaults rule", *s, why))
      return fail(Errc::invalid_value, "cuShimSetFaults: {}; the rules in force are unchanged", why);
    install(std::move(s));
    return Errc::success;
  } catch (const std::bad_alloc&) {
    return fail(Errc::out_of_memory, "cuShimSetFaults: out of host memory");
  }
}

}  // namespace cuda_shim::abi
