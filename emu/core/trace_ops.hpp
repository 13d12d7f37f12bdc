// Stream operations as the trace sees them (CUDA_SHIM_TRACE=file.json / .jsonl / -). Streams call
// these hooks; the abi layer (abi/driver_trace_ops.cpp) implements them and registers them while
// a JSON trace is on, so core never includes abi. Null hooks (tracing off or to the readable
// form): each stream operation pays one relaxed load and a branch.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>

namespace cuda_shim {

class Stream;

namespace trace_ops {

struct Hooks {
  // In the enqueuing thread, before the operation can run and outside every stream lock:
  // records which call enqueued it. Returns a token handed back to ran().
  uint64_t (*enqueued)(const Stream& s);
  // Operation `seq` of `s` ran from t0 to t1 (now_ns()); called before its completion is
  // published, with no stream lock held, so the stream's operations are reported in order.
  void (*ran)(const Stream& s, uint64_t seq, uint64_t token, int64_t t0, int64_t t1);
};

// Relaxed: the hooks are a constant table, set once before the first stream exists.
inline std::atomic<const Hooks*> g_hooks{nullptr};
inline const Hooks* hooks() noexcept { return g_hooks.load(std::memory_order_relaxed); }

// The trace's clock: CLOCK_MONOTONIC is one clock for every process writing into one trace.
inline int64_t now_ns() noexcept {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace trace_ops
}  // namespace cuda_shim
