#include "core/stream.hpp"

#include <thread>

#include "core/context.hpp"

namespace cuda_shim {
namespace {

std::mutex g_progress_m;
std::condition_variable g_progress_cv;
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
    fn();
    finish(seq);
    return seq;
  }
  queue_.push_back(Op{seq, std::move(fn), std::move(deps)});
  if (!worker_active_) {
    worker_active_ = true;
    std::thread([self = shared_from_this()] { self->worker_loop(); }).detach();
  }
  return seq;
}

void Stream::finish(uint64_t seq) {
  completed_.store(seq);
  notify_progress();
}

void Stream::worker_loop() {
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
    finish(op.seq);
  }
}

void Stream::wait_for(uint64_t seq) {
  wait_progress([&] { return completed() >= seq; });
}

}  // namespace cuda_shim
