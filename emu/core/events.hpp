// How a lower room tells higher ones what happened, and asks them what only they know, without
// including them: typed events with any number of listeners, and typed queries with one provider.
// A higher room registers when the library loads (a namespace-scope `ev::Registration`, a
// static initializer), or when a feature is switched on (the trace, the first managed allocation:
// `channel.listen(fn)`, the same call underneath). docs/architecture.md has the table of who
// listens to what.
//
// Every channel and query is a constant-initialized global (`constinit`): registering from any
// translation unit's static initializer is safe whatever the order in which those run, because
// nothing here needs a constructor to have run first.
//
// Hot paths pay one load and one branch while nobody listens: a channel's "someone listens" bit
// lives in a word of flags (`Flags`) that only registrations write, so the load stays in every
// core's cache. Channels a hot path checks together (the stream operations) share one word, read
// once. The list of listeners is only read after the bit is seen.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>

namespace cuda_shim {

class Context;
class Stream;
namespace module {
class Module;
}

namespace ev {

// Listeners of one channel at most: raise it when a registration aborts with its message.
inline constexpr uint32_t kMaxListeners = 8;

// Where a listener runs among a channel's listeners: lower first, then in registration order.
// Registration order across translation units is not defined (static initializers), so a
// listener that must run before or after another says so with its order; equal orders must not
// care about each other.
enum Order : int {
  kFirst = -100,  // the client's own state goes first (context-local storage destructors)
  kNormal = 0,
  kLast = 100,
};

// One word of "someone listens" bits. alignas: a word of its own, away from written data.
struct alignas(64) Flags {
  std::atomic<uint32_t> bits{0};
  // Acquire is a plain load on x86 and pairs with the registration that set the bit.
  uint32_t load() const noexcept { return bits.load(std::memory_order_acquire); }
};

// Serialises registrations (a few dozen, at load time or when a feature is switched on).
inline constinit std::mutex g_register_m;

// Every list of listeners ever made, chained under g_register_m: lists are never freed (an emit
// may still be reading a replaced one), and kept reachable so leak checkers do not report them.
struct Kept {
  const Kept* next = nullptr;
};
inline constinit const Kept* g_kept = nullptr;

[[noreturn]] void too_many_listeners() noexcept;  // events.cpp: says which limit, then aborts

template <class Sig>
class Channel;

// An event with arguments A...: every listener is called, in Order, in the emitting thread.
template <class... A>
class Channel<void(A...)> {
 public:
  using Fn = void (*)(A...);
  // `demand`: the bit is set by want(), not by listen(): a listener that has work only at times
  // (pools waiting for a host synchronization) keeps the emitter's path to one load otherwise.
  enum class Mode { listeners, demand };
  constexpr Channel(Flags& flags, uint32_t bit, Mode mode = Mode::listeners) noexcept
      : flags_(&flags), bit_(bit), mode_(mode) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Is the event to be emitted? One load; the emitter may skip preparing its arguments.
  bool on() const noexcept { return (flags_->load() & bit_) != 0; }
  uint32_t bit() const noexcept { return bit_; }
  void emit(A... a) const {
    if (on()) [[unlikely]]
      call(a...);
  }
  // Calls every listener (the caller has seen on()).
  void call(A... a) const {
    if (const List* l = list_.load(std::memory_order_acquire))
      for (uint32_t i = 0; i < l->n; ++i) l->fn[i](a...);
  }

  // Adds a listener. The list is copied, never changed in place, so an emit running meanwhile
  // sees the old list or the new one whole; old lists are kept (a few, never freed: g_kept).
  void listen(Fn f, int order = kNormal) noexcept {
    {
      std::lock_guard lk(g_register_m);
      const List* old = list_.load(std::memory_order_relaxed);
      const uint32_t n = old ? old->n : 0;
      if (n == kMaxListeners) too_many_listeners();
      auto* l = new List{};
      uint32_t j = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (j == i && order < old->order[i]) l->put(j++, f, order);
        l->put(j++, old->fn[i], old->order[i]);
      }
      if (j == n) l->put(j++, f, order);
      l->n = j;
      l->next = g_kept;
      g_kept = l;
      list_.store(l, std::memory_order_release);
    }
    if (mode_ == Mode::listeners) flags_->bits.fetch_or(bit_, std::memory_order_release);
  }
  // Demand channels: emitted from now on (true) or no longer (false). One wanter per channel.
  void want(bool yes) noexcept {
    if (yes)
      flags_->bits.fetch_or(bit_, std::memory_order_release);
    else
      flags_->bits.fetch_and(~bit_, std::memory_order_release);
  }
  uint32_t listeners() const noexcept {
    const List* l = list_.load(std::memory_order_acquire);
    return l ? l->n : 0;
  }

