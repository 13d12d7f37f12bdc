// difftest: the generator of random op sequences, valid and invalid, deterministic from a seed.
// It keeps a model of what the program holds (assuming valid calls succeed) to choose
// arguments; at rate `bad` it swaps one in for a NULL, a freed or wrong-kind object, a bad
// flag or size. Reads only cover bytes written before, so checksums do not see garbage.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace difftest {

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64: the same stream on every compiler
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(double p) { return static_cast<double>(next() % 1000000) < p * 1e6; }
  template <class T> const T& of(const std::vector<T>& v) { return v[below(v.size())]; }
};

class Gen {
 public:
  // wild: also copies through wild host pointers (the emulator must refuse them; NVIDIA's
  // driver may crash); the emulator-only selfcheck leaves them out.
  Gen(uint64_t seed, double bad, bool wild = true) : r{seed * 0x2545f4914f6cdd1dull + 1}, bad_(bad), wild_(wild) {}

  std::vector<std::string> make(int len) {
    while (static_cast<int>(out.size()) < len) step();
    return out;
  }
  // Probes: one rule each, asked of both drivers (names p01...; a crash ends only its own).
  static std::vector<std::vector<std::string>> probes() {
    std::vector<std::vector<std::string>> v;
    const char* kinds[] = {"null", "pipe", "sock", "file", "memfd", "closed", "neg"};
    for (const char* k : kinds) {  // which descriptors each import refuses, and how
      std::string K = k;
      v.push_back({"fd f1 " + K, "vmm_import h1 f1 1", "pool_import P1 f1 1", "ext_import x1 f1 1 2097152"});
    }
    v.push_back({"vmm_create h1 2097152 d0 0", "va_reserve v1 4194304 0", "vmm_map v1 0 2097152 h1 0",
                 "vmm_set_access v1 0 4194304 d0 3", "vmm_get_access v1 0 d0", "read v1 0 64",
                 "vmm_set_access v1 2097152 2097152 d0 3", "vmm_set_access v1 0 2097152 d0 3", "read v1 0 64"});
    v.push_back({"va_reserve v1 4194304 0", "vmm_create h1 2097152 d0 0", "vmm_map v1 0 2097152 h1 2097152",
                 "vmm_map 0 0 2097152 h1 0", "vmm_map 0 0 2097152 h1 4096", "vmm_map v1 4096 2097152 h1 0",
                 "vmm_map v1 0 1048576 h1 0", "vmm_map v1 0 2097152 0 0", "vmm_map v1 0 2097152 h1 0", "vmm_map v1 0 2097152 h1 0"});
    for (const char* l : {"h", "n0"})  // host-located VMM: which forms take it, before and after access
      v.push_back({"mem_alloc d1 4096", "write d1 0 4096 3", std::string("vmm_create h1 2097152 ") + l + " 0", "va_reserve v1 2097152 0",
                   "vmm_map v1 0 2097152 h1 0", "addr_range v1 0 0", "ptr_attrs v1 0", "ptr_attr v1 0 5",
                   std::string("vmm_set_access v1 0 2097152 ") + l + " 3", "addr_range v1 0 0", "ptr_attrs v1 0",
                   "write v1 0 64 5", "read v1 0 64", "copy_dtod v1 64 d1 0 64", "copy v1 128 d1 0 64", "memset32 v1 0 9 16",
                   "read v1 0 256", "vmm_set_access v1 0 2097152 d0 3", "addr_range v1 0 0", "ptr_attrs v1 0", "write v1 0 64 6",
                   "memset8 v1 0 1 64", "read v1 0 256", "hread v1 0 256", "vmm_get_access v1 0 d0"});
    v.push_back({"mem_alloc d1 4096", "mem_alloc d2 4096", "mem_alloc d3 4194304", "mem_alloc_host h1 1000", "mem_alloc_host h2 4096",
                 "mem_host_alloc h3 4096 2", "malloc m1 16384", "host_register m1 0 16384 0", "alloc_managed M1 1000 1",
                 "alloc_managed M2 4096 2", "alloc_async a1 1000 0", "pool_create P1 n0 1 0 0", "alloc_pool_async a2 P1 1000 0",
                 "stream_sync 0", "ptr_attrs d1 100", "ptr_attrs d2 0", "ptr_attrs d3 0", "ptr_attrs h1 0", "ptr_attrs h2 0",
                 "ptr_attrs h3 0", "ptr_attrs m1 100", "ptr_attrs M1 0", "ptr_attrs M2 0", "ptr_attrs a1 0", "ptr_attrs a2 0",
                 "ptr_attr d1 0 5", "ptr_attr h1 0 5", "ptr_attr m1 0 5", "ptr_attr M1 0 5", "ptr_attr a1 0 5", "ptr_attr a2 0 5",
                 "addr_range h1 0 0", "addr_range m1 100 0", "addr_range M1 0 0", "addr_range a2 0 0"});
    // A handle of one kind passed as another (NVIDIA's driver reads its fields).
    const char* make[][2] = {{"s", "stream_create X 0"}, {"e", "event_create X 0"}, {"P", "pool_create X d0 1 0 0"},
                             {"c", "ctx_create X 0"}, {"M", "alloc_managed X 4096 1"}, {"d", "mem_alloc X 4096"},
                             {"h", "mem_alloc_host X 4096"}};
    const char* use[] = {"stream_sync X", "event_sync X", "pool_trim X 0", "event_record X 0", "ctx_destroy X"};
    for (auto& m : make)
      for (const char* u : use) {
        std::string a = m[1], b = u;
        if (m[0][0] == 'c') a += "\nctx_set ctx0";
        v.push_back({a.substr(0, a.find('\n')), a.find('\n') == std::string::npos ? "ctx_sync" : a.substr(a.find('\n') + 1), b});
      }
    for (auto& q : v) for (auto& l : q) { size_t x; while ((x = l.find('X')) != std::string::npos && (x + 1 == l.size() || l[x + 1] == ' ')) l.replace(x, 1, "o1"); }
    v.push_back({"alloc_managed M1 4096 1", "mem_free_host M1 0", "alloc_async a1 4096 0", "mem_free_host a1 0", "malloc m1 4096",
                 "host_register m1 0 4096 0", "mem_free_host m1 0", "mem_alloc_host h1 64", "mem_free h1 0", "rt_free h1 0",
                 "mem_alloc d1 64", "write d1 0 64 1", "mem_free_host d1 0", "read d1 0 64", "rt_malloc_host h2 64", "rt_free h2 0"});
    v.push_back({"malloc m1 8192", "host_register m1 0 12288 0", "host_register m1 4096 4096 0", "host_register m1 0 8192 0",
                 "host_register m1 0 8192 0", "mem_alloc_host h1 4096", "host_register h1 0 4096 0", "alloc_managed M1 4096 1",
                 "host_register M1 0 4096 0", "mem_alloc d1 4096", "host_register d1 0 4096 0", "host_unregister m1 4096",
                 "host_unregister m1 0", "host_unregister m1 0"});
    v.push_back({"alloc_managed M1 65536 1", "advise M1 0 65536 4 n0", "advise M1 0 65536 4 h", "advise M1 0 65536 4 d5",
                 "advise M1 0 65536 4 x", "advise M1 0 65536 2 x", "advise M1 0 65536 2 d5", "advise M1 0 65536 6 x",
                 "advise M1 0 65536 6 n0", "advise M1 0 65536 5 h", "advise M1 0 65536 3 c", "advise M1 0 65536 1 d5",
                 "prefetch M1 0 65536 d-1 0", "prefetch M1 0 65536 d5 0", "prefetch M1 0 65536 x 0", "prefetch M1 0 65536 n9 0",
                 "prefetch M1 0 65536 c 0", "prefetch M1 0 65536 h 0", "range_attr M1 0 65536 4", "range_attr M1 0 65536 7",
                 "range_attr M1 0 65536 8"});
    v.push_back({"event_create e1 6", "ievent_get k1 0", "ievent_get k2 e1", "event_create e2 0", "ievent_get k3 e2",
                 "ipc_get k4 0 0", "mem_alloc d1 64", "ipc_get k5 d1 64", "alloc_async a1 64 0", "ipc_get k6 a1 0",
                 "pool_create P1 d0 1 1 0", "import_ptr q1 P1 k9 64", "export_ptr k7 0 0", "export_ptr k8 d1 0"});
    v.push_back({"addr_range 0 0 0", "addr_range bad 0 0", "mem_alloc d1 64", "addr_range d1 64 0", "addr_range d1 65 0",
                 "va_reserve v1 2097152 0", "addr_range v1 0 0", "vmm_get_access v1 0 d0", "vmm_get_access 0 0 d0",
                 "vmm_get_access d1 0 d0", "ptr_attrs v1 4096", "ptr_attrs bad 0", "ptr_attrs d1 64"});
    return v;
  }
  // The questions whose answers were never measured on a driver (issue 22).
  static std::vector<std::vector<std::string>> questions() {
    return {
      {"alloc_managed m1 0 1", "rt_malloc_managed m2 0 1", "alloc_managed m3 0 2", "alloc_managed m4 16 1", "ptr_attr m4 0 8"},
      {"stream_create s1 0", "pool_create P1 d0 1 0 0", "alloc_pool_async a1 P1 0 s1", "dev_default_pool D1 0",
       "alloc_pool_async a2 D1 0 s1", "alloc_async a3 0 s1", "alloc_pool_async a4 P1 0 0", "stream_sync s1", "pool_get P1 7"},
      {"va_reserve v1 4194304 0", "vmm_unmap v1 0 2097152", "vmm_unmap v1 0 4194304", "vmm_create h1 2097152 d0 0",
       "vmm_map v1 0 2097152 h1 0", "vmm_unmap v1 2097152 2097152", "vmm_unmap v1 0 2097152", "vmm_unmap v1 0 2097152",
       "vmm_release h1", "va_free v1 0 4194304"},
      {"mem_alloc d1 1024", "mem_free_host d1 0", "mem_free d1 0", "rt_malloc r1 1024", "rt_free_host r1 0", "rt_free r1 0",
       "mem_alloc_host h1 64", "mem_free h1 0", "mem_free_host h1 0"},
      {"get_info 3", "get_info 1", "get_info 2", "get_info 0"},
      // Probes where the emulator crashed or guessed: copies through a reserved but unmapped
      // range and through addresses no allocation holds, frees of NULL, host-located VMM.
      {"mem_alloc d1 256", "write d1 0 256 1", "va_reserve v1 4194304 0", "copy_dtod v1 0 d1 0 64", "copy_dtod d1 0 v1 0 64",
       "memset8 v1 0 1 64", "read v1 0 64", "copy_async v1 0 d1 0 64 0", "copy v1 0 d1 0 64"},
      {"mem_alloc d1 256", "write d1 0 256 1", "copy d1 0 v1 0 64"},
      {"mem_alloc d1 256", "write d1 0 256 1", "copy d1 0 0 768 8"},
      {"mem_alloc d1 256", "write d1 0 256 1", "copy 0 768 d1 0 8"},
      {"mem_alloc d1 256", "write d1 0 256 1", "copy_async d1 0 bad 0 64 0", "stream_sync 0"},
      {"mem_free 0 0", "mem_free_host 0 0", "rt_free 0 0", "rt_free_host 0 0", "host_unregister 0 0", "free_async 0 0 0"},
      {"granularity h 0 0", "granularity n0 0 0", "vmm_create h1 2097152 h 0", "vmm_create h2 2097152 n0 1",
       "va_reserve v1 4194304 0", "vmm_map v1 0 2097152 h1 0", "vmm_set_access v1 0 2097152 h 3", "vmm_get_access v1 0 h",
       "vmm_get_access v1 0 d0", "memset8 v1 0 7 4096", "read v1 0 4096", "vmm_props h2"},
      {"alloc_managed m1 4096 1", "rt_malloc_managed m2 0 1", "ptr_attrs m2 0", "rt_free m2 0", "mem_alloc d1 0", "rt_malloc r1 0",
       "mem_alloc_host h1 0", "rt_malloc_host h2 0", "dev_default_pool D1 0", "alloc_pool_async a1 D1 0 0", "ptr_attrs a1 0"},
    };
  }

