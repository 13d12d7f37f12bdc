#include "memory/managed.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/call_info.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/events.hpp"
#include "core/stream.hpp"
#include "memory/backing.hpp"
#include "memory/pool_backing.hpp"
#include "memory/strict.hpp"
#include "platform/signal_msg.hpp"

namespace cuda_shim::mem {

namespace {

constexpr size_t kChunk = size_t(2) << 20;  // measured: managed allocations start 2 MiB chunks
constexpr int kSlots = 4096;

// What the fault handler reads, lock-free: one slot per managed allocation of a device without
// concurrent managed access.
struct Slot {
  std::atomic<uintptr_t> base{0};  // 0: free
  std::atomic<size_t> view{0};
  std::atomic<size_t> bytes{0};
  std::atomic<int> closed{0};      // 1: PROT_NONE to host code now
  std::atomic<unsigned> flags{0};  // the association, for the report
  std::atomic<uint64_t> stream{0}; // SINGLE: its stream
  std::atomic<uint64_t> busy{0};   // the busy stream that closed it
  std::atomic<int> ordinal{0};
  // Policed only because strict mode is on (the device has concurrent access): SINGLE only.
  std::atomic<int> concurrent{0};
  // The calls that made the allocation and queued the busy stream's work (0: not numbered).
  std::atomic<const char*> alloc_api{nullptr}, busy_api{nullptr};
  std::atomic<uint64_t> alloc_id{0}, busy_id{0};
};
Slot g_slots[kSlots];

struct Violation {
  uintptr_t addr = 0, base = 0;
  size_t bytes = 0;
  unsigned flags = 0;
  uint64_t stream = 0, busy = 0;
  int ordinal = 0;
  bool concurrent = false;
  const char* alloc_api = nullptr;
  const char* busy_api = nullptr;
  uint64_t alloc_id = 0, busy_id = 0;
};
std::atomic<uint64_t> g_violations{0};
Violation g_last;                     // written by the fault handler only
std::atomic<uint64_t> g_last_seq{0};  // odd while g_last is being written

struct Tracker {
  std::mutex m;
  std::map<uintptr_t, std::shared_ptr<ManagedState>> all;  // by base
  std::map<const Stream*, std::pair<int, uint64_t>> busy;  // streams with queued work: (device, id)
  std::map<const Stream*, CallInfo> busy_call;             // ... and the call that queued it
};
Tracker& tr() {
  static auto* t = new Tracker();  // leaked: stream workers may outlive main()
  return *t;
}

__attribute__((tls_model("initial-exec"))) thread_local bool t_worker = false;

enum class FaultMode { report, quiet, abort_process };
FaultMode g_mode = FaultMode::report;
struct sigaction g_old_segv {};
std::once_flag g_handler_once;

const char* attach_name(unsigned f) {
  switch (f) {
    case CU_MEM_ATTACH_GLOBAL: return "GLOBAL";
    case CU_MEM_ATTACH_HOST: return "HOST";
    case CU_MEM_ATTACH_SINGLE: return "SINGLE";
  }
  return "?";
}

// Async-signal-safe message building (the fault handler reports with it).
using Msg = platform::SignalMsg<768>;

void describe(Msg& m, const Violation& v) {
  m.s("host code touched managed memory at ");
  m.x(v.addr);
  m.s(" (the ");
  m.d(v.bytes);
  m.s("-byte allocation at ");
  m.x(v.base);
  if (v.alloc_api) {
    m.s(" made by ");
    m.call(v.alloc_api, v.alloc_id);
  }
  m.s(", attached ");
  m.s(attach_name(v.flags));
  if (v.flags == CU_MEM_ATTACH_SINGLE) {
    m.s(" to stream id ");
    m.d(v.stream);
  }
  m.s(") while stream id ");
  m.d(v.busy);
  m.s(" of device ");
  m.d(static_cast<uint64_t>(v.ordinal));
  m.s(" was running work");
  if (v.busy_api) {
    m.s(" (queued by ");
    m.call(v.busy_api, v.busy_id);
    m.s(")");
  }
  if (v.concurrent) {  // strict mode: the access goes through on such a device, racing the stream
    m.s(". Device ");
    m.d(static_cast<uint64_t>(v.ordinal));
    m.s(" has concurrent managed access, so the access goes through, but memory attached SINGLE to a stream "
        "belongs to that stream while it runs work: host code racing it reads or writes what the work may be "
        "changing. Synchronize the stream first, or attach the memory to the host (cuStreamAttachMemAsync with "
        "CU_MEM_ATTACH_HOST).");
    return;
  }
  m.s(". Device ");
  m.d(static_cast<uint64_t>(v.ordinal));
  m.s(" has CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0: while it runs work, managed memory it may "
      "use (attached GLOBAL, or SINGLE to a busy stream) belongs to it, and a real GPU's process dies of "
      "SIGSEGV here. Synchronize first, or attach the memory to the host or to an idle stream "
      "(cuStreamAttachMemAsync with CU_MEM_ATTACH_HOST or CU_MEM_ATTACH_SINGLE).");
}

void open_slot(Slot& s) {
  s.closed.store(0);
  ::mprotect(reinterpret_cast<void*>(s.base.load()), s.view.load(), PROT_READ | PROT_WRITE);
}

void on_fault(int sig, siginfo_t* si, void* uc) {
  const auto a = reinterpret_cast<uintptr_t>(si->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t b = s.base.load(std::memory_order_acquire);
    if (!b || a < b || a - b >= s.view.load()) continue;
    // A stream's worker runs host functions, which stand in for kernels: the device's access.
    // A slot opened meanwhile (the stream went idle) is a race lost, not a violation.
    if (t_worker || !s.closed.load()) {
      open_slot(s);
      return;
    }
    Violation v;
    v.addr = a;
    v.base = b;
    v.bytes = s.bytes.load();
    v.flags = s.flags.load();
    v.stream = s.stream.load();
    v.busy = s.busy.load();
    v.ordinal = s.ordinal.load();
    v.concurrent = s.concurrent.load() != 0;
    v.alloc_api = s.alloc_api.load();
    v.alloc_id = s.alloc_id.load();
    v.busy_api = s.busy_api.load();
    v.busy_id = s.busy_id.load();
    g_last_seq.fetch_add(1);
    g_last = v;
    g_last_seq.fetch_add(1);
    g_violations.fetch_add(1);
    // Strict mode reports it as a finding (and stops at it in abort mode).
    const int strict_mode = strict::signal_mode();
    if (strict_mode) strict::count_signal_finding();
    if (strict_mode || g_mode != FaultMode::quiet) {
      Msg m;
      m.s(strict_mode ? "cuda-shim strict: " : "cuda-shim: ");
      describe(m, v);
      m.s("\n");
      ssize_t w = ::write(2, m.b, m.n);
      (void)w;
    }
    if (g_mode == FaultMode::abort_process || strict_mode == 2) {
      ::signal(SIGSEGV, SIG_DFL);  // the access runs again and the process dies, as on a real GPU
      return;
    }
    open_slot(s);  // teaching mode: reported once, then the program goes on
    return;
  }
  // Strict mode's freed pool pages (strict_fault.cpp).
  if (strict::signal_mode() && strict::on_host_fault(a)) return;
  // A pool moving into its own memfd (pool_migrate.cpp): the write runs again after the move.
  if (pool_move_fault(a)) return;
  // Not managed memory: whoever handled SIGSEGV before us, or the default action.
  if ((g_old_segv.sa_flags & SA_SIGINFO) && g_old_segv.sa_sigaction) {
    g_old_segv.sa_sigaction(sig, si, uc);
  } else if (g_old_segv.sa_handler != SIG_DFL && g_old_segv.sa_handler != SIG_IGN && g_old_segv.sa_handler) {
    g_old_segv.sa_handler(sig);
  } else {
    ::signal(SIGSEGV, SIG_DFL);  // runs again and takes the default action
  }
}

// Puts on_fault first in line for SIGSEGV, chaining to whoever is there now. Called whenever
// memory is closed: a program (or a test framework) may have installed its own handler since.
void ensure_handler() {
  struct sigaction cur {};
  if (::sigaction(SIGSEGV, nullptr, &cur) != 0) return;
  if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, &g_old_segv);
}

void install_handler() {
  std::call_once(g_handler_once, [] {
    // Streams tell managed memory when they turn busy and idle from the first managed allocation
    // on (before it they pay one load and a branch per operation).
    ev::op_queued.listen(&on_stream_busy);
    ev::worker_op_done.listen(&on_stream_idle);
    ev::stream_worker_started.listen(&set_stream_worker_thread);
    if (const char* e = std::getenv("CUDA_SHIM_MANAGED_FAULT")) {
      if (std::strcmp(e, "quiet") == 0) g_mode = FaultMode::quiet;
      else if (std::strcmp(e, "abort") == 0) g_mode = FaultMode::abort_process;
    }
  });
}

bool concurrent_access(int ordinal) {
  auto& d = Driver::get();
  return ordinal < 0 || ordinal >= d.device_count() || d.dev(ordinal).attr[89] != 0;
}

// Opens or closes one allocation to host code; with tr().m held.
void apply(ManagedState& st) {
  if (st.slot < 0) return;
  Slot& s = g_slots[st.slot];
  const Stream* by = nullptr;
  if (st.flags == CU_MEM_ATTACH_GLOBAL) {
    // With concurrent access (policed for strict mode only) GLOBAL memory is the host's too.
    for (auto& [p, b] : tr().busy)
      if (b.first == st.ordinal && !s.concurrent.load()) {
        by = p;
        break;
      }
  } else if (st.flags == CU_MEM_ATTACH_SINGLE) {
    for (auto& [p, b] : tr().busy)
      if (b.second == st.stream_id) by = p;
  }
  const uint64_t blocker = by ? tr().busy[by].second : 0;
  if (by) {
    const CallInfo c = tr().busy_call[by];
    s.busy_api.store(c.api);
    s.busy_id.store(c.id);
  }
  s.flags.store(st.flags);
  s.stream.store(st.stream_id);
  s.busy.store(blocker);
  const int want = blocker != 0;
  if (s.closed.load() == want) return;
  if (want) ensure_handler();
  s.closed.store(want);
  ::mprotect(reinterpret_cast<void*>(st.base), st.view, want ? PROT_NONE : PROT_READ | PROT_WRITE);
}

void apply_all() {
  for (auto& [b, st] : tr().all) apply(*st);
}

}  // namespace

