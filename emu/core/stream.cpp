#include "core/stream.hpp"

#include <pthread.h>

#include <algorithm>
#include <thread>
#include <utility>

#include <cuda.h>

#include "core/context.hpp"
#include "core/device_support.hpp"
#include "core/events.hpp"
#include "core/parallel.hpp"

namespace cuda_shim {
namespace {

// Never destroyed: stream workers and host-function threads may still signal progress while
// the process exits (static destructors running), and must not meet a destroyed one.
std::mutex& g_progress_m = *new std::mutex;
std::condition_variable& g_progress_cv = *new std::condition_variable;
std::atomic<int> g_waiters{0};
std::atomic<uint64_t> g_next_stream_id{1};

// How long an idle stream worker waits for more work before it ends. Back-to-back launches and
// copies then reuse the thread (a new thread cost about 15 us of every launch + synchronize).
constexpr auto kLinger = std::chrono::milliseconds(2);

// Counts fork()s: a forked child has no worker threads, whatever its copy of a stream says.
std::atomic<uint64_t> g_fork_gen{0};
uint64_t fork_generation() {
  static std::once_flag hook;
  std::call_once(hook, [] { pthread_atfork(nullptr, nullptr, [] { g_fork_gen.fetch_add(1); }); });
  return g_fork_gen.load(std::memory_order_relaxed);
}

}  // namespace

void notify_progress() {
  if (g_waiters.load() == 0) return;
  std::lock_guard lk(g_progress_m);  // pairs with the waiter's predicate check
  g_progress_cv.notify_all();
}

// Polls `pred` for up to `us` microseconds. A short wait ends sooner polled than asleep: waking a
// sleeping thread costs tens of microseconds on a virtual machine, more than a short kernel runs.
// NVIDIA's driver polls too (CU_CTX_SCHED_AUTO spins while the host has cores to spare).
template <class Pred>
bool poll(Pred pred, int us) {
  if (par::threads() < 2) return pred();  // one core: spinning only delays the thread we wait for
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      par::relax();
    }
    if (std::chrono::steady_clock::now() >= until) return pred();
  }
}

template <class Pred>
void wait_progress(Pred pred) {
  if (poll(pred, 50)) return;
  g_waiters.fetch_add(1);
  {
    std::unique_lock lk(g_progress_m);
    g_progress_cv.wait(lk, pred);
  }
  g_waiters.fetch_sub(1, std::memory_order_acq_rel);
}

void Event::unshare() const noexcept {
  if (owner_ && shared()) ev::shared_event_destroyed.emit(token_hi_, token_lo_);
}

bool Dep::done() const { return !stream || stream->completed() >= seq; }

void wait_dep(const Dep& d) {
  wait_progress([&] { return d.done(); });
}

