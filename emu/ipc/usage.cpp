#include "ipc/usage.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <ctime>

#include "core/config.hpp"
#include "core/events.hpp"
#include "core/usage.hpp"
#include "ipc/segment.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::ipc {
using namespace seg;

namespace {

uint64_t rounded(uint64_t bytes) { return mem::charge_rounded(bytes); }

// A process counts while it runs: a zombie (killed, not yet reaped) has already given its GPU
// memory back on a real machine.
bool running(int pid, uint64_t start) { return !process_gone(pid, start); }

// This process alone (no registry): its own charges, and itself if it has a context there.
void own_use(int ordinal, std::vector<ProcessUse>* out, uint64_t& used) {
  uint64_t mine = rounded(mem::charged(ordinal));
  used = mine;
  if (out && (usage::live_contexts(ordinal) > 0 || mine)) out->push_back({::getpid(), mine});
}

// Whether another process still runs costs a few system calls (/proc/<pid>/stat tells a zombie
// from a live one); cuMemGetInfo would then cost more with every process using the device. So
// a process found running is trusted for kRecheckNs before it is looked at again. A killed
// process's memory thus comes back within that time, as it does on a GPU, whose driver also
// frees a dead process's memory some milliseconds after its end.
constexpr uint64_t kRecheckNs = 20'000'000;

struct Seen {
  int pid = 0;
  uint64_t start = 0, at_ns = 0;
};

uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Segment lock held (it also guards this process's cache). `exact`: look now (process lists).
bool running_cached(const ProcSlot& p, uint32_t slot, bool exact, uint64_t t) {
  static Seen* seen = new Seen[kProcs];  // never freed: used until the last call at exit
  Seen& c = seen[slot];
  if (!exact && c.pid == p.pid && c.start == p.start && t - c.at_ns < kRecheckNs) return true;
  if (!running(p.pid, p.start)) return false;
  c = Seen{p.pid, p.start, t};
  return true;
}

// Sums the live processes of segment s on `ordinal`; slots of processes that died are freed
// (their memory is gone with them, as on a GPU).
void sum(Segment& s, int ordinal, std::vector<ProcessUse>* out, uint64_t& used) {
  used = 0;
  Segment::Lock lk(s);
  Layout* l = s.L();
  const int me = ::getpid();  // a system call: once, not per slot
  const uint64_t t = now_ns();
  for (uint32_t i = 0; i < l->h.proc_hwm && i < kProcs; ++i) {
    ProcSlot& p = l->procs[i];
    if (p.state != kLive) continue;
    uint64_t bytes = rounded(std::atomic_ref<uint64_t>(l->charged[ordinal][i]).load());
    uint32_t ctxs = std::atomic_ref<uint32_t>(l->contexts[ordinal][i]).load();
    if (!bytes && !ctxs) continue;
    if (p.pid != me && !running_cached(p, i, out != nullptr, t)) {
      drop_usage(l, i);
      p.state = kFree;
      continue;
    }
    used += bytes;
    if (out) out->push_back({p.pid, bytes});
  }
}

// Why this process is alone, told once under CUDA_SHIM_EXPLAIN (the call itself succeeds).
// `why` starts with the API that tried to attach.
void explain_alone(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (Config::get().explain)
      std::fprintf(stderr, "cuda-shim: %s; other processes do not see this one's device memory, and its "
                   "cuMemGetInfo counts this process alone\n", why.c_str());
  });
}