void set_stream_worker_thread() { t_worker = true; }

void ensure_fault_handler() { ensure_handler(); }

Errc alloc_managed(const std::shared_ptr<Context>& ctx, size_t bytes, unsigned flags, const char* api,
                   CUdeviceptr& out) {
  const size_t ps = page_size();
  const size_t view = (bytes + ps - 1) / ps * ps;
  Errc err = Errc::success;
  auto b = Backing::carve(ArenaClass::managed, bytes, kChunk, api, err);
  if (!b) return err;
  // Managed memory is the host's too: its view is read-write (the device view is PROT_NONE).
  if (::mprotect(reinterpret_cast<void*>(b->user_address()), view, PROT_READ | PROT_WRITE) != 0)
    return fail(Errc::out_of_memory, "{}: cannot open {} bytes of managed memory to the host ({})", api, bytes,
                std::strerror(errno));
  auto st = std::make_shared<ManagedState>(bytes);
  st->base = b->user_address();
  st->bytes = bytes;
  st->view = view;
  st->default_flags = st->flags = flags;
  st->ordinal = ctx->ordinal();
  auto r = std::make_shared<Range>();
  r->kind = Kind::managed;
  r->ordinal = ctx->ordinal();
  r->ctx = ctx;
  r->base = b->user_address();
  r->size = bytes;
  r->host = b->shadow();
  r->sync_memops.store(true);  // measured: managed memory reports SYNC_MEMOPS
  r->buffer_id = AddressSpace::get().next_buffer_id();
  r->block_id = AddressSpace::get().next_buffer_id();  // measured: a managed block has an id of its own
  r->backing = std::move(b);
  r->managed = st;
  const CallInfo made = current_call();
  // Strict mode polices devices with concurrent access too: memory attached SINGLE to a busy stream.
  const bool concurrent = concurrent_access(st->ordinal);
  {
    std::lock_guard lk(tr().m);
    tr().all[st->base] = st;
    if (!concurrent || (strict::maybe() && strict::on())) {
      for (int i = 0; i < kSlots; ++i)
        if (g_slots[i].base.load() == 0) {
          Slot& s = g_slots[i];
          s.view.store(view);
          s.bytes.store(bytes);
          s.ordinal.store(st->ordinal);
          s.concurrent.store(concurrent ? 1 : 0);
          s.alloc_api.store(made.api);
          s.alloc_id.store(made.id);
          s.busy_api.store(nullptr);
          s.closed.store(0);
          s.base.store(st->base, std::memory_order_release);
          st->slot = i;
          break;
        }
      // More than kSlots allocations on such a device: the rest are not policed (documented).
      install_handler();  // and the stream hooks
      apply(*st);
    }
  }
  if (!AddressSpace::get().insert(r))
    return fail(Errc::out_of_memory, "{}: the new mapping at {:#x} overlaps a range the driver already knows", api,
                r->base);
  out = r->base;
  return Errc::success;
}