 private:
  struct Ptr { std::string n; uint64_t size = 0; char kind = 0; bool live = true; std::vector<std::pair<uint64_t, uint64_t>> wr; bool pending = false; std::string of; bool sure = true; };
  struct Obj { std::string n; char kind; bool live = true; uint64_t size = 0; int aux = 0; bool sure = true; };
  // Pointer kinds: d cuMemAlloc, r cudaMalloc, h pinned host, m pageable (malloc), g registered,
  // M managed, a device pool, A host pool, v mapped VMM range, x external buffer, i IPC-opened.
  // Object kinds: P pool, s stream, e event, H VMM handle, V reservation, f fd, X external
  // memory, k IPC memory handle, K IPC event handle, E pool pointer export, c context.
  Rng r;
  double bad_;
  bool wild_;
  int bads = 0, step_bads = 0;  // a pointer made in a step with no wrong argument is sure to exist
  std::vector<std::string> out;
  std::vector<Ptr> ptrs;
  std::vector<Obj> objs;
  int id = 0;
  std::string fresh(const char* p) { return p + std::to_string(++id); }
  void emit(const std::string& s) { out.push_back(s); }
  bool bad() { bool b = r.chance(bad_); bads += b; return b; }
  static std::string u(uint64_t v) { return std::to_string(v); }

