#include "core/stream.hpp"

#include <algorithm>
#include <thread>

#include "core/context.hpp"

namespace cuda_shim {
namespace {

// Never destroyed: stream workers and host-function threads may still signal progress while
// the process exits (static destructors running), and must not meet a destroyed one.
std::mutex& g_progress_m = *new std::mutex;
std::condition_variable& g_progress_cv = *new std::condition_variable;
std::atomic<int> g_waiters{0};
std::atomic<uint64_t> g_next_stream_id{1};

}  // namespace

void notify_progress() {
  if (g_waiters.load() == 0) return;
  std::lock_guard lk(g_progress_m);  // pairs with the waiter's predicate check
  g_progress_cv.notify_all();
}

template <class Pred>
void wait_progress(Pred pred) {
  if (pred()) return;
  g_waiters.fetch_add(1);
  {
    std::unique_lock lk(g_progress_m);
    g_progress_cv.wait(lk, pred);
  }
  g_waiters.fetch_sub(1, std::memory_order_acq_rel);
}

bool Dep::done() const { return !stream || stream->completed() >= seq; }

void wait_dep(const Dep& d) {
  wait_progress([&] { return d.done(); });
}

Stream::Stream(std::shared_ptr<Context> ctx, StreamKind kind, unsigned flags, int priority)
    : ctx_(std::move(ctx)), kind_(kind), flags_(flags), priority_(priority),
      id_(g_next_stream_id.fetch_add(1)) {}

Stream::~Stream() = default;

std::vector<Dep> Stream::implicit_deps() {
  std::vector<Dep> deps;
  if (!ctx_) return deps;
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
std::atomic<const ActivityHooks*> g_hooks{nullptr};
}  // namespace

void set_activity_hooks(const ActivityHooks* hooks) { g_hooks.store(hooks, std::memory_order_release); }

uint64_t Stream::enqueue(std::function<void()> fn, std::vector<Dep> deps, bool inline_ok) {
  for (auto& d : implicit_deps()) deps.push_back(std::move(d));
  std::unique_lock lk(m_);
  uint64_t seq = submitted_.load(std::memory_order_relaxed) + 1;
  bool ready = inline_ok && queue_.empty() && !worker_active_ &&
               completed_.load() == seq - 1;
  if (ready)
    for (auto& d : deps)
      if (!d.done()) { ready = false; break; }
  submitted_.store(seq, std::memory_order_release);
  if (ready) {
    // Hold the stream's order: nothing else can run before `seq` is marked complete,
    // because later enqueuers see completed < submitted and queue behind us.
    lk.unlock();
    if (fn) fn();
    finish(seq);
    return seq;
  }
  queue_.push_back(Op{seq, std::move(fn), std::move(deps)});
  if (!worker_active_) {
    worker_active_ = true;
    std::thread([self = shared_from_this()] { self->worker_loop(); }).detach();
  }
  lk.unlock();
  if (const ActivityHooks* h = g_hooks.load(std::memory_order_acquire)) h->busy(*this);
  return seq;
}

void Stream::finish(uint64_t seq) {
  completed_.store(seq);
  notify_progress();
}

void Stream::worker_loop() {
  if (const ActivityHooks* h = g_hooks.load(std::memory_order_acquire)) h->worker_thread();
  for (;;) {
    Op op;
    {
      std::lock_guard lk(m_);
      if (queue_.empty()) {
        worker_active_ = false;
        return;
      }
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    // Stream order: an inline op still running must finish first.
    wait_progress([&] { return completed() >= op.seq - 1; });
    for (auto& d : op.deps) wait_dep(d);
    if (op.fn) op.fn();
    op.fn = nullptr;
    if (const ActivityHooks* h = g_hooks.load(std::memory_order_acquire)) h->idle(*this, op.seq);
    finish(op.seq);
  }
}

uint64_t Stream::mark() {
  // Fast path: no implicit dependency can apply (a non-blocking stream, or a blocking one
  // while the legacy stream is idle) and nothing is queued: the position completes at once.
  bool may_depend = kind_ == StreamKind::legacy;
  if (!may_depend && blocking() && ctx_)
    if (Stream* l = ctx_->legacy_raw(); l && l != this && !l->idle()) may_depend = true;
  if (!may_depend) {
    std::lock_guard lk(m_);
    uint64_t seq = submitted_.load(std::memory_order_relaxed) + 1;
    if (queue_.empty() && !worker_active_ && completed_.load(std::memory_order_relaxed) == seq - 1) {
      // Completion is published before the position exists: no thread can be waiting for
      // it (a waiter reads submitted() first), so no fence and no wake-up are needed.
      completed_.store(seq, std::memory_order_release);
      submitted_.store(seq, std::memory_order_release);
      return seq;
    }
  }
  return enqueue(nullptr, {}, /*inline_ok=*/true);
}

void Stream::observe(uint64_t seq) {
  uint64_t cur = observed_.load(std::memory_order_relaxed);
  while (cur < seq && !observed_.compare_exchange_weak(cur, seq, std::memory_order_acq_rel)) {
  }
  ClockPtr c = clock();
  if (!c) return;
  // One level suffices: add_dep merged the clocks of what we waited on into ours.
  for (auto& [w, t] : c->deps)
    if (auto y = w.lock()) {
      uint64_t done = std::min(t, y->completed());
      uint64_t o = y->observed_.load(std::memory_order_relaxed);
      while (o < done && !y->observed_.compare_exchange_weak(o, done, std::memory_order_acq_rel)) {
      }
    }
}

void Stream::add_dep(const std::shared_ptr<Stream>& x, uint64_t seq, const ClockPtr& xclock) {
  if (!x || x.get() == this) return;
  std::lock_guard lk(clock_m_);
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

void Stream::wait_for(uint64_t seq) {
  wait_progress([&] { return completed() >= seq; });
}

}  // namespace cuda_shim