void forget_managed(const ManagedState& st) noexcept {
  std::lock_guard lk(tr().m);
  auto it = tr().all.find(st.base);
  if (it != tr().all.end() && it->second.get() == &st) tr().all.erase(it);
  if (st.slot >= 0) g_slots[st.slot].base.store(0, std::memory_order_release);
}

Errc managed_range(uintptr_t p, size_t n, const char* api, const char* what, RangePtr& out) {
  RangePtr r = AddressSpace::get().find(p);
  if (!r || r->kind != Kind::managed)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is {}, not managed memory (cuMemAllocManaged)", api, what, p,
                r ? kind_name(r->kind) : "no allocation the driver knows");
  if (n == 0) return fail(Errc::invalid_value, "{}: the length is 0", api);
  if (!r->contains(p, n))
    return fail(Errc::invalid_value, "{}: [{:#x}, +{}) runs past the end of the {}-byte managed allocation at {:#x}",
                api, p, n, r->size, r->base);
  out = std::move(r);
  return Errc::success;
}

void set_attachment(const RangePtr& r, unsigned flags, const std::shared_ptr<Stream>& s) {
  if (!r || !r->managed) return;
  std::lock_guard lk(tr().m);
  ManagedState& st = *r->managed;
  st.flags = flags;
  st.stream = flags == CU_MEM_ATTACH_SINGLE ? s : nullptr;
  st.stream_id = flags == CU_MEM_ATTACH_SINGLE && s ? s->id() : 0;
  apply(st);
}

