// kill -9 under load: worker processes (this binary re-run) export and import memory through
// every IPC path at random while the parent, the hub that forwards handles between them, kills
// random workers with SIGKILL at random moments (mid-call too: a worker is told to run an export
// loop just before it dies) and starts new ones. Survivors keep working: every call returns
// success, or exactly the driver's code for a handle whose exporter died; their own memory keeps
// its contents; no call takes more than 2 s (no lock is left held by the dead). On the emulator,
// after each kill a survivor's cuShimRegistryCheck finds no fault in the shared registry, and
// once all workers exited normally their registry segment is gone from /dev/shm.
// Every export stays until no import of it is under way (the worker asks the parent before it
// frees), so an import fails only when its exporter was killed; importers write a mailbox that
// the exporter checks when it frees the memory. CUDA_SHIM_STRESS_ROUNDS (kills, default 200:
// about 25 s on two cores) and CUDA_SHIM_STRESS_SECONDS (a cap on the killing, default 30 s:
// sanitizer builds, the real driver) size the run; it prints one line of figures. The last test
// case asserts, one handle at a time, what importing gives once the exporter was killed or exited.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"
#if !CUDA_SHIM_REAL_BACKEND
#include <cuda_shim_ext.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

// What importing a handle gives once its exporter was killed, measured on an H100 with driver
// 580 (the last test case of this file asserts it one handle at a time): legacy memory is
// CUDA_ERROR_INVALID_HANDLE (a live exporter's freed memory is INVALID_VALUE: test_ipc_legacy);
// an IPC event still opens, and reads complete; a pool travels as a descriptor, which keeps its
// memory: the pool and the pointer import.
constexpr CUresult kDeadLegacy = CUDA_ERROR_INVALID_HANDLE;
constexpr CUresult kDeadEvent = CUDA_SUCCESS;

constexpr auto kSlowCall = std::chrono::seconds(2);

enum Op : int32_t {
  // worker -> parent
  kHello = 1,
  kPubLegacy,   // id, size, seed, bytes: CUipcMemHandle
  kPubPool,     // id, size, seed, bytes: CUmemPoolPtrExportData; the pool's descriptor rides along
  kPubEvent,    // id, bytes: CUipcEventHandle
  kWantFree,    // id: the worker wants to free its export (no new imports; answered by kFreeOk)
  kImportDone,  // id: the export (parent's id); a: first call's code; b: later calls' first failure; c: bytes right
  kChecked,     // a: problems found by cuShimRegistryCheck; text: the first of them
  kBurstDone,   // a: exports made in the burst
  kFail,        // text: what went wrong
  kStats,       // a, b, c: exports, imports, verifications (sent on a normal exit)
  // parent -> worker
  kInit,    // a: slot, b: generation, seed
  kImport,  // id, kind, size, seed, bytes (+ the pool's descriptor)
  kFreeOk,  // id: the worker's id; a: mailbox 0 never written, 1 written, 2 either
  kCheck,
  kBurst,
  kStop,
};
enum Kind : int32_t { kLegacy = 1, kPool = 2, kEvent = 3 };

struct Msg {
  int32_t op = 0;
  int32_t kind = 0;
  int64_t id = 0;
  int64_t a = 0, b = 0, c = 0;
  uint64_t size = 0, seed = 0;
  unsigned char bytes[64] = {};
  char text[200] = {};
};

