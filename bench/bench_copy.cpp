// Copies and fills against the machine's own memory bandwidth (issue 23, "Copies").
//
// The bar is plain memcpy on the same sizes, measured in the same run with 1..N threads
// (N = hardware threads): BM_Host_Memcpy/<bytes>/threads:<t>, each thread copying its share
// of one buffer. Every copy or fill names the 1-thread memcpy as its baseline and also carries
// a counter "vs_best_host": its bandwidth over the best memcpy of any thread count measured so
// far in this process for that size (benchmarks run in registration order, host ones first).
// BM_Emu_Paired_* (below) also time a memcpy of the same bytes next to each large copy, every
// iteration, for hosts whose bandwidth moves between one benchmark and the next.
//
// Steady-state benchmarks warm their destinations first, so first-touch page faults are not
// counted; BM_MemcpyD2D_Cold copies into freshly allocated device memory every iteration to show
// that cost (on the emulator, memory freed before is kept resident and zeroed up to a bound, as a
// GPU's stays, so only allocations past it pay page faults). Only the public CUDA API is used:
// the same binary runs on NVIDIA's driver.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const int64_t kSizes[] = {4 << 10, 1 << 20, 256 << 20};

unsigned hw_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

// ---------------------------------------------------------------- the bar

std::mutex g_best_m;
std::map<int64_t, double> g_best_host;  // bytes -> best memcpy bytes/s seen in this process

void note_host(int64_t bytes, double bw) {
  std::lock_guard lk(g_best_m);
  double& b = g_best_host[bytes];
  b = std::max(b, bw);
}

// Host buffers shared by the BM_Host_* threads of one size: allocated and touched once.
struct HostBufs {
  char* src = nullptr;
  char* dst = nullptr;
};
HostBufs host_bufs(int64_t bytes) {
  static std::mutex m;
  static std::map<int64_t, HostBufs> all;
  std::lock_guard lk(m);
  HostBufs& b = all[bytes];
  if (!b.src) {
    b.src = static_cast<char*>(std::aligned_alloc(4096, static_cast<size_t>(bytes)));
    b.dst = static_cast<char*>(std::aligned_alloc(4096, static_cast<size_t>(bytes)));
    std::memset(b.src, 0x5a, static_cast<size_t>(bytes));
    std::memset(b.dst, 0, static_cast<size_t>(bytes));
  }
  return b;
}