void stream_destroyed(const std::shared_ptr<Stream>& s) {
  const uint64_t id = s->id();
  {
    std::lock_guard lk(tr().m);
    bool any = false;
    for (auto& [b, st] : tr().all)
      if (st->flags == CU_MEM_ATTACH_SINGLE && st->stream_id == id) any = true;
    if (!any) return;
  }
  // In stream order: memory attached to the stream reverts once its work has completed.
  s->enqueue([id] {
    std::lock_guard lk(tr().m);
    for (auto& [b, st] : tr().all)
      if (st->flags == CU_MEM_ATTACH_SINGLE && st->stream_id == id) {
        st->flags = st->default_flags;
        st->stream.reset();
        st->stream_id = 0;
        apply(*st);
      }
  }, {}, true);
}

Errc attachment(uintptr_t p, unsigned& flags, uint64_t& stream_id) {
  RangePtr r;
  TRY(managed_range(p, 1, "cuShimGetManagedAttachment", "ptr", r));
  attachment_of(*r, flags, stream_id);
  return Errc::success;
}

void attachment_of(const Range& r, unsigned& flags, uint64_t& stream_id) {
  std::lock_guard lk(tr().m);
  flags = r.managed ? r.managed->flags : unsigned{CU_MEM_ATTACH_GLOBAL};
  stream_id = r.managed ? r.managed->stream_id : 0;
}

void on_stream_busy(const Stream& s) {
  std::lock_guard lk(tr().m);
  if (tr().busy.count(&s)) return;
  tr().busy[&s] = {s.ctx() ? s.ctx()->ordinal() : 0, s.id()};
  tr().busy_call[&s] = current_call();  // the enqueuing call's thread runs this
  apply_all();
}

void on_stream_idle(const Stream& s, uint64_t seq) {
  std::lock_guard lk(tr().m);
  if (s.submitted() != seq) return;  // more work behind this one: still busy
  if (!tr().busy.erase(&s)) return;
  tr().busy_call.erase(&s);
  apply_all();
}

uint64_t managed_violations() noexcept { return g_violations.load(); }

std::string last_managed_violation() {
  if (g_violations.load() == 0) return {};
  Violation v;
  for (;;) {
    uint64_t a = g_last_seq.load();
    if (a & 1) continue;
    v = g_last;
    if (g_last_seq.load() == a) break;
  }
  Msg m;
  describe(m, v);
  return std::string(m.b, m.n);
}

}  // namespace cuda_shim::mem