void on_contexts(int ordinal, int live, const char* api) noexcept {
  if (ordinal < 0 || ordinal >= kUsageDevices) return;
  Errc e = Errc::success;
  Segment* s = Segment::get(e, api);  // a process with a context takes part
  if (!s) {
    explain_alone(explanation());
    clear_explanation();  // the call succeeds: no failure is left to report
    return;
  }
  // Under the lock: at exit the slot is given up (detach) and may be another process's next.
  Segment::Lock lk(*s);
  if (int slot = s->my_slot(); slot >= 0) {
    Layout* l = s->L();
    std::atomic_ref<uint32_t> hwm(l->procs[slot].dev_hwm);
    // Raised as mem::publish raises it (that one runs without the lock).
    for (uint32_t h = hwm.load(); h < static_cast<uint32_t>(ordinal) + 1 && !hwm.compare_exchange_weak(h, ordinal + 1);) {
    }
    std::atomic_ref<uint32_t>(l->contexts[ordinal][slot]).store(static_cast<uint32_t>(live));
  }
}

// Looks at a few of the processes using `ordinal` (from where the last look stopped) and frees
// the figures of those that died. Bounded, so cuMemGetInfo costs the same with 600 processes as
// with one; a dead process's memory thus comes back within milliseconds to a second or so.
void reap_some(Segment& s, int ordinal, uint64_t t) {
  constexpr uint32_t kLooks = 8, kSteps = 256;
  static uint32_t cursor = 0;  // guarded by the segment lock
  Segment::Lock lk(s);
  Layout* l = s.L();
  const uint32_t n = std::min<uint32_t>(l->h.proc_hwm, kProcs);
  if (n == 0) return;
  const int me = ::getpid();
  for (uint32_t step = 0, looks = 0; step < std::min(n, kSteps) && looks < kLooks; ++step) {
    const uint32_t i = cursor = (cursor + 1) % n;
    ProcSlot& p = l->procs[i];
    if (p.state != kLive || p.pid == me || !std::atomic_ref<uint64_t>(l->charged[ordinal][i]).load()) continue;
    ++looks;
    if (!running_cached(p, i, false, t)) {
      drop_usage(l, i);
      p.state = kFree;
    }
  }
}

// cuMemGetInfo: the device's running total, one load whatever the number of processes. The
// total still holds a process killed since it was last looked at, so once per clock tick (a few
// milliseconds: CLOCK_MONOTONIC_COARSE) this process looks at a few others.
bool on_device_used(int ordinal, uint64_t& used) noexcept {
  Segment* s = Segment::attached();
  if (!s || ordinal < 0 || ordinal >= kUsageDevices) return false;
  try {
    static std::atomic<uint64_t> looked_at{0};
    const uint64_t t = now_ns();
    if (uint64_t w = looked_at.load(std::memory_order_relaxed);
        t != w && looked_at.compare_exchange_strong(w, t, std::memory_order_relaxed))
      reap_some(*s, ordinal, t);
    used = std::atomic_ref<uint64_t>(s->L()->dev_used[ordinal]).load();
    return true;
  } catch (...) {
    return false;
  }
}

[[maybe_unused]] const ev::Registration kOnContexts{ev::contexts_live, &on_contexts};
[[maybe_unused]] const ev::Registration kDeviceUsed{ev::device_used, &on_device_used};

}  // namespace

bool device_users(int ordinal, std::vector<ProcessUse>* out, uint64_t& used) {
  used = 0;
  if (ordinal < 0 || ordinal >= kUsageDevices) return false;
  if (Segment* s = Segment::attached()) {
    sum(*s, ordinal, out, used);
    return true;
  }
  // Only looking: one mapping kept, replaced when the segment under the name changes (the last
  // process out removes it; the next one in makes a new one).
  static std::mutex mu;
  static std::unique_ptr<Segment> seen;
  std::lock_guard lk(mu);
  struct stat st {};
  if (::stat(("/dev/shm/" + default_name()).c_str(), &st) != 0) {
    seen.reset();
    own_use(ordinal, out, used);
    return true;  // no segment: no process uses a device
  }
  if (!seen || seen->inode() != st.st_ino) {
    std::string why;
    seen = Segment::observe(why);
    if (!seen) {
      own_use(ordinal, out, used);
      return false;
    }
  }
  sum(*seen, ordinal, out, used);
  return true;
}

}  // namespace cuda_shim::ipc
