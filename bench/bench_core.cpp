// Start-up and the plain allocation calls, on whichever driver the binary finds (bench/run.sh
// runs it on ours and, on a GPU machine, on NVIDIA's: the report puts the two side by side).
//
// Start-up costs (cuInit, first context) only exist once per process, so those
// benchmarks run every iteration in a fresh process: fork + exec of this binary in
// child mode, which times the call with steady_clock and reports the nanoseconds
// through a pipe. Exec (not a bare fork) keeps the child fresh even after this process
// has initialised the driver, and works on NVIDIA's driver, which forbids using CUDA in
// a forked child. A child that does nothing runs the same way, interleaved, as baseline.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------- fresh processes

// Child mode: argv = {self, "--bench-child", MODE, FD}. Writes {ns, status} to FD.
struct ChildReport {
  int64_t ns;
  int32_t status;  // 0, or the CUresult / cudaError_t of the failing call
};

int run_child(const char* mode, int fd) {
  ChildReport r{0, 0};
  if (std::strcmp(mode, "noop") == 0) {
    auto t0 = Clock::now();
    benchmark::ClobberMemory();
    r.ns = std::chrono::nanoseconds(Clock::now() - t0).count();
  } else if (std::strcmp(mode, "cuinit") == 0) {
    auto t0 = Clock::now();
    r.status = cuInit(0);
    r.ns = std::chrono::nanoseconds(Clock::now() - t0).count();
  } else if (std::strcmp(mode, "context") == 0) {
    // The context alone: cuInit is done first and not counted.
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    r.status = cuInit(0);
    if (r.status == 0) r.status = cuDeviceGet(&dev, 0);
    if (r.status == 0) {
      auto t0 = Clock::now();
      r.status = cuDevicePrimaryCtxRetain(&ctx, dev);
      if (r.status == 0) r.status = cuCtxSetCurrent(ctx);
      r.ns = std::chrono::nanoseconds(Clock::now() - t0).count();
    }
  } else if (std::strcmp(mode, "cudafree0") == 0) {
    // The runtime's idiom for "create the context now"; cuInit first, not counted.
    r.status = cuInit(0);
    if (r.status == 0) {
      auto t0 = Clock::now();
      r.status = cudaFree(nullptr);
      r.ns = std::chrono::nanoseconds(Clock::now() - t0).count();
    }
  } else if (std::strcmp(mode, "cudafree0_cold") == 0) {
    // Nothing initialised before: cudaFree(0) pays for driver, runtime and context.
    auto t0 = Clock::now();
    r.status = cudaFree(nullptr);
    r.ns = std::chrono::nanoseconds(Clock::now() - t0).count();
  } else {
    r.status = -1;
  }
  ssize_t w = write(fd, &r, sizeof r);
  return w == static_cast<ssize_t>(sizeof r) ? 0 : 3;
}

struct ChildResult {
  ChildReport report{0, -1};
  double process_s = 0;  // fork -> reaped, wall clock
  std::string error;
};

ChildResult spawn_child(const char* mode) {
  ChildResult res;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    res.error = "pipe2 failed";
    return res;
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls (the driver may have threads running in this process).
  std::string fd = std::to_string(p[1]);
  char* argv[] = {const_cast<char*>("bench_core"), const_cast<char*>("--bench-child"),
                  const_cast<char*>(mode), fd.data(), nullptr};
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    fcntl(p[1], F_SETFD, 0);  // the write end survives exec; the read end does not
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    res.error = "fork failed";
    return res;
  }
  ssize_t n = read(p[0], &res.report, sizeof res.report);
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  res.process_s = seconds_since(t0);
  if (n != static_cast<ssize_t>(sizeof res.report) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    res.error = std::string("child '") + mode + "' died (status " + std::to_string(status) + ")";
  else if (res.report.status != 0)
    res.error = std::string("child '") + mode + "' failed with error " +
                std::to_string(res.report.status);
  return res;
}

// Each iteration: one baseline child (noop) and one measured child. The reported time
// is what the measured child timed itself; process_ms and noop_process_ms compare the
// whole fresh process with and without the call.
void BM_FreshProcess(benchmark::State& s, const char* mode) {
  double process_s = 0, noop_process_s = 0;
  for (auto _ : s) {
    ChildResult base = spawn_child("noop");
    ChildResult r = spawn_child(mode);
    if (!base.error.empty() || !r.error.empty()) {
      s.SkipWithError((base.error.empty() ? r.error : base.error).c_str());
      break;
    }
    double t = static_cast<double>(r.report.ns) * 1e-9;
    s.SetIterationTime(t);
    process_s += r.process_s;
    noop_process_s += base.process_s;
  }
  double n = static_cast<double>(s.iterations());
  if (n == 0) return;
  s.counters["process_ms"] = process_s / n * 1e3;
  s.counters["noop_process_ms"] = noop_process_s / n * 1e3;
  s.counters["process_vs_noop"] = noop_process_s > 0 ? process_s / noop_process_s : 0;
  bench::ops(s, 1);
}

// ---------------------------------------------------------------- in-process calls

// cudaMalloc + cudaFree of 1 MiB, next to glibc doing the same in this run.
void BM_MallocFree1MiB(benchmark::State& s) {
  if (!bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)")) return;
  for (auto _ : s) {
    void* p = nullptr;
    if (!bench::rt_ok(s, cudaMalloc(&p, 1 << 20), "cudaMalloc") || !bench::rt_ok(s, cudaFree(p), "cudaFree")) break;
  }
  bench::ops(s, 1);
  bench::baseline(s, "BM_Host_MallocFree1MiB");
}

// cuMemGetInfo: the device's free memory, which counts every process's allocations.
void BM_MemGetInfo(benchmark::State& s) {
  if (!bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)")) return;
  size_t fr = 0, tot = 0;
  for (auto _ : s)
    if (!bench::drv_ok(s, cuMemGetInfo(&fr, &tot), "cuMemGetInfo")) break;
  bench::ops(s, 1);
}

// The floor: glibc malloc + free of 1 MiB, written to so that it is not optimized away. glibc
// keeps a freed 1 MiB block for the next request after the first (its mmap threshold adapts).
void BM_Host_MallocFree1MiB(benchmark::State& s) {
  for (auto _ : s) {
    void* p = std::malloc(1 << 20);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  bench::ops(s, 1);
}

// Fresh-process benchmarks run a fixed number of iterations: their manual time is tiny for
// the baseline, and a time-based run would spawn processes without end.
constexpr int kFreshIterations = 20;

}  // namespace

BENCHMARK_CAPTURE(BM_FreshProcess, noop, "noop")
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshProcess, cuInit, "cuinit")
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshProcess, PrimaryCtxRetain_SetCurrent, "context")
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshProcess, cudaFree0, "cudafree0")
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
// Driver, runtime and context together, from nothing.
BENCHMARK_CAPTURE(BM_FreshProcess, cudaFree0_cold, "cudafree0_cold")
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MallocFree1MiB)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_MemGetInfo)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_Host_MallocFree1MiB)->UseRealTime()->Unit(benchmark::kNanosecond);

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--bench-child") == 0)
    return run_child(argv[2], std::atoi(argv[3]));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
