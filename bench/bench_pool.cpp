// Speed of the stream-ordered allocator, next to NVIDIA's real driver and next to the
// host's malloc measured in the same run.
//
// Real figures: /work/shared/REAL_DRIVER.md, "Speed of the real driver" (NVIDIA H200,
// driver 580.159.04, CUDA 13.0); our probe measured the same order on two H200s
// (tools/probe/probe_pools.cpp, misc.*: pair 895 ns, 10k scrambled frees 1395 ns each).
// Each benchmark prints
//   real_us / ours_us   per call or pair,
//   speedup             real / ours (the bar is >= 10),
//   vs_malloc           ours / glibc malloc+free of the same pattern, in this run.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kRealPair256Ns = 939;       // cudaMallocAsync + cudaFreeAsync, 256 B
constexpr double kRealPair1MiBNs = 741;      // the same, 1 MiB
constexpr double kRealScrambledNs = 1175;    // 10k live allocations, frees in scrambled order: per call
constexpr double kRealPoolCreateDestroyNs = 27.3e3;

bool ok(benchmark::State& s, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  s.SkipWithError((std::string(what) + ": " + cudaGetErrorName(e)).c_str());
  return false;
}

void report(benchmark::State& s, double ours_ns, double real_ns, double malloc_ns) {
  s.counters["ours_us"] = ours_ns / 1e3;
  s.counters["real_us"] = real_ns / 1e3;
  s.counters["speedup"] = ours_ns > 0 ? real_ns / ours_ns : 0;
  if (malloc_ns > 0) s.counters["vs_malloc"] = ours_ns / malloc_ns;
}

// The same pattern with glibc, timed in this run as a baseline.
double malloc_pair_ns(size_t n) {
  constexpr int kIters = 200000;
  auto t0 = Clock::now();
  for (int i = 0; i < kIters; ++i) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kIters;
}

std::vector<size_t> scramble(size_t n) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  uint64_t st = 12345;
  for (size_t i = n - 1; i > 0; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[i], order[(st >> 33) % (i + 1)]);
  }
  return order;
}

void BM_MallocAsyncFreeAsyncPair(benchmark::State& s) {
  const size_t n = static_cast<size_t>(s.range(0));
  cudaStream_t st = nullptr;
  if (!ok(s, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate")) return;
  void* p = nullptr;
  // Warm the pool so the first iteration does not pay for the first chunk.
  if (!ok(s, cudaMallocAsync(&p, n, st), "cudaMallocAsync") || !ok(s, cudaFreeAsync(p, st), "cudaFreeAsync")) return;
  auto t0 = Clock::now();
  for (auto _ : s) {
    cudaMallocAsync(&p, n, st);
    benchmark::DoNotOptimize(p);
    cudaFreeAsync(p, st);
  }
  double per = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
               static_cast<double>(s.iterations());
  cudaStreamSynchronize(st);
  cudaStreamDestroy(st);
  report(s, per, n <= 4096 ? kRealPair256Ns : kRealPair1MiBNs, malloc_pair_ns(n));
}

void BM_MallocAsync10kScrambledFree(benchmark::State& s) {
  constexpr size_t kLive = 10000;
  cudaStream_t st = nullptr;
  if (!ok(s, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate")) return;
  std::vector<void*> v(kLive);
  const std::vector<size_t> order = scramble(kLive);
  double total_ns = 0;
  size_t calls = 0;
  for (auto _ : s) {
    auto t0 = Clock::now();
    for (auto& p : v) cudaMallocAsync(&p, 256, st);
    for (size_t i : order) cudaFreeAsync(v[i], st);
    total_ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    calls += 2 * kLive;
  }
  cudaStreamSynchronize(st);
  cudaStreamDestroy(st);
  // Baseline: the same pattern with malloc/free.
  auto t0 = Clock::now();
  for (int rep = 0; rep < 5; ++rep) {
    for (auto& p : v) p = std::malloc(256);
    for (size_t i : order) std::free(v[i]);
  }
  double malloc_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / (5.0 * 2 * kLive);
  s.SetItemsProcessed(static_cast<int64_t>(calls));
  report(s, calls ? total_ns / calls : 0, kRealScrambledNs, malloc_ns);
}

void BM_MemPoolCreateDestroy(benchmark::State& s) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  double total_ns = 0;
  int64_t n = 0;
  for (auto _ : s) {
    auto t0 = Clock::now();
    cudaMemPool_t pool = nullptr;
    cudaMemPoolCreate(&pool, &props);
    cudaMemPoolDestroy(pool);
    total_ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    ++n;
  }
  report(s, n ? total_ns / n : 0, kRealPoolCreateDestroyNs, 0);
}

}  // namespace

BENCHMARK(BM_MallocAsyncFreeAsyncPair)->Arg(256)->Arg(1 << 20)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_MallocAsync10kScrambledFree)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemPoolCreateDestroy)->UseRealTime()->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
