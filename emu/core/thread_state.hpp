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
  // ---- Hot: read by every call that resolves its context, stream or event (context.hpp's inline
  // hit paths), kept together at the front so that a call touches one or two cache lines.

  // The current context as last validated: trusted while the top of `stack` is still ctx_handle
  // and the contexts' epoch is still ctx_epoch (any destroy, deactivation or reset bumps it).
  // `ctx` holds a reference so the object outlives the calls that use it; ctx_ok: it was live and
  // active then (a filled cache also means cuInit has run: no context exists before it).
  void* ctx_handle = nullptr;
  uint64_t ctx_epoch = 0;
  std::shared_ptr<Context> ctx;
  // The context stack (handles, validated on use).
  std::vector<void*> stack;
  bool ctx_ok = false;
  // A host function (cuLaunchHostFunc, cuStreamAddCallback) is running on this thread, a
  // stream's worker: synchronizing calls made from it would wait for themselves.
  bool in_host_fn = false;
  unsigned last_slot = 0, last_event = 0, next_slot = 0;
  // Caches of validated stream and event handles, trusted under the same rule (the stream's
  // context epoch too: a stream dies with its context).
  struct StreamSlot {
    const void* h = nullptr;
    uint64_t stream_epoch = 0, ctx_epoch = 0;
    std::shared_ptr<Stream> s;
  };
  StreamSlot streams[4];
  struct EventSlot {  // under the events' epoch
    const void* h = nullptr;
    uint64_t epoch = 0;
    std::shared_ptr<Event> e;
  };
  EventSlot events[2];
  uint64_t pt_ctx_id = 0;  // per-thread default stream of that context
  Stream* pt_stream = nullptr;

  // ---- Colder.
  // Why the last failing call on this thread failed (errc.cpp; whether this call set it is
  // t_why_set there, so that every call can clear it with one store).
  Errc why_e = Errc::success;
  std::string why_msg;
  // This thread's per-thread default streams by context id.
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> per_thread;
  uint64_t range_epoch = 0;  // the address range last found (frees, copies)
  std::shared_ptr<void> range;  // a mem::Range (address_space.cpp): typed there, so core needs no memory header
  int pool_dev = -1;  // current pool of a device (pool.cpp)
  uint64_t pool_epoch = 0;
  std::shared_ptr<void> pool;  // a mem::Pool (pool_table.cpp)

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