 private:
  struct List : Kept {
    uint32_t n = 0;
    Fn fn[kMaxListeners] = {};
    int order[kMaxListeners] = {};
    void put(uint32_t i, Fn f, int o) {
      fn[i] = f;
      order[i] = o;
    }
  };
  Flags* flags_;
  uint32_t bit_;
  Mode mode_;
  std::atomic<const List*> list_{nullptr};
};

// What a lower room asks of a higher one: one provider, or `fallback`'s answer before it (or
// without it: a tool linking core alone). T is a table of function pointers (a struct), or a
// function type (then get() is the function).
template <class T>
class Query {
 public:
  constexpr explicit Query(const T* fallback) noexcept : p_(fallback) {}
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  const T& get() const noexcept { return *p_.load(std::memory_order_acquire); }
  void provide(const T* t) noexcept { p_.store(t, std::memory_order_release); }

 private:
  std::atomic<const T*> p_;
};

// The one way to register at load time, at namespace scope in the listening room:
//   [[maybe_unused]] const ev::Registration kOnTeardown{ev::context_teardown, &forget};
//   [[maybe_unused]] const ev::Registration kVmm{mem::vmm_queries, &kQueries};
struct Registration {
  template <class... A>
  Registration(Channel<void(A...)>& c, typename Channel<void(A...)>::Fn f, int order = kNormal) noexcept {
    c.listen(f, order);
  }
  template <class T>
  Registration(Query<T>& q, const std::type_identity_t<T>* t) noexcept {
    q.provide(t);
  }
};

// ---- the events of core (emitted by core, listened to by rooms above) ----------------------
// Words of flags: the stream operations' (read once per operation), the rest's.
inline constinit Flags g_stream_flags;
inline constinit Flags g_sync_flags;  // host_synchronised alone: its bit changes at run time
inline constinit Flags g_life_flags;

// cuInit succeeded (every time), outside any lock.
inline constinit Channel<void()> driver_initialised{g_life_flags, 1u << 0};
// A context became live: cuCtxCreate (before it returns), primary retain to 1 (under the device's
// primary lock).
inline constinit Channel<void(Context*)> context_created{g_life_flags, 1u << 1};
// A context is going (cuCtxDestroy, primary release to 0, reset), after its work finished: its
// streams, modules and memory are still there and it is still current where it was; rooms drop
// what they keep for it. A primary context's reset runs under the device's primary lock.
inline constinit Channel<void(Context*)> context_teardown{g_life_flags, 1u << 2};
// After context_teardown, its streams gone: memory frees what the context allocated.
inline constinit Channel<void(const Context*)> context_released{g_life_flags, 1u << 3};
// This process's live contexts on a device changed to `live` (under core's usage lock, in order:
// the last call carries the current count). The `const char*` names the entry.
inline constinit Channel<void(int ordinal, int live, const char* api)> contexts_live{g_life_flags, 1u << 4};
// A stream was made (at the end of its constructor: user, legacy and per-thread streams alike).
inline constinit Channel<void(Stream&)> stream_created{g_life_flags, 1u << 5};
// cuStreamDestroy took a user stream out of its registry, after its work finished (a context's
// streams go with context_teardown instead).
inline constinit Channel<void(const std::shared_ptr<Stream>&)> stream_destroyed{g_life_flags, 1u << 6};
// A module was made in a context (cuModuleLoad*, a library's first use in a context): its
// variables have memory, its functions resolve (a plain module's own handle right after).
// Unloaded: its handle and its functions' handles no longer resolve (cuModuleUnload,
// cuLibraryUnload, its context's teardown); launches already enqueued may still run. Both may
// be emitted under a library's lock: a listener must not call module entry points.
inline constinit Channel<void(const module::Module&)> module_loaded{g_life_flags, 1u << 7};
inline constinit Channel<void(const module::Module&)> module_unloaded{g_life_flags, 1u << 8};
// The process is exiting (an atexit handler registered when libcuda loads).
inline constinit Channel<void()> process_exit{g_life_flags, 1u << 9};
// A shared (IPC) event's owner destroyed it: its registry slot goes back.
inline constinit Channel<void(uint64_t tok_hi, uint64_t tok_lo)> shared_event_destroyed{g_life_flags, 1u << 10};

// After every host synchronization (stream, event, context), outside every lock. A demand
// channel: emitted only while its listener (memory: pools waiting for an observed free) wants it.
inline constinit Channel<void()> host_synchronised{g_sync_flags, 1u << 0, Channel<void()>::Mode::demand};

// Stream operations. `op` numbers the operation in the process (next_op(); 0 when it was
// enqueued while nobody listened to op_enqueued). Their bits are named constants, so the stream
// tests them against the word it loaded without loading a channel's bit_ too.
enum StreamBit : uint32_t {
  kOpEnqueued = 1u << 0,
  kOpQueued = 1u << 1,
  kOpStarted = 1u << 2,
  kOpCompleted = 1u << 3,
  kWorkerOpDone = 1u << 4,
  kWorkerStarted = 1u << 5,
};
// In the enqueuing thread, before the operation can run, outside every stream lock.
inline constinit Channel<void(const Stream&, uint64_t op)> op_enqueued{g_stream_flags, kOpEnqueued};
// The operation was queued behind other work, for the stream's worker: the stream is busy.
inline constinit Channel<void(const Stream&)> op_queued{g_stream_flags, kOpQueued};
// Operation `seq` starts (its dependencies are met), inline or on the worker, no lock held.
inline constinit Channel<void(const Stream&, uint64_t seq, uint64_t op)> op_started{g_stream_flags, kOpStarted};
// Operation `seq` ran from t0 to t1 (now_ns(); t0 the start of its wait on the worker). Before
// its completion is published, no stream lock held, so a stream's operations arrive in order.
inline constinit Channel<void(const Stream&, uint64_t seq, uint64_t op, int64_t t0, int64_t t1)> op_completed{
    g_stream_flags, kOpCompleted};
// The worker finished queued operation `seq` (after op_completed, before its completion is
// published): the stream is idle again if nothing was submitted after it.
inline constinit Channel<void(const Stream&, uint64_t seq)> worker_op_done{g_stream_flags, kWorkerOpDone};
// A stream's worker thread started, in that thread.
inline constinit Channel<void()> stream_worker_started{g_stream_flags, kWorkerStarted};

// The stream operations' bits, in one load (test them with the StreamBit constants).
inline uint32_t stream_ops() noexcept { return g_stream_flags.load(); }

// The clock of op_completed's times: CLOCK_MONOTONIC is one clock for every process writing
// into one trace.
inline int64_t now_ns() noexcept {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The next operation number (op_enqueued listeners and the operations they see).
inline constinit std::atomic<uint64_t> g_next_op{1};
inline uint64_t next_op() noexcept { return g_next_op.fetch_add(1, std::memory_order_relaxed); }

// ---- the queries of core --------------------------------------------------------------------
// What a handle of another kind is, if a room above knows it ("a memory pool", "host memory").
inline const char* no_object_kind(const void*) noexcept { return nullptr; }
inline constinit Query<const char*(const void* h) noexcept> object_kind{&no_object_kind};
// Device memory in use on `ordinal` by every live process (each rounded as the driver charges);
// false when unknown (then the caller counts this process alone).
inline bool no_device_used(int, uint64_t&) noexcept { return false; }
inline constinit Query<bool(int ordinal, uint64_t& used) noexcept> device_used{&no_device_used};

}  // namespace ev
}  // namespace cuda_shim