  std::vector<Ptr*> live_ptrs(const std::string& kinds) {
    std::vector<Ptr*> v;
    for (auto& p : ptrs) if (p.live && kinds.find(p.kind) != std::string::npos) v.push_back(&p);
    return v;
  }
  std::vector<Obj*> live(char kind, bool alive = true) {
    std::vector<Obj*> v;
    for (auto& o : objs) if (o.kind == kind && o.live == alive) v.push_back(&o);
    return v;
  }
  // A wrong argument in place of an object or pointer: NULL, a wild pointer, a dead one, another kind.
  std::string wrong(char kind) {
    switch (r.below(10)) {  // garbage crashes NVIDIA's driver: rarer than NULL and dead objects
      case 0: case 1: case 2: return "0";
      case 3: return "bad";
      case 4: case 5: case 6: case 7: {
        std::vector<std::string> dead;
        for (auto& o : objs) if (!o.live && o.kind == kind) dead.push_back(o.n);
        for (auto& p : ptrs) if (!p.live && kind == '*') dead.push_back(p.n);
        if (!dead.empty()) return r.of(dead);
        return "0";
      }
      default: {
        std::vector<std::string> other;
        for (auto& o : objs) if (o.live && o.kind != kind) other.push_back(o.n);
        for (auto& p : ptrs) if (p.live && kind != '*') other.push_back(p.n);
        if (!other.empty()) return r.of(other);
        return "0";
      }
    }
  }
  std::string obj(char kind, const char* none = nullptr) {
    auto v = live(kind);
    if (bad() || (v.empty() && !none)) return wrong(kind);
    if (v.empty() || (none && r.chance(0.2))) return none;
    return r.of(v)->n;
  }
  std::string stream() { return obj('s', r.chance(0.5) ? "0" : r.chance(0.5) ? "leg" : "pt"); }
  Ptr* ptr(const std::string& kinds) { auto v = live_ptrs(kinds); return v.empty() ? nullptr : r.of(v); }
  // A pointer operand "NAME OFF": a live pointer of the kinds, or (bad) something else.
  std::string pref(const std::string& kinds, Ptr** got = nullptr) {
    Ptr* p = ptr(kinds);
    if (got) *got = nullptr;
    if (!p || bad()) return wrong('*') + " 0";
    if (got) *got = p;
    return p->n + " 0";
  }
  uint64_t size() {
    static const uint64_t s[] = {1, 8, 100, 256, 512, 1000, 4096, 65536, 1 << 20, (2 << 20) + 1};
    if (bad()) return r.chance(0.5) ? 0 : r.chance(0.5) ? (1ull << 44) : 3;
    return s[r.below(10)];
  }
  uint64_t flag(std::vector<uint64_t> good, std::vector<uint64_t> wrongs) { return bad() ? r.of(wrongs) : r.of(good); }
  std::string loc(bool device_only = false) {
    if (bad()) return r.of(std::vector<std::string>{"d5", "x", "n9", "c", "d-1"});
    if (device_only || r.chance(0.6)) return "d0";
    return r.chance(0.5) ? "n0" : "h";
  }
  Ptr& add_ptr(const std::string& n, uint64_t size, char kind) {
    Ptr p; p.n = n; p.size = size; p.kind = kind; p.sure = bads == step_bads && kind != 'x' && kind != 'i';
    ptrs.push_back(p); return ptrs.back();
  }
  Obj& add(const std::string& n, char kind, uint64_t size = 0, int aux = 0) { objs.push_back({n, kind, true, size, aux, bads == step_bads}); return objs.back(); }
  void kill_ptr(const std::string& n) { for (auto& p : ptrs) if (p.n == n) p.live = false; }
  void kill(const std::string& n) { for (auto& o : objs) if (o.n == n) o.live = false; }

