// Streams run their work in stream order. Each stream numbers the operations given
// to it (submitted) and counts those finished (completed). An operation may depend
// on other streams' operations (events, the legacy default stream's implicit
// synchronization); it runs only when they are complete. When a stream is idle
// and the operation's dependencies are met, memcpy-like work runs inline in the
// caller's thread; otherwise a worker thread, started on demand, drains the queue.
// Host functions always run on the worker, as the real driver runs them on its own thread.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/errc.hpp"
#include "core/biased_lock.hpp"

namespace cuda_shim {

class Context;
class Stream;
namespace cap {
class Sequence;
}

// "Operation seq of stream s" — complete when s->completed() >= seq.
struct Dep {
  std::shared_ptr<Stream> stream;
  uint64_t seq = 0;
  bool done() const;
};

enum class StreamKind { user, legacy, per_thread };

// What a stream is known to be ordered after: (stream, sequence number) pairs learned
// from cuStreamWaitEvent, merged transitively. Immutable; replaced on change, so an
// event can keep the snapshot of its stream's clock at record time for free.
struct Clock {
  std::vector<std::pair<std::weak_ptr<Stream>, uint64_t>> deps;
};
using ClockPtr = std::shared_ptr<const Clock>;

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(std::shared_ptr<Context> ctx, StreamKind kind, unsigned flags, int priority);
  ~Stream();

  Context* ctx() const { return ctx_.get(); }
  const std::shared_ptr<Context>& ctx_ptr() const { return ctx_; }
  StreamKind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  uint64_t id() const { return id_; }
  bool blocking() const { return (flags_ & 1u) == 0; }  // CU_STREAM_NON_BLOCKING == 1
  // The stream's device reports CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED. Read once: a profile
  // fixes attributes at cuInit, and the stream-ordered allocator asks on every call.
  bool pools_supported() const { return pools_; }
  // The user's handle (streams of cuStreamCreate; null for default streams).
  void* handle() const { return handle_; }
  void set_handle(void* h) { handle_ = h; }

  // The capture sequence this stream takes part in (core/capture.hpp), or null: one load while
  // the stream is not capturing.
  std::shared_ptr<cap::Sequence> capture() const {
    if (!capturing_.load(std::memory_order_acquire)) [[likely]]
      return nullptr;
    std::lock_guard lk(cap_m_);
    return cap_;
  }
  void set_capture(std::shared_ptr<cap::Sequence> s) {
    std::lock_guard lk(cap_m_);
    cap_ = std::move(s);
    capturing_.store(cap_ != nullptr, std::memory_order_release);
  }

  // Enqueue work in stream order. `inline_ok`: may run in the caller's thread when idle.
  // Returns the operation's sequence number.
  uint64_t enqueue(std::function<void()> fn, std::vector<Dep> deps, bool inline_ok);
  // seq_cst: completion stores and waiter registration must not pass each other.
  uint64_t submitted() const { return submitted_.load(); }
  uint64_t completed() const { return completed_.load(); }
  bool idle() const { return completed() >= submitted(); }
  void wait_for(uint64_t seq) {  // block until op `seq` completed
    if (completed() < seq) [[unlikely]]
      wait_slow(seq);
  }
  // Host synchronization: waits for everything submitted so far and records that the
  // host has observed it (stream-ordered frees up to here become reusable by anyone).
  void synchronize() {
    uint64_t t = submitted();
    wait_for(t);
    observe(t);
  }
  // A position in stream order with no work (a stream-ordered free, an event record): complete
  // once every earlier operation, including implicit legacy-stream dependencies, is complete.
  // `watch`: something (a stream-ordered free) needs to know when the host observes this
  // position; observe() records observations only of watched positions.
  uint64_t mark(bool watch = false);
  // The same, only when it completes at once (nothing queued, no implicit dependency can
  // apply): no allocation, no lock but the stream's own. 0 when it cannot.
  uint64_t try_mark_now(bool watch = false);
  // Dependencies an operation on this stream picks up implicitly (legacy stream rules).
  std::vector<Dep> implicit_deps();

