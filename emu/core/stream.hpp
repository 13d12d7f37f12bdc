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
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim {

class Context;
class Stream;

// "Operation seq of stream s" — complete when s->completed() >= seq.
struct Dep {
  std::shared_ptr<Stream> stream;
  uint64_t seq = 0;
  bool done() const;
};

enum class StreamKind { user, legacy, per_thread };

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

  // Enqueue work in stream order. `inline_ok`: may run in the caller's thread when idle.
  // Returns the operation's sequence number.
  uint64_t enqueue(std::function<void()> fn, std::vector<Dep> deps, bool inline_ok);
  // seq_cst: completion stores and waiter registration must not pass each other.
  uint64_t submitted() const { return submitted_.load(); }
  uint64_t completed() const { return completed_.load(); }
  bool idle() const { return completed() >= submitted(); }
  void wait_for(uint64_t seq);  // block until op `seq` completed
  void synchronize() { wait_for(submitted()); }
  // Dependencies an operation on this stream picks up implicitly (legacy stream rules).
  std::vector<Dep> implicit_deps();

 private:
  struct Op {
    uint64_t seq;
    std::function<void()> fn;
    std::vector<Dep> deps;
  };
  void worker_loop();
  void finish(uint64_t seq);

  std::shared_ptr<Context> ctx_;
  StreamKind kind_;
  unsigned flags_;
  int priority_;
  uint64_t id_;
  std::mutex m_;
  std::deque<Op> queue_;
  bool worker_active_ = false;
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
};

// Global progress signal: any completion wakes waiters (cheap when no one waits).
void notify_progress();
template <class Pred>
void wait_progress(Pred pred);

struct EventRecord {
  std::atomic<bool> done{false};
  std::chrono::steady_clock::time_point when{};
};

class Event {
 public:
  explicit Event(unsigned flags, std::shared_ptr<Context> ctx) : flags_(flags), ctx_(std::move(ctx)) {}
  unsigned flags() const { return flags_; }
  bool timing() const { return (flags_ & 0x2u) == 0; }  // CU_EVENT_DISABLE_TIMING
  Context* ctx() const { return ctx_.get(); }

  // Snapshot of the last record: (stream, seq, record) or empty if never recorded.
  struct Snap {
    Dep dep;
    std::shared_ptr<EventRecord> rec;
    bool recorded() const { return rec != nullptr; }
  };
  Snap snap() const {
    std::lock_guard lk(m_);
    return snap_;
  }
  void set(Snap s) {
    std::lock_guard lk(m_);
    snap_ = std::move(s);
  }

 private:
  unsigned flags_;
  std::shared_ptr<Context> ctx_;
  mutable std::mutex m_;
  Snap snap_;
};

// Block until `d` is complete.
void wait_dep(const Dep& d);

}  // namespace cuda_shim