  // Writes and reads stay inside [0, size); a read covers part of one earlier write.
  void write_to(Ptr& p, bool async) {
    if (!p.size) return;
    uint64_t off = r.chance(0.5) ? 0 : (r.below(p.size) & ~uint64_t{255});
    uint64_t n = 1 + r.below(std::min<uint64_t>(p.size - off, 1 << 20));
    if (std::string("draxv").find(p.kind) != std::string::npos && bad() && r.chance(0.5)) n = p.size - off + 4096;  // past the end of device memory
    std::string pat = u(r.below(1000));
    switch (async ? 3 : r.below(3)) {
      case 0: emit("write " + p.n + " " + u(off) + " " + u(n) + " " + pat); break;
      case 1: n = std::max<uint64_t>(n / 4, 1); off &= ~uint64_t{3};
              emit("memset32 " + p.n + " " + u(off) + " " + pat + " " + u(n)); n *= 4; break;
      case 2: emit("memset8 " + p.n + " " + u(off) + " " + pat + " " + u(n)); break;
      default: {
        std::string s = stream();
        emit((r.chance(0.5) ? "write_async " + p.n + " " + u(off) + " " + u(n) + " " + pat + " "
                            : "memset8_async " + p.n + " " + u(off) + " " + pat + " " + u(n) + " ") + s);
        p.pending = true;
      }
    }
    if (off + n <= p.size) p.wr.push_back({off, n});
  }
  void read_from(Ptr& p, bool host, const std::string& who = "") {
    if (p.wr.empty()) return;
    if (p.pending) { emit("ctx_sync"); for (auto& q : ptrs) q.pending = false; }
    auto [off, n] = r.of(p.wr);
    uint64_t o2 = off + r.below(n), n2 = 1 + r.below(off + n - o2);
    emit(who + (host ? "hread " : "read ") + p.n + " " + u(o2) + " " + u(n2));
  }

