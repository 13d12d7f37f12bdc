// The stream-ordered allocator (cudaMallocAsync / cudaFreeAsync) and memory pools, next to
// glibc's malloc/free measured in the same run. Conventions: bench_common.hpp.
//
// What one "operation" (bench::ops) is, per benchmark:
//  - BM_Host_MallocFree/<size>, BM_MallocAsyncFreeAsyncPair/<size>: one alloc+free pair (size 0:
//    the entries alone).
//  - BM_Host_MallocScrambled, BM_MallocAsync10kScrambledFree: one call (10k allocations, then
//    10k frees in a scrambled order: 20k operations an iteration).
//  - BM_MemPoolCreateDestroy: one create+destroy pair.
//  - BM_MallocAsyncLive/<n>: one alloc+free pair while n other allocations are live (their
//    frees scrambled; the sweep shows the cost stays flat from 1 to 1M live allocations).
//  - BM_MallocAsyncLiveScrambled/<n>: one free of a random live allocation of n and one
//    allocation replacing it (the heap keeps n live allocations, holes wander).
//  - BM_PoolsSweep/<n>/<exportable>: one alloc+free pair on one pool while n pools are live,
//    each allocated from once and synchronized (exportable: created with POSIX file-descriptor
//    handles).
//    Counters: rss_per_pool (bytes of resident memory each pool costs, /proc/self/statm),
//    setup_per_pool_us (create + first allocation + free, per pool), fd_limit.
// The sweeps run a fixed number of iterations: their setup dominates, and Google Benchmark
// would otherwise repeat it while it sizes the run.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<size_t> scramble(size_t n, uint64_t seed = 12345) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  uint64_t st = seed;
  for (size_t i = n - 1; i > 0 && n > 1; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[i], order[(st >> 33) % (i + 1)]);
  }
  return order;
}

bool make_stream(benchmark::State& s, cudaStream_t& st) {
  return bench::rt_ok(s, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

// ---------------------------------------------------------------- baselines

void BM_Host_MallocFree(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  for (auto _ : s) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  bench::ops(s, 1);
}

void BM_Host_MallocScrambled(benchmark::State& s) {
  constexpr size_t kLive = 10000;
  std::vector<void*> v(kLive);
  const std::vector<size_t> order = scramble(kLive);
  for (auto _ : s) {
    for (auto& p : v) {
      p = std::malloc(256);
      benchmark::DoNotOptimize(p);
    }
    for (size_t i : order) std::free(v[i]);
  }
  bench::ops(s, 2 * kLive);
}

// ---------------------------------------------------------------- the allocator

void BM_MallocAsyncFreeAsyncPair(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  cudaStream_t st = nullptr;
  if (!make_stream(s, st)) return;
  void* p = nullptr;
  // Warm the pool so the first iteration does not pay for the first chunk.
  if (!bench::rt_ok(s, cudaMallocAsync(&p, n, st), "cudaMallocAsync") ||
      !bench::rt_ok(s, cudaFreeAsync(p, st), "cudaFreeAsync"))
    return;
  for (auto _ : s) {
    cudaMallocAsync(&p, n, st);
    benchmark::DoNotOptimize(p);
    cudaFreeAsync(p, st);
  }
  cudaStreamSynchronize(st);
  cudaStreamDestroy(st);
  bench::ops(s, 1);
  bench::baseline(s, n <= 4096 ? "BM_Host_MallocFree/256" : "BM_Host_MallocFree/1048576");
}

void BM_MallocAsync10kScrambledFree(benchmark::State& s) {
  constexpr size_t kLive = 10000;
  cudaStream_t st = nullptr;
  if (!make_stream(s, st)) return;
  std::vector<void*> v(kLive);
  const std::vector<size_t> order = scramble(kLive);
  for (auto _ : s) {
    for (auto& p : v) cudaMallocAsync(&p, 256, st);
    for (size_t i : order) cudaFreeAsync(v[i], st);
  }
  cudaStreamSynchronize(st);
  cudaStreamDestroy(st);
  bench::ops(s, 2 * kLive);
  bench::baseline(s, "BM_Host_MallocScrambled");
}

void BM_MemPoolCreateDestroy(benchmark::State& s) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  for (auto _ : s) {
    cudaMemPool_t pool = nullptr;
    cudaMemPoolCreate(&pool, &props);
    cudaMemPoolDestroy(pool);
  }
  bench::ops(s, 1);
}

// n live allocations of 256 bytes on stream st, allocated in order and then made
// non-contiguous: every other one is freed in a scrambled order and allocated again.
bool fill_live(benchmark::State& s, cudaStream_t st, std::vector<void*>& v) {
  for (auto& p : v)
    if (!bench::rt_ok(s, cudaMallocAsync(&p, 256, st), "cudaMallocAsync")) return false;
  const std::vector<size_t> order = scramble(v.size(), 777);
  for (size_t k = 0; k < order.size(); k += 2) cudaFreeAsync(v[order[k]], st);
  for (size_t k = 0; k < order.size(); k += 2)
    if (!bench::rt_ok(s, cudaMallocAsync(&v[order[k]], 256, st), "cudaMallocAsync")) return false;
  return true;
}

void free_live(cudaStream_t st, std::vector<void*>& v) {
  for (size_t i : scramble(v.size(), 99)) cudaFreeAsync(v[i], st);
  cudaStreamSynchronize(st);
}

void BM_MallocAsyncLive(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  cudaStream_t st = nullptr;
  if (!make_stream(s, st)) return;
  std::vector<void*> v(n);
  if (fill_live(s, st, v)) {
    void* p = nullptr;
    for (auto _ : s) {
      cudaMallocAsync(&p, 256, st);
      benchmark::DoNotOptimize(p);
      cudaFreeAsync(p, st);
    }
    bench::ops(s, 1);
    bench::baseline(s, "BM_Host_MallocFree/256");
  }
  free_live(st, v);
  cudaStreamDestroy(st);
}

void BM_MallocAsyncLiveScrambled(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  cudaStream_t st = nullptr;
  if (!make_stream(s, st)) return;
  std::vector<void*> v(n);
  if (fill_live(s, st, v)) {
    uint64_t rng = 42;
    for (auto _ : s) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      void*& p = v[(rng >> 33) % n];
      cudaFreeAsync(p, st);
      cudaMallocAsync(&p, 256, st);
    }
    bench::ops(s, 1);
    bench::baseline(s, "BM_Host_MallocFree/256");
  }
  free_live(st, v);
  cudaStreamDestroy(st);
}