// Messages are whole structures; a descriptor may ride along (SCM_RIGHTS).
bool send_msg(int sock, const Msg& m, int fd = -1) {
  iovec iov{const_cast<Msg*>(&m), sizeof m};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr h{};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  if (fd >= 0) {
    h.msg_control = buf;
    h.msg_controllen = sizeof buf;
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  size_t done = 0;
  while (done < sizeof m) {
    ssize_t w = ::sendmsg(sock, &h, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
    iov.iov_base = reinterpret_cast<char*>(const_cast<Msg*>(&m)) + done;
    iov.iov_len = sizeof m - done;
    h.msg_control = nullptr;
    h.msg_controllen = 0;
  }
  return true;
}

// False on EOF or error; *fd gets a descriptor that rode along (else -1).
bool recv_msg(int sock, Msg& m, int* fd = nullptr) {
  if (fd) *fd = -1;
  size_t got = 0;
  while (got < sizeof m) {
    iovec iov{reinterpret_cast<char*>(&m) + got, sizeof m - got};
    alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = buf;
    h.msg_controllen = sizeof buf;
    ssize_t r = ::recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int in = -1;
        std::memcpy(&in, CMSG_DATA(c), sizeof in);
        if (fd && *fd < 0)
          *fd = in;
        else
          ::close(in);
      }
    got += static_cast<size_t>(r);
  }
  return true;
}

bool readable(int sock, int ms) {
  pollfd p{sock, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}

// The bytes an export holds: a pattern of its seed, and the last 8 bytes a mailbox that
// importers write (the exporter checks it when it frees the memory).
unsigned char pattern(uint64_t seed, size_t i) { return static_cast<unsigned char>(seed * 131 + i * 7 + (i >> 9)); }
uint64_t mailbox_value(uint64_t seed) { return seed * 0x9e3779b97f4a7c15ull | 1; }
constexpr size_t kMailbox = 8;

std::vector<unsigned char> fill(uint64_t seed, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i + kMailbox < n; ++i) v[i] = pattern(seed, i);
  return v;  // mailbox 0
}
bool pattern_ok(const std::vector<unsigned char>& v, uint64_t seed) {
  for (size_t i = 0; i + kMailbox < v.size(); ++i)
    if (v[i] != pattern(seed, i)) return false;
  return true;
}
uint64_t mailbox(const std::vector<unsigned char>& v) {
  uint64_t x = 0;
  std::memcpy(&x, v.data() + v.size() - kMailbox, kMailbox);
  return x;
}

// ---- The worker ----

struct Worker {
  mp::Channel& ch;
  std::mt19937_64 rng;
  int slot = -1;
  bool failed = false;
  int64_t next_id = 1;
  int64_t exports = 0, imports = 0, verifies = 0;
  CUmemoryPool pool = nullptr;
  int pool_fd = -1;
  struct Own {
    int kind;
    CUdeviceptr ptr = 0;
    size_t size = 0;
    uint64_t seed = 0;
    CUevent ev = nullptr;
    bool want_free = false;
  };
  std::map<int64_t, Own> own;

  explicit Worker(mp::Channel& c) : ch(c) {}

  void fail(const std::string& what) {
    Msg m;
    m.op = kFail;
    std::string why;
#if !CUDA_SHIM_REAL_BACKEND
    char buf[160];
    if (cuShimGetLastExplanation(buf, sizeof buf)) why = std::string(" [") + buf + "]";
#endif
    std::snprintf(m.text, sizeof m.text, "worker %d (pid %d): %s%s", slot, static_cast<int>(::getpid()), what.c_str(),
                  why.c_str());
    send_msg(ch.fd(), m);
    failed = true;
  }

  // Every driver call goes through here: timed, and any code but the expected one reported.
  template <class F>
  CUresult call(const char* what, F&& f) {
    auto t0 = Clock::now();
    CUresult r = f();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    if (Clock::now() - t0 > kSlowCall) fail(std::string(what) + " took " + std::to_string(ms) + " ms");
    return r;
  }
#define CALL(expr) call(#expr, [&] { return (expr); })
#define MUST(expr)                                                                                    \
  do {                                                                                                \
    CUresult r_ = CALL(expr);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                         \
      fail(std::string(#expr) + " gave " + cu_name(r_) + " (line " + std::to_string(__LINE__) + ")"); \
      return;                                                                                         \
    }                                                                                                 \
  } while (0)

  size_t random_size() { return 4096u << (rng() % 5); }  // 4 KiB .. 64 KiB

  void publish_legacy() {
    Own o{kLegacy};
    o.size = random_size();
    o.seed = rng();
    MUST(cuMemAlloc(&o.ptr, o.size));
    auto v = fill(o.seed, o.size);
    MUST(cuMemcpyHtoD(o.ptr, v.data(), o.size));
    // From pageable memory, cuMemcpyHtoD may return before the DMA lands (documented; seen on an
    // H100 as importers reading old bytes): only a synchronize makes the bytes another process's.
    MUST(cuCtxSynchronize());
    CUipcMemHandle h;
    MUST(cuIpcGetMemHandle(&h, o.ptr));
    Msg m;
    m.op = kPubLegacy;
    m.id = next_id++;
    m.size = o.size;
    m.seed = o.seed;
    std::memcpy(m.bytes, &h, sizeof h);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m);
  }

  void publish_pool() {
    if (!pool) {
      CUmemPoolProps p;
      std::memset(&p, 0, sizeof p);
      p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      p.location.id = 0;
      MUST(cuMemPoolCreate(&pool, &p));
      MUST(cuMemPoolExportToShareableHandle(&pool_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    Own o{kPool};
    o.size = random_size();
    o.seed = rng();
    MUST(cuMemAllocFromPoolAsync(&o.ptr, o.size, pool, nullptr));
    MUST(cuStreamSynchronize(nullptr));
    auto v = fill(o.seed, o.size);
    MUST(cuMemcpyHtoD(o.ptr, v.data(), o.size));
    MUST(cuCtxSynchronize());  // as in publish_legacy: the bytes have landed before anyone imports
    CUmemPoolPtrExportData x;
    std::memset(&x, 0, sizeof x);
    MUST(cuMemPoolExportPointer(&x, o.ptr));
    Msg m;
    m.op = kPubPool;
    m.id = next_id++;
    m.size = o.size;
    m.seed = o.seed;
    std::memcpy(m.bytes, &x, sizeof x);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m, pool_fd);
  }

  void publish_event() {
    Own o{kEvent};
    MUST(cuEventCreate(&o.ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    MUST(cuEventRecord(o.ev, nullptr));
    MUST(cuEventSynchronize(o.ev));
    CUipcEventHandle h;
    MUST(cuIpcGetEventHandle(&h, o.ev));
    Msg m;
    m.op = kPubEvent;
    m.id = next_id++;
    std::memcpy(m.bytes, &h, sizeof h);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m);
  }

  // Reads an export of this worker back: the pattern intact, the mailbox as `expect` says
  // (0: never written, 1: written by an importer, 2: either).
  void verify(int64_t id, const Own& o, int expect) {
    if (o.kind == kEvent) {
      MUST(cuEventQuery(o.ev));
      return;
    }
    std::vector<unsigned char> v(o.size);
    MUST(cuMemcpyDtoH(v.data(), o.ptr, o.size));
    ++verifies;
    if (!pattern_ok(v, o.seed)) fail("export " + std::to_string(id) + ": its own bytes changed");
    uint64_t mb = mailbox(v), want = mailbox_value(o.seed);
    if ((expect == 0 && mb != 0) || (expect == 1 && mb != want) || (expect == 2 && mb != 0 && mb != want))
      fail("export " + std::to_string(id) + ": mailbox " + std::to_string(mb) + ", expected " +
           (expect == 0   ? "0"
            : expect == 1 ? "the importers' value"
                          : "0 or the importers' value"));
  }

  void release(const Own& o) {
    if (o.kind == kLegacy) MUST(cuMemFree(o.ptr));
    if (o.kind == kPool) {
      MUST(cuMemFreeAsync(o.ptr, nullptr));
      MUST(cuStreamSynchronize(nullptr));
    }
    if (o.kind == kEvent) MUST(cuEventDestroy(o.ev));
  }

  // An export of another worker, forwarded by the parent: open it, check its bytes, write the
  // mailbox, close it; report the codes.
  void import(const Msg& m, int fd) {
    Msg r;
    r.op = kImportDone;
    r.id = m.id;
    r.kind = m.kind;
    CUresult first = CUDA_SUCCESS, later = CUDA_SUCCESS;
    bool bytes_ok = true;
    auto note = [&](CUresult x) {
      if (later == CUDA_SUCCESS) later = x;
    };
    auto check_and_write = [&](CUdeviceptr p) {
      std::vector<unsigned char> v(m.size);
      CUresult x = CALL(cuMemcpyDtoH(v.data(), p, m.size));
      note(x);
      if (x == CUDA_SUCCESS) bytes_ok = pattern_ok(v, m.seed);
      uint64_t mb = mailbox_value(m.seed);
      note(CALL(cuMemcpyHtoD(p + m.size - kMailbox, &mb, kMailbox)));
      // The mailbox write lands before this import is reported done and the exporter may free
      // (and reuse) the memory: a pageable copy's DMA may still be in flight when it returns.
      note(CALL(cuCtxSynchronize()));
    };
    if (m.kind == kLegacy) {
      CUipcMemHandle h;
      std::memcpy(&h, m.bytes, sizeof h);
      CUdeviceptr p = 0;
      first = CALL(cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
      if (first == CUDA_SUCCESS) {
        check_and_write(p);
        note(CALL(cuIpcCloseMemHandle(p)));
      }
    } else if (m.kind == kPool) {
      CUmemoryPool ip = nullptr;
      first = CALL(cuMemPoolImportFromShareableHandle(&ip, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      if (first == CUDA_SUCCESS) {
        CUmemPoolPtrExportData x;
        std::memcpy(&x, m.bytes, sizeof x);
        CUdeviceptr p = 0;
        CUresult ir = CALL(cuMemPoolImportPointer(&p, ip, &x));
        note(ir);
        if (ir == CUDA_SUCCESS) {
          check_and_write(p);
          note(CALL(cuMemFreeAsync(p, nullptr)));
          note(CALL(cuStreamSynchronize(nullptr)));
        }
        note(CALL(cuMemPoolDestroy(ip)));
      }
    } else {
      CUipcEventHandle h;
      std::memcpy(&h, m.bytes, sizeof h);
      CUevent ev = nullptr;
      first = CALL(cuIpcOpenEventHandle(&ev, h));
      if (first == CUDA_SUCCESS) {
        note(CALL(cuEventSynchronize(ev)));
        note(CALL(cuEventQuery(ev)));
        note(CALL(cuEventDestroy(ev)));
      }
    }
    if (fd >= 0) ::close(fd);
    if (first == CUDA_SUCCESS && later == CUDA_SUCCESS) ++imports;
    r.a = first;
    r.b = later;
    r.c = bytes_ok;
    send_msg(ch.fd(), r);
  }

  // Exports and frees in a tight loop: the parent kills the worker in the middle of it.
  void burst() {
    Msg m;
    m.op = kBurstDone;
    for (int i = 0; i < 150 && !failed; ++i) {
      CUdeviceptr d = 0;
      CUipcMemHandle h;
      MUST(cuMemAlloc(&d, 4096));
      MUST(cuIpcGetMemHandle(&h, d));
      MUST(cuMemFree(d));
      if (i % 16 == 0) {
        CUevent ev = nullptr;
        CUipcEventHandle eh;
        MUST(cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
        MUST(cuIpcGetEventHandle(&eh, ev));
        MUST(cuEventDestroy(ev));
      }
      ++m.a;
    }
    exports += m.a;
    send_msg(ch.fd(), m);
  }

  // Handles what the parent sent; false once told to stop (or the parent is gone).
  bool handle(const Msg& m, int fd) {
    switch (m.op) {
      case kImport:
        import(m, fd);
        return true;
      case kFreeOk: {
        auto it = own.find(m.id);
        if (it == own.end()) {
          fail("kFreeOk for an unknown export " + std::to_string(m.id));
          return true;
        }
        verify(it->first, it->second, static_cast<int>(m.a));
        release(it->second);
        own.erase(it);
        return true;
      }
      case kCheck: {
        Msg r;
        r.op = kChecked;
#if !CUDA_SHIM_REAL_BACKEND
        std::string buf(1 << 16, '\0');
        auto t0 = Clock::now();
        r.a = cuShimRegistryCheck(buf.data(), buf.size());
        if (Clock::now() - t0 > kSlowCall) fail("cuShimRegistryCheck took more than 2 s");
        std::snprintf(r.text, sizeof r.text, "%s", buf.c_str());
#endif
        send_msg(ch.fd(), r);
        return true;
      }
      case kBurst:
        burst();
        return true;
      case kStop:
        return false;
      default:
        fail("unexpected message " + std::to_string(m.op));
        return true;
    }
  }

  int run() {
    Msg init;
    if (!recv_msg(ch.fd(), init) || init.op != kInit) return 3;
    slot = static_cast<int>(init.a);
    rng.seed(init.seed);
    Msg hello;
    hello.op = kHello;
    hello.a = ::getpid();
    send_msg(ch.fd(), hello);
    for (;;) {
      while (readable(ch.fd(), 0)) {
        Msg m;
        int fd = -1;
        if (!recv_msg(ch.fd(), m, &fd)) return 4;  // the parent is gone
        if (!handle(m, fd)) return finish();
      }
      if (failed) {  // keep answering (the parent asks for checks and stops us); no more work
        readable(ch.fd(), 100);
        continue;
      }
      unsigned roll = static_cast<unsigned>(rng() % 100);
      size_t n_own = own.size();
      if (roll < 30 && n_own < 8)
        publish_legacy();
      else if (roll < 48 && n_own < 8)
        publish_pool();
      else if (roll < 58 && n_own < 8)
        publish_event();
      else if (roll < 80 && n_own > 0) {
        auto it = own.begin();
        std::advance(it, static_cast<long>(rng() % n_own));
        if (!it->second.want_free) {
          it->second.want_free = true;
          Msg m;
          m.op = kWantFree;
          m.id = it->first;
          send_msg(ch.fd(), m);
        }
      } else if (roll < 90) {
        CUdeviceptr d = 0;  // memory nobody shares, beside the shared
        size_t sz = random_size();
        if (CALL(cuMemAlloc(&d, sz)) != CUDA_SUCCESS || CALL(cuMemFree(d)) != CUDA_SUCCESS)
          fail("cuMemAlloc/cuMemFree");
      } else {
        for (auto& [id, o] : own) verify(id, o, 2);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 3000));
    }
  }

  int finish() {
    for (auto& [id, o] : own) {
      verify(id, o, 2);
      release(o);
    }
    own.clear();
    if (pool) {
      if (CALL(cuMemPoolDestroy(pool)) != CUDA_SUCCESS) fail("cuMemPoolDestroy");
      ::close(pool_fd);
    }
    Msg m;
    m.op = kStats;
    m.a = exports;
    m.b = imports;
    m.c = verifies;
    send_msg(ch.fd(), m);
    return failed ? 1 : 0;
  }
#undef MUST
#undef CALL
};

int env_int(const char* name, int dflt) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : dflt;
}

}  // namespace

MP_CHILD(kill9_worker) {
  child_primary_ctx();
  Worker w(ch);
  return w.run();
}

TEST_CASE("kill -9 under load: survivors keep sharing memory and events", "[ipc][kill][stress]") {
  const int kWorkers = 4;
  const int rounds = env_int("CUDA_SHIM_STRESS_ROUNDS", 200);
  const int cap_s = env_int("CUDA_SHIM_STRESS_SECONDS", 30);
  const std::string registry = "cuda-shim-kill9-" + std::to_string(::getpid());
#if !CUDA_SHIM_REAL_BACKEND
  struct Cleanup {  // what a failed run leaves goes when the test ends (after its assertions)
    std::string path;
    ~Cleanup() { ::unlink(path.c_str()); }
  } cleanup{"/dev/shm/" + registry};
#endif
  std::mt19937_64 rng(0x6b696c6c39ull ^ static_cast<uint64_t>(::getpid()));
  const auto t_start = Clock::now();

  struct Slot {
    std::unique_ptr<mp::Child> c;
    int gen = 0;
    bool up = false;
    int outstanding = 0;
  };
  std::vector<Slot> slots(kWorkers);
  std::set<std::pair<int, int>> killed;  // (slot, generation)
  struct Export {
    int slot = 0, gen = 0;
    int64_t local = 0;
    int kind = 0;
    uint64_t size = 0, seed = 0;
    unsigned char bytes[64] = {};
    int fd = -1;
    bool retiring = false;
    int outstanding = 0, ok = 0;
    bool maybe = false;  // an importer died mid-import: the mailbox may or may not be written
  };
  std::map<int64_t, Export> exports;
  struct Pending {
    int64_t exp;
    int exp_slot, exp_gen, kind;
    int imp_slot, imp_gen;
  };
  std::vector<Pending> pending;
  int64_t next_export = 1;
  std::vector<std::string> failures;
  int kills = 0, mid_loop_kills = 0, done_rounds = 0, checks = 0, spawned = 0;
  long long pub[4] = {}, burst_exports = 0, imports_ok = 0, dead_refused[4] = {}, dead_opened[4] = {},
            worker_exports = 0, worker_imports = 0, worker_verifies = 0;

  auto failure = [&](const std::string& s) {
    if (failures.size() < 50) failures.push_back(s);
  };
  auto spawn = [&](int i) {
    Slot& s = slots[i];
    s.c = std::make_unique<mp::Child>(mp::spawn("kill9_worker", {"CUDA_SHIM_REGISTRY=" + registry}));
    ++s.gen;
    s.up = s.c->pid > 0;
    s.outstanding = 0;
    ++spawned;
    Msg m;
    m.op = kInit;
    m.a = i;
    m.b = s.gen;
    m.seed = rng();
    send_msg(s.c->ch.fd(), m);
  };
  auto free_ok = [&](std::map<int64_t, Export>::iterator it) {
    Export& e = it->second;
    Msg m;
    m.op = kFreeOk;
    m.id = e.local;
    m.a = e.ok > 0 ? 1 : e.maybe ? 2 : 0;
    if (slots[e.slot].gen == e.gen && slots[e.slot].up) send_msg(slots[e.slot].c->ch.fd(), m);
    if (e.fd >= 0) ::close(e.fd);
    exports.erase(it);
  };
  // Everything a worker says; `dead` when its messages are read after it was killed.
  int checked_result = -1;
  std::string checked_text;
  auto on_msg = [&](int i, const Msg& m, int fd, bool dead) {
    Slot& s = slots[i];
    switch (m.op) {
      case kHello:
        break;
      case kPubLegacy:
      case kPubPool:
      case kPubEvent: {
        int kind = m.op == kPubLegacy ? kLegacy : m.op == kPubPool ? kPool : kEvent;
        ++pub[kind];
        if (dead) break;
        Export e;
        e.slot = i;
        e.gen = s.gen;
        e.local = m.id;
        e.kind = kind;
        e.size = m.size;
        e.seed = m.seed;
        std::memcpy(e.bytes, m.bytes, sizeof e.bytes);
        e.fd = fd;
        fd = -1;
        exports[next_export++] = e;
        break;
      }
      case kWantFree: {
        if (dead) break;
        for (auto it = exports.begin(); it != exports.end(); ++it)
          if (it->second.slot == i && it->second.gen == s.gen && it->second.local == m.id) {
            it->second.retiring = true;
            if (it->second.outstanding == 0) free_ok(it);
            break;
          }
        break;
      }
      case kImportDone: {
        auto p = std::find_if(pending.begin(), pending.end(),
                              [&](const Pending& x) { return x.exp == m.id && x.imp_slot == i && x.imp_gen == s.gen; });
        if (p == pending.end()) {
          failure("an import result nobody asked for");
          break;
        }
        Pending pd = *p;
        pending.erase(p);
        --s.outstanding;
        bool exporter_killed = killed.count({pd.exp_slot, pd.exp_gen}) > 0;
        auto r0 = static_cast<CUresult>(m.a), r1 = static_cast<CUresult>(m.b);
        static const char* kname[] = {"?", "legacy memory", "pool memory", "IPC event"};
        std::string what = std::string(kname[pd.kind]) + " of worker " + std::to_string(pd.exp_slot) + " gen " +
                           std::to_string(pd.exp_gen) + " imported by worker " + std::to_string(i);
        if (!exporter_killed) {
          if (r0 != CUDA_SUCCESS || r1 != CUDA_SUCCESS || !m.c)
            failure(what + ": open " + cu_name(r0) + ", then " + cu_name(r1) + (m.c ? "" : ", wrong bytes") +
                    " while its exporter was alive");
          else
            ++imports_ok;
        } else {
          // The exporter was killed before this result came: its handle may open (the import
          // won the race, or the memory outlives it) or give exactly the documented code.
          CUresult dead_code = pd.kind == kLegacy ? kDeadLegacy : pd.kind == kEvent ? kDeadEvent : CUDA_SUCCESS;
          if (r0 == CUDA_SUCCESS && r1 == CUDA_SUCCESS)
            ++dead_opened[pd.kind];
          else if (r0 == dead_code && r0 != CUDA_SUCCESS)
            ++dead_refused[pd.kind];
          else
            failure(what + " (its exporter killed): open " + cu_name(r0) + ", then " + cu_name(r1) + "; expected " +
                    cu_name(dead_code));
        }
        auto it = exports.find(pd.exp);
        if (it != exports.end()) {
          --it->second.outstanding;
          if (r0 == CUDA_SUCCESS && r1 == CUDA_SUCCESS && m.c) ++it->second.ok;
          if (it->second.retiring && it->second.outstanding == 0) free_ok(it);
        }
        break;
      }
      case kChecked:
        checked_result = static_cast<int>(m.a);
        checked_text = m.text;
        break;
      case kBurstDone:
        burst_exports += m.a;
        break;
      case kFail:
        failure(m.text);
        break;
      case kStats:
        worker_exports += m.a;
        worker_imports += m.b;
        worker_verifies += m.c;
        break;
      default:
        failure("unexpected message " + std::to_string(m.op) + " from worker " + std::to_string(i));
    }
    if (fd >= 0) ::close(fd);
  };
  // Reads what is there (up to `ms` for the first message); false when a worker hung up.
  auto service = [&](int ms) {
    std::vector<pollfd> fds;
    std::vector<int> idx;
    for (int i = 0; i < kWorkers; ++i)
      if (slots[i].up) {
        fds.push_back({slots[i].c->ch.fd(), POLLIN, 0});
        idx.push_back(i);
      }
    if (::poll(fds.data(), fds.size(), ms) <= 0) return;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = idx[k];
      while (slots[i].up && readable(slots[i].c->ch.fd(), 0)) {
        Msg m;
        int fd = -1;
        if (!recv_msg(slots[i].c->ch.fd(), m, &fd)) {
          int st = slots[i].c->wait(5);
          failure("worker " + std::to_string(i) + " hung up unexpectedly (status " + std::to_string(st) + ")");
          slots[i].up = false;
          killed.insert({i, slots[i].gen});
          break;
        }
        on_msg(i, m, fd, false);
      }
    }
  };
  // Sends one export to another worker now and then.
  auto forward = [&] {
    if (exports.empty()) return;
    auto it = exports.begin();
    std::advance(it, static_cast<long>(rng() % exports.size()));
    Export& e = it->second;
    if (e.retiring || !slots[e.slot].up || slots[e.slot].gen != e.gen) return;
    int to = static_cast<int>(rng() % kWorkers);
    if (to == e.slot || !slots[to].up || slots[to].outstanding >= 3) return;
    for (auto& p : pending)
      if (p.exp == it->first && p.imp_slot == to) return;
    Msg m;
    m.op = kImport;
    m.id = it->first;
    m.kind = e.kind;
    m.size = e.size;
    m.seed = e.seed;
    std::memcpy(m.bytes, e.bytes, sizeof m.bytes);
    if (!send_msg(slots[to].c->ch.fd(), m, e.fd)) return;
    pending.push_back({it->first, e.slot, e.gen, e.kind, to, slots[to].gen});
    ++slots[to].outstanding;
    ++e.outstanding;
  };
  auto run_for = [&](std::chrono::milliseconds d, bool fwd = true) {
    auto until = Clock::now() + d;
    while (Clock::now() < until) {
      service(2);
      if (fwd) forward();
    }
  };

  for (int i = 0; i < kWorkers; ++i) spawn(i);
  run_for(std::chrono::milliseconds(300));

  for (int round = 0; round < rounds && failures.empty(); ++round) {
    if (Clock::now() - t_start > std::chrono::seconds(cap_s)) break;
    run_for(std::chrono::milliseconds(30 + rng() % 150));
    int v = static_cast<int>(rng() % kWorkers);
    Slot& s = slots[v];
    if (!s.up) continue;
    if (rng() % 3 == 0) {  // mid-call: in its export loop
      Msg m;
      m.op = kBurst;
      send_msg(s.c->ch.fd(), m);
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 4000));
      ++mid_loop_kills;
    }
    s.c->kill(SIGKILL);
    int st = s.c->wait(10);
    if (st != 128 + SIGKILL) failure("worker " + std::to_string(v) + " ended with status " + std::to_string(st));
    ++kills;
    s.up = false;
    killed.insert({v, s.gen});
    // What it said before it died still counts (a failure it reported, imports it finished).
    while (readable(s.c->ch.fd(), 0)) {
      Msg m;
      int fd = -1;
      if (!recv_msg(s.c->ch.fd(), m, &fd)) break;
      on_msg(v, m, fd, true);
    }
    for (auto it = exports.begin(); it != exports.end();) {
      if (it->second.slot == v && it->second.gen == s.gen) {
        if (it->second.fd >= 0) ::close(it->second.fd);
        it = exports.erase(it);
      } else {
        ++it;
      }
    }
    for (auto p = pending.begin(); p != pending.end();) {
      if (p->imp_slot == v && p->imp_gen == s.gen) {
        auto it = exports.find(p->exp);
        if (it != exports.end()) {
          --it->second.outstanding;
          it->second.maybe = true;
          if (it->second.retiring && it->second.outstanding == 0) free_ok(it);
        }
        p = pending.erase(p);
      } else {
        ++p;
      }
    }
#if !CUDA_SHIM_REAL_BACKEND
    // A survivor checks the registry right away: the dead worker swept, nothing inconsistent.
    std::vector<int> alive;
    for (int i = 0; i < kWorkers; ++i)
      if (slots[i].up) alive.push_back(i);
    if (!alive.empty()) {
      int by = alive[rng() % alive.size()];
      checked_result = -2;
      Msg m;
      m.op = kCheck;
      send_msg(slots[by].c->ch.fd(), m);
      auto until = Clock::now() + std::chrono::seconds(10);
      while (checked_result == -2 && Clock::now() < until && slots[by].up) service(5);
      ++checks;
      if (checked_result != 0)
        failure("after kill " + std::to_string(kills) + ", cuShimRegistryCheck in worker " + std::to_string(by) +
                " gave " + std::to_string(checked_result) + ": " + checked_text);
    }
#endif
    spawn(v);
    ++done_rounds;
  }

  // Wind down: no new imports, the ones under way finish, then every worker frees what it
  // holds and exits normally.
  auto until = Clock::now() + std::chrono::seconds(20);
  while (!pending.empty() && Clock::now() < until) run_for(std::chrono::milliseconds(5), false);
  CHECK(pending.empty());
  for (auto& s : slots) {
    Msg m;
    m.op = kStop;
    if (s.up) send_msg(s.c->ch.fd(), m);
  }
  for (int i = 0; i < kWorkers; ++i) {
    Slot& s = slots[i];
    if (!s.up) continue;
    // Its last words (kStats), then its exit.
    auto t_end = Clock::now() + std::chrono::seconds(20);
    bool stats = false;
    while (!stats && Clock::now() < t_end && readable(s.c->ch.fd(), 1000)) {
      Msg m;
      int fd = -1;
      if (!recv_msg(s.c->ch.fd(), m, &fd)) break;
      on_msg(i, m, fd, false);
      stats = m.op == kStats;
    }
    if (!stats) failure("worker " + std::to_string(i) + " sent no statistics at its end");
    int st = s.c->wait(20);
    if (st != 0) failure("worker " + std::to_string(i) + " exited with status " + std::to_string(st));
    s.up = false;
  }
  for (auto& [id, e] : exports)
    if (e.fd >= 0) ::close(e.fd);
  double secs = std::chrono::duration<double>(Clock::now() - t_start).count();
  std::printf(
      "kill9-stress: %d rounds, %d kills (%d told to run an export loop first), %d processes, %lld exports (%lld "
      "legacy, %lld pool, %lld event, "
      "%lld in export loops), %lld imports verified, imports of killed exporters: %lld refused with the "
      "documented code (%lld legacy, %lld event), %lld opened (%lld legacy, %lld pool, %lld event), "
      "%d registry checks, %.1f s\n",
      done_rounds, kills, mid_loop_kills, spawned, pub[kLegacy] + pub[kPool] + pub[kEvent] + burst_exports,
      pub[kLegacy], pub[kPool], pub[kEvent], burst_exports, imports_ok, dead_refused[kLegacy] + dead_refused[kEvent],
      dead_refused[kLegacy], dead_refused[kEvent], dead_opened[kLegacy] + dead_opened[kPool] + dead_opened[kEvent],
      dead_opened[kLegacy], dead_opened[kPool], dead_opened[kEvent], checks, secs);
  std::fflush(stdout);
  for (auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  CHECK(kills >= std::min(rounds, 10));
  CHECK(imports_ok > 0);
#if !CUDA_SHIM_REAL_BACKEND
  // Every worker left: the last one out removed the segment, and nothing of it is left.
  struct stat st;
  CHECK(::stat(("/dev/shm/" + registry).c_str(), &st) != 0);
  std::vector<std::string> left;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* ent = ::readdir(d))
      if (std::string(ent->d_name).rfind(registry, 0) == 0) left.push_back(ent->d_name);
    ::closedir(d);
  }
  INFO("left in /dev/shm: " << (left.empty() ? "" : left[0]));
  CHECK(left.empty());
#endif
}

// ---- One handle at a time: what importing gives once the exporter was killed or exited ----

// Exports legacy memory (0x5e), an IPC event (recorded, complete) and a pool allocation (0x6f),
// sends them, then waits to be killed (1) or exits normally (0).
MP_CHILD(kill9_exporter) {
  child_primary_ctx();
  const size_t n = 1 << 16;
  CUdeviceptr legacy = 0, pooled = 0;
  CUevent ev = nullptr;
  CUmemoryPool pool = nullptr;
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  int fd = -1;
  CUipcMemHandle h;
  CUipcEventHandle eh;
  CUmemPoolPtrExportData x;
  std::memset(&x, 0, sizeof x);
  bool ok = cuMemAlloc(&legacy, n) == CUDA_SUCCESS && cuMemsetD8(legacy, 0x5e, n) == CUDA_SUCCESS &&
            cuIpcGetMemHandle(&h, legacy) == CUDA_SUCCESS &&
            cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
            cuEventRecord(ev, nullptr) == CUDA_SUCCESS && cuIpcGetEventHandle(&eh, ev) == CUDA_SUCCESS &&
            cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS &&
            cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS &&
            cuMemAllocFromPoolAsync(&pooled, n, pool, nullptr) == CUDA_SUCCESS &&
            cuMemsetD8(pooled, 0x6f, n) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS &&
            cuMemPoolExportPointer(&x, pooled) == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 1);
  if (!ok) return 1;
  ch.send_pod(h);
  ch.send_pod(eh);
  ch.send_pod(x);
  ch.send_fd(fd);
  if (ch.recv_int() == 1) pause();  // killed here
  return 0;
}

