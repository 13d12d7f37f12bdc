#include "ipc/registry.hpp"

#include "core/config.hpp"
#include "ipc/registry_name.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <algorithm>
#include <vector>

#include "ipc/segment.hpp"

namespace cuda_shim::ipc {
using namespace seg;

Errc publish(Record& r, const char* api) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, api);
  if (!s) return e;
  r.pid = ::getpid();
  Segment::Lock lk(*s);
  return s->insert(r, api);
}

bool lookup(RecordKind kind, const Token& token, Record& out) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "lookup");
  if (!s || token.zero()) return false;
  Segment::Lock lk(*s);
  RecordSlot* r = s->find(kind, token);
  if (!r) return false;
  out = r->rec;
  return true;
}

Errc reachable(Errc code, const char* api) {
  Errc e = Errc::success;
  if (Segment::get(e, api)) return Errc::success;
  std::string why = explanation();  // Segment::get's reason, recorded under `api`
  return fail(code, "{}; byte handles (legacy IPC, fabric) are looked up there, so none opens in this process "
              "(only processes of the exporter's user share its registry)", why);
}

void withdraw(RecordKind kind, const Token& token) noexcept {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "withdraw");
  if (!s) return;
  Segment::Lock lk(*s);
  if (RecordSlot* r = s->find(kind, token); r && r->rec.pid == ::getpid()) s->retire(*r);
}

Errc imex_channel(const char* api, int& channel) {
  channel = -1;
  if (const char* d = std::getenv("CUDA_SHIM_IMEX_DAEMON"); d && std::strcmp(d, "not_ready") == 0)
    return fail(Errc::system_not_ready, "{}: the IMEX daemon is not running (simulated by "
                "CUDA_SHIM_IMEX_DAEMON=not_ready); fabric memory needs it", api);
  channel = Segment::imex_env_channel();
  if (channel < 0)
    return fail(Errc::not_permitted, "{}: fabric memory needs an IMEX channel and this process has none "
                "(on a real machine: /dev/nvidia-caps-imex-channels/channel<N>; here: CUDA_SHIM_IMEX_CHANNEL=<N>)",
                api);
  return Errc::success;
}

namespace {
// A fabric handle's bytes: magic, layout version, the record's token, the object's token.
struct FabricBytes {
  uint32_t magic;  // "CSFB"
  uint32_t version;
  Token token;
  Token object;
  uint8_t pad[64 - 8 - 32];
};
static_assert(sizeof(FabricBytes) == 64);
constexpr uint32_t kFabricMagic = 0x42465343u;
}  // namespace

Errc fabric_export(int fd, const FdInfo& info, int device, unsigned char out[64], const char* api) {
  int ch = -1;
  TRY(imex_channel(api, ch));
  Record r;
  r.kind = RecordKind::fabric;
  r.token = random_token();
  r.object = info.token;
  r.fd = fd;
  r.dev = info.dev;
  r.ino = info.ino;
  r.size = info.size;
  r.device = device;
  r.channel = ch;
  TRY(publish(r, api));
  FabricBytes b{};
  b.magic = kFabricMagic;
  b.version = kLayoutVersion;
  b.token = r.token;
  b.object = info.token;
  std::memcpy(out, &b, sizeof b);
  return Errc::success;
}

Errc fabric_import(const unsigned char h[64], int& out_fd, FdInfo& info, const char* api) {
  out_fd = -1;
  int ch = -1;
  Errc access = imex_channel(api, ch);
  if (access == Errc::system_not_ready) return access;
  FabricBytes b;
  std::memcpy(&b, h, sizeof b);
  Record r;
  // Measured (no IMEX channel there): a handle nobody exported is CUDA_ERROR_NOT_SUPPORTED.
  if (b.magic != kFabricMagic || b.version != kLayoutVersion || !lookup(RecordKind::fabric, b.token, r) ||
      !(r.object == b.object))
    return fail(Errc::not_supported, "{}: the fabric handle names no exported memory (never exported, its "
                "exporter released it or exited, or the bytes were altered)", api);
  if (access != Errc::success) return imex_channel(api, ch);  // re-records the reason
  if (r.channel != ch)
    return fail(Errc::not_permitted, "{}: the fabric handle was exported on IMEX channel {} and this process "
                "holds channel {}: only processes of one IMEX domain share fabric memory", api, r.channel, ch);
  int fd = open_peer_object(r.pid, r.fd, r.dev, r.ino);
  if (fd < 0)
    return fail(Errc::not_supported, "{}: the fabric handle's memory is gone (its exporter, pid {}, released it "
                "or exited)", api, r.pid);
  info = describe_fd(fd);
  out_fd = fd;
  return Errc::success;
}