  // The host has seen operation `seq` complete (synchronize, event synchronize). Also
  // observes what this stream was ordered after, as far as that has completed.
  void observe(uint64_t seq) {
    // Only positions someone watches (stream-ordered frees) need the observation recorded:
    // with none past what is observed already, the read-modify-write is skipped.
    uint64_t cur = observed_.load(std::memory_order_acquire);
    if (cur < seq && watched_.load(std::memory_order_acquire) > cur)
      while (cur < seq && !observed_.compare_exchange_weak(cur, seq, std::memory_order_acq_rel)) {
      }
    // Every clock entry was observed in full already (or there is none): nothing to learn.
    if (clock_gen_.load(std::memory_order_acquire) == clock_seen_.load(std::memory_order_acquire)) [[likely]]
      return;
    observe_clock();
  }
  uint64_t observed() const { return observed_.load(std::memory_order_acquire); }
  ClockPtr clock() const {
    if (clock_gen_.load(std::memory_order_acquire) == 0) return nullptr;  // never ordered after anything
    std::lock_guard lk(clock_m_);
    return clock_;
  }
  // Changes whenever clock() does (0: empty); a cached clock is current while this is unchanged.
  uint64_t clock_gen() const { return clock_gen_.load(std::memory_order_acquire); }
  // This stream's future work is ordered after op `seq` of `x` (and what x's clock held).
  void add_dep(const std::shared_ptr<Stream>& x, uint64_t seq, const ClockPtr& xclock);
  // Is work submitted to this stream from now on ordered after op `seq` of `x`?
  // Counts cuStreamWaitEvent chains and the legacy default stream's implicit ordering.
  bool depends_on(const Stream& x, uint64_t seq) const;

 private:
  struct Op {
    uint64_t seq;
    std::function<void()> fn;
    std::vector<Dep> deps;
    bool counted;  // holds one count in busy_blocking_
    uint64_t op = 0;  // the operation's number in ev::op_* events (0: enqueued unheard)
  };
  void worker_loop();
  bool linger();
  void run_heard(Op& op, uint32_t on, int64_t t0);
  // A position completed at once (try_mark_now), told to who listens; unlocks `lk`.
  void heard_instant(uint64_t seq, uint32_t on, std::unique_lock<BiasedLock>& lk);
  void finish(uint64_t seq);
  void wait_slow(uint64_t seq);
  void observe_clock();
  // May an operation submitted now pick up an implicit dependency?
  bool may_depend() const;
  // Blocking streams other than the legacy one count their unfinished work in their context's
  // busy_blocking_, so the legacy stream learns that all of them are idle from one load.
  bool counts() const { return kind_ != StreamKind::legacy && busy_blocking_ != nullptr; }

  std::shared_ptr<Context> ctx_;
  StreamKind kind_;
  unsigned flags_;
  int priority_;
  bool pools_ = false;
  uint64_t id_;
  void* handle_ = nullptr;
  BiasedLock m_;  // held for a few instructions: the queue and the worker flag
  std::optional<std::deque<Op>> queue_;  // made on first use: a deque allocates when built
  // The stream's worker thread: none, running operations, or lingering (idle, waiting a little
  // for more work before it ends: a thread started per busy period cost more than a launch).
  enum class Worker : uint8_t { none, running, lingering };
  Worker worker_ = Worker::none;
  uint64_t worker_fork_ = 0;  // the fork generation it was started in (a forked child has none)
  std::mutex linger_m_;
  std::condition_variable linger_cv_;
  std::atomic<uint64_t> wake_gen_{0};
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> observed_{0};
  // The latest watched position (mark(true)); only rises. Until a watched position exists past
  // observed_, observe() has nothing to record and skips its read-modify-write.
  std::atomic<uint64_t> watched_{0};
  // Operations queued or running on blocking streams of this context, other than the legacy
  // one (shared with the context's legacy stream; null on non-blocking streams).
  std::shared_ptr<std::atomic<int64_t>> busy_blocking_;
  mutable std::mutex clock_m_;
  ClockPtr clock_;
  mutable std::mutex cap_m_;
  std::shared_ptr<cap::Sequence> cap_;
  std::atomic<bool> capturing_{false};
  std::atomic<uint64_t> clock_gen_{0};   // bumped with every new clock_
  std::atomic<uint64_t> clock_seen_{0};  // the clock_gen_ whose entries observe() settled in full
};