// Each of the benchmark's threads copies its share of one buffer; thread 0 notes the total.
void BM_Host_Memcpy(benchmark::State& s) {
  const int64_t bytes = s.range(0);
  const HostBufs b = host_bufs(bytes);
  const int t = s.threads(), i = s.thread_index();
  const size_t share = static_cast<size_t>(bytes / t) / 64 * 64;
  const size_t off = share * static_cast<size_t>(i);
  const size_t len = i == t - 1 ? static_cast<size_t>(bytes) - off : share;
  // From the first iteration on: the threads' start barrier (inside the loop's first step)
  // is not copying, and counting it made the bar low.
  Clock::time_point t0;
  bool first = true;
  for (auto _ : s) {
    if (first) {
      t0 = Clock::now();
      first = false;
    }
    std::memcpy(b.dst + off, b.src + off, len);
    benchmark::ClobberMemory();
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (i == 0 && secs > 0) note_host(bytes, static_cast<double>(bytes) * static_cast<double>(s.iterations()) / secs);
  bench::bytes(s, static_cast<int64_t>(len));
}

void BM_Host_Memset(benchmark::State& s) {
  const int64_t bytes = s.range(0);
  const HostBufs b = host_bufs(bytes);
  for (auto _ : s) {
    std::memset(b.dst, 0x3c, static_cast<size_t>(bytes));
    benchmark::ClobberMemory();
  }
  bench::bytes(s, bytes);
}

// ---------------------------------------------------------------- the driver

std::string host_baseline(int64_t bytes) { return "BM_Host_Memcpy/" + std::to_string(bytes) + "/threads:1"; }

// Bytes per second of the loop that just ran, against the best host memcpy of that size.
struct Meter {
  int64_t bytes;
  Clock::time_point t0 = Clock::now();
  void finish(benchmark::State& s) {
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    bench::bytes(s, bytes);
    std::string base = host_baseline(bytes);
    bench::baseline(s, base.c_str());
    double best = 0;
    {
      std::lock_guard lk(g_best_m);
      auto it = g_best_host.find(bytes);
      if (it != g_best_host.end()) best = it->second;
    }
    if (best > 0 && secs > 0)
      s.counters["vs_best_host"] = static_cast<double>(bytes) * static_cast<double>(s.iterations()) / secs / best;
  }
};

bool ready(benchmark::State& s) { return bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)"); }

// Device buffers, written once so every page is resident before timing.
struct Dev {
  void* p = nullptr;
  Dev(benchmark::State& s, int64_t bytes, int fill = 0) {
    if (bench::rt_ok(s, cudaMalloc(&p, static_cast<size_t>(bytes)), "cudaMalloc"))
      bench::rt_ok(s, cudaMemset(p, fill, static_cast<size_t>(bytes)), "cudaMemset");
  }
  ~Dev() {
    if (p) cudaFree(p);
  }
};
struct Pinned {
  void* p = nullptr;
  Pinned(benchmark::State& s, int64_t bytes) {
    if (bench::rt_ok(s, cudaMallocHost(&p, static_cast<size_t>(bytes)), "cudaMallocHost"))
      std::memset(p, 0x11, static_cast<size_t>(bytes));
  }
  ~Pinned() {
    if (p) cudaFreeHost(p);
  }
};
struct Pageable {
  char* p;
  explicit Pageable(int64_t bytes) : p(static_cast<char*>(std::aligned_alloc(4096, static_cast<size_t>(bytes)))) {
    std::memset(p, 0x22, static_cast<size_t>(bytes));
  }
  Pageable(benchmark::State&, int64_t bytes) : Pageable(bytes) {}
  ~Pageable() { std::free(p); }
};

// NVIDIA's cudaMemcpy (device to device) and memsets return before the device finishes: each
// iteration synchronizes, so that every byte is counted on both drivers.
bool done(benchmark::State& s) { return bench::rt_ok(s, cudaStreamSynchronize(nullptr), "cudaStreamSynchronize"); }

// One synchronous cudaMemcpy of the benchmark's size, then the legacy stream's synchronize.
bool copy_done(benchmark::State& s, void* dst, const void* src, cudaMemcpyKind kind) {
  return bench::rt_ok(s, cudaMemcpy(dst, src, static_cast<size_t>(s.range(0)), kind), "cudaMemcpy") && done(s);
}

void copy_loop(benchmark::State& s, void* dst, const void* src, cudaMemcpyKind kind) {
  Meter m{s.range(0)};
  for (auto _ : s)
    if (!copy_done(s, dst, src, kind)) return;
  m.finish(s);
}

void BM_HtoD_Pinned(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0));
  Pinned h(s, s.range(0));
  if (d.p && h.p) copy_loop(s, d.p, h.p, cudaMemcpyHostToDevice);
}

void BM_HtoD_Pageable(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0));
  Pageable h(s.range(0));
  if (d.p) copy_loop(s, d.p, h.p, cudaMemcpyHostToDevice);
}

void BM_DtoH_Pinned(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0), 7);
  Pinned h(s, s.range(0));
  if (d.p && h.p) copy_loop(s, h.p, d.p, cudaMemcpyDeviceToHost);
}

void BM_DtoH_Pageable(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0), 7);
  Pageable h(s.range(0));
  if (d.p) copy_loop(s, h.p, d.p, cudaMemcpyDeviceToHost);
}

void BM_DtoD(benchmark::State& s) {
  if (!ready(s)) return;
  Dev a(s, s.range(0), 1), b(s, s.range(0));
  if (a.p && b.p) copy_loop(s, b.p, a.p, cudaMemcpyDeviceToDevice);
}

