// Everything the emulator keeps per thread, in one object reached through one
// initial-exec TLS pointer: a hot call touches thread-local state without
// __tls_get_addr (libcuda.so.1 is a shared library, often dlopen'ed; the pointer costs
// 8 bytes of static TLS, well within what glibc reserves for dlopen).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim {

class Context;
class Event;
class Stream;
namespace mem {
class Pool;
struct Range;
}

struct ThreadState {
  // Why the last failing call on this thread failed (errc.cpp; whether this call set it is
  // t_why_set there, so that every call can clear it with one store).
  Errc why_e = Errc::success;
  std::string why_msg;

  // The context stack, and this thread's per-thread default streams by context id.
  std::vector<void*> stack;
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> per_thread;

  // Caches of validated handles. Each is trusted only while the registry epoch it was
  // filled under is unchanged (any destroy, deactivation or reset bumps it), and holds a
  // reference so the object outlives the call that uses it.
  void* ctx_handle = nullptr;
  uint64_t ctx_epoch = 0;
  std::shared_ptr<Context> ctx;
  struct StreamSlot {
    const void* h = nullptr;
    uint64_t stream_epoch = 0, ctx_epoch = 0;
    std::shared_ptr<Stream> s;
  };
  StreamSlot streams[4];
  unsigned next_slot = 0, last_slot = 0;
  struct EventSlot {  // the same for events (api_stream.cpp), under the events' epoch
    const void* h = nullptr;
    uint64_t epoch = 0;
    std::shared_ptr<Event> e;
  };
  EventSlot events[2];
  unsigned last_event = 0;
  uint64_t pt_ctx_id = 0;  // per-thread default stream of that context
  Stream* pt_stream = nullptr;
  uint64_t range_epoch = 0;  // the address range last found (frees, copies)
  std::shared_ptr<mem::Range> range;
  int pool_dev = -1;  // current pool of a device (pool.cpp)
  uint64_t pool_epoch = 0;
  std::shared_ptr<mem::Pool> pool;

  // A host function (cuLaunchHostFunc, cuStreamAddCallback) is running on this thread, a
  // stream's worker: synchronizing calls made from it would wait for themselves.
  bool in_host_fn = false;

  // The runtime's per-thread state (rt_state.cpp).
  int device = 0;
  Errc last_error = Errc::success;
};

extern __thread ThreadState* t_state __attribute__((tls_model("initial-exec")));
ThreadState& thread_state_slow();
inline ThreadState& ts() {
  ThreadState* t = t_state;
  return __builtin_expect(t != nullptr, 1) ? *t : thread_state_slow();
}

}  // namespace cuda_shim
