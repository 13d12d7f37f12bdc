#include "ipc/usage.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/config.hpp"
#include "core/usage.hpp"
#include "ipc/segment.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::ipc {
using namespace seg;

namespace {

uint64_t rounded(uint64_t bytes) {
  constexpr uint64_t g = mem::kAllocGranularity;
  return (bytes + g - 1) / g * g;
}

// A process counts while it runs: a zombie (killed, not yet reaped) has already given its GPU
// memory back on a real machine.
bool running(int pid, uint64_t start) { return !process_gone(pid, start); }

// This process alone (no registry): its own charges, and itself if it has a context there.
void own_use(int ordinal, std::vector<ProcessUse>* out, uint64_t& used) {
  uint64_t mine = rounded(mem::charged(ordinal));
  used = mine;
  if (out && (usage::live_contexts(ordinal) > 0 || mine)) out->push_back({::getpid(), mine});
}

// Sums the live processes of segment s on `ordinal`; slots of processes that died are freed
// (their memory is gone with them, as on a GPU).
void sum(Segment& s, int ordinal, std::vector<ProcessUse>* out, uint64_t& used) {
  used = 0;
  Segment::Lock lk(s);
  for (auto& p : s.L()->procs) {
    if (p.state != kLive) continue;
    uint64_t bytes = rounded(std::atomic_ref<uint64_t>(p.charged[ordinal]).load());
    uint32_t ctxs = std::atomic_ref<uint32_t>(p.contexts[ordinal]).load();
    if (!bytes && !ctxs) continue;
    if (p.pid != ::getpid() && !running(p.pid, p.start)) {
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
  if (s->my_slot() >= 0)
    std::atomic_ref<uint32_t>(s->L()->procs[s->my_slot()].contexts[ordinal]).store(static_cast<uint32_t>(live));
}

bool on_device_used(int ordinal, uint64_t& used) noexcept {
  Segment* s = Segment::attached();
  if (!s || ordinal < 0 || ordinal >= kUsageDevices) return false;
  try {
    sum(*s, ordinal, nullptr, used);
    return true;
  } catch (...) {
    return false;
  }
}

const usage::Hooks kHooks{&on_contexts, &on_device_used};
[[maybe_unused]] const bool kInstalled = (usage::install(&kHooks), true);

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
