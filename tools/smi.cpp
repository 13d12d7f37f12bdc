// cuda-shim-smi (`cuda-shim smi`): what every process using the emulator holds, without a
// debugger (docs/smi.md). The shared registry (devices' memory, processes, exports, IPC events,
// logical endpoints) comes from libcuda.so.1 through a private table that takes no process slot;
// what lives only inside a process (pools, allocations, VMM) from that process's inspector
// thread (emu/inspect), over an abstract unix socket that only this user may use.
//
//   cuda-shim-smi [--json] [--watch[=N]] [-p PID] | --reap [--json]
#include <cuda.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "abi/inspect_table.hpp"

namespace {

// One line of the inspector's text: "what key=value ...".
struct Item {
  std::string what;
  std::vector<std::pair<std::string, std::string>> kv;
  std::string get(const std::string& k, const std::string& dflt = "") const {
    for (auto& [a, b] : kv)
      if (a == k) return b;
    return dflt;
  }
  long long num(const std::string& k) const { return std::strtoll(get(k, "0").c_str(), nullptr, 0); }
  unsigned long long unum(const std::string& k) const { return std::strtoull(get(k, "0").c_str(), nullptr, 0); }
};

std::string unescape(const std::string& v) {
  if (v == "-") return "";
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size()) {
      out += static_cast<char>(std::strtol(v.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

std::vector<Item> parse(const std::string& text) {
  std::vector<Item> items;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    Item it;
    if (!(w >> it.what)) continue;
    for (std::string word; w >> word;) {
      size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      it.kv.emplace_back(word.substr(0, eq), unescape(word.substr(eq + 1)));
    }
    items.push_back(std::move(it));
  }
  return items;
}

// ---- JSON output ----
std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}
bool numeric(const std::string& k, const std::string& v) {
  if (k == "token" || k == "object" || k == "comm" || k == "name" || v.empty() || v.size() > 18) return false;
  size_t i = v[0] == '-' ? 1 : 0;
  if (i == v.size()) return false;
  for (; i < v.size(); ++i)
    if (v[i] < '0' || v[i] > '9') return false;
  return true;
}
std::string jobj(const Item& it, const std::string& extra = "") {
  std::string o = "{";
  for (auto& [k, v] : it.kv) o += (o.size() > 1 ? "," : "") + jstr(k) + ":" + (numeric(k, v) ? v : jstr(v));
  if (!extra.empty()) o += (o.size() > 1 ? "," : "") + extra;
  return o + "}";
}
template <class V, class F>
std::string jarr(const V& v, F&& f) {
  std::string o = "[";
  for (auto& x : v) o += (o.size() > 1 ? "," : "") + f(x);
  return o + "]";
}

// ---- talking to a process's inspector ----
struct Answer {
  std::string state;  // live, not answering, no inspector, dead
  std::vector<Item> items;
};

Answer ask(int pid) {
  Answer a;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return {"no inspector", {}};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string name = "cuda-shim-smi." + std::to_string(::getuid()) + "." + std::to_string(pid);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t alen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), alen) != 0 && errno != EINPROGRESS) {
    const bool busy = errno == EAGAIN;  // its backlog is full: it stopped answering a while ago
    ::close(fd);
    return {busy ? "not answering" : "no inspector", {}};  // CUDA_SHIM_INSPECTOR=0, an older build, no cuInit yet
  }
  // The listener must be that process, of this user: nobody else can stand in for it.
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid() || cred.pid != pid) {
    ::close(fd);
    return {"impostor", {}};
  }
  std::string text;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  bool done = false;
  while (!done) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count());
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) continue;
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    done = text.size() >= 4 && text.compare(text.size() - 4, 4, "end\n") == 0;
  }
  ::close(fd);
  if (!done) return {"not answering", {}};
  a.state = "live";
  a.items = parse(text);
  return a;
}

// Processes with an inspector socket of this user, from the kernel's list of unix sockets: those
// that called cuInit but never took a registry slot (no context yet) are found too.
std::set<int> listening() {
  std::set<int> pids;
  std::ifstream f("/proc/net/unix");
  std::string line, prefix = "@cuda-shim-smi." + std::to_string(::getuid()) + ".";
  while (std::getline(f, line)) {
    size_t at = line.find(prefix);
    if (at != std::string::npos) pids.insert(std::atoi(line.c_str() + at + prefix.size()));
  }
  return pids;
}

