#include "core/parallel.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cuda_shim::par {
namespace {

// More helpers than this add nothing for memory-bound work; the cap bounds idle threads on
// very wide hosts.
constexpr unsigned kMaxThreads = 64;
// A helper out of work polls this many times (about a few microseconds) before sleeping, so
// that back-to-back large operations find it awake.
constexpr int kSpin = 512;


unsigned count_threads() noexcept {
  unsigned n = 0;
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
  const unsigned hw = std::thread::hardware_concurrency();
  if (n == 0 || (hw != 0 && hw < n)) n = hw;
  return std::clamp(n, 1u, kMaxThreads);
}

struct Job {
  void (*part)(void*, size_t) = nullptr;
  void* ctx = nullptr;
  size_t parts = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<uint32_t> finished{0};

  bool open() const noexcept { return next.load(std::memory_order_relaxed) < parts; }

  // Claims and runs parts until none is left. The thread completing the last part publishes
  // it: the acq_rel increments chain every part's writes into that release.
  void work() noexcept {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts;) {
      part(ctx, i);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
        finished.store(1, std::memory_order_release);
        finished.notify_all();
      }
    }
  }
};

class Pool {
 public:
  explicit Pool(unsigned helpers) : want_(helpers) {}

  // Starts the helpers; the pool runs with as many as the system gave.
  void start() noexcept {
    for (unsigned i = 0; i < want_; ++i) {
      try {
        std::thread([this] { loop(); }).detach();
      } catch (...) {
        break;
      }
      started_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  unsigned helpers() const noexcept { return started_.load(std::memory_order_relaxed); }

  void post(std::shared_ptr<Job> j) noexcept {
    {
      std::lock_guard lk(m_);
      try {
        jobs_.push_back(std::move(j));
      } catch (...) {
        return;  // no helper sees it: the caller runs every part
      }
    }
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    epoch_.notify_all();
  }

  void retire(const Job* j) noexcept {
    std::lock_guard lk(m_);
    std::erase_if(jobs_, [&](const std::shared_ptr<Job>& x) { return x.get() == j || !x->open(); });
  }

 private:
  std::shared_ptr<Job> take() noexcept {
    std::lock_guard lk(m_);
    for (auto& j : jobs_)
      if (j->open()) return j;
    return nullptr;
  }

  void loop() noexcept {
    // Asynchronous signals belong to the program's threads; faults are still delivered here.
    sigset_t all;
    sigfillset(&all);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP}) sigdelset(&all, s);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    pthread_setname_np(pthread_self(), "cuda-shim-copy");
    for (;;) {
      const uint32_t seen = epoch_.load(std::memory_order_acquire);
      if (std::shared_ptr<Job> j = take()) {
        j->work();
        continue;
      }
      int k = 0;
      while (k < kSpin && epoch_.load(std::memory_order_relaxed) == seen) {
        relax();
        ++k;
      }
      if (k == kSpin) epoch_.wait(seen, std::memory_order_acquire);
    }
  }

  const unsigned want_;
  std::atomic<unsigned> started_{0};
  std::mutex m_;
  std::vector<std::shared_ptr<Job>> jobs_;  // posted, possibly with parts left
  std::atomic<uint32_t> epoch_{0};          // bumped by every post
};

// Never destroyed: helpers run until the process ends. A forked child has none of them, so it
// forgets the parent's pool and starts its own when it needs one.
std::atomic<Pool*> g_pool{nullptr};

Pool* pool() noexcept {
  if (Pool* p = g_pool.load(std::memory_order_acquire)) return p;
  static std::once_flag fork_hook;
  std::call_once(fork_hook, [] { pthread_atfork(nullptr, nullptr, [] { g_pool.store(nullptr); }); });
  Pool* fresh = new (std::nothrow) Pool(threads() - 1);
  if (!fresh) return nullptr;
  Pool* expected = nullptr;
  if (!g_pool.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;
    return expected;
  }
  fresh->start();
  return fresh;
}

}  // namespace

void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

unsigned threads() noexcept {
  static const unsigned n = count_threads();
  return n;
}

void run(size_t parts, void (*part)(void*, size_t), void* ctx) noexcept {
  Pool* p = parts > 1 && threads() > 1 ? pool() : nullptr;
  std::shared_ptr<Job> j;
  if (p && p->helpers() > 0) {
    try {
      j = std::make_shared<Job>();
    } catch (...) {
    }
  }
  if (!j) {
    for (size_t i = 0; i < parts; ++i) part(ctx, i);
    return;
  }
  j->part = part;
  j->ctx = ctx;
  j->parts = parts;
  p->post(j);
  j->work();
  p->retire(j.get());
  // Helpers still running their last parts: they finish about together, so poll briefly.
  for (int k = 0; k < kSpin && !j->finished.load(std::memory_order_acquire); ++k) relax();
  while (!j->finished.load(std::memory_order_acquire)) j->finished.wait(0, std::memory_order_acquire);
}

}  // namespace cuda_shim::par