void fabric_withdraw(const Token& object) noexcept {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "fabric_withdraw");
  if (!s) return;
  Segment::Lock lk(*s);
  int me = ::getpid();
  for (auto& r : s->L()->records)
    if (r.state == kLive && r.rec.pid == me && r.rec.kind == RecordKind::fabric && r.rec.object == object)
      s->retire(r);
}

bool event_share(Token& token, uint64_t*& words) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "cuIpcGetEventHandle");
  if (!s) return false;
  Segment::Lock lk(*s);
  EventSlot* slot = nullptr;
  for (auto& ev : s->L()->events)
    if (ev.state == kFree) {
      slot = &ev;
      break;
    }
  if (!slot)  // the table is full: an orphan (its exporter gone) gives its slot up
    for (auto& ev : s->L()->events)
      if (ev.state == kOrphan) {
        slot = &ev;
        break;
      }
  if (!slot) return false;
  EventSlot& ev = *slot;
  ev = EventSlot{};
  ev.pid = ::getpid();
  ev.token = token = random_token();
  s->note_shared();
  ev.state = kLive;
  words = ev.words;
  return true;
}

bool event_open(const Token& token, uint64_t*& words, int& owner_pid) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "cuIpcOpenEventHandle");
  if (!s || token.zero()) return false;
  Segment::Lock lk(*s);
  for (auto& ev : s->L()->events)
    if ((ev.state == kLive || ev.state == kOrphan) && ev.token == token) {
      words = ev.words;
      owner_pid = ev.pid;
      return true;
    }
  return false;
}

uint64_t process_start(int pid) noexcept { return start_time(pid); }

bool process_gone(int pid, uint64_t start) noexcept {
  if (!alive(pid, start)) return true;
  // A zombie (Z) or dead (X) task holds nothing any more, though kill(pid, 0) still reaches it
  // until its parent reaps it.
  char path[64], buf[512];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  char state = p && p[1] == ' ' ? p[2] : '?';
  return state == 'Z' || state == 'X' || state == 'x';
}

void event_unshare(const Token& token) noexcept {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "cuEventDestroy");
  if (!s) return;
  Segment::Lock lk(*s);
  for (auto& ev : s->L()->events)
    if (ev.state == kLive && ev.token == token && ev.pid == ::getpid()) ev.state = kFree;
}

std::string segment_name() { return default_name(); }

namespace seg {
std::string default_name() {
  if (const char* e = std::getenv("CUDA_SHIM_REGISTRY"); e && *e) return e[0] == '/' ? e + 1 : e;
  static const std::string name = [] {
    std::string why;
    std::string n = resolve_registry_name(fmt::format("cuda-shim-{}", ::getuid()), private_registry_dir(), why);
    if (!why.empty() && Config::get().explain) std::fprintf(stderr, "cuda-shim: registry: %s\n", why.c_str());
    return n;
  }();
  return name;
}
}  // namespace seg

std::string dump() {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "dump");
  if (!s) return explanation() + "\n";
  std::string out;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  out += fmt::format("registry /dev/shm/{} (layout {}, {} live records)\n", s->name(), l->h.version,
                     l->h.live_records);
  for (auto& p : l->procs)
    if (p.state == kLive)
      out += fmt::format("  process {}{}{}\n", p.pid, p.channel >= 0 ? fmt::format(" imex channel {}", p.channel) : "",
                         alive(p.pid, p.start) ? "" : " (dead)");
  static const char* kinds[] = {"?", "ipc-mem", "fabric", "object"};
  for (auto& r : l->records)
    if (r.state == kLive && r.rec.kind == RecordKind::object)
      out += fmt::format("  object {} from pid {}{} ({}, {} bytes, inode {})\n", to_hex(r.rec.token).substr(0, 8),
                         r.rec.pid, Segment::object_held(r.rec) ? "" : " (no longer held by it)",
                         object_kind_name(r.rec.what), r.rec.size, r.rec.ino);
    else if (r.state == kLive)
      out += fmt::format("  {} {} from pid {} (device {}, {} bytes at +{:#x})\n",
                         kinds[static_cast<uint32_t>(r.rec.kind) < 4 ? static_cast<uint32_t>(r.rec.kind) : 0],
                         to_hex(r.rec.token).substr(0, 8), r.rec.pid, r.rec.device, r.rec.size, r.rec.offset);
  return out;
}

