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

namespace bip = boost::interprocess;

namespace cuda_shim::ipc {
namespace {

// ---- The shared layout (kLayoutVersion). Only trivially copyable types live here. ----
constexpr uint64_t kMagic = 0x4745524d48534355ull;  // "CUSHMREG"
constexpr uint32_t kProcs = 256;
constexpr uint32_t kRecords = 32768;  // power of two: open addressing by token
constexpr uint32_t kEvents = 1024;

enum : uint32_t { kFree = 0, kLive = 1, kTomb = 2 };

struct ProcSlot {
  int32_t pid;
  uint32_t state;   // kFree / kLive
  uint64_t start;   // /proc/<pid>/stat starttime: tells a live pid from a reused one
  int32_t channel;  // IMEX channel, -1 none
  uint32_t pad;
};

struct RecordSlot {
  uint32_t state;  // kFree / kLive / kTomb (written last when publishing)
  Record rec;
};
static_assert(std::is_trivially_copyable_v<Record>);

struct EventSlot {
  uint32_t state;  // kFree / kLive
  int32_t pid;     // exporter
  Token token;
  uint64_t words[2];  // records issued, highest record completed (atomic_ref)
  uint64_t pad[2];
};

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t ready;  // set (release) once the creator initialized everything
  uint64_t size;
  pthread_mutex_t lock;  // process-shared, robust
  uint64_t attaches;
  uint32_t live_records, tombs;
};

struct Layout {
  Header h;
  ProcSlot procs[kProcs];
  RecordSlot records[kRecords];
  EventSlot events[kEvents];
};
static_assert(std::is_trivially_copyable_v<ProcSlot> && std::is_trivially_copyable_v<RecordSlot>);

std::string default_name() {
  if (const char* e = std::getenv("CUDA_SHIM_REGISTRY"); e && *e) return e[0] == '/' ? e + 1 : e;
  return fmt::format("cuda-shim-{}", ::getuid());
}

// starttime (field 22) of /proc/<pid>/stat; 0 when the process is gone.
uint64_t start_time(int pid) {
  char path[64], buf[1024];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces
  if (!p) return 0;
  int field = 2;
  for (++p; *p && field < 22; ++p)
    if (*p == ' ') ++field;
  return std::strtoull(p, nullptr, 10);
}

bool alive(int pid, uint64_t start) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  return start_time(pid) == start;
}

class Segment {
 public:
  static Segment* get(Errc& e, const char* api) {
    static std::once_flag once;
    static Segment* s = nullptr;
    static std::string why;
    std::call_once(once, [] {
      auto* seg = new Segment();
      try {
        why = seg->attach();
      } catch (const std::exception& ex) {
        why = ex.what();
      }
      if (why.empty()) {
        s = seg;
        std::atexit([] { s->detach(); });
      } else {
        delete seg;
      }
    });
    if (!s) e = fail(Errc::out_of_memory, "{}: cannot attach the shared registry segment '{}': {}", api,
                     default_name(), why);
    return s;
  }

  Layout* L() const { return layout_; }
  int my_slot() const { return slot_; }
  const std::string& name() const { return name_; }

  // Holds the segment's lock; after a holder died, sweeps its records first.
  class Lock {
   public:
    explicit Lock(Segment& s) : s_(s) {
      int r = pthread_mutex_lock(&s.L()->h.lock);
      if (r == EOWNERDEAD) {
        pthread_mutex_consistent(&s.L()->h.lock);
        s.sweep();
      }
    }
    ~Lock() { pthread_mutex_unlock(&s_.L()->h.lock); }

   private:
    Segment& s_;
  };

  // Removes the processes that died and everything they published. Lock held.
  void sweep() {
    Layout* l = L();
    for (auto& p : l->procs)
      if (p.state == kLive && !alive(p.pid, p.start)) p.state = kFree;
    // Records go with their exporter, even one that never had a slot of its own (a fork()ed
    // child publishing through its parent's attachment).
    int last_pid = 0;
    bool last_alive = true;
    auto gone = [&](int pid) {
      if (pid != last_pid) {
        last_pid = pid;
        last_alive = ::kill(pid, 0) == 0 || errno == EPERM;
      }
      return !last_alive;
    };
    for (auto& r : l->records)
      if (r.state == kLive && gone(r.rec.pid)) retire(r);
    for (auto& ev : l->events)
      if (ev.state == kLive && gone(ev.pid)) ev.state = kFree;
    if (l->h.tombs > kRecords / 4) rehash();
  }

  void retire(RecordSlot& r) {
    r.state = kTomb;
    --L()->h.live_records;
    ++L()->h.tombs;
  }

  void rehash() {
    Layout* l = L();
    std::vector<RecordSlot> live;
    for (auto& r : l->records)
      if (r.state == kLive) live.push_back(r);
    for (auto& r : l->records) r = RecordSlot{};
    l->h.tombs = 0;
    for (auto& r : live) l->records[probe_free(r.rec.token)] = r;
  }

  uint32_t probe_free(const Token& t) const {
    for (uint32_t i = 0, h = static_cast<uint32_t>(t.lo); i < kRecords; ++i) {
      uint32_t k = (h + i) & (kRecords - 1);
      if (layout_->records[k].state != kLive) return k;
    }
    return kRecords;
  }