struct Proc {
  int pid = 0;
  std::string state;  // live, dead, not answering, no inspector, impostor
  Item slot;          // the registry's proc line (none: found by its socket only)
  std::vector<Item> use, items;
};

struct View {
  std::string registry, error;
  std::vector<Item> devices, exports, events, endpoints, aliases, binds;
  std::vector<Proc> procs;
};

View gather(const cuda_shim::inspect_bridge::InspectTable* t, int only) {
  View v;
  std::vector<Item> reg;
  if (char* s = t->registry(0)) {
    reg = parse(s);
    std::free(s);
  }
  std::map<int, Proc> procs;
  for (auto& it : reg) {
    if (it.what == "error") v.error = it.get("why");
    else if (it.what == "registry") v.registry = it.get("name");
    else if (it.what == "device") v.devices.push_back(it);
    else if (it.what == "proc") {
      Proc& p = procs[static_cast<int>(it.num("pid"))];
      p.pid = static_cast<int>(it.num("pid"));
      p.slot = it;
      p.state = it.num("gone") ? "dead" : "";
    } else if (it.what == "use") procs[static_cast<int>(it.num("pid"))].use.push_back(it);
    else if (it.what == "export") v.exports.push_back(it);
    else if (it.what == "event") v.events.push_back(it);
    else if (it.what == "endpoint") v.endpoints.push_back(it);
    else if (it.what == "alias") v.aliases.push_back(it);
    else if (it.what == "bind") v.binds.push_back(it);
  }
  for (int pid : listening())
    if (pid != ::getpid() && !procs.count(pid)) procs[pid].pid = pid;
  for (auto& [pid, p] : procs) {
    if (pid <= 0 || (only && pid != only)) continue;
    if (p.state.empty()) {
      Answer a = ask(pid);
      p.state = a.state;
      p.items = std::move(a.items);
    }
    v.procs.push_back(std::move(p));
  }
  return v;
}

// Which processes imported the pool (or object) with this token.
std::vector<int> importers(const View& v, const std::string& token) {
  std::vector<int> out;
  for (auto& p : v.procs)
    for (auto& it : p.items)
      if (it.what == "pool" && it.num("imported") && it.get("token") == token) out.push_back(p.pid);
  return out;
}
std::string exporter(const View& v, const std::string& token) {
  for (auto& e : v.exports)
    if (e.get("token") == token || e.get("object") == token) return e.get("pid");
  for (auto& p : v.procs)
    for (auto& it : p.items)
      if (it.what == "pool" && !it.num("imported") && it.get("token") == token) return std::to_string(p.pid);
  return "";
}

// What an export's importers are found by: the memfd object it hands out (a pool's token).
std::string export_key(const Item& e) { return e.get("object").empty() ? e.get("token") : e.get("object"); }

bool concerns(const Item& it, int only) { return !only || it.num("pid") == only; }