// The driver API's own entry, for the same copy.
void BM_DtoD_Driver(benchmark::State& s) {
  if (!ready(s)) return;
  Dev a(s, s.range(0), 1), b(s, s.range(0));
  if (!a.p || !b.p) return;
  const int64_t bytes = s.range(0);
  Meter m{bytes};
  for (auto _ : s)
    if (!bench::drv_ok(s, cuMemcpyDtoD(reinterpret_cast<CUdeviceptr>(b.p), reinterpret_cast<CUdeviceptr>(a.p),
                                       static_cast<size_t>(bytes)), "cuMemcpyDtoD") || !done(s))
      return;
  m.finish(s);
}

// First touch: every iteration copies into device memory allocated just before (not timed),
// where the previous iteration's was freed (not timed either).
void BM_DtoD_Cold(benchmark::State& s) {
  if (!ready(s)) return;
  const int64_t bytes = s.range(0);
  Dev a(s, bytes, 1);
  if (!a.p) return;
  double secs = 0;
  for (auto _ : s) {
    void* d = nullptr;
    if (!bench::rt_ok(s, cudaMalloc(&d, static_cast<size_t>(bytes)), "cudaMalloc")) return;
    auto t0 = Clock::now();
    cudaError_t e = cudaMemcpy(d, a.p, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice);
    if (e == cudaSuccess) e = cudaStreamSynchronize(nullptr);
    auto t1 = Clock::now();
    cudaFree(d);
    if (!bench::rt_ok(s, e, "cudaMemcpy")) return;
    double dt = std::chrono::duration<double>(t1 - t0).count();
    secs += dt;
    s.SetIterationTime(dt);
  }
  bench::bytes(s, bytes);
  std::string base = host_baseline(bytes);
  bench::baseline(s, base.c_str());
  std::lock_guard lk(g_best_m);
  if (auto it = g_best_host.find(bytes); it != g_best_host.end() && secs > 0)
    s.counters["vs_best_host"] = static_cast<double>(bytes) * static_cast<double>(s.iterations()) / secs / it->second;
}

// A fill of the whole device buffer per iteration; `fill(p, bytes)` is true when it succeeded.
template <class Fill>
void fill_bench(benchmark::State& s, Fill&& fill) {
  if (!ready(s)) return;
  const int64_t bytes = s.range(0);
  Dev d(s, bytes);
  if (!d.p) return;
  Meter m{bytes};
  for (auto _ : s)
    if (!fill(d.p, static_cast<size_t>(bytes)) || !done(s)) return;
  m.finish(s);
}

void BM_MemsetD8(benchmark::State& s) {
  fill_bench(s, [&](void* p, size_t n) {
    return bench::drv_ok(s, cuMemsetD8(reinterpret_cast<CUdeviceptr>(p), 0x5a, n), "cuMemsetD8");
  });
}

// The fills BM_MemsetD32 and BM_cudaMemset time (alone, and paired below).
bool fill_d32(benchmark::State& s, void* p, size_t n) {
  return bench::drv_ok(s, cuMemsetD32(reinterpret_cast<CUdeviceptr>(p), 0xdeadbeef, n / 4), "cuMemsetD32");
}
bool fill_memset(benchmark::State& s, void* p, size_t n) {
  return bench::rt_ok(s, cudaMemset(p, 0x5a, n), "cudaMemset");
}

void BM_MemsetD32(benchmark::State& s) {
  fill_bench(s, [&](void* p, size_t n) { return fill_d32(s, p, n); });
}

void BM_cudaMemset(benchmark::State& s) {
  fill_bench(s, [&](void* p, size_t n) { return fill_memset(s, p, n); });
}

