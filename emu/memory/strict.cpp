// Strict mode's books (strict.hpp): live pool allocations with their last uses per stream, the
// ranges freed in stream order and not yet handed out again, exported pools; and the findings
// made from them. Lock order: this file's lock may be taken with a pool's lock held (the
// allocator calls in under it, so that no other thread can reuse a range before it is on
// record), never the other way round: nothing here takes a pool's lock.
#include "memory/strict.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/call_info.hpp"
#include "core/config.hpp"
#include "core/stream.hpp"
#include "memory/copy.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::mem::strict {

std::atomic<uint8_t> g_maybe{1};

namespace {

std::atomic<int> g_mode_now{0};  // the mode once read (for the signal handler)
std::atomic<uint64_t> g_findings{0};
pid_t g_pid = 0;  // the process whose books these are (a forked child's exit reports nothing)

void leak_report();

int mode() noexcept {
  static const int m = [] {
    int v = 0;
    try {
      v = Config::get().strict;
    } catch (...) {
    }
    g_mode_now.store(v, std::memory_order_relaxed);
    if (v == 0) {
      g_maybe.store(0, std::memory_order_relaxed);
    } else {
      g_pid = ::getpid();
      // Registered after the driver's state exists, so it runs before that state goes.
      std::atexit(leak_report);
    }
    return v;
  }();
  return m;
}

struct CallRef {
  const char* api = nullptr;
  uint64_t id = 0;
};
CallRef now() noexcept {
  CallInfo c = current_call();
  return {c.api, c.id};
}
std::string name(const CallRef& c) {
  if (!c.api) return "a call made outside the API (emulator-internal)";
  return fmt::format("{} #{}", c.api, c.id);
}

struct StreamRef {
  std::weak_ptr<Stream> s;
  void* handle = nullptr;
  StreamKind kind = StreamKind::user;
  uint64_t id = 0;
};
StreamRef ref(Stream& s) {
  return {s.weak_from_this(), s.handle(), s.kind(), s.id()};
}
std::string name(const StreamRef& s) {
  if (s.handle) return fmt::format("stream {:#x}", reinterpret_cast<uintptr_t>(s.handle));
  if (s.kind == StreamKind::legacy) return "the legacy default stream";
  if (s.kind == StreamKind::per_thread) return "the per-thread default stream";
  return fmt::format("stream id {}", s.id);
}

// A position of s just after what the calling thread queued on it: an event recorded later
// comes after it, and a host synchronization that covers it is recorded (a watched position).
// (Where Stream::mark takes `watch`, observations are recorded only for watched positions.)
template <class S>
uint64_t position(S& s) {
  if constexpr (requires { s.mark(true); })
    return s.mark(/*watch=*/true);
  else
    return s.mark();
}

// Work queued on one stream that touched an allocation, at position seq.
struct Use {
  StreamRef s;
  uint64_t seq = 0;
  CallRef call;
};
constexpr int kUses = 8;  // streams remembered per allocation (the oldest goes beyond)

struct Live {
  const Pool* pool = nullptr;
  size_t bytes = 0, span = 0;
  CallRef made;
  bool imported = false;
  int nuses = 0;
  Use uses[kUses];
};

struct Freed {
  const Pool* pool = nullptr;
  uintptr_t end = 0;
  uintptr_t base = 0;  // the allocation's start (a piece left by a later allocation keeps it)
  size_t bytes = 0;
  char* shadow = nullptr;  // the emulator's view of the record's first byte
  CallRef made, freed;
  StreamRef stream;
  uint64_t gen = 0;
  bool closable = false;  // host-accessible pool with its own user mapping: pages may close
  bool done = false;      // poisoned and closed
  Closed closed;
};

struct Books {
  std::mutex m;
  std::map<uintptr_t, Live> live;    // by base
  std::map<uintptr_t, Freed> freed;  // by first byte
  std::map<const Pool*, CallRef> exported;
  uint64_t gen = 0;
};
Books& books() {
  static auto* b = new Books();  // leaked: stream workers and the exit report may outlive statics
  return *b;
}

FreedInfo info_of(const Freed& f) {
  return {f.base, f.bytes, f.pool ? uint64_t(f.pool->handle()) : 0, f.made.api, f.made.id, f.freed.api, f.freed.id};
}

// Poisons and closes record f (at key `at`), once its free completed in stream order.
void complete(uintptr_t at, Freed& f) {
  if (f.done) return;
  f.done = true;
  f.closed = poison_and_close(f.shadow, at, f.end - at, f.closable, info_of(f));
}

// [lo, hi) is handed out again: freed records overlapping it go, pieces outside it stay.
void carve(Books& b, const Pool* pool, uintptr_t lo, uintptr_t hi) {
  std::vector<uintptr_t> hit;
  auto it = b.freed.upper_bound(lo);
  if (it != b.freed.begin()) --it;
  for (; it != b.freed.end() && it->first < hi; ++it)
    if (it->second.end > lo && it->second.pool == pool) hit.push_back(it->first);
  for (uintptr_t start : hit) {
    auto at = b.freed.find(start);
    Freed f = at->second;
    reopen(f.closed);
    b.freed.erase(at);
    auto keep = [&](uintptr_t a, uintptr_t e) {
      Freed piece = f;
      piece.end = e;
      piece.shadow = f.shadow + (a - start);
      piece.closed = {};
      auto [k, ok] = b.freed.emplace(a, piece);
      if (ok && piece.done)  // closed again, without poisoning twice
        k->second.closed = poison_and_close(nullptr, a, e - a, piece.closable, info_of(piece));
    };
    if (start < lo) keep(start, lo);
    if (f.end > hi) keep(hi, f.end);
  }
}

Live* live_at(Books& b, uintptr_t p) {
  auto it = b.live.upper_bound(p);
  if (it == b.live.begin()) return nullptr;
  --it;
  return p - it->first < std::max<size_t>(it->second.span, 1) ? &it->second : nullptr;
}

void note(Books& b, uintptr_t p, Stream& s, uint64_t seq, const CallRef& call) {
  Live* l = live_at(b, p);
  if (!l) return;
  for (int i = 0; i < l->nuses; ++i)
    if (l->uses[i].s.s.lock().get() == &s) {
      l->uses[i].seq = std::max(l->uses[i].seq, seq);
      l->uses[i].call = call;
      return;
    }
  if (l->nuses == kUses) {
    for (int i = 1; i < kUses; ++i) l->uses[i - 1] = l->uses[i];
    --l->nuses;
  }
  l->uses[l->nuses++] = Use{ref(s), seq, call};
}

// A pool allocation a copy or fill side touches: its user address.
bool pool_address(const Side& side, uintptr_t& out) {
  if (!side.r || side.r->kind != Kind::pool || !side.p) return false;
  out = side.r->base + static_cast<uintptr_t>(side.p - side.r->host);
  return true;
}

void leak_report() {
  if (::getpid() != g_pid) return;
  Books& b = books();
  std::unique_lock lk(b.m);
  for (auto& [p, l] : b.live) {
    if (l.imported)
      finding(fmt::format("leak: the pointer {:#x} ({} bytes) that {} imported into {} is still live at exit; free it "
                          "(cuMemFreeAsync / cudaFreeAsync) when done, so that the exporter's memory can go", p,
                          l.bytes, name(l.made), l.pool->describe()));
    else
      finding(fmt::format("leak: the {}-byte allocation at {:#x} of {}, made by {}, is still live at exit; free it "
                          "(cuMemFreeAsync / cudaFreeAsync) before the program ends", l.bytes, p,
                          l.pool->describe(), name(l.made)));
  }
  for (auto& [pool, call] : b.exported)
    finding(fmt::format("leak: {} was exported by {} and is still alive at exit; destroy it (cuMemPoolDestroy) once "
                        "its importers are done with it", pool->describe(), name(call)));
}

}  // namespace

