// What every benchmark binary shares, so that bench/report.py can read any of them alike.
//
// Conventions (docs/benchmarks.md):
//  - Wall time: every benchmark uses ->UseRealTime() (or manual time); blocking calls count.
//  - Per-operation cost: bench::ops(s, N) once after the loop, N = operations per iteration
//    (an "operation" is the unit the table names: one alloc+free pair, one record+sync...).
//    Copies call bench::bytes(s, N) instead. The report derives ns/op or GB/s from these.
//  - Baselines measured in the same run are benchmarks named BM_Host_* (plain malloc, memcpy);
//    a benchmark names its baseline with bench::baseline(s, "BM_Host_..."), and the report
//    prints ours / baseline.
//  - The same binary runs on NVIDIA's driver (bench/run.sh --real) and on ours. Benchmarks that
//    only make sense on the emulator are named BM_Emu_* and call bench::emulator_only(s).
#pragma once
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace bench {

// The emulator exports cuShim* extensions; NVIDIA's driver does not.
inline bool on_emulator() {
  static const bool emu = dlsym(RTLD_DEFAULT, "cuShimGetLastExplanation") != nullptr;
  return emu;
}

// Skips the benchmark on NVIDIA's driver; returns false then.
inline bool emulator_only(benchmark::State& s) {
  if (on_emulator()) return true;
  s.SkipWithError("emulator only");
  return false;
}

inline bool rt_ok(benchmark::State& s, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  s.SkipWithError((std::string(what) + ": " + cudaGetErrorName(e)).c_str());
  return false;
}

inline bool drv_ok(benchmark::State& s, CUresult e, const char* what) {
  if (e == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  cuGetErrorName(e, &name);
  s.SkipWithError((std::string(what) + ": " + (name ? name : std::to_string(e))).c_str());
  return false;
}

// A pinned pool at `t` (id 0) whose memory and pointers can be shared as POSIX descriptors.
inline CUmemoryPool exportable_pool(CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = t;
  p.location.id = 0;
  CUmemoryPool pool = nullptr;
  return cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS ? pool : nullptr;
}

// N operations per iteration (call after the loop).
inline void ops(benchmark::State& s, int64_t per_iteration) {
  s.SetItemsProcessed(static_cast<int64_t>(s.iterations()) * per_iteration);
}

// N bytes moved per iteration (call after the loop).
inline void bytes(benchmark::State& s, int64_t per_iteration) {
  s.SetBytesProcessed(static_cast<int64_t>(s.iterations()) * per_iteration);
}

// The BM_Host_* benchmark of the same binary this one is compared with.
inline void baseline(benchmark::State& s, const char* name) { s.SetLabel(std::string("baseline=") + name); }

// Descriptors this process holds.
inline size_t open_fds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
    --n;  // the directory's own descriptor
  }
  return n;
}

// Resident bytes of this process.
inline size_t rss_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(resident) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace bench