std::string json(const View& v, int only) {
  auto pids = [](const std::vector<int>& x) { return jarr(x, [](int p) { return std::to_string(p); }); };
  std::string o = "{\"registry\":" + jstr(v.registry);
  if (!v.error.empty()) o += ",\"error\":" + jstr(v.error);
  o += ",\"devices\":" + jarr(v.devices, [](const Item& d) { return jobj(d); });
  o += ",\"processes\":" + jarr(v.procs, [&](const Proc& p) {
    std::string s = "{\"pid\":" + std::to_string(p.pid) + ",\"state\":" + jstr(p.state);
    if (!p.slot.what.empty()) s += ",\"start\":" + p.slot.get("start") + ",\"channel\":" + p.slot.get("channel");
    s += ",\"devices\":" + jarr(p.use, [](const Item& u) { return jobj(u); });
    std::vector<const Item*> allocs, pools, maps, res;
    const Item* head = nullptr;
    const Item* vmm = nullptr;
    for (auto& it : p.items) {
      if (it.what == "process") head = &it;
      else if (it.what == "alloc") allocs.push_back(&it);
      else if (it.what == "pool") pools.push_back(&it);
      else if (it.what == "vmm") vmm = &it;
      else if (it.what == "reservation") res.push_back(&it);
      else if (it.what == "mapping") maps.push_back(&it);
    }
    if (head) s += ",\"comm\":" + jstr(head->get("comm"));
    s += ",\"allocations\":" + jarr(allocs, [](const Item* x) { return jobj(*x); });
    s += ",\"pools\":" + jarr(pools, [&](const Item* x) {
      std::string extra = x->num("imported") ? "\"exporter\":" + (exporter(v, x->get("token")).empty()
                                                                      ? std::string("null")
                                                                      : exporter(v, x->get("token")))
                                             : "\"importers\":" + pids(importers(v, x->get("token")));
      return jobj(*x, extra);
    });
    s += ",\"vmm\":{\"handles\":" + (vmm ? vmm->get("handles") : std::string("0")) +
         ",\"reservations\":" + jarr(res, [](const Item* x) { return jobj(*x); }) +
         ",\"mappings\":" + jarr(maps, [](const Item* x) { return jobj(*x); }) + "}";
    return s + "}";
  });
  auto mine = [&](const std::vector<Item>& x) {
    std::vector<Item> r;
    for (auto& it : x)
      if (concerns(it, only)) r.push_back(it);
    return r;
  };
  o += ",\"exports\":" + jarr(mine(v.exports), [&](const Item& e) {
    return jobj(e, "\"importers\":" + pids(importers(v, export_key(e))));
  });
  o += ",\"ipc_events\":" + jarr(mine(v.events), [](const Item& e) { return jobj(e); });
  o += ",\"endpoints\":" + jarr(v.endpoints, [&](const Item& e) {
    std::vector<Item> al, bi;
    for (auto& a : v.aliases)
      if (a.get("endpoint") == e.get("index") && concerns(a, only)) al.push_back(a);
    for (auto& b : v.binds)
      if (b.get("endpoint") == e.get("index") && concerns(b, only)) bi.push_back(b);
    return jobj(e, "\"ids\":" + jarr(al, [](const Item& x) { return jobj(x); }) +
                       ",\"bindings\":" + jarr(bi, [](const Item& x) { return jobj(x); }));
  });
  return o + "}\n";
}

// ---- text output ----
std::string mib(unsigned long long b) {
  char s[32];
  if (b && b < (1ull << 20)) std::snprintf(s, sizeof s, "%llu KiB", (b + 1023) >> 10);
  else if (b % (1ull << 20) && b < (1ull << 30)) std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else std::snprintf(s, sizeof s, "%llu MiB", b >> 20);
  return s;
}