// cudaMemcpyAsync of the benchmark's size on stream st, then a synchronize of that stream.
bool async_copy_done(benchmark::State& s, void* dst, const void* src, cudaMemcpyKind kind, cudaStream_t st) {
  return bench::rt_ok(s, cudaMemcpyAsync(dst, src, static_cast<size_t>(s.range(0)), kind, st), "cudaMemcpyAsync") &&
         bench::rt_ok(s, cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

// The same, on a stream that is idle at every iteration.
void async_copy_idle(benchmark::State& s, void* dst, const void* src, cudaMemcpyKind kind) {
  cudaStream_t st;
  if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  Meter m{s.range(0)};
  for (auto _ : s)
    if (!async_copy_done(s, dst, src, kind, st)) break;
  m.finish(s);
  cudaStreamDestroy(st);
}

// An async device-to-device copy on an idle stream.
void BM_MemcpyAsync_IdleStream(benchmark::State& s) {
  if (!ready(s)) return;
  const int64_t bytes = s.range(0);
  Dev a(s, bytes, 1), b(s, bytes);
  if (a.p && b.p) async_copy_idle(s, b.p, a.p, cudaMemcpyDeviceToDevice);
}

// An async host-to-device copy from pinned memory on an idle stream.
void BM_MemcpyAsync_HtoD_Pinned(benchmark::State& s) {
  if (!ready(s)) return;
  const int64_t bytes = s.range(0);
  Dev d(s, bytes);
  Pinned h(s, bytes);
  if (d.p && h.p) async_copy_idle(s, d.p, h.p, cudaMemcpyHostToDevice);
}

// A pitched 2D copy, device to device: rows of 4 KiB in a 4.5 KiB pitch.
void BM_Memcpy2D_DtoD(benchmark::State& s) {
  if (!ready(s)) return;
  const int64_t bytes = s.range(0);
  const size_t width = std::min<size_t>(4096, static_cast<size_t>(bytes)), pitch = width + 512;
  const size_t rows = static_cast<size_t>(bytes) / width;
  Dev a(s, static_cast<int64_t>(pitch * rows), 1), b(s, static_cast<int64_t>(pitch * rows));
  if (!a.p || !b.p) return;
  Meter m{bytes};
  for (auto _ : s)
    if (!bench::rt_ok(s, cudaMemcpy2D(b.p, pitch, a.p, pitch, width, rows, cudaMemcpyDeviceToDevice), "cudaMemcpy2D") ||
        !done(s))
      return;
  m.finish(s);
}

// ---------------------------------------------------------------- the bar at the same moment
// On a host with neighbours (a cloud VM) memory bandwidth moves by a fifth or more between one
// benchmark and the next, so a bar measured seconds before can decide a ratio on its own. The
// BM_Emu_Paired_* benchmarks time each operation and a plain multi-threaded memcpy of the same bytes
// back to back, in alternating order, every iteration: "vs_host" is the median of the
// per-iteration ratios, "host_GBps" the memcpy's median. The memcpy is timed as a whole (from
// the start until its last thread is done), as a copy is; its thread count is the fastest of a
// sweep over 1..N run first.

// memcpy over t threads that wait between copies (the caller is one of them). The threads claim
// 4 MiB chunks as they go, as the emulator's copies do: with fixed shares, one thread the OS
// delays (or one sharing its core) holds the whole copy back, which made the bar low on a
// shared host.
class HostCopier {
 public:
  explicit HostCopier(unsigned helpers) {
    for (unsigned i = 0; i < helpers; ++i) th_.emplace_back([this, i] { loop(i + 1); });
  }
  ~HostCopier() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    go_.notify_all();
    for (auto& t : th_) t.join();
  }
  unsigned max_threads() const { return static_cast<unsigned>(th_.size()) + 1; }
  // Seconds for one copy of `bytes` over t threads.
  double copy(char* dst, const char* src, size_t bytes, unsigned t) {
    const auto t0 = Clock::now();
    {
      std::lock_guard lk(m_);
      dst_ = dst;
      src_ = src;
      bytes_ = bytes;
      threads_ = t;
      left_ = t - 1;
      next_.store(0, std::memory_order_relaxed);
      ++gen_;
    }
    if (t > 1) go_.notify_all();
    work();
    {
      std::unique_lock lk(m_);
      done_.wait(lk, [&] { return left_ == 0; });
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

 private:
  static constexpr size_t kChunk = size_t(4) << 20;
  void work() {
    for (size_t c; (c = next_.fetch_add(1, std::memory_order_relaxed)) * kChunk < bytes_;)
      std::memcpy(dst_ + c * kChunk, src_ + c * kChunk, std::min(kChunk, bytes_ - c * kChunk));
  }
  void loop(unsigned i) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lk(m_);
        go_.wait(lk, [&] { return stop_ || gen_ != seen; });
        if (stop_) return;
        seen = gen_;
        if (i >= threads_) continue;
      }
      work();
      std::lock_guard lk(m_);
      if (--left_ == 0) done_.notify_one();
    }
  }
  std::mutex m_;
  std::condition_variable go_, done_;
  bool stop_ = false;
  uint64_t gen_ = 0;
  unsigned threads_ = 1, left_ = 0;
  std::atomic<size_t> next_{0};
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  size_t bytes_ = 0;
  std::vector<std::thread> th_;
};