TEST_CASE("handles of an exporter that was killed or exited: the codes", "[ipc][kill]") {
  conformance_primary_ctx();
  const bool killed = GENERATE(true, false);
  CAPTURE(killed);
  auto c = mp::spawn("kill9_exporter");
  REQUIRE(c.ch.recv_int() == 0);
  auto h = c.ch.recv_pod<CUipcMemHandle>();
  auto eh = c.ch.recv_pod<CUipcEventHandle>();
  auto x = c.ch.recv_pod<CUmemPoolPtrExportData>();
  int fd = c.ch.recv_fd();
  REQUIRE(fd >= 0);
  c.ch.send_int(killed ? 1 : 0);
  if (killed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.kill(SIGKILL);
    REQUIRE(c.wait() == 128 + SIGKILL);
  } else {
    REQUIRE(c.wait() == 0);
  }

  CUdeviceptr d = 0;
  CUresult lr = cuIpcOpenMemHandle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  CHECK_CU(lr, kDeadLegacy);
  if (lr == CUDA_SUCCESS) cuIpcCloseMemHandle(d);
  CUevent ev = nullptr;
  CUresult er = cuIpcOpenEventHandle(&ev, eh);
  CHECK_CU(er, kDeadEvent);
  if (er == CUDA_SUCCESS) {
    CHECK_CU(cuEventQuery(ev), CUDA_SUCCESS);  // it was recorded and complete
    CHECK_CU(cuEventSynchronize(ev), CUDA_SUCCESS);
    CHECK_CU(cuEventDestroy(ev), CUDA_SUCCESS);
  }
  // The descriptor holds the pool's memory: it imports, and so does the pointer (whose bytes
  // are not the exporter's to promise any more).
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_SUCCESS);
  CUdeviceptr p = 0;
  CUresult pr = cuMemPoolImportPointer(&p, pool, &x);
  CHECK_CU(pr, CUDA_SUCCESS);
  if (pr == CUDA_SUCCESS) {
    std::vector<unsigned char> buf(1 << 16);
    CHECK_CU(cuMemcpyDtoH(buf.data(), p, buf.size()), CUDA_SUCCESS);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  ::close(fd);
}