// Global progress signal: any completion wakes waiters (cheap when no one waits).
void notify_progress();
template <class Pred>
void wait_progress(Pred pred);

// A record's completion time when it was queued behind work (written by the stream's worker
// before the record's position completes).
struct EventRecord {
  std::chrono::steady_clock::time_point when{};
};

class Event {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit Event(unsigned flags, std::shared_ptr<Context> ctx) : flags_(flags), ctx_(std::move(ctx)) {}
  unsigned flags() const { return flags_; }
  bool timing() const { return (flags_ & 0x2u) == 0; }  // CU_EVENT_DISABLE_TIMING
  Context* ctx() const { return ctx_.get(); }

  // Snapshot of the last record: (stream, seq) and the recording stream's clock, or empty.
  struct Snap {
    Dep dep;
    ClockPtr clock;  // what the recording stream was ordered after at record time
    bool recorded = false;
  };
  Snap snap() const;
  // Records position `seq` of `s`. Its completion time is `when` if it completed already,
  // else what `rec` will hold once it completes (null for events without timing).
  void set(Stream& s, uint64_t seq, TimePoint when, std::shared_ptr<EventRecord> rec);
  enum class State { never, pending, complete };
  // With `when`: the completion time of a complete record, read with its state.
  State state(TimePoint* when = nullptr) const;
  // complete: the host has now observed the record (Stream::observe); pending: not yet.
  State observe_if_complete();

  // IPC events (cuIpcGetEventHandle / cuIpcOpenEventHandle): records, queries and waits also
  // go through two counters in the shared registry ([0] records issued, [1] the highest
  // record completed), so a record in one process is seen by every other.
  uint64_t* shared() const { return shared_.load(std::memory_order_acquire); }
  // `owner`: the exporting process's event; its destroy gives the registry slot back (the IPC
  // room listens to ev::shared_event_destroyed, so that core needs no knowledge of the registry).
  void share(uint64_t* words, uint64_t tok_hi, uint64_t tok_lo, bool owner) {
    token_hi_ = tok_hi;
    token_lo_ = tok_lo;
    owner_ = owner;
    shared_.store(words, std::memory_order_release);
  }
  // The owner's destroy: frees the registry slot (a no-op for unshared and opened events).
  void unshare() const noexcept;
  uint64_t token_hi() const { return token_hi_; }
  uint64_t token_lo() const { return token_lo_; }
  bool shared_owner() const { return owner_; }
  bool opened() const { return shared() && !owner_; }

  // Recorded during a stream capture: the event stands for a set of the capture's nodes (what a
  // cuStreamWaitEvent on it joins), not for a stream position. An ordinary record clears it.
  void set_captured(std::shared_ptr<cap::Sequence> seq, std::vector<void*> deps) {
    std::lock_guard lk(m_);
    cap_seq_ = std::move(seq);
    cap_deps_ = std::move(deps);
    cap_any_.store(true, std::memory_order_release);
  }
  // One load for an event never recorded in a capture (queries and waits ask every time).
  std::shared_ptr<cap::Sequence> captured(std::vector<void*>* deps = nullptr) const {
    if (!cap_any_.load(std::memory_order_acquire)) [[likely]]
      return nullptr;
    std::lock_guard lk(m_);
    if (deps) *deps = cap_deps_;
    return cap_seq_;
  }

 private:
  unsigned flags_;
  std::shared_ptr<Context> ctx_;
  // Held for a few instructions; a re-record on the same stream copies no reference.
  mutable BiasedLock m_;
  std::shared_ptr<Stream> stream_;  // null: never recorded
  uint64_t seq_ = 0;
  ClockPtr clock_;
  uint64_t clock_gen_ = 0;  // stream_'s clock_gen() that clock_ belongs to
  TimePoint when_{};
  std::shared_ptr<EventRecord> rec_;
  std::atomic<uint64_t*> shared_{nullptr};
  uint64_t token_hi_ = 0, token_lo_ = 0;
  bool owner_ = false;
  std::shared_ptr<cap::Sequence> cap_seq_;
  std::vector<void*> cap_deps_;
  std::atomic<bool> cap_any_{false};  // cap_seq_ may be set
};

// Block until `d` is complete.
void wait_dep(const Dep& d);

}  // namespace cuda_shim