HostCopier& host_copier() {
  static HostCopier* c = new HostCopier(hw_threads() - 1);  // leaked: its threads outlive main's benchmarks
  return *c;
}

// The thread count whose memcpy of `bytes` was fastest (best of 3 per count), found once per size.
unsigned best_host_threads(int64_t bytes) {
  static std::map<int64_t, unsigned> found;
  if (auto it = found.find(bytes); it != found.end()) return it->second;
  const HostBufs b = host_bufs(bytes);
  HostCopier& c = host_copier();
  unsigned best_t = 1;
  double best = 1e300;
  for (unsigned t = 1; t <= c.max_threads(); ++t)
    for (int k = 0; k < 3; ++k)
      if (double secs = c.copy(b.dst, b.src, static_cast<size_t>(bytes), t); secs < best) {
        best = secs;
        best_t = t;
      }
  return found[bytes] = best_t;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// `op()` runs the operation once, to completion (false: it failed and said so).
// Emulator only: on a GPU the operation takes a fraction of the memcpy, so reaching the minimum
// time of the operation alone took minutes of memcpys, and the ratio says nothing of a GPU.
template <class Op>
void paired(benchmark::State& s, Op&& op) {
  if (!bench::emulator_only(s)) return;
  const int64_t bytes = s.range(0);
  const unsigned t = best_host_threads(bytes);
  const HostBufs b = host_bufs(bytes);
  std::vector<double> ratio, host_bw;
  bool host_first = true;
  for (auto _ : s) {
    double th = 0, to = 0;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == host_first) {
        th = host_copier().copy(b.dst, b.src, static_cast<size_t>(bytes), t);
        continue;
      }
      const auto t0 = Clock::now();
      if (!op()) return;
      to = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    host_first = !host_first;
    s.SetIterationTime(to);
    ratio.push_back(th / to);
    host_bw.push_back(static_cast<double>(bytes) / th / 1e9);
  }
  bench::bytes(s, bytes);
  s.counters["vs_host"] = median(ratio);
  s.counters["host_GBps"] = median(host_bw);
  s.counters["host_threads"] = t;
}

void BM_Emu_Paired_DtoD(benchmark::State& s) {
  if (!ready(s)) return;
  Dev a(s, s.range(0), 1), b(s, s.range(0));
  if (!a.p || !b.p) return;
  paired(s, [&] { return copy_done(s, b.p, a.p, cudaMemcpyDeviceToDevice); });
}

// Between a device buffer and host memory of type Host (Pinned or Pageable), either way.
template <class Host, cudaMemcpyKind kKind>
void BM_Emu_Paired_HostCopy(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0), 7);
  Host h(s, s.range(0));
  if (!d.p || !h.p) return;
  const bool to_device = kKind == cudaMemcpyHostToDevice;
  paired(s, [&] { return copy_done(s, to_device ? d.p : h.p, to_device ? h.p : d.p, kKind); });
}