  RecordSlot* find(RecordKind kind, const Token& t) const {
    for (uint32_t i = 0, h = static_cast<uint32_t>(t.lo); i < kRecords; ++i) {
      RecordSlot& r = layout_->records[(h + i) & (kRecords - 1)];
      if (r.state == kFree) return nullptr;
      if (r.state == kLive && r.rec.token == t && r.rec.kind == kind) return &r;
    }
    return nullptr;
  }

 private:
  Segment() = default;

  std::string attach() {
    name_ = default_name();
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string why = try_attach();
      if (why != "retry") return why;
    }
    return "the segment kept changing under us";
  }

  std::string try_attach() {
    bool created = false;
    std::unique_ptr<bip::shared_memory_object> shm;
    bip::permissions perm(0600);
    try {
      shm = std::make_unique<bip::shared_memory_object>(bip::create_only, name_.c_str(), bip::read_write, perm);
      created = true;
      shm->truncate(sizeof(Layout));
    } catch (const bip::interprocess_exception&) {
      if (created) throw;
      shm = std::make_unique<bip::shared_memory_object>(bip::open_only, name_.c_str(), bip::read_write);
    }
    int fd = shm->get_mapping_handle().handle;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return "fstat failed";
    // Another user's segment (or one anybody could write) is never trusted.
    if (st.st_uid != ::getuid() || (st.st_mode & 077))
      return fmt::format("it belongs to uid {} with mode {:o}; it must be this user's, mode 0600", st.st_uid,
                         st.st_mode & 0777);
    if (!created) {
      // Wait for its creator to finish initializing; a creator that died leaves it unready.
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      while (static_cast<size_t>(st.st_size) < sizeof(Header) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ::fstat(fd, &st);
      }
    }
    region_ = std::make_unique<bip::mapped_region>(*shm, bip::read_write);
    auto* l = static_cast<Layout*>(region_->get_address());
    if (created) {
      std::memset(static_cast<void*>(l), 0, sizeof(Layout));
      pthread_mutexattr_t a;
      pthread_mutexattr_init(&a);
      pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
      pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
      pthread_mutex_init(&l->h.lock, &a);
      pthread_mutexattr_destroy(&a);
      l->h.magic = kMagic;
      l->h.version = kLayoutVersion;
      l->h.size = sizeof(Layout);
      std::atomic_ref<uint32_t>(l->h.ready).store(1, std::memory_order_release);
    } else {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      bool ok = false;
      while (std::chrono::steady_clock::now() < until) {
        if (region_->get_size() >= sizeof(Header) &&
            std::atomic_ref<uint32_t>(l->h.ready).load(std::memory_order_acquire)) {
          ok = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      // An older layout, a foreign object or a creator that died half-way: replace it. Its
      // remaining users (an older build) keep their mapping; they cannot share with us anyway.
      if (!ok || l->h.magic != kMagic || l->h.version != kLayoutVersion || l->h.size != sizeof(Layout) ||
          region_->get_size() < sizeof(Layout)) {
        region_.reset();
        bip::shared_memory_object::remove(name_.c_str());
        return "retry";
      }
    }
    layout_ = l;
    {
      Lock lk(*this);
      sweep();
      uint64_t me = start_time(::getpid());
      for (uint32_t i = 0; i < kProcs; ++i)
        if (l->procs[i].state == kFree) {
          l->procs[i] = ProcSlot{::getpid(), kLive, me, imex_env_channel(), 0};
          slot_ = static_cast<int>(i);
          break;
        }
      ++l->h.attaches;
    }
    if (slot_ < 0) return fmt::format("its process table is full ({} processes)", kProcs);
    // The last process out may have removed the name between our open and our registration:
    // then this segment is orphaned and we start over with a fresh one.
    struct stat now {};
    std::string path = "/dev/shm/" + name_;
    if (::stat(path.c_str(), &now) != 0 || now.st_ino != st.st_ino) {
      release_slot();
      layout_ = nullptr;
      region_.reset();
      return "retry";
    }
    shm_ = std::move(shm);
    owner_ = ::getpid();
    return {};
  }

  void release_slot() {
    Lock lk(*this);
    layout_->procs[slot_].state = kFree;
    slot_ = -1;
  }

 public:
  static int imex_env_channel() {
    const char* e = std::getenv("CUDA_SHIM_IMEX_CHANNEL");
    if (!e || !*e) return -1;
    char* end = nullptr;
    long v = std::strtol(e, &end, 10);
    return (*end == 0 && v >= 0 && v < (1 << 20)) ? static_cast<int>(v) : -1;
  }

  // At exit: withdraw everything this process published; the last process out removes the
  // segment's name, so nothing is left behind.
  void detach() noexcept {
    if (!layout_ || slot_ < 0 || ::getpid() != owner_) return;  // a fork()ed child is not the owner
    try {
      Lock lk(*this);
      int me = ::getpid();
      for (auto& r : layout_->records)
        if (r.state == kLive && r.rec.pid == me) retire(r);
      for (auto& ev : layout_->events)
        if (ev.state == kLive && ev.pid == me) ev.state = kFree;
      layout_->procs[slot_].state = kFree;
      slot_ = -1;
      bool others = false;
      for (auto& p : layout_->procs)
        if (p.state == kLive && alive(p.pid, p.start)) others = true;
      if (!others) bip::shared_memory_object::remove(name_.c_str());
    } catch (...) {
    }
  }

 private:
  std::string name_;
  std::unique_ptr<bip::shared_memory_object> shm_;
  std::unique_ptr<bip::mapped_region> region_;
  Layout* layout_ = nullptr;
  int slot_ = -1;
  int owner_ = 0;
};


}  // namespace

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