// The descriptors a process may open: the soft limit is raised to the hard one, and the hard
// one to `want` where the process may (CAP_SYS_RESOURCE, e.g. root; up to fs.nr_open). The
// emulator's exportable pools past a budget hold no descriptor until exported
// (emu/memory/pool_backing.hpp); the counter fds_per_pool shows what the pools cost.
rlim_t raise_fd_limit(rlim_t want) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want) {
    rlimit up{want, want};
    if (setrlimit(RLIMIT_NOFILE, &up) == 0) return want;
  }
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur;
}

void BM_PoolsSweep(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  const bool exportable = s.range(1) != 0;
  const rlim_t fds = raise_fd_limit(static_cast<rlim_t>(n) + 1024);
  s.counters["fd_limit"] = static_cast<double>(fds);
  cudaStream_t st = nullptr;
  if (!make_stream(s, st)) return;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  props.maxSize = size_t(32) << 20;  // 25k pools of the device's size would not fit the address space
  props.handleTypes = exportable ? cudaMemHandleTypePosixFileDescriptor : cudaMemHandleTypeNone;
  std::vector<cudaMemPool_t> pools;
  pools.reserve(n);
  const double rss0 = static_cast<double>(bench::rss_bytes());
  const double fds0 = static_cast<double>(bench::open_fds());
  const auto t0 = Clock::now();
  bool ok = true;
  for (size_t i = 0; i < n && ok; ++i) {
    cudaMemPool_t pool = nullptr;
    ok = bench::rt_ok(s, cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
    if (!ok) break;
    pools.push_back(pool);
    void* p = nullptr;
    // Synchronized each time: the pool gives its chunk back (release threshold 0), as it would
    // on a GPU, where 25k chunks of 32 MiB would not fit.
    ok = bench::rt_ok(s, cudaMallocFromPoolAsync(&p, 256, pool, st), "cudaMallocFromPoolAsync") &&
         bench::rt_ok(s, cudaFreeAsync(p, st), "cudaFreeAsync") &&
         bench::rt_ok(s, cudaStreamSynchronize(st), "cudaStreamSynchronize");
  }
  const double setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rss1 = static_cast<double>(bench::rss_bytes());
  s.counters["fds_per_pool"] = (static_cast<double>(bench::open_fds()) - fds0) / static_cast<double>(n);
  if (ok) {
    cudaMemPool_t pool = pools[n / 2];
    void* p = nullptr;
    for (auto _ : s) {
      cudaMallocFromPoolAsync(&p, 256, pool, st);
      benchmark::DoNotOptimize(p);
      cudaFreeAsync(p, st);
    }
    bench::ops(s, 1);
    bench::baseline(s, "BM_Host_MallocFree/256");
    s.counters["rss_per_pool"] = (rss1 - rss0) / static_cast<double>(n);
    s.counters["setup_per_pool_us"] = setup_s * 1e6 / static_cast<double>(n);
  }
  cudaStreamSynchronize(st);
  for (cudaMemPool_t pool : pools) cudaMemPoolDestroy(pool);
  cudaStreamDestroy(st);
}

}  // namespace

BENCHMARK(BM_Host_MallocFree)->Arg(256)->Arg(1 << 20)->UseRealTime();
BENCHMARK(BM_Host_MallocScrambled)->UseRealTime()->Unit(benchmark::kMicrosecond);
// Size 0: both calls succeed without allocating (a NULL pointer, measured), so the pair costs
// only the entries' checks: the floor under the other two on either driver.
BENCHMARK(BM_MallocAsyncFreeAsyncPair)->Arg(0)->Arg(256)->Arg(1 << 20)->UseRealTime();
BENCHMARK(BM_MallocAsync10kScrambledFree)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemPoolCreateDestroy)->UseRealTime();
BENCHMARK(BM_MallocAsyncLive)->Arg(1)->Arg(100)->Arg(10000)->Arg(100000)->Arg(1000000)->Iterations(200000)->UseRealTime();
BENCHMARK(BM_MallocAsyncLiveScrambled)->Arg(1)->Arg(100)->Arg(10000)->Arg(100000)->Arg(1000000)->Iterations(200000)->UseRealTime();
BENCHMARK(BM_PoolsSweep)
    ->ArgsProduct({{1, 100, 1000, 10000, 25000}, {0, 1}})
    ->ArgNames({"pools", "exportable"})
    ->Iterations(1000000)
    ->UseRealTime();

BENCHMARK_MAIN();