std::string text(const View& v, int only) {
  std::string o;
  char line[512];
  auto add = [&](const char* fmt, auto... a) {
    std::snprintf(line, sizeof line, fmt, a...);
    o += line;
  };
  add("cuda-shim smi    registry /dev/shm/%s\n", v.registry.empty() ? "(none)" : v.registry.c_str());
  if (!v.error.empty()) add("  %s\n", v.error.c_str());
  add("\nGPU  %-28s %14s %14s\n", "Name", "Used", "Total");
  for (auto& d : v.devices)
    add("%-4lld %-28s %14s %14s\n", d.num("ordinal"), d.get("name").c_str(), mib(d.unum("used")).c_str(),
        mib(d.unum("total")).c_str());
  add("\nProcesses\n  %-8s %-14s %-16s %s\n", "PID", "State", "Name", "Device memory (contexts)");
  for (auto& p : v.procs) {
    std::string name, mem;
    for (auto& it : p.items)
      if (it.what == "process") name = it.get("comm");
    for (auto& u : p.use)
      mem += (mem.empty() ? "GPU" : "  GPU") + u.get("dev") + " " + mib(u.unum("bytes")) + " (" + u.get("contexts") + ")";
    add("  %-8d %-14s %-16s %s\n", p.pid, p.state.c_str(), name.empty() ? "-" : name.c_str(),
        mem.empty() ? "-" : mem.c_str());
  }
  bool any = false;
  for (auto& p : v.procs)
    for (auto& it : p.items)
      if (it.what == "alloc") {
        if (!any) add("\nAllocations\n  %-8s %-16s %-4s %8s %12s %12s\n", "PID", "Kind", "GPU", "Count", "Bytes", "Largest");
        any = true;
        add("  %-8d %-16s %-4s %8lld %12s %12s\n", p.pid, it.get("kind").c_str(), it.get("dev").c_str(),
            it.num("count"), mib(it.unum("bytes")).c_str(), mib(it.unum("largest")).c_str());
      }
  any = false;
  for (auto& p : v.procs)
    for (auto& it : p.items)
      if (it.what == "pool") {
        if (!any)
          add("\nPools\n  %-8s %-14s %-10s %-8s %10s %10s %10s %10s %7s %10s %10s  %s\n", "PID", "Handle", "Location",
              "Type", "Reserved", "(high)", "Used", "(high)", "Allocs", "Bytes", "Largest", "Attributes");
        any = true;
        std::string loc = it.get("location") + (it.get("location") == "device" ? std::to_string(it.num("dev")) : "");
        std::string attrs = "threshold=" + mib(it.unum("threshold")) + " reuse=" +
                            (it.num("reuse_follow") ? "F" : "-") + (it.num("reuse_opportunistic") ? "O" : "-") +
                            (it.num("reuse_internal") ? "I" : "-") + " handles=" + it.get("handle_types");
        if (it.num("default")) attrs += " default";
        if (it.num("destroyed")) attrs += " destroyed";
        if (it.num("exported")) {
          std::string who;
          for (int pid : importers(v, it.get("token"))) who += (who.empty() ? "" : ",") + std::to_string(pid);
          attrs += " exported" + (who.empty() ? std::string() : " (imported by " + who + ")");
        }
        if (it.num("imported")) attrs += " imported from " + (exporter(v, it.get("token")).empty() ? std::string("?") : exporter(v, it.get("token")));
        add("  %-8d %-14s %-10s %-8s %10s %10s %10s %10s %7lld %10s %10s  %s\n", p.pid, it.get("handle").c_str(),
            loc.c_str(), it.get("type").c_str(), mib(it.unum("reserved")).c_str(), mib(it.unum("reserved_high")).c_str(),
            mib(it.unum("used")).c_str(), mib(it.unum("used_high")).c_str(), it.num("allocations"),
            mib(it.unum("bytes")).c_str(), mib(it.unum("largest")).c_str(), attrs.c_str());
      }
  any = false;
  for (auto& p : v.procs)
    for (auto& it : p.items)
      if (it.what == "reservation" || it.what == "mapping") {
        if (!any) add("\nVirtual memory\n");
        any = true;
        if (it.what == "reservation")
          add("  %-8d reservation %s  %s, %lld mapping(s)\n", p.pid, it.get("base").c_str(), mib(it.unum("size")).c_str(),
              it.num("mappings"));
        else
          add("  %-8d mapping     %s  %s of handle %s (%s%s)%s access %s\n", p.pid, it.get("base").c_str(),
              mib(it.unum("size")).c_str(), it.get("handle").c_str(), it.get("location").c_str(),
              it.get("location") == "device" ? it.get("dev").c_str() : "", it.num("imported") ? " imported" : "",
              it.get("access").c_str());
      }
  any = false;
  for (auto& e : v.exports)
    if (concerns(e, only)) {
      if (!any) add("\nExported handles\n  %-10s %-8s %-10s %-18s %12s  %s\n", "Kind", "PID", "What", "Token", "Size", "Imported by");
      any = true;
      std::string who;
      for (int pid : importers(v, export_key(e))) who += (who.empty() ? "" : ",") + std::to_string(pid);
      add("  %-10s %-8s %-10s %-18.16s %12s  %s%s\n", e.get("kind").c_str(), e.get("pid").c_str(),
          e.get("what").empty() ? "-" : e.get("what").c_str(), e.get("token").c_str(), mib(e.unum("size")).c_str(),
          who.empty() ? "-" : who.c_str(), e.num("gone") ? "  (exporter gone)" : "");
    }
  any = false;
  for (auto& e : v.events)
    if (concerns(e, only)) {
      if (!any) add("\nIPC events\n  %-8s %-18s %-8s %10s %10s\n", "PID", "Token", "State", "Issued", "Completed");
      any = true;
      add("  %-8s %-18.16s %-8s %10s %10s\n", e.get("pid").c_str(), e.get("token").c_str(), e.get("state").c_str(),
          e.get("issued").c_str(), e.get("completed").c_str());
    }
  if (!v.endpoints.empty()) add("\nLogical endpoints\n");
  for (auto& e : v.endpoints) {
    add("  #%-4s type %s, %s, owner %s, team %s, created by %s%s\n", e.get("index").c_str(), e.get("type").c_str(),
        mib(e.unum("size")).c_str(), e.get("owner").c_str(), e.get("team").empty() ? "-" : e.get("team").c_str(),
        e.get("creator").c_str(), e.num("exported") ? ", exported" : "");
    for (auto& a : v.aliases)
      if (a.get("endpoint") == e.get("index") && concerns(a, only))
        add("      id %s in pid %s%s\n", a.get("id").c_str(), a.get("pid").c_str(), a.num("imported") ? " (imported)" : "");
    for (auto& b : v.binds)
      if (b.get("endpoint") == e.get("index") && concerns(b, only))
        add("      bound by pid %s on GPU%s: +%s, %s (kind %s, %s)\n", b.get("pid").c_str(), b.get("dev").c_str(),
            b.get("offset").c_str(), mib(b.unum("size")).c_str(), b.get("kind").c_str(), b.get("what").c_str());
  }
  return o;
}