bool on() noexcept { return mode() != 0; }
bool abort_mode() noexcept { return mode() == 2; }

void finding(const std::string& text) noexcept {
  g_findings.fetch_add(1, std::memory_order_relaxed);
  std::string line = "cuda-shim strict: " + text + "\n";
  ssize_t w = ::write(2, line.data(), line.size());
  (void)w;
  if (abort_mode()) std::abort();
}
uint64_t findings() noexcept { return g_findings.load(std::memory_order_relaxed); }
void count_signal_finding() noexcept { g_findings.fetch_add(1, std::memory_order_relaxed); }
int signal_mode() noexcept { return g_mode_now.load(std::memory_order_relaxed); }

bool separate_shadow() noexcept { return on(); }

void on_alloc(const Pool& pool, uintptr_t p, size_t bytes, size_t span, Stream& s) noexcept {
  if (!on()) return;
  try {
    const CallRef call = now();
    // The allocation is an operation of its stream: a free elsewhere must be ordered after it.
    const uint64_t seq = position(s);
    Books& b = books();
    std::lock_guard lk(b.m);
    carve(b, &pool, p, p + span);
    Live& l = b.live[p] = Live{&pool, bytes, span, call};
    l.uses[l.nuses++] = Use{ref(s), seq, call};
  } catch (...) {
  }
}

