// Virtual memory management (cuMemCreate / cuMemAddressReserve / cuMemMap ...), on whichever
// driver the binary finds (bench/run.sh runs it on ours and, on a GPU machine, on NVIDIA's).
//
//  BM_VmmCycle/<bytes>     create + reserve + map + set access + unmap + free + release: one op
//  BM_VmmMapUnmap          map + set access + unmap of a live handle into a live reservation
//  BM_VmmCreateRelease     cuMemCreate + cuMemRelease
//  BM_Host_MmapCycle       the host's floor: mmap of 2 MiB anonymous memory, mprotect, munmap
//  BM_Emu_VmmLiveHandles/<n>  n live 2 MiB handles at once: descriptors and RSS they cost
//
// Sizes are rounded up to cuMemGetAllocationGranularity (2 MiB on NVIDIA's driver too).
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_common.hpp"

namespace {

bool setup(benchmark::State& s, CUmemAllocationProp& prop, size_t& gran) {
  if (!bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)")) return false;
  prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  return bench::drv_ok(s, cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                       "cuMemGetAllocationGranularity");
}

size_t round_up(size_t n, size_t g) { return (n + g - 1) / g * g; }

CUmemAccessDesc rw_device0() {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = 0;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

// The whole life of one VMM allocation: the seven calls a program makes for it.
void BM_VmmCycle(benchmark::State& s) {
  CUmemAllocationProp prop;
  size_t gran = 0;
  if (!setup(s, prop, gran)) return;
  const size_t n = round_up(static_cast<size_t>(s.range(0)), gran);
  const CUmemAccessDesc acc = rw_device0();
  for (auto _ : s) {
    CUmemGenericAllocationHandle h = 0;
    CUdeviceptr p = 0;
    if (!bench::drv_ok(s, cuMemCreate(&h, n, &prop, 0), "cuMemCreate") ||
        !bench::drv_ok(s, cuMemAddressReserve(&p, n, 0, 0, 0), "cuMemAddressReserve") ||
        !bench::drv_ok(s, cuMemMap(p, n, 0, h, 0), "cuMemMap") ||
        !bench::drv_ok(s, cuMemSetAccess(p, n, &acc, 1), "cuMemSetAccess") ||
        !bench::drv_ok(s, cuMemUnmap(p, n), "cuMemUnmap") ||
        !bench::drv_ok(s, cuMemAddressFree(p, n), "cuMemAddressFree") ||
        !bench::drv_ok(s, cuMemRelease(h), "cuMemRelease"))
      break;
  }
  bench::ops(s, 1);
  bench::baseline(s, "BM_Host_MmapCycle");
}

// Mapping alone: the handle and the reservation live across iterations.
void BM_VmmMapUnmap(benchmark::State& s) {
  CUmemAllocationProp prop;
  size_t gran = 0;
  if (!setup(s, prop, gran)) return;
  const CUmemAccessDesc acc = rw_device0();
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr p = 0;
  if (!bench::drv_ok(s, cuMemCreate(&h, gran, &prop, 0), "cuMemCreate")) return;
  if (!bench::drv_ok(s, cuMemAddressReserve(&p, gran, 0, 0, 0), "cuMemAddressReserve")) {
    cuMemRelease(h);
    return;
  }
  for (auto _ : s) {
    if (!bench::drv_ok(s, cuMemMap(p, gran, 0, h, 0), "cuMemMap") ||
        !bench::drv_ok(s, cuMemSetAccess(p, gran, &acc, 1), "cuMemSetAccess") ||
        !bench::drv_ok(s, cuMemUnmap(p, gran), "cuMemUnmap"))
      break;
  }
  cuMemAddressFree(p, gran);
  cuMemRelease(h);
  bench::ops(s, 1);
  bench::baseline(s, "BM_Host_MmapCycle");
}

void BM_VmmCreateRelease(benchmark::State& s) {
  CUmemAllocationProp prop;
  size_t gran = 0;
  if (!setup(s, prop, gran)) return;
  for (auto _ : s) {
    CUmemGenericAllocationHandle h = 0;
    if (!bench::drv_ok(s, cuMemCreate(&h, gran, &prop, 0), "cuMemCreate") ||
        !bench::drv_ok(s, cuMemRelease(h), "cuMemRelease"))
      break;
  }
  bench::ops(s, 1);
}

// The host's own way to get and drop 2 MiB of address space with memory behind it.
void BM_Host_MmapCycle(benchmark::State& s) {
  constexpr size_t n = size_t(2) << 20;
  for (auto _ : s) {
    void* p = ::mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      s.SkipWithError("mmap");
      break;
    }
    ::mprotect(p, n, PROT_READ | PROT_WRITE);
    benchmark::DoNotOptimize(p);
    ::munmap(p, n);
  }
  bench::ops(s, 1);
}

// n live handles at once, never mapped: what each costs in descriptors and resident memory.
// Device memory while it fits the device, host-located memory beyond (the emulator's devices
// are smaller than 100k x 2 MiB).
void BM_Emu_VmmLiveHandles(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  CUmemAllocationProp prop;
  size_t gran = 0;
  if (!setup(s, prop, gran)) return;
  const size_t n = static_cast<size_t>(s.range(0));
  size_t free_b = 0, total_b = 0;
  if (!bench::drv_ok(s, cuMemGetInfo(&free_b, &total_b), "cuMemGetInfo")) return;
  if (n * gran > free_b / 2) {
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    prop.location.id = 0;
  }
  std::vector<CUmemGenericAllocationHandle> hs(n);
  double fds = 0, rss = 0;
  for (auto _ : s) {
    const size_t fd0 = bench::open_fds(), rss0 = bench::rss_bytes();
    for (size_t i = 0; i < n; ++i)
      if (!bench::drv_ok(s, cuMemCreate(&hs[i], gran, &prop, 0), "cuMemCreate")) {
        for (size_t j = 0; j < i; ++j) cuMemRelease(hs[j]);
        return;
      }
    s.PauseTiming();
    fds += static_cast<double>(bench::open_fds()) - static_cast<double>(fd0);
    rss += static_cast<double>(bench::rss_bytes()) - static_cast<double>(rss0);
    s.ResumeTiming();
    for (size_t i = 0; i < n; ++i) cuMemRelease(hs[i]);
  }
  const double it = static_cast<double>(s.iterations());
  s.counters["fds_used"] = fds / it;
  s.counters["rss_bytes_per_handle"] = rss / it / static_cast<double>(n);
  s.counters["host_located"] = prop.location.type == CU_MEM_LOCATION_TYPE_HOST;
  bench::ops(s, static_cast<int64_t>(n));  // one op: a create and its release
}

}  // namespace

BENCHMARK(BM_VmmCycle)->Arg(2 << 20)->Arg(64 << 20)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VmmMapUnmap)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VmmCreateRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Host_MmapCycle)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Emu_VmmLiveHandles)->Arg(1000)->Arg(10000)->Arg(100000)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