  void step() {
    step_bads = bads;
    switch (r.below(25)) {
      case 20: case 21: vmm(); break;
      case 22: managed(); managed(); break;
      case 23: external(); external(); break;
      case 0: case 1: legacy_alloc(); break;
      case 2: legacy_free(); break;
      case 3: case 4: { Ptr* p = ptr("drhmgMaAvxi"); if (p) write_to(*p, r.chance(0.3)); break; }
      case 5: case 6: { Ptr* p = ptr("drhmgMaAvxi"); if (p) read_from(*p, std::string("hmgMA").find(p->kind) != std::string::npos && r.chance(0.4)); break; }
      case 7: copy(); break;
      case 8: query(); break;
      case 9: streams(); break;
      case 10: case 11: pools(); break;
      case 12: async(); break;
      case 13: vmm(); break;
      case 14: managed(); break;
      case 15: external(); break;
      case 16: ipc(); break;
      case 17: if (r.chance(0.3)) contexts(); else query(); break;
      case 18: if (r.chance(0.1)) emit_question(questions()[r.below(5)]); else async(); break;
      default: if (live('s').size() < 3) { std::string n = fresh("s"); emit("stream_create " + n + " " + u(flag({0, 1}, {7})));  add(n, 's'); } else streams();
    }
  }
  // A question's names (every line's output token) made unique in this sequence.
  void emit_question(const std::vector<std::string>& q) {
    std::vector<std::string> names;
    auto words = [](const std::string& l) { std::vector<std::string> w; std::string x; for (char c : l + " ") { if (c != ' ') x += c; else if (!x.empty()) { w.push_back(x); x.clear(); } } return w; };
    for (auto& l : q) { auto w = words(l); if (w.size() > 1 && isalpha(static_cast<unsigned char>(w[1][0]))) names.push_back(w[1]); }
    std::string pre = "q" + u(++id);
    for (auto& l : q) {
      std::string res;
      for (auto& w : words(l)) res += (res.empty() ? "" : " ") + (std::find(names.begin(), names.end(), w) != names.end() ? pre + w : w);
      emit(res);
    }
  }

