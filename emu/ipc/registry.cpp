#include "ipc/registry.hpp"

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
#include <dirent.h>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#include "ipc/segment.hpp"

namespace cuda_shim::ipc {
using namespace seg;

Errc publish(Record& r, const char* api) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, api);
  if (!s) return e;
  r.pid = ::getpid();
  Segment::Lock lk(*s);
  Layout* l = s->L();
  if (l->h.live_records >= kRecords - kRecords / 8) {
    s->sweep();
    if (l->h.live_records >= kRecords - kRecords / 8)
      return fail(Errc::out_of_memory, "{}: the shared registry holds {} exports, its limit", api, l->h.live_records);
  }
  if (l->h.tombs > kRecords / 4) s->rehash();
  uint32_t k = s->probe_free(r.token);
  if (k == kRecords) return fail(Errc::out_of_memory, "{}: the shared registry is full", api);
  RecordSlot& d = l->records[k];
  if (d.state == kTomb) --l->h.tombs;
  d.rec = r;
  std::atomic_ref<uint32_t>(d.state).store(kLive, std::memory_order_release);
  ++l->h.live_records;
  return Errc::success;
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
  for (auto& ev : s->L()->events)
    if (ev.state == kFree) {
      ev = EventSlot{};
      ev.pid = ::getpid();
      ev.token = token = random_token();
      ev.state = kLive;
      words = ev.words;
      return true;
    }
  return false;
}

bool event_open(const Token& token, uint64_t*& words, int& owner_pid) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, "cuIpcOpenEventHandle");
  if (!s || token.zero()) return false;
  Segment::Lock lk(*s);
  for (auto& ev : s->L()->events)
    if (ev.state == kLive && ev.token == token) {
      words = ev.words;
      owner_pid = ev.pid;
      return true;
    }
  return false;
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
  static const char* kinds[] = {"?", "ipc-mem", "fabric"};
  for (auto& r : l->records)
    if (r.state == kLive)
      out += fmt::format("  {} {} from pid {} (device {}, {} bytes at +{:#x})\n",
                         kinds[static_cast<uint32_t>(r.rec.kind) < 3 ? static_cast<uint32_t>(r.rec.kind) : 0],
                         to_hex(r.rec.token).substr(0, 8), r.rec.pid, r.rec.device, r.rec.size, r.rec.offset);
  return out;
}

std::string collect_garbage() {
  std::string out;
  DIR* d = ::opendir("/dev/shm");
  if (!d) return out;
  while (dirent* ent = ::readdir(d)) {
    std::string n = ent->d_name;
    if (n.rfind("cuda-shim-", 0) != 0) continue;
    std::string path = "/dev/shm/" + n;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_uid != ::getuid()) continue;
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    bool busy = false, known = false;
    if (static_cast<size_t>(st.st_size) >= sizeof(Layout)) {
      void* m = ::mmap(nullptr, sizeof(Layout), PROT_READ, MAP_SHARED, fd, 0);
      if (m != MAP_FAILED) {
        auto* l = static_cast<const Layout*>(m);
        known = l->h.magic == kMagic && l->h.version == kLayoutVersion;
        if (known)
          for (auto& p : l->procs)
            if (p.state == kLive && alive(p.pid, p.start)) busy = true;
        ::munmap(m, sizeof(Layout));
      }
    }
    ::close(fd);
    // A segment of another layout (or a half-created one) cannot be read: it goes once it
    // has not changed for a minute, which no live user of it would allow.
    bool stale = known || ::time(nullptr) - st.st_mtime > 60;
    if (!busy && stale) {
      ::unlink(path.c_str());
      out += fmt::format("removed /dev/shm/{}\n", n);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace cuda_shim::ipc