void BM_Emu_Paired_Memset(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0));
  if (!d.p) return;
  paired(s, [&] { return fill_memset(s, d.p, static_cast<size_t>(s.range(0))) && done(s); });
}

void BM_Emu_Paired_MemsetD32(benchmark::State& s) {
  if (!ready(s)) return;
  Dev d(s, s.range(0));
  if (!d.p) return;
  paired(s, [&] { return fill_d32(s, d.p, static_cast<size_t>(s.range(0))) && done(s); });
}

void BM_Emu_Paired_AsyncDtoD_IdleStream(benchmark::State& s) {
  if (!ready(s)) return;
  Dev a(s, s.range(0), 1), b(s, s.range(0));
  cudaStream_t st;
  if (!a.p || !b.p || !bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  paired(s, [&] { return async_copy_done(s, b.p, a.p, cudaMemcpyDeviceToDevice, st); });
  cudaStreamDestroy(st);
}

void register_all() {
  const int n = static_cast<int>(hw_threads());
  for (int64_t b : kSizes)
    for (int t = 1; t <= n; ++t) benchmark::RegisterBenchmark("BM_Host_Memcpy", BM_Host_Memcpy)->Arg(b)->Threads(t)->UseRealTime();
  for (int64_t b : kSizes) benchmark::RegisterBenchmark("BM_Host_Memset", BM_Host_Memset)->Arg(b)->UseRealTime();
  struct Named {
    const char* name;
    void (*fn)(benchmark::State&);
  };
  const Named copies[] = {
      {"BM_MemcpyH2DPinned", BM_HtoD_Pinned},
      {"BM_MemcpyH2DPageable", BM_HtoD_Pageable},
      {"BM_MemcpyD2HPinned", BM_DtoH_Pinned},
      {"BM_MemcpyD2HPageable", BM_DtoH_Pageable},
      {"BM_MemcpyD2D", BM_DtoD},
      {"BM_cuMemcpyDtoD", BM_DtoD_Driver},
      {"BM_MemsetD8", BM_MemsetD8},
      {"BM_MemsetD32", BM_MemsetD32},
      {"BM_Memset", BM_cudaMemset},
      {"BM_MemcpyAsyncD2D_IdleStream", BM_MemcpyAsync_IdleStream},
      {"BM_MemcpyAsyncH2DPinned_IdleStream", BM_MemcpyAsync_HtoD_Pinned},
      {"BM_Memcpy2DD2D", BM_Memcpy2D_DtoD},
  };
  for (const auto& c : copies)
    for (int64_t b : kSizes) benchmark::RegisterBenchmark(c.name, c.fn)->Arg(b)->UseRealTime();
  benchmark::RegisterBenchmark("BM_MemcpyD2D_Cold", BM_DtoD_Cold)->Arg(256 << 20)->UseManualTime();
  const Named paired_ops[] = {
      {"BM_Emu_Paired_MemcpyD2D", BM_Emu_Paired_DtoD},
      {"BM_Emu_Paired_MemcpyH2DPinned", BM_Emu_Paired_HostCopy<Pinned, cudaMemcpyHostToDevice>},
      {"BM_Emu_Paired_MemcpyH2DPageable", BM_Emu_Paired_HostCopy<Pageable, cudaMemcpyHostToDevice>},
      {"BM_Emu_Paired_MemcpyD2HPinned", BM_Emu_Paired_HostCopy<Pinned, cudaMemcpyDeviceToHost>},
      {"BM_Emu_Paired_Memset", BM_Emu_Paired_Memset},
      {"BM_Emu_Paired_MemsetD32", BM_Emu_Paired_MemsetD32},
      {"BM_Emu_Paired_MemcpyAsyncD2D_IdleStream", BM_Emu_Paired_AsyncDtoD_IdleStream},
  };
  for (const auto& c : paired_ops) benchmark::RegisterBenchmark(c.name, c.fn)->Arg(256 << 20)->UseManualTime();
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