void on_free(const Pool& pool, uintptr_t p, char* shadow, size_t span, Stream& s, uint64_t seq) noexcept {
  if (!on()) return;
  try {
    const CallRef call = now();
    Books& b = books();
    std::unique_lock lk(b.m);
    Freed f;
    f.pool = &pool;
    f.base = p;
    f.end = p + span;
    f.shadow = shadow;
    f.freed = call;
    f.stream = ref(s);
    f.closable = !pool.device_located() && !pool.imported() && separate_shadow();
    if (auto it = b.live.find(p); it != b.live.end()) {
      const Live& l = it->second;
      f.bytes = l.bytes;
      f.made = l.made;
      for (int i = 0; i < l.nuses; ++i) {
        const Use& u = l.uses[i];
        auto y = u.s.s.lock();
        // A stream gone is not judged; the same stream, a wait on an event recorded after the
        // use (or the legacy stream's implicit ordering), or a host synchronization orders it.
        if (!y || y.get() == &s || s.depends_on(*y, u.seq) || y->observed() >= u.seq) continue;
        finding(fmt::format(
            "{} frees the {}-byte allocation at {:#x} of {} on {}, but {} used it on {} and nothing orders the free "
            "after that work: no cuStreamWaitEvent on an event recorded after it, no synchronization. The free may "
            "take effect, and the memory go to another allocation, while that work still runs. Make the freeing "
            "stream wait for the using one (cudaEventRecord + cudaStreamWaitEvent), or free on the stream that used "
            "it", name(call), l.bytes, p, pool.describe(), name(f.stream), name(u.call), name(u.s)));
        break;  // one finding per free
      }
      b.live.erase(it);
    }
    f.gen = ++b.gen;
    b.freed.erase(p);
    auto [at, ok] = b.freed.emplace(p, f);
    if (s.completed() >= seq) {
      complete(p, at->second);
      return;
    }
    // Poisoned and closed when the free takes effect in stream order, if still on record then.
    const uint64_t gen = f.gen;
    lk.unlock();
    s.enqueue([p, gen] {
      Books& bb = books();
      std::lock_guard l2(bb.m);
      if (auto it = bb.freed.find(p); it != bb.freed.end() && it->second.gen == gen) complete(p, it->second);
    }, {}, true);
  } catch (...) {
  }
}

void on_free_now(uintptr_t p) noexcept {
  if (!on()) return;
  Books& b = books();
  std::lock_guard lk(b.m);
  b.live.erase(p);
}

void on_import(const Pool& pool, uintptr_t p, size_t bytes) noexcept {
  if (!on()) return;
  try {
    const CallRef call = now();
    Books& b = books();
    std::lock_guard lk(b.m);
    b.live[p] = Live{&pool, bytes, bytes, call, /*imported=*/true};
  } catch (...) {
  }
}

void on_export(const Pool& pool) noexcept {
  if (!on()) return;
  try {
    const CallRef call = now();
    Books& b = books();
    std::lock_guard lk(b.m);
    b.exported.emplace(&pool, call);
  } catch (...) {
  }
}

void on_destroy(const Pool& pool) noexcept {
  if (!on()) return;
  Books& b = books();
  std::lock_guard lk(b.m);
  b.exported.erase(&pool);
}

void on_pool_gone(const Pool& pool) noexcept {
  if (!on()) return;
  Books& b = books();
  std::lock_guard lk(b.m);
  b.exported.erase(&pool);
  for (auto it = b.live.begin(); it != b.live.end();) it = it->second.pool == &pool ? b.live.erase(it) : std::next(it);
  for (auto it = b.freed.begin(); it != b.freed.end();) {
    if (it->second.pool != &pool) {
      ++it;
      continue;
    }
    reopen(it->second.closed);  // the window is about to be unmapped; its slot goes
    it = b.freed.erase(it);
  }
}

void on_dead_access(const Pool& pool, uintptr_t p, const char* what) noexcept {
  if (!on()) return;
  try {
    const CallRef call = now();
    Books& b = books();
    std::unique_lock lk(b.m);
    auto it = b.freed.upper_bound(p);
    if (it == b.freed.begin()) return;
    --it;
    const Freed& f = it->second;
    if (f.pool != &pool || p >= f.end) return;
    const bool reads = what && what[0] == 's';  // srcDevice, srcHost (+ offsets)
    finding(fmt::format(
        "{} {} {} = {:#x}, {} bytes into the {}-byte allocation at {:#x} of {} that {} freed on {} (it was allocated "
        "by {}); the range has not been allocated again. Memory freed in stream order must not be touched by work "
        "enqueued after the free: allocate it again, or move the free after the last use", name(call),
        reads ? "reads" : "writes", what ? what : "a pointer", p, p - f.base, f.bytes, f.base, pool.describe(),
        name(f.freed), name(f.stream), name(f.made)));
  } catch (...) {
  }
}

void on_copy(const CopyOp& op, Stream& s) noexcept {
  if (!on()) return;
  try {
    uintptr_t d = 0, r = 0;
    const bool hd = pool_address(op.dst, d), hr = pool_address(op.src, r);
    if (!hd && !hr) return;
    const CallRef call = now();
    const uint64_t seq = position(s);
    Books& b = books();
    std::lock_guard lk(b.m);
    if (hd) note(b, d, s, seq, call);
    if (hr) note(b, r, s, seq, call);
  } catch (...) {
  }
}

void on_fill(const FillOp& op, Stream& s) noexcept {
  if (!on()) return;
  try {
    uintptr_t d = 0;
    if (!pool_address(op.dst, d)) return;
    const CallRef call = now();
    const uint64_t seq = position(s);
    Books& b = books();
    std::lock_guard lk(b.m);
    note(b, d, s, seq, call);
  } catch (...) {
  }
}

}  // namespace cuda_shim::mem::strict