  void legacy_alloc() {
    uint64_t s = size();
    std::string n;
    switch (r.below(7)) {
      case 0: n = fresh("d"); emit("mem_alloc " + n + " " + u(s)); add_ptr(n, s, 'd'); break;
      case 1: n = fresh("r"); emit("rt_malloc " + n + " " + u(s)); add_ptr(n, s, 'r'); break;
      case 2: n = fresh("h"); emit("mem_alloc_host " + n + " " + u(s)); add_ptr(n, s, 'h'); break;
      case 3: n = fresh("h"); emit("mem_host_alloc " + n + " " + u(s) + " " + u(flag({0, 1, 2, 4, 7}, {8, 0x100}))); add_ptr(n, s, 'h'); break;
      case 4: n = fresh("h"); emit("rt_malloc_host " + n + " " + u(s)); add_ptr(n, s, 'h'); break;
      case 5: { n = fresh("m"); uint64_t ms = 4096 * (1 + r.below(16)); emit("malloc " + n + " " + u(ms));
                Ptr& p = add_ptr(n, ms, 'm');
                if (r.chance(0.7)) { emit("host_register " + n + " 0 " + u(bad() ? ms + 4096 : ms) + " " + u(flag({0, 1, 2, 3}, {4, 8, 0x40}))); p.kind = 'g'; }
                break; }
      default: n = fresh("d"); emit("mem_alloc " + (bad() ? std::string("null") : n) + " " + u(s)); add_ptr(n, s, 'd');
    }
    if (s == 0 || s > (1ull << 40)) kill_ptr(n);
  }
  void legacy_free() {
    Ptr* p = nullptr;
    std::string arg;
    switch (r.below(6)) {
      case 0: arg = pref("drax", &p); emit("mem_free " + arg); break;
      case 1: arg = pref("h", &p); emit("mem_free_host " + arg); break;
      case 2: arg = pref("g", &p); emit("host_unregister " + arg); if (p) { p->kind = 'm'; p = nullptr; } break;
      case 3: arg = pref("dr", &p); emit("rt_free " + arg); break;
      case 4: arg = pref("h", &p); emit("rt_free_host " + arg); break;
      default: arg = pref("M", &p); emit("mem_free " + arg);
    }
    if (p) p->live = false;
  }
  void copy() {
    std::vector<Ptr*> sure;
    for (Ptr* p : live_ptrs("drhmgMaAv")) if (p->sure) sure.push_back(p);
    if (sure.empty()) return;
    Ptr* s = r.of(sure);
    Ptr* d = r.of(sure);
    if (wild_ && bad()) {  // an address no allocation holds: a failed allocation's NULL + offset, or garbage
      std::string w = r.chance(0.5) ? "0 " + u(256 * (1 + r.below(64))) : "bad 0";
      emit(r.chance(0.5) ? "copy " + d->n + " 0 " + w + " 64" : "copy " + w + " " + s->n + " 0 64");
      return;
    }
    if (s->wr.empty()) return;
    if (s->pending || d->pending) { emit("ctx_sync"); for (auto& q : ptrs) q.pending = false; }
    auto [off, n] = r.of(s->wr);
    if (n > d->size) n = d->size;
    if (!n) return;
    std::string op = r.of(std::vector<std::string>{"copy", "copy_dtod", "copy_async"});
    emit(op + " " + d->n + " 0 " + s->n + " " + u(off) + " " + u(n) + (op == "copy_async" ? " " + stream() : ""));
    if (op == "copy_async") d->pending = true;
    d->wr.clear();
    d->wr.push_back({0, n});
  }
  void query() {
    auto p = [&]() { Ptr* q = ptr("drhmgMaAvxi"); return bad() || !q ? wrong('*') + " 0" : q->n + " " + u(r.chance(0.7) ? 0 : r.below(q->size + 1)); };
    switch (r.below(5)) {
      case 0: emit("get_info " + u(bad() ? 1 + r.below(3) : 0)); break;
      case 1: emit("addr_range " + p() + " " + u(bad() ? 1 + r.below(3) : 0)); break;
      case 2: case 3: emit("ptr_attr " + p() + " " + u(bad() ? r.of(std::vector<uint64_t>{0, 5, 21, 99}) : 1 + r.below(20)) + (bad() ? " null" : "")); break;
      default: emit("ptr_attrs " + p());
    }
  }
  void streams() {
    std::string s = stream(), e = obj('e');
    switch (r.below(8)) {
      case 0: { std::string n = fresh("e"); emit("event_create " + n + " " + u(flag({0, 1, 2, 3, 6}, {4, 0x100}))); add(n, 'e'); break; }
      case 1: emit("event_record " + e + " " + s); break;
      case 2: emit("event_sync " + e); if (r.chance(0.5)) emit("event_query " + e); break;
      case 3: emit("stream_wait " + s + " " + e); break;
      case 4: emit("stream_sync " + s); if (r.chance(0.3)) emit("stream_query " + s); break;
      case 5: emit("ctx_sync"); for (auto& q : ptrs) q.pending = false; break;
      case 6: if (r.chance(0.3)) { std::string x = obj('s'); emit("stream_destroy " + x); kill(x); } break;
      default: if (r.chance(0.3)) { emit("event_destroy " + e); kill(e); }
    }
  }
  void pools() {
    std::string P = obj('P');
    switch (r.below(9)) {
      case 0: case 1: {
        std::string n = fresh("P"), l = loc();
        int ht = static_cast<int>(flag({0, 1}, {8, 0x100}));
        emit("pool_create " + n + " " + l + " " + u(flag({1}, {0, 2, 3})) + " " + u(ht) + " " + u(r.chance(0.3) ? 33554432 : 0));
        add(n, 'P', 0, l[0] == 'd' ? 'a' : 'A').size = ht;
        break;
      }
      case 2: if (r.chance(0.4)) { emit("pool_destroy " + P); kill(P); } break;
      case 3: emit("pool_set " + P + " " + u(flag({1, 2, 3, 4, 6, 8}, {5, 7, 0, 99})) + " " + (bad() ? "null" : u(r.chance(0.5) ? 0 : r.chance(0.5) ? 1 : 1 << 20))); break;
      case 4: emit("pool_get " + P + " " + u(flag({1, 2, 3, 4, 5, 6, 7, 8}, {0, 99})) + (bad() ? " null" : "")); break;
      case 5: emit("pool_trim " + P + " " + u(r.chance(0.5) ? 0 : 1 << 20)); break;
      case 6: emit(r.chance(0.5) ? "pool_set_access " + P + " " + loc() + " " + u(flag({0, 1, 3}, {2, 7}))
                                 : "pool_get_access " + P + " " + loc()); break;
      case 7: { std::string n = fresh("D");
                switch (r.below(4)) {
                  case 0: emit("dev_default_pool " + n + " " + (bad() ? "3" : "0")); break;
                  case 1: emit("dev_get_pool " + n + " " + (bad() ? "3" : "0")); break;
                  case 2: emit("get_default_pool " + n + " " + loc() + " " + u(flag({1}, {0, 2}))); break;
                  default: emit("get_pool " + n + " " + loc() + " " + u(flag({1}, {0, 2})));
                }
                add(n, 'P', 0, 'a'); break; }
      default: emit(r.chance(0.5) ? "dev_set_pool " + std::string(bad() ? "3" : "0") + " " + P : "set_pool " + loc() + " 1 " + P);
    }
  }
  void async() {
    std::string s = stream();
    if (r.chance(0.6)) {
      std::string n = fresh("a");
      uint64_t sz = size();
      auto pl = live('P');
      Obj* P = pl.empty() ? nullptr : r.of(pl);
      if (P && r.chance(0.7)) emit("alloc_pool_async " + n + " " + (bad() ? wrong('P') : P->n) + " " + u(sz) + " " + s);
      else { emit("alloc_async " + n + " " + u(sz) + " " + s); P = nullptr; }
      Ptr& p = add_ptr(n, sz, P ? static_cast<char>(P->aux) : 'a');
      p.sure = p.sure && (!P || P->sure);
      if (!sz || sz > (1ull << 40)) p.live = false;
      if (r.chance(0.5)) { write_to(p, true); }
    } else {
      Ptr* p = nullptr;
      std::string arg = pref(r.chance(0.9) ? "aA" : "dM", &p);
      emit("free_async " + arg + " " + s);
      if (p) p->live = false;
    }
  }
  void vmm() {
    const uint64_t g = 2 << 20;
    switch (r.below(6)) {
      case 0: emit("granularity " + loc() + " " + u(flag({0, 1}, {8, 0x100})) + " " + u(flag({0, 1}, {2}))); break;
      case 1: case 2: {  // a whole mapping, each step possibly broken
        std::string H = fresh("H"), V = fresh("v"), l = loc();
        uint64_t n = bad() ? g / 2 : g * (1 + r.below(2)), ht = flag({0, 1}, {8, 0x100});
        emit("vmm_create " + H + " " + u(n) + " " + l + " " + u(ht));
        emit("va_reserve " + V + " " + u(bad() ? n + 4096 : 2 * n) + " " + u(flag({0, g}, {4096 + 1})));
        add(H, 'H', n, static_cast<int>(ht));
        add(V, 'V', 2 * n);
        if (r.chance(0.8)) {
          emit("vmm_map " + V + " " + u(bad() ? 4096 : 0) + " " + u(bad() ? n / 2 : n) + " " + H + " " + u(bad() ? g : 0));
          emit("vmm_set_access " + V + " 0 " + u(bad() ? 2 * n : n) + " " + (l[0] == 'd' ? "d0" : r.chance(0.5) ? "d0" : l) + " " + u(flag({3, 1}, {0, 2})));
          add_ptr(V, n, 'v');
        }
        break;
      }
      case 3: {
        auto vs = live('V');
        if (vs.empty()) break;
        Obj* V = r.of(vs);
        switch (r.below(4)) {
          case 0: emit("vmm_unmap " + V->n + " 0 " + u(bad() ? g / 2 : V->size / 2)); kill_ptr(V->n); break;
          case 1: emit("va_free " + V->n + " 0 " + u(bad() ? g : V->size)); kill(V->n); kill_ptr(V->n); break;
          case 2: emit("vmm_get_access " + V->n + " 0 " + loc()); break;
          default: emit("vmm_retain " + fresh("H") + " " + V->n + " " + u(bad() ? 4096 : 0));
        }
        break;
      }
      case 4: {
        std::string H = obj('H');
        if (r.chance(0.5)) { emit("vmm_release " + H); kill(H); } else emit("vmm_props " + H);
        break;
      }
      default: {
        auto hs = live('H');
        if (hs.empty()) break;
        Obj* H = r.of(hs);
        std::string F = fresh("f");
        emit("vmm_export " + F + " " + H->n + " " + u(flag({1}, {0, 8})));
        add(F, 'f', H->size, 'v');
        if (r.chance(0.5)) { std::string H2 = fresh("H"); emit("vmm_import " + H2 + " " + F + " " + u(flag({1}, {0, 0x100}))); add(H2, 'H', H->size); }
        else if (r.chance(0.5)) { std::string X = fresh("X"); emit("ext_import " + X + " " + F + " 1 " + u(H->size)); add(X, 'X', H->size); kill(F); }
      }
    }
  }
  void managed() {
    Ptr* p = ptr("M");
    std::string M = p ? p->n : "0", s = stream();
    uint64_t sz = p ? p->size : 0;
    switch (p ? r.below(6) : 0) {
      case 0: case 1: {
        std::string n = fresh("M");
        uint64_t z = bad() ? (r.chance(0.5) ? 0 : 3) : 1 + r.below(1 << 16);
        emit(std::string(r.chance(0.7) ? "alloc_managed " : "rt_malloc_managed ") + n + " " + u(z) + " " + u(flag({1, 2}, {0, 4, 3})));
        add_ptr(n, z, 'M').live = z != 0;
        break;
      }
      case 2: if (p) emit("attach " + s + " " + M + " 0 " + u(bad() ? sz / 2 + 1 : r.chance(0.5) ? 0 : sz) + " " + u(flag({1, 2, 4}, {3, 8}))); break;
      case 3: if (p) emit("advise " + M + " 0 " + u(bad() ? sz + 4096 : sz) + " " + u(flag({1, 2, 3, 4, 5, 6}, {0, 7})) + " " + loc()); break;
      case 4: if (p) emit("prefetch " + M + " 0 " + u(sz) + " " + loc() + " " + s); break;
      default: if (p) emit("range_attr " + M + " 0 " + u(sz) + " " + u(flag({1, 2, 3, 4, 5, 6, 7, 8}, {0, 9})));
    }
  }
  void external() {
    switch (live('f').empty() && live('X').empty() ? 0 : r.below(4)) {
      case 0: { std::string f = fresh("f"); uint64_t n = 2 << 20; emit("memfd " + f + " " + u(n)); add(f, 'f', n, 'm'); break; }
      case 1: {
        auto fs = live('f');
        if (fs.empty()) break;
        Obj* f = r.of(fs);
        std::string X = fresh("X");
        emit("ext_import " + X + " " + f->n + " " + u(flag({1}, {0, 2, 9})) + " " + u(bad() ? 0 : f->size));
        const std::string fn = f->n;  // add() may move objs: f dangles after it
        add(X, 'X', f->size);
        kill(fn);  // the driver owns the fd once imported
        break;
      }
      case 2: {
        auto xs = live('X');
        if (xs.empty()) break;
        Obj* X = r.of(xs);
        std::string n = fresh("x");
        uint64_t off = bad() ? X->size : 0, sz = bad() ? 0 : X->size / 2;
        emit("ext_buffer " + n + " " + X->n + " " + u(off) + " " + u(sz));
        Ptr& p = add_ptr(n, sz, 'x');
        p.live = sz && !off; p.of = X->n;
        break;
      }
      default: { std::string X = obj('X'); emit("ext_destroy " + X); kill(X); for (auto& p : ptrs) if (p.of == X) p.live = false; }
    }
  }
  void ipc() {
    switch (r.below(4)) {
      case 0: case 1: {  // legacy IPC memory handle, opened by the peer (or, wrongly, here)
        Ptr* p = ptr("dr");
        if (!p) return;
        std::string K = fresh("k"), Q = fresh("q");
        emit("ipc_get " + K + " " + (bad() ? pref("haAM") : p->n + " 0"));
        bool self = bad();
        emit(std::string(self ? "" : "peer ") + "ipc_open " + Q + " " + K + " " + u(flag({1}, {0, 2})) + " " + u(p->size));
        if (!p->wr.empty() && !self) { auto w = p->wr; Ptr& q = add_ptr(Q, p->size, 'i'); q.wr = w; read_from(ptrs.back(), false, "peer "); ptrs.pop_back(); }
        if (r.chance(0.7)) emit(std::string(self ? "" : "peer ") + "ipc_close " + Q);
        break;
      }
      case 2: {  // IPC event
        std::string e = fresh("e"), K = fresh("K"), E = fresh("E");
        emit("event_create " + e + " " + u(flag({6}, {4, 2})));
        add(e, 'e');
        emit("event_record " + e + " " + stream());
        emit("ievent_get " + K + " " + e);
        emit("peer ievent_open " + E + " " + K);
        emit("peer event_sync " + E);
        if (r.chance(0.5)) emit("peer event_destroy " + E);
        break;
      }
      default: {  // pool export to the peer, then a pointer
        auto pl = live('P');
        Obj* P = nullptr;
        for (auto* o : pl) if (o->size == 1) P = o;
        std::string Pn;
        if (!P || r.chance(0.3)) {
          Pn = fresh("P");
          emit("pool_create " + Pn + " " + (r.chance(0.7) ? "d0" : "n0") + " 1 " + u(flag({1}, {0})) + " 0");
          P = &add(Pn, 'P', 0, Pn.size() && out.back().find(" d0 ") != std::string::npos ? 'a' : 'A');
          P->size = 1;
        }
        std::string F = fresh("f"), Q = fresh("Q"), a = fresh("a"), K = fresh("E"), q = fresh("q"), s = stream();
        emit("pool_export " + F + " " + P->n + " " + u(flag({1}, {0, 8})));
        emit("peer pool_import " + Q + " " + F + " 1");
        uint64_t n = 1 + r.below(1 << 16);
        emit("alloc_pool_async " + a + " " + P->n + " " + u(n) + " " + s);
        Ptr& p = add_ptr(a, n, static_cast<char>(P->aux));
        p.sure = p.sure && P->sure;
        write_to(p, false);
        emit("stream_sync " + s);
        emit("export_ptr " + K + " " + (bad() ? pref("dM") : a + " 0"));
        emit("peer import_ptr " + q + " " + Q + " " + K + " " + u(n));
        if (!p.wr.empty()) { auto w = p.wr; Ptr& c = add_ptr(q, n, 'i'); c.wr = w; read_from(ptrs.back(), false, "peer "); ptrs.pop_back(); }
        if (r.chance(0.5)) emit("peer mem_free " + q + " 0");
        if (r.chance(0.3)) emit("peer pool_get " + Q + " " + u(1 + r.below(8)));
      }
    }
  }
  void contexts() {
    switch (r.below(4)) {
      case 0: { std::string c = fresh("c"); emit("ctx_create " + c + " 0"); add(c, 'c'); break; }
      case 1: emit("ctx_set " + (bad() ? std::string("0") : "ctx0")); break;
      case 2: { std::string c = obj('c'); emit("ctx_destroy " + c); kill(c); break; }
      default: emit("ctx_set ctx0");
    }
  }
};

}  // namespace difftest
