#include "inspect/inspector.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "core/driver.hpp"
#include "core/events.hpp"
#include "ipc/registry_inspect.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"
#include "vmm/vmm.hpp"

namespace cuda_shim::inspect {

using ipc::inspect_escape;

std::string socket_name(uid_t uid, pid_t pid) { return fmt::format("cuda-shim-smi.{}.{}", uid, pid); }

namespace {

const char* range_kind(const mem::Range& r) {
  if (r.ipc_opened) return "ipc_opened";
  if (r.external) return "external";
  switch (r.kind) {
    case mem::Kind::device: return "device";
    case mem::Kind::host_pinned: return "host_pinned";
    case mem::Kind::host_registered: return "host_registered";
    case mem::Kind::managed: return "managed";
    default: return nullptr;  // pools and mappings have lines of their own
  }
}

const char* location_word(int type) {
  switch (type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return "device";
    case CU_MEM_LOCATION_TYPE_HOST: return "host";
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return "host_numa";
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return "host_numa_current";
    default: return "none";
  }
}

std::string access_words(const vmm::Mapping& m, int ndev) {
  auto prot = [](unsigned f) { return f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "rw" : f == CU_MEM_ACCESS_FLAGS_PROT_READ ? "r" : ""; };
  std::string out;
  for (int d = 0; d < ndev && d < kMaxDevices; ++d)
    if (unsigned f = m.device_access(d)) out += fmt::format("{}dev{}:{}", out.empty() ? "" : ",", d, prot(f));
  if (unsigned f = m.host_access.load(std::memory_order_acquire))
    out += fmt::format("{}host:{}", out.empty() ? "" : ",", prot(f));
  return out.empty() ? "none" : out;
}

std::string comm() {
  char buf[64] = {};
  int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "?";
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

std::string snapshot() {
  const int ndev = Driver::get().device_count();
  std::string out = fmt::format("process pid={} comm={} devices={}\n", ::getpid(), inspect_escape(comm()), ndev);
  // Ranges: plain allocations summed by kind and device; pools' windows and VMM mappings kept
  // (the address space holds a reference: they stay alive while they are read below).
  struct Sum {
    size_t count = 0;
    uint64_t bytes = 0, largest = 0;
  };
  std::map<std::pair<std::string, int>, Sum> sums;
  std::vector<mem::PoolPtr> pools;
  std::vector<std::shared_ptr<vmm::Mapping>> maps;
  mem::AddressSpace::get().for_each([&](const mem::Range& r) {
    if (r.kind == mem::Kind::pool && r.pool) pools.push_back(r.pool);
    else if (r.kind == mem::Kind::vmm && r.vmm) maps.push_back(r.vmm);
    if (const char* k = range_kind(r)) {
      Sum& s = sums[{k, r.ordinal}];
      ++s.count;
      s.bytes += r.size;
      s.largest = std::max<uint64_t>(s.largest, r.size);
    }
  });
  for (auto& [key, s] : sums)
    out += fmt::format("alloc kind={} dev={} count={} bytes={} largest={}\n", key.first, key.second, s.count, s.bytes,
                       s.largest);
  // Pools: every live handle, and pools destroyed while allocations still hold their windows.
  mem::live_pools(pools);
  std::sort(pools.begin(), pools.end(), [](auto& a, auto& b) { return a->handle() < b->handle(); });
  pools.erase(std::unique(pools.begin(), pools.end()), pools.end());
  for (auto& p : pools) {
    mem::Pool::View v;
    p->inspect(v);
    const auto& pr = p->props();
    out += fmt::format(
        "pool handle={:#x} dev={} location={} type={} handle_types={} token={} default={} imported={} exported={} "
        "destroyed={} capacity={} max_size={} reserved={} reserved_high={} used={} used_high={} threshold={} "
        "reuse_follow={} reuse_opportunistic={} reuse_internal={} allocations={} bytes={} largest={} pending={}\n",
        p->handle(), pr.loc_id, location_word(pr.loc_type), p->managed() ? "managed" : "pinned", pr.handle_types,
        ipc::to_hex(p->token()), p->is_default() ? 1 : 0, p->imported() ? 1 : 0, p->exported() ? 1 : 0,
        p->destroyed() ? 1 : 0, p->capacity(), pr.max_size, v.reserved, v.reserved_high, v.used, v.used_high,
        p->release_threshold(), p->reuse_follow() ? 1 : 0, p->reuse_opportunistic() ? 1 : 0,
        p->reuse_internal() ? 1 : 0, v.live, v.live_bytes, v.largest, v.pending);
  }
  // VMM: the reservations, then each mapping with the allocation it maps.
  std::vector<vmm::ReservationView> res;
  vmm::reservations(res);
  out += fmt::format("vmm handles={} reservations={}\n", vmm::handle_count(), res.size());
  for (auto& r : res) out += fmt::format("reservation base={:#x} size={} mappings={}\n", r.base, r.size, r.mappings);
  for (auto& m : maps) {
    const vmm::Allocation& a = *m->alloc;
    out += fmt::format("mapping base={:#x} size={} reservation={:#x} handle={:#x} dev={} location={} token={} "
                       "imported={} access={}\n",
                       m->base, m->size, m->res_base, a.handle(), a.prop.location.id,
                       location_word(a.prop.location.type), a.token.zero() ? "-" : ipc::to_hex(a.token),
                       a.imported ? 1 : 0, access_words(*m, ndev));
  }
  return out;
}

namespace {

std::atomic<int> g_listen{-1};     // this process's listening socket
std::atomic<pid_t> g_owner{0};     // the process that opened it (a fork()ed child is not)
std::atomic<bool> g_exiting{false};

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

void serve(int lfd) {
  for (;;) {
    int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) return;  // the socket is gone
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) ::usleep(100000);
      continue;  // out of descriptors for now, or an aborted connection: the next one may do
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    // Only this user's processes see what this one holds.
    if (::getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == ::getuid() &&
        !g_exiting.load(std::memory_order_acquire)) {
      timeval tv{1, 0};  // a reader that stalls does not hold the thread
      ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      std::string s;
      try {
        s = snapshot();
      } catch (...) {
        s = "error what=snapshot%20failed\n";
      }
      write_all(c, s + "end\n");
    }
    ::close(c);
  }
}

void* thread_main(void* arg) {
  serve(static_cast<int>(reinterpret_cast<intptr_t>(arg)));
  return nullptr;
}

// A fork()ed child has no thread; the copy of the parent's socket would only keep the
// parent's name bound after the parent ends. It is closed; the child's cuInit opens its own.
void after_fork_child() {
  int fd = g_listen.exchange(-1);
  if (fd >= 0) ::close(fd);
}

void start() noexcept {
  const pid_t me = ::getpid();
  if (g_owner.load(std::memory_order_acquire) == me) return;  // already listening (cuInit again)
  static const bool off = [] {
    const char* e = std::getenv("CUDA_SHIM_INSPECTOR");
    return e && std::strcmp(e, "0") == 0;
  }();
  if (off) return;
  static std::once_flag once;
  std::call_once(once, [] {
    ::pthread_atfork(nullptr, nullptr, &after_fork_child);
    std::atexit([] { g_exiting.store(true, std::memory_order_release); });
  });
  pid_t expected = g_owner.load();
  if (expected == me || !g_owner.compare_exchange_strong(expected, me)) return;  // another thread's cuInit won
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = socket_name(::getuid(), me);
  std::memcpy(addr.sun_path + 1, name.data(), std::min(name.size(), sizeof addr.sun_path - 2));
  const socklen_t alen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), alen) != 0 || ::listen(fd, 8) != 0) {
    ::close(fd);  // the name is taken (another pid namespace?): no inspector, nothing else changes
    return;
  }
  g_listen.store(fd);
  // Every signal blocked in the thread: the program's handlers run on its own threads, as before.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t t;
  if (::pthread_create(&t, &attr, &thread_main, reinterpret_cast<void*>(static_cast<intptr_t>(fd))) == 0)
    ::pthread_setname_np(t, "cuda-shim-smi");
  else
    after_fork_child();  // no thread: the socket goes too
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

[[maybe_unused]] const ev::Registration kOnInit{ev::driver_initialised, &start};

}  // namespace

}  // namespace cuda_shim::inspect