int usage(FILE* f, int rc) {
  std::fprintf(f, "usage: cuda-shim smi [--json] [--watch[=N]] [-p PID]\n"
                  "       cuda-shim smi --reap [--json]   reclaim what dead processes left in the registry\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  bool as_json = false, reap = false;
  long watch = 0;  // 0: once; -1: until interrupted; N: N times
  int only = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto pid_arg = [&](const char* v) {
      char* end = nullptr;
      long p = std::strtol(v, &end, 10);
      if (!*v || *end || p <= 0 || p > 0x3fffffff) {
        std::fprintf(stderr, "cuda-shim smi: -p: '%s' is not a process id\n", v);
        std::exit(2);
      }
      only = static_cast<int>(p);
    };
    if (a == "--json") as_json = true;
    else if (a == "--reap") reap = true;
    else if (a == "--watch") watch = -1;
    else if (a.rfind("--watch=", 0) == 0) {
      char* end = nullptr;
      watch = std::strtol(a.c_str() + 8, &end, 10);
      if (*end || watch <= 0) {
        std::fprintf(stderr, "cuda-shim smi: --watch=N: '%s' is not a positive count\n", a.c_str() + 8);
        return 2;
      }
    } else if (a == "-p" || a == "--pid") {
      if (i + 1 >= argc) return usage(stderr, 2);
      pid_arg(argv[++i]);
    } else if (a.rfind("--pid=", 0) == 0) pid_arg(a.c_str() + 6);
    else if (a == "-h" || a == "--help") return usage(stdout, 0);
    else {
      std::fprintf(stderr, "cuda-shim smi: unknown argument '%s'\n", a.c_str());
      return usage(stderr, 2);
    }
  }
  const void* table = nullptr;
  if (cuGetExportTable(&table, &cuda_shim::inspect_bridge::kInspectTableId) != CUDA_SUCCESS || !table) {
    std::fprintf(stderr, "cuda-shim smi: this libcuda.so.1 has no inspector (not cuda-shim's, or an older build)\n");
    return 1;
  }
  auto* t = static_cast<const cuda_shim::inspect_bridge::InspectTable*>(table);
  if (t->size < sizeof *t || t->version < 1) {
    std::fprintf(stderr, "cuda-shim smi: libcuda.so.1's inspector table is of another version\n");
    return 1;
  }
  if (reap) {
    char* s = t->registry(1);
    std::vector<Item> items = parse(s ? s : "");
    std::free(s);
    if (!items.empty() && items[0].what == "error") {
      std::fprintf(stderr, "cuda-shim smi: %s\n", items[0].get("why").c_str());
      return as_json ? (std::printf("{\"reaped\":[],\"error\":%s}\n", jstr(items[0].get("why")).c_str()), 1) : 1;
    }
    if (as_json) {
      std::printf("{\"reaped\":%s}\n", jarr(items, [](const Item& it) { return jobj(it); }).c_str());
    } else if (items.empty()) {
      std::printf("nothing to reap: every process in the registry is running\n");
    } else {
      for (auto& it : items)
        std::printf("reaped pid %s: its process slot and %s of device memory, %s export(s), %s IPC event(s) "
                    "orphaned, %s endpoint id(s), %s binding(s)\n",
                    it.get("pid").c_str(), mib(it.unum("bytes")).c_str(), it.get("exports").c_str(),
                    it.get("events").c_str(), it.get("aliases").c_str(), it.get("bindings").c_str());
    }
    return 0;
  }
  const bool tty = ::isatty(STDOUT_FILENO);
  for (long n = 0; watch < 0 || n < std::max(watch, 1L); ++n) {
    if (n) std::this_thread::sleep_for(std::chrono::seconds(1));
    View v = gather(t, only);
    std::string out = as_json ? json(v, only) : text(v, only);
    if (watch && !as_json && tty) std::fputs("\033[H\033[2J", stdout);
    else if (n && !as_json) std::fputs("\n", stdout);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  return 0;
}