Stream::Stream(std::shared_ptr<Context> ctx, StreamKind kind, unsigned flags, int priority)
    : ctx_(std::move(ctx)), kind_(kind), flags_(flags), priority_(priority),
      id_(g_next_stream_id.fetch_add(1)) {
  pools_ = ctx_ && device_attribute(ctx_->ordinal(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
  if (kind_ == StreamKind::legacy)
    busy_blocking_ = std::make_shared<std::atomic<int64_t>>(0);
  else if (blocking() && ctx_)
    if (Stream* l = ctx_->legacy_raw()) busy_blocking_ = l->busy_blocking_;
  ev::stream_created.emit(*this);
}

Stream::~Stream() = default;

bool Stream::may_depend() const {
  if (!ctx_) return false;
  // The legacy stream waits for every blocking stream: none has work while the count is 0.
  if (kind_ == StreamKind::legacy) return busy_blocking_->load() != 0;
  if (!blocking()) return false;
  Stream* l = ctx_->legacy_raw();
  return l && l != this && !l->idle();
}

std::vector<Dep> Stream::implicit_deps() {
  std::vector<Dep> deps;
  if (!may_depend()) return deps;
  if (kind_ == StreamKind::legacy) {
    // The legacy stream waits for all prior work in every blocking stream.
    for (auto& s : ctx_->streams())
      if (s.get() != this && s->blocking() && !s->idle()) deps.push_back({s, s->submitted()});
  } else if (blocking()) {
    // Blocking streams wait for prior work on the legacy stream.
    auto l = ctx_->legacy_ptr();
    if (l && l.get() != this && !l->idle()) deps.push_back({l, l->submitted()});
  }
  return deps;
}

namespace {
// The clock is read only while op_completed is heard (the trace): reading it costs as much as a
// short operation.
int64_t clock_if(uint32_t on) { return (on & ev::kOpCompleted) ? ev::now_ns() : 0; }
// The events heard around running an operation.
constexpr uint32_t kRunBits = ev::kOpStarted | ev::kOpCompleted;
}  // namespace

// Every stream operation reads the stream events' word once (ev::stream_ops(), one load) and
// branches on it; with nobody listening that is all the events cost here.
uint64_t Stream::enqueue(std::function<void()> fn, std::vector<Dep> deps, bool inline_ok) {
  if (may_depend())
    for (auto& d : implicit_deps()) deps.push_back(std::move(d));
  const uint32_t on = ev::stream_ops();
  uint64_t op = 0;
  // op_enqueued (the trace learns the enqueuing call) before the operation can run.
  if (on & ev::kOpEnqueued) [[unlikely]] {
    op = ev::next_op();
    ev::op_enqueued.call(*this, op);
  }
  std::unique_lock lk(m_);
  uint64_t seq = submitted_.load(std::memory_order_relaxed) + 1;
  bool ready = inline_ok && (!queue_ || queue_->empty()) && worker_ != Worker::running &&
               completed_.load() == seq - 1;
  if (ready)
    for (auto& d : deps)
      if (!d.done()) { ready = false; break; }
  // Work that takes time (a function, or anything queued) is visible to the legacy stream
  // before its position is; an empty position completing inline takes no time.
  const bool counted = counts() && (fn || !ready);
  if (counted) busy_blocking_->fetch_add(1);
  submitted_.store(seq, std::memory_order_release);
  if (ready) {
    // Hold the stream's order: nothing else can run before `seq` is marked complete,
    // because later enqueuers see completed < submitted and queue behind us.
    lk.unlock();
    if (on & kRunBits) [[unlikely]] {
      Op o{seq, std::move(fn), {}, counted, op};
      run_heard(o, on, clock_if(on));
    } else if (fn) {
      fn();
    }
    finish(seq);
    if (counted) busy_blocking_->fetch_sub(1);
    return seq;
  }
  if (!queue_) queue_.emplace();
  queue_->push_back(Op{seq, std::move(fn), std::move(deps), counted, op});
  const uint64_t gen = fork_generation();
  bool wake = false;
  if (worker_ == Worker::lingering && worker_fork_ == gen) {
    worker_ = Worker::running;
    wake = true;
  } else if (worker_ != Worker::running || worker_fork_ != gen) {
    worker_ = Worker::running;
    worker_fork_ = gen;
    std::thread([self = shared_from_this()] { self->worker_loop(); }).detach();
  }
  lk.unlock();
  if (wake) {
    {
      std::lock_guard g(linger_m_);  // pairs with the worker's check of wake_gen_
      wake_gen_.fetch_add(1, std::memory_order_relaxed);
    }
    linger_cv_.notify_one();
  }
  if (on & ev::kOpQueued) [[unlikely]]
    ev::op_queued.call(*this);
  return seq;
}

// Runs `op` (its dependencies met) with the events someone hears: started, then completed,
// before the caller publishes its completion.
void Stream::run_heard(Op& op, uint32_t on, int64_t t0) {
  if (on & ev::kOpStarted) ev::op_started.call(*this, op.seq, op.op);
  if (op.fn) op.fn();
  op.fn = nullptr;
  if (on & ev::kOpCompleted) ev::op_completed.call(*this, op.seq, op.op, t0, ev::now_ns());
}

void Stream::finish(uint64_t seq) {
  completed_.store(seq);
  notify_progress();
}

// The queue is empty (m_ held): waits up to kLinger for an enqueue to wake it. True when there
// is work again; false when the worker is to end (m_ held either way).
bool Stream::linger() {
  const uint64_t gen = wake_gen_.load(std::memory_order_relaxed);
  worker_ = Worker::lingering;
  m_.unlock();
  if (!poll([&] { return wake_gen_.load(std::memory_order_relaxed) != gen; }, 50)) {
    std::unique_lock lk(linger_m_);
    linger_cv_.wait_for(lk, kLinger, [&] { return wake_gen_.load(std::memory_order_relaxed) != gen; });
  }
  m_.lock();
  if (!queue_->empty()) return true;  // the enqueuer marked the worker running
  return worker_ != Worker::lingering;  // woken for work that another path took: linger on
}

void Stream::worker_loop() {
  if (ev::stream_ops() & ev::kWorkerStarted) ev::stream_worker_started.call();
  for (;;) {
    Op op;
    m_.lock();
    while (queue_->empty()) {
      if (!linger()) {
        worker_ = Worker::none;
        m_.unlock();
        return;
      }
    }
    worker_ = Worker::running;
    op = std::move(queue_->front());
    queue_->pop_front();
    m_.unlock();
    // Stream order: an inline op still running must finish first.
    wait_progress([&] { return completed() >= op.seq - 1; });
    const uint32_t on = ev::stream_ops();
    const int64_t t0 = clock_if(on);  // the trace shows a wait as running
    for (auto& d : op.deps) wait_dep(d);
    if (on & kRunBits) [[unlikely]] {
      run_heard(op, on, t0);
    } else if (op.fn) {
      op.fn();
      op.fn = nullptr;
    }
    if (on & ev::kWorkerOpDone) [[unlikely]]  // before completion: managed memory closes first
      ev::worker_op_done.call(*this, op.seq);
    finish(op.seq);
    if (op.counted) busy_blocking_->fetch_sub(1);
  }
}

uint64_t Stream::try_mark_now(bool watch) {
  // No implicit dependency can apply (a non-blocking stream, a blocking one while the legacy
  // stream is idle, the legacy one while every blocking stream is) and nothing is queued.
  if (may_depend()) return 0;
  std::unique_lock lk(m_);
  uint64_t seq = submitted_.load(std::memory_order_relaxed) + 1;
  if ((queue_ && !queue_->empty()) || worker_ == Worker::running || completed_.load(std::memory_order_relaxed) != seq - 1)
    return 0;
  // Completion is published before the position exists: no thread can be waiting for
  // it (a waiter reads submitted() first), so no fence and no wake-up are needed.
  completed_.store(seq, std::memory_order_release);
  submitted_.store(seq, std::memory_order_release);
  if (watch) watched_.store(seq, std::memory_order_release);  // positions rise under m_
  // An instant on the trace's stream track.
  if (const uint32_t on = ev::stream_ops(); on & (ev::kOpEnqueued | kRunBits)) [[unlikely]]
    heard_instant(seq, on, lk);
  return seq;
}

void Stream::heard_instant(uint64_t seq, uint32_t on, std::unique_lock<BiasedLock>& lk) {
  const int64_t t = clock_if(on);  // under m_: before any later operation's start
  lk.unlock();
  const uint64_t op = (on & ev::kOpEnqueued) ? ev::next_op() : 0;
  if (op) ev::op_enqueued.call(*this, op);
  if (on & ev::kOpStarted) ev::op_started.call(*this, seq, op);
  if (on & ev::kOpCompleted) ev::op_completed.call(*this, seq, op, t, t);
}

uint64_t Stream::mark(bool watch) {
  if (uint64_t seq = try_mark_now(watch)) return seq;
  uint64_t seq = enqueue(nullptr, {}, /*inline_ok=*/true);
  if (watch)  // outside m_: a racing later position may have been stored first
    for (uint64_t w = watched_.load(std::memory_order_relaxed);
         w < seq && !watched_.compare_exchange_weak(w, seq, std::memory_order_acq_rel);) {
    }
  return seq;
}

void Stream::observe_clock() {
  // Read before the clock: a clock newer than `gen` is only ever marked seen by a later call.
  const uint64_t gen = clock_gen_.load(std::memory_order_acquire);
  ClockPtr c = clock();
  if (!c) return;
  // One level suffices: add_dep merged the clocks of what we waited on into ours.
  bool all = true;  // every entry observed up to its position: later calls learn nothing new
  for (auto& [w, t] : c->deps)
    if (auto y = w.lock()) {
      uint64_t done = std::min(t, y->completed());
      if (done < t) all = false;
      uint64_t o = y->observed_.load(std::memory_order_relaxed);
      while (o < done && !y->observed_.compare_exchange_weak(o, done, std::memory_order_acq_rel)) {
      }
    }
  if (all) clock_seen_.store(gen, std::memory_order_release);
}

void Stream::add_dep(const std::shared_ptr<Stream>& x, uint64_t seq, const ClockPtr& xclock) {
  if (!x || x.get() == this) return;
  std::lock_guard lk(clock_m_);
  // Already ordered after all of it (a repeated cuStreamWaitEvent): keep the clock as it is.
  auto covered = [&](const Stream* y, uint64_t t) {
    if (!y || y == this) return true;
    if (!clock_) return false;
    for (auto& [w, s] : clock_->deps)
      if (auto z = w.lock(); z.get() == y) return s >= t;
    return false;
  };
  bool changed = !covered(x.get(), seq);
  if (!changed && xclock)
    for (auto& [w, t] : xclock->deps)
      if (auto y = w.lock(); y && !covered(y.get(), t)) {
        changed = true;
        break;
      }
  if (!changed) return;
  auto next = std::make_shared<Clock>();
  if (clock_) next->deps = clock_->deps;
  auto merge = [&](const std::shared_ptr<Stream>& y, uint64_t t) {
    if (!y || y.get() == this) return;
    for (auto& [w, s] : next->deps)
      if (auto z = w.lock(); z == y) {
        s = std::max(s, t);
        return;
      }
    next->deps.emplace_back(y, t);
  };
  merge(x, seq);
  if (xclock)
    for (auto& [w, t] : xclock->deps) merge(w.lock(), t);
  // Forget streams that are gone so the clock does not grow without bound.
  std::erase_if(next->deps, [](auto& e) { return e.first.expired(); });
  clock_ = std::move(next);
  clock_gen_.fetch_add(1, std::memory_order_acq_rel);
}

bool Stream::depends_on(const Stream& x, uint64_t seq) const {
  if (&x == this) return true;
  if (ctx_ && x.ctx() == ctx_.get()) {
    // The legacy default stream and blocking streams of one context wait for each other.
    if (kind_ == StreamKind::legacy && x.blocking()) return true;
    if (x.kind() == StreamKind::legacy && blocking()) return true;
  }
  ClockPtr c = clock();
  if (!c) return false;
  for (auto& [w, t] : c->deps)
    if (auto y = w.lock(); y.get() == &x) return t >= seq;
  return false;
}

void Stream::wait_slow(uint64_t seq) {
  wait_progress([&] { return completed() >= seq; });
}

// ---- events ---------------------------------------------------------------------------

Event::Snap Event::snap() const {
  std::lock_guard lk(m_);
  Snap s;
  if (!stream_) return s;
  s.dep = Dep{stream_, seq_};
  s.clock = clock_;
  s.recorded = true;
  return s;
}

void Event::set(Stream& s, uint64_t seq, TimePoint when, std::shared_ptr<EventRecord> rec) {
  // Labelled with the generation read before the clock: a newer clock under an older label
  // is only fetched again by the next record, never mistaken for current.
  const uint64_t gen = s.clock_gen();
  std::shared_ptr<EventRecord> old;  // released after the lock (declared before it)
  {
    std::lock_guard lk(m_);
    if (cap_seq_) [[unlikely]] {  // recorded outside a capture again: an ordinary event once more
      cap_seq_.reset();
      cap_deps_.clear();
      cap_any_.store(false, std::memory_order_release);
    }
    if (stream_.get() == &s && clock_gen_ == gen) {  // re-recorded on the same stream: no references
      seq_ = seq;
      when_ = when;
      old = std::exchange(rec_, std::move(rec));
      return;
    }
  }
  std::shared_ptr<Stream> sp = s.shared_from_this();
  ClockPtr clock = s.clock();
  std::lock_guard lk(m_);
  sp.swap(stream_);  // the old stream and clock go with the locals, after the lock
  clock.swap(clock_);
  clock_gen_ = gen;
  seq_ = seq;
  when_ = when;
  old = std::exchange(rec_, std::move(rec));
}

Event::State Event::state(TimePoint* when) const {
  std::lock_guard lk(m_);
  if (!stream_) return State::never;
  if (stream_->completed() < seq_) return State::pending;
  // A queued record's worker wrote rec_->when before publishing its completion.
  if (when) *when = rec_ ? rec_->when : when_;
  return State::complete;
}

Event::State Event::observe_if_complete() {
  std::lock_guard lk(m_);
  if (!stream_) return State::never;
  if (stream_->completed() < seq_) return State::pending;
  stream_->observe(seq_);
  return State::complete;
}

}  // namespace cuda_shim