int check(std::string& report) {
  report.clear();
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "cuShimRegistryCheck");
  if (!s) {
    report = explanation() + "\n";
    return -1;
  }
  // The tables are checked on a copy, outside the lock; only the sweep, the copy and the
  // liveness of the pids named (taken before the sweep: a pid dead then is dead for good, so
  // whatever still names it after the sweep is a fault, while one dying meanwhile is not) need
  // it. The copy is allocated (and its pages touched) before the lock is taken.
  auto snap = std::make_unique<Layout>();
  std::unordered_map<int, bool> pid_alive;
  std::vector<uint8_t> proc_alive(kProcs);
  {
    Segment::Lock lk(*s);
    Layout* l = s->L();
    auto note = [&](int pid) {
      if (pid_alive.find(pid) == pid_alive.end()) pid_alive[pid] = pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
    };
    for (auto& r : l->records)
      if (r.state == kLive) note(r.rec.pid);
    for (auto& ev : l->events)
      if (ev.state == kLive) note(ev.pid);
    for (auto& a : l->le.aliases)
      if (a.state == kLive) note(a.pid);
    for (auto& b : l->le.binds)
      if (b.state == kLive) note(b.b.pid);
    for (uint32_t i = 0; i < kProcs; ++i)
      if (l->procs[i].state == kLive) proc_alive[i] = alive(l->procs[i].pid, l->procs[i].start);
    s->sweep();
    std::memcpy(static_cast<void*>(snap.get()), l, sizeof(Layout));
  }
  Layout& c = *snap;
  int n = 0;
  constexpr int kMaxLines = 200;
  auto problem = [&](const std::string& line) {
    if (++n <= kMaxLines) report += line + "\n";
  };
  auto dead = [&](int pid) {
    auto it = pid_alive.find(pid);
    return it == pid_alive.end() || !it->second;
  };
  auto tok = [](const Token& t) { return to_hex(t).substr(0, 8); };

  // The header and the object mapped.
  if (c.h.magic != kMagic) problem(fmt::format("header: magic {:#x}, expected {:#x}", c.h.magic, kMagic));
  if (c.h.version != kLayoutVersion)
    problem(fmt::format("header: layout version {}, expected {}", c.h.version, kLayoutVersion));
  if (c.h.size != sizeof(Layout)) problem(fmt::format("header: size {}, expected {}", c.h.size, sizeof(Layout)));
  if (c.h.ready != 1) problem(fmt::format("header: ready is {}, expected 1", c.h.ready));
  if (s->mapped_size() < sizeof(Layout))
    problem(fmt::format("segment: {} bytes mapped, the layout needs {}", s->mapped_size(), sizeof(Layout)));
  struct stat st {};
  std::string path = "/dev/shm/" + s->name();
  if (::stat(path.c_str(), &st) != 0)
    problem(fmt::format("segment: {} no longer exists while this process is attached", path));
  else if (st.st_ino != s->inode())
    problem(
        fmt::format("segment: {} now names another object (inode {}) than the one this process attached "
                    "(inode {})",
                    path, st.st_ino, s->inode()));

  // Records: the counters, reachability by open addressing, live exporters, unique tokens.
  uint32_t live = 0, tombs = 0;
  std::vector<std::pair<Token, uint32_t>> tokens;
  static const char* kinds[] = {"?", "ipc-mem", "fabric", "object"};
  for (uint32_t i = 0; i < kRecords; ++i) {
    RecordSlot& r = c.records[i];
    if (r.state == kTomb) ++tombs;
    if (r.state != kLive) {
      if (r.state != kFree && r.state != kTomb)
        problem(fmt::format("record slot {}: state {} is none of free, live, tomb", i, r.state));
      continue;
    }
    ++live;
    uint32_t k = static_cast<uint32_t>(r.rec.kind);
    std::string what =
        fmt::format("record slot {} ({} {} from pid {})", i, kinds[k < 4 ? k : 0], tok(r.rec.token), r.rec.pid);
    if (k < 1 || k > 3) problem(fmt::format("{}: unknown kind {}", what, k));
    if (r.rec.token.zero()) problem(fmt::format("{}: zero token", what));
    if (!Segment::find_in(c, r.rec.kind, r.rec.token))
      problem(fmt::format("{}: not found by its token (a free slot breaks its probe sequence)", what));
    // Object records outlive their exporter on purpose (identity.hpp).
    if (dead(r.rec.pid) && r.rec.kind != RecordKind::object)
      problem(fmt::format("{}: its exporter is not alive, yet the sweep kept it", what));
    tokens.emplace_back(r.rec.token, i);
  }
  if (c.h.live_records != live)
    problem(fmt::format("header: live_records is {} but {} record slots are live", c.h.live_records, live));
  if (c.h.tombs != tombs) problem(fmt::format("header: tombs is {} but {} record slots are tombs", c.h.tombs, tombs));
  auto by_token = [](const auto& a, const auto& b) {
    return a.first.hi != b.first.hi ? a.first.hi < b.first.hi : a.first.lo < b.first.lo;
  };
  std::sort(tokens.begin(), tokens.end(), by_token);
  for (size_t i = 1; i < tokens.size(); ++i)
    if (tokens[i].first == tokens[i - 1].first)
      problem(fmt::format("record slots {} and {}: both live with token {}", tokens[i - 1].second, tokens[i].second,
                          tok(tokens[i].first)));

  // Processes: alive, one slot each.
  std::vector<std::pair<int, uint32_t>> pids;
  for (uint32_t i = 0; i < kProcs; ++i) {
    ProcSlot& p = c.procs[i];
    if (p.state != kLive) continue;
    if (!proc_alive[i])
      problem(fmt::format("process slot {} (pid {}): the process is gone, yet the sweep kept it", i, p.pid));
    pids.emplace_back(p.pid, i);
  }
  std::sort(pids.begin(), pids.end());
  for (size_t i = 1; i < pids.size(); ++i)
    if (pids[i].first == pids[i - 1].first)
      problem(fmt::format("process slots {} and {}: both live for pid {}", pids[i - 1].second, pids[i].second,
                          pids[i].first));

  // IPC events: live exporters (an exporter's death makes its events orphans), unique tokens.
  tokens.clear();
  for (uint32_t i = 0; i < kEvents; ++i) {
    EventSlot& ev = c.events[i];
    if (ev.state != kLive && ev.state != kOrphan) {
      if (ev.state != kFree) problem(fmt::format("event slot {}: state {} is none of free, live, orphan", i, ev.state));
      continue;
    }
    if (ev.state == kLive && dead(ev.pid))
      problem(fmt::format("event slot {} (pid {}): its exporter is not alive, yet the sweep kept it live", i, ev.pid));
    if (ev.token.zero()) problem(fmt::format("event slot {} (pid {}): zero token", i, ev.pid));
    tokens.emplace_back(ev.token, i);
  }
  std::sort(tokens.begin(), tokens.end(), by_token);
  for (size_t i = 1; i < tokens.size(); ++i)
    if (tokens[i].first == tokens[i - 1].first)
      problem(fmt::format("event slots {} and {}: both live with token {}", tokens[i - 1].second, tokens[i].second,
                          tok(tokens[i].first)));

  // Logical endpoints: every alias and binding names a live endpoint, every endpoint has an
  // alias (the references that keep it alive), holders alive.
  EndpointTables& t = c.le;
  auto names_live = [&](uint32_t ep, const Token& token) {
    return ep < kEndpoints && t.endpoints[ep].state == kLive && t.endpoints[ep].token == token;
  };
  std::vector<uint8_t> aliased(kEndpoints);
  for (uint32_t i = 0; i < kEndpointAliases; ++i) {
    EndpointAliasSlot& a = t.aliases[i];
    if (a.state != kLive) continue;
    if (!names_live(a.ep, a.ep_token))
      problem(fmt::format("endpoint alias slot {} (id {} in pid {}): names endpoint {} {}, which is not live", i,
                          a.le_id, a.pid, a.ep, tok(a.ep_token)));
    else
      aliased[a.ep] = 1;
    if (dead(a.pid))
      problem(fmt::format("endpoint alias slot {} (id {} in pid {}): the process is gone", i, a.le_id, a.pid));
  }
  for (uint32_t i = 0; i < kEndpointBinds; ++i) {
    EndpointBindSlot& b = t.binds[i];
    if (b.state != kLive) continue;
    if (!names_live(b.ep, b.ep_token))
      problem(fmt::format("endpoint binding slot {} (pid {}, device {}): names endpoint {} {}, which is not live", i,
                          b.b.pid, b.b.dev, b.ep, tok(b.ep_token)));
    if (dead(b.b.pid)) problem(fmt::format("endpoint binding slot {} (pid {}): the process is gone", i, b.b.pid));
  }
  tokens.clear();
  for (uint32_t i = 0; i < kEndpoints; ++i) {
    EndpointSlot& ep = t.endpoints[i];
    if (ep.state != kLive) continue;
    if (!aliased[i]) problem(fmt::format("endpoint {} ({}): live without any id naming it", i, tok(ep.token)));
    if (ep.team_count > kEndpointTeamMax)
      problem(fmt::format("endpoint {} ({}): team of {} devices, more than {}", i, tok(ep.token), ep.team_count,
                          kEndpointTeamMax));
    tokens.emplace_back(ep.token, i);
  }
  std::sort(tokens.begin(), tokens.end(), by_token);
  for (size_t i = 1; i < tokens.size(); ++i)
    if (tokens[i].first == tokens[i - 1].first)
      problem(fmt::format("endpoints {} and {}: both live with token {}", tokens[i - 1].second, tokens[i].second,
                          tok(tokens[i].first)));
  if (n > kMaxLines) report += fmt::format("... and {} more problems\n", n - kMaxLines);
  return n;
}

}  // namespace cuda_shim::ipc
