// The registry segment's shared layout and its attachment, shared by the parts of the IPC
// layer that keep state in it: exports and events (registry.cpp) and logical endpoints
// (endpoint_table.cpp). Internal to emu/ipc. Only trivially copyable types live in the
// segment; every change of the layout bumps kLayoutVersion (an older segment is replaced).
#pragma once
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ipc/endpoint_layout.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::ipc::seg {


namespace bip = boost::interprocess;

// ---- The shared layout (kLayoutVersion). Only trivially copyable types live here. ----
constexpr uint64_t kMagic = 0x4745524d48534355ull;  // "CUSHMREG"
// Processes attached at once. Each costs 24 bytes plus its usage row (7 KiB, sparse: pages are
// touched only by slots in use), so thousands cost nothing until they come.
constexpr uint32_t kProcs = 4096;
constexpr uint32_t kRecords = 32768;  // power of two: open addressing by token
constexpr uint32_t kEvents = 1024;

enum : uint32_t { kFree = 0, kLive = 1, kTomb = 2, kOrphan = 3 /* events only: the exporter is gone */ };

constexpr int kUsageDevices = mem::kMaxChargedDevices;

struct ProcSlot {
  int32_t pid;
  uint32_t state;   // kFree / kLive
  uint64_t start;   // /proc/<pid>/stat starttime: tells a live pid from a reused one
  int32_t channel;  // IMEX channel, -1 none
  uint32_t dev_hwm;  // devices [0, dev_hwm) of its usage column may be nonzero
};

struct RecordSlot {
  uint32_t state;  // kFree / kLive / kTomb (written last when publishing)
  Record rec;
};
static_assert(std::is_trivially_copyable_v<Record>);

struct EventSlot {
  uint32_t state;  // kFree / kLive / kOrphan (orphan_event)
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
  uint64_t object_seq;  // the last object record's seq
  uint32_t proc_hwm;     // process slots [0, proc_hwm) have been used: walks stop there
  uint32_t shared_used;  // set once a record, event or endpoint was ever written (note_shared)
};

struct Layout {
  Header h;
  ProcSlot procs[kProcs];
  // What each process uses of each device (usage.cpp), written by it alone through atomic_ref:
  // device memory charged (mem::charged, not rounded) and its live contexts. One row per
  // device, one column per process slot: summing a device's use (cuMemGetInfo) reads a few
  // contiguous kilobytes, not a page per process.
  uint64_t charged[kUsageDevices][kProcs];
  uint32_t contexts[kUsageDevices][kProcs];
  // Per device, the sum of the live slots' charged[d][] each rounded as the driver charges
  // (mem::set_charge_mirror keeps it; drop_usage takes a slot out): cuMemGetInfo in one load.
  uint64_t dev_used[kUsageDevices];
  RecordSlot records[kRecords];
  EventSlot events[kEvents];
  EndpointTables le;  // logical endpoints (endpoint_layout.hpp)
};
static_assert(std::is_trivially_copyable_v<ProcSlot> && std::is_trivially_copyable_v<RecordSlot>);

// The registry segment's name: CUDA_SHIM_REGISTRY, else cuda-shim-<uid> unless another user
// took that name first (registry_name.hpp). Resolved once per process (registry.cpp).
std::string default_name();

// starttime (field 22) of /proc/<pid>/stat; 0 when the process is gone.
inline uint64_t start_time(int pid) {
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

inline bool alive(int pid, uint64_t start) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  return start_time(pid) == start;
}

// Takes slot i's figures out of the table and the per-device totals: its process is gone, or is
// this one after it stopped mirroring. Lock held.
inline void drop_usage(Layout* l, uint32_t i) {
  const uint32_t hwm = std::atomic_ref<uint32_t>(l->procs[i].dev_hwm).load();
  for (uint32_t d = 0; d < hwm && d < static_cast<uint32_t>(kUsageDevices); ++d) {
    if (uint64_t was = std::atomic_ref<uint64_t>(l->charged[d][i]).exchange(0))
      std::atomic_ref<uint64_t>(l->dev_used[d]).fetch_sub(mem::charge_rounded(was));
    std::atomic_ref<uint32_t>(l->contexts[d][i]).store(0);
  }
}

// Drops the aliases and bindings of processes for which gone(pid) holds, and the endpoints
// left without aliases (endpoint_table.cpp). Lock held.
template <class Gone>
void endpoints_sweep(EndpointTables& t, Gone&& gone) {
  for (auto& a : t.aliases)
    if (a.state == kLive && gone(a.pid)) a.state = kFree;
  for (auto& b : t.binds)
    if (b.state == kLive && gone(b.b.pid)) b.state = kFree;
  // An endpoint lives while some id names it; the last alias gone frees it (and whatever
  // bindings remain: every binder held an alias).
  bool held[kEndpoints] = {};  // on the stack: static TLS would break dlopen of the library
  for (auto& a : t.aliases)
    if (a.state == kLive && a.ep < kEndpoints) held[a.ep] = true;
  for (uint32_t i = 0; i < kEndpoints; ++i)
    if (t.endpoints[i].state == kLive && !held[i]) t.endpoints[i].state = kFree;
  for (auto& b : t.binds)
    if (b.state == kLive && (b.ep >= kEndpoints || t.endpoints[b.ep].state != kLive)) b.state = kFree;
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
        attached_ptr().store(seg, std::memory_order_release);
        // From now on others read this process's device memory in its slot.
        Layout* l = seg->L();
        mem::set_charge_mirror(&l->charged[0][seg->my_slot()], kProcs, &l->procs[seg->my_slot()].dev_hwm,
                               l->dev_used);
        std::atexit([] { s->detach(); });
      } else {
        delete seg;
      }
    });
    if (!s) e = fail(Errc::out_of_memory, "{}: cannot attach the shared registry segment '{}': {}", api,
                     default_name(), why);
    return s;
  }

  // This process's attachment when it has one (never attaches).
  static Segment* attached() { return attached_ptr().load(std::memory_order_acquire); }

  // A read-only look at the segment for a process that does not take part (NVML must not count
  // itself as a process): maps it without taking a process slot. Null with the reason when no
  // segment exists (no process uses the emulator) or it cannot be read. The caller owns it.
  static std::unique_ptr<Segment> observe(std::string& why) {
    std::unique_ptr<Segment> o(new Segment());
    o->name_ = default_name();
    try {
      bip::shared_memory_object shm(bip::open_only, o->name_.c_str(), bip::read_write);
      struct stat st {};
      if (::fstat(shm.get_mapping_handle().handle, &st) != 0 || st.st_uid != ::getuid() || (st.st_mode & 077) ||
          static_cast<size_t>(st.st_size) < sizeof(Layout)) {
        why = "it is not this user's, or not a complete segment";
        return nullptr;
      }
      o->region_ = std::make_unique<bip::mapped_region>(shm, bip::read_write);
      auto* l = static_cast<Layout*>(o->region_->get_address());
      if (!std::atomic_ref<uint32_t>(l->h.ready).load(std::memory_order_acquire) || l->h.magic != kMagic ||
          l->h.version != kLayoutVersion || l->h.size != sizeof(Layout)) {
        why = "it has another layout (an older build of cuda-shim)";
        return nullptr;
      }
      o->layout_ = l;
      o->ino_ = st.st_ino;
    } catch (const std::exception& ex) {
      why = ex.what();
      return nullptr;
    }
    return o;
  }

  Layout* L() const { return layout_; }
  int my_slot() const { return slot_; }
  // Called, lock held, before a record, event or endpoint slot is first written (sweep()).
  void note_shared() { L()->h.shared_used = 1; }
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
    for (uint32_t i = 0; i < l->h.proc_hwm && i < kProcs; ++i)
      if (ProcSlot& p = l->procs[i]; p.state == kLive && !alive(p.pid, p.start)) {
        drop_usage(l, i);
        p.state = kFree;
      }
    // Nothing was ever shared: the tables are all zeros, and reading them would only fault in
    // megabytes of pages in every process that attaches.
    if (!l->h.shared_used) return;
    // Records go with their exporter, even one that never had a slot of its own (a fork()ed
    // child publishing through its parent's attachment). Object records stay: the descriptors
    // handed out keep the object alive after its exporter, and still prove what they are.
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
      if (r.state == kLive && r.rec.kind != RecordKind::object && gone(r.rec.pid)) retire(r);
    // A holder killed inside rehash() may leave a record twice (the copy is the one found
    // first): the later one goes.
    for (auto& r : l->records)
      if (r.state == kLive) {
        RecordSlot* first = find(r.rec.kind, r.rec.token);
        if (first && first != &r) retire(r);
      }
    for (auto& ev : l->events)
      if (ev.state == kLive && gone(ev.pid)) orphan_event(ev);
    endpoints_sweep(l->le, gone);
    // A holder killed between a slot's state change and the counters' update (publish,
    // retire) leaves h.live_records / h.tombs off by one: they are recounted.
    recount();
    if (l->h.tombs > kRecords / 4) rehash();
  }

  void recount() {
    uint32_t live = 0, tombs = 0;
    for (auto& r : L()->records) {
      live += r.state == kLive;
      tombs += r.state == kTomb;
    }
    L()->h.live_records = live;
    L()->h.tombs = tombs;
  }

  // Measured on driver 580: an IPC event still opens after its exporter exited or was killed,
  // and reads complete. So its slot is kept, as an orphan, until a new event needs the room
  // (event_share); the records its exporter issued and will never complete count as complete,
  // so that no waiter in another process hangs on them. Lock held.
  static void orphan_event(EventSlot& ev) {
    std::atomic_ref<uint64_t> issued(ev.words[0]), done(ev.words[1]);
    uint64_t n = issued.load();
    for (uint64_t cur = done.load(); cur < n && !done.compare_exchange_weak(cur, n);) {
    }
    ev.state = kOrphan;
  }

  void retire(RecordSlot& r) {
    r.state = kTomb;
    --L()->h.live_records;
    ++L()->h.tombs;
  }

  // Clears tombs in place without ever losing a record, so that a holder killed half-way
  // (the next holder gets EOWNERDEAD and sweeps) leaves a table that still finds all it held.
  // (It used to copy the live records to this process's heap, clear the table and insert them
  // again: killed in between, every export of every process was lost.) First each live record
  // moves to the first non-live slot of its probe sequence when that comes before its own
  // slot: copied there, then its old slot becomes a tomb (killed in between: a duplicate, which
  // sweep() drops; the copy is found first). Then every tomb that no live record's probe
  // sequence crosses becomes free. Lock held.
  void rehash() {
    Layout* l = L();
    constexpr uint32_t mask = kRecords - 1;
    for (uint32_t k = 0; k < kRecords; ++k) {
      RecordSlot& r = l->records[k];
      if (r.state != kLive) continue;
      uint32_t home = static_cast<uint32_t>(r.rec.token.lo) & mask;
      uint32_t p = probe_free(r.rec.token);
      if (p == kRecords || ((p - home) & mask) >= ((k - home) & mask)) continue;
      RecordSlot& d = l->records[p];
      d.rec = r.rec;
      std::atomic_ref<uint32_t>(d.state).store(kLive, std::memory_order_release);
      r.state = kTomb;
    }
    std::vector<bool> crossed(kRecords);
    for (uint32_t k = 0; k < kRecords; ++k)
      if (l->records[k].state == kLive)
        for (uint32_t i = static_cast<uint32_t>(l->records[k].rec.token.lo) & mask; i != k; i = (i + 1) & mask)
          crossed[i] = true;
    for (uint32_t k = 0; k < kRecords; ++k)
      if (l->records[k].state == kTomb && !crossed[k]) l->records[k].state = kFree;
    recount();
  }

  // Publishes r (lock held): when the table is nearly full, the dead are swept first, then the
  // oldest object records whose exporter no longer holds the object.
  Errc insert(const Record& r, const char* api) {
    Layout* l = L();
    constexpr uint32_t kFull = kRecords - kRecords / 8;
    if (l->h.live_records >= kFull) {
      sweep();
      if (l->h.live_records >= kFull) evict_objects(kRecords - kRecords / 4);
      if (l->h.live_records >= kFull)
        return fail(Errc::out_of_memory, "{}: the shared registry holds {} exports, its limit", api, l->h.live_records);
    }
    if (l->h.tombs > kRecords / 4) rehash();
    uint32_t k = probe_free(r.token);
    if (k == kRecords) return fail(Errc::out_of_memory, "{}: the shared registry is full", api);
    RecordSlot& d = l->records[k];
    if (d.state == kTomb) --l->h.tombs;
    note_shared();
    d.rec = r;
    std::atomic_ref<uint32_t>(d.state).store(kLive, std::memory_order_release);
    ++l->h.live_records;
    return Errc::success;
  }

  // Whether the exporter of object record r still holds the object (then descriptors of it
  // may still be handed out).
  static bool object_held(const Record& r) {
    struct stat st {};
    if (r.fd < 0 || r.pid <= 0) return false;
    if (r.pid == ::getpid()) return ::fstat(r.fd, &st) == 0 && st.st_dev == r.dev && st.st_ino == r.ino;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", r.pid, r.fd);
    return ::stat(path, &st) == 0 && st.st_dev == r.dev && st.st_ino == r.ino;
  }

  // Retires object records no exporter holds any more, oldest first, until at most `target`
  // records are live. Lock held.
  void evict_objects(uint32_t target) {
    std::vector<std::pair<uint64_t, uint32_t>> idle;  // (seq, slot)
    for (uint32_t k = 0; k < kRecords; ++k) {
      const RecordSlot& r = L()->records[k];
      if (r.state == kLive && r.rec.kind == RecordKind::object && !object_held(r.rec)) idle.emplace_back(r.rec.seq, k);
    }
    std::sort(idle.begin(), idle.end());
    for (auto& [seq, k] : idle) {
      if (L()->h.live_records <= target) break;
      retire(L()->records[k]);
    }
  }

  uint32_t probe_free(const Token& t) const {
    for (uint32_t i = 0, h = static_cast<uint32_t>(t.lo); i < kRecords; ++i) {
      uint32_t k = (h + i) & (kRecords - 1);
      if (layout_->records[k].state != kLive) return k;
    }
    return kRecords;
  }

  RecordSlot* find(RecordKind kind, const Token& t) const { return find_in(*layout_, kind, t); }

  // The first live record of that kind and token in its probe sequence, in layout l (the
  // segment or a copy of it: cuShimRegistryCheck).
  static RecordSlot* find_in(Layout& l, RecordKind kind, const Token& t) {
    for (uint32_t i = 0, h = static_cast<uint32_t>(t.lo); i < kRecords; ++i) {
      RecordSlot& r = l.records[(h + i) & (kRecords - 1)];
      if (r.state == kFree) return nullptr;
      if (r.state == kLive && r.rec.token == t && r.rec.kind == kind) return &r;
    }
    return nullptr;
  }

  // What the check needs beside the layout: the bytes mapped and the object attached.
  size_t mapped_size() const { return region_ ? region_->get_size() : 0; }
  uint64_t inode() const { return ino_; }

 private:
  Segment() = default;
  static std::atomic<Segment*>& attached_ptr() {
    static std::atomic<Segment*> p{nullptr};
    return p;
  }

  // Out of line: inlined into get()'s call_once, GCC 12 reports a false -Wrestrict in the
  // string moves (GCC PR 105329).
  [[gnu::noinline]] std::string attach() {
    name_ = default_name();
    for (int attempt = 0; attempt < 32; ++attempt) {  // each retry follows another process's step
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
      try {
        shm = std::make_unique<bip::shared_memory_object>(bip::open_only, name_.c_str(), bip::read_write);
      } catch (const bip::interprocess_exception& ex) {
        // Gone between the two opens: the last process out removed it. Create it afresh.
        struct stat other {};
        const bool there = ::stat(("/dev/shm/" + name_).c_str(), &other) == 0;
        if (!there && errno == ENOENT) return "retry";
        // Typically EACCES: another user's segment (mode 0600). Say whose it is.
        if (there && other.st_uid != ::getuid())
          return fmt::format("{} (it belongs to uid {} with mode {:o}; this process runs as uid {})", ex.what(),
                             other.st_uid, other.st_mode & 0777, ::getuid());
        throw;
      }
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
      // Shorter than a header (a creator killed between creating and sizing it, or a stray
      // file): replace it. Mapping it would throw for 0 bytes, and the process could then never
      // attach (Segment::get remembers the failure).
      if (static_cast<size_t>(st.st_size) < sizeof(Header)) {
        remove_if_same(st.st_ino);
        return "retry";
      }
    }
    region_ = std::make_unique<bip::mapped_region>(*shm, bip::read_write);
    auto* l = static_cast<Layout*>(region_->get_address());
    if (created) {
      // A new shared memory object reads as zeros: no memset, which would fault in every page
      // of the layout (megabytes) in each process that happens to create it.
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
        remove_if_same(st.st_ino);
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
          // The column may hold a dead process's figures: cleared before the slot goes live.
          drop_usage(l, i);
          l->procs[i] = ProcSlot{::getpid(), kLive, me, imex_env_channel(), 0};
          l->h.proc_hwm = std::max(l->h.proc_hwm, i + 1);
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
    ino_ = st.st_ino;
    return {};
  }

  // Removes the name only while it still names the object judged stale (inode ino): two
  // processes may judge one stale segment, and the slower must not remove the fresh segment
  // that the faster has put in its place meanwhile.
  void remove_if_same(ino_t ino) {
    struct stat now {};
    std::string path = "/dev/shm/" + name_;
    if (::stat(path.c_str(), &now) == 0 && now.st_ino == ino) bip::shared_memory_object::remove(name_.c_str());
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
        if (r.state == kLive && r.rec.pid == me && r.rec.kind != RecordKind::object) retire(r);
      for (auto& ev : layout_->events)
        if (ev.state == kLive && ev.pid == me) orphan_event(ev);
      endpoints_sweep(layout_->le, [me](int pid) { return pid == me; });
      mem::set_charge_mirror(nullptr);  // the slot may be another process's next
      drop_usage(layout_, static_cast<uint32_t>(slot_));  // what it still holds goes with it
      layout_->procs[slot_].state = kFree;
      slot_ = -1;
      bool others = false;
      for (auto& p : layout_->procs)
        if (p.state == kLive && alive(p.pid, p.start)) others = true;
      if (!others) remove_if_same(ino_);  // not a newer segment that replaced ours under the name
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
  uint64_t ino_ = 0;
};



}  // namespace cuda_shim::ipc::seg
