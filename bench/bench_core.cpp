// Speed of the emulator's core paths, next to NVIDIA's real driver.
//
// The real figures below come from /work/shared/REAL_DRIVER.md ("Speed of the real
// driver": NVIDIA H200, driver 580.159.04, CUDA 13.0). Every benchmark prints
//   real_*   the real driver's figure,
//   speedup  real time / our time (or our bandwidth / real bandwidth): the bar is >= 10.
// Our own time per iteration is wall-clock (UseRealTime): blocking calls must count.
//
// Start-up costs (cuInit, first context) only exist once per process, so those
// benchmarks run every iteration in a fresh process: fork + exec of this binary in
// child mode, which times the call with steady_clock and reports the nanoseconds
// through a pipe. Exec (not a bare fork) keeps the child fresh even after this process
// has initialised the driver, and works on NVIDIA's driver, which forbids using CUDA in
// a forked child. A child that does nothing runs the same way, interleaved, as baseline.
//
// Run: bench/run.sh [build-dir] (whole run < 60 s).
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

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

namespace {

using Clock = std::chrono::steady_clock;

// --- real driver figures: /work/shared/REAL_DRIVER.md, "Speed of the real driver" ---
constexpr double kRealCuInitNs = 189e6;            // cuInit (first call): 189 ms
constexpr double kRealContextNs = 128e6;           // cudaFree(0), context creation: 128 ms
// (On NVIDIA's driver this benchmark measured, for comparison: cuInit 159-179 ms; context
// after cuInit 106-108 ms; cudaFree(0) in a process with nothing initialised 201-204 ms.)
constexpr double kRealStreamCreateDestroyNs = 4490;  // cudaStreamCreate + Destroy: 4.49 us
// cudaEventRecord + cudaEventSynchronize on an idle stream: REAL_DRIVER.md's 646 ns matches
// an event created with cudaEventDisableTiming. With timing on, the same H200 machine took
// 5.81 us (this benchmark run on NVIDIA's driver 580.159.04, 2026-11-22): the GPU writes a
// timestamp first. A fresh measurement wins over the page, so both bars are kept.
constexpr double kRealEventRecordSyncNoTimingNs = 646;
constexpr double kRealEventRecordSyncTimingNs = 5809;
constexpr double kRealStreamSyncNs = 402;          // cudaStreamSynchronize, idle
constexpr double kRealMallocFree1MiBNs = 65.8e3;   // cudaMalloc + cudaFree, 1 MiB: 65.8 us
constexpr double kRealH2DPinnedGBps = 55;          // cudaMemcpy 256 MiB H2D pinned: 55 GB/s
constexpr double kRealHostMemcpyGBps = 9.9;        // plain host memcpy 256 MiB on that host

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// speedup = real / ours for a time per iteration.
void report_time(benchmark::State& s, double our_ns, double real_ns) {
  s.counters["real_us"] = real_ns / 1e3;
  s.counters["ours_us"] = our_ns / 1e3;
  s.counters["speedup"] = our_ns > 0 ? real_ns / our_ns : 0;
}

bool check_rt(benchmark::State& s, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::string msg = std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  s.SkipWithError(msg.c_str());
  return false;
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
void BM_FreshProcess(benchmark::State& s, const char* mode, double real_ns) {
  double child_s = 0, process_s = 0, noop_process_s = 0;
  for (auto _ : s) {
    ChildResult base = spawn_child("noop");
    ChildResult r = spawn_child(mode);
    if (!base.error.empty() || !r.error.empty()) {
      s.SkipWithError((base.error.empty() ? r.error : base.error).c_str());
      break;
    }
    double t = static_cast<double>(r.report.ns) * 1e-9;
    s.SetIterationTime(t);
    child_s += t;
    process_s += r.process_s;
    noop_process_s += base.process_s;
  }
  double n = static_cast<double>(s.iterations());
  if (n == 0) return;
  s.counters["process_ms"] = process_s / n * 1e3;
  s.counters["noop_process_ms"] = noop_process_s / n * 1e3;
  s.counters["process_vs_noop"] = noop_process_s > 0 ? process_s / noop_process_s : 0;
  if (real_ns > 0) report_time(s, child_s / n * 1e9, real_ns);
}

// ---------------------------------------------------------------- in-process calls

// Times the body's loop with our own clock so that speedup uses wall time.
template <class Body>
void timed_loop(benchmark::State& s, double real_ns, Body&& body) {
  auto t0 = Clock::now();
  for (auto _ : s)
    if (!body()) return;
  double n = static_cast<double>(s.iterations());
  if (n > 0) report_time(s, seconds_since(t0) * 1e9 / n, real_ns);
}

void BM_StreamCreateDestroy(benchmark::State& s) {
  if (!check_rt(s, cudaFree(nullptr), "cudaFree(0)")) return;
  timed_loop(s, kRealStreamCreateDestroyNs, [&] {
    cudaStream_t st;
    return check_rt(s, cudaStreamCreate(&st), "cudaStreamCreate") &&
           check_rt(s, cudaStreamDestroy(st), "cudaStreamDestroy");
  });
}

void BM_EventRecordSynchronize(benchmark::State& s, unsigned flags, double real_ns) {
  cudaStream_t st;
  cudaEvent_t ev;
  if (!check_rt(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  if (!check_rt(s, cudaEventCreateWithFlags(&ev, flags), "cudaEventCreateWithFlags")) return;
  timed_loop(s, real_ns, [&] {
    return check_rt(s, cudaEventRecord(ev, st), "cudaEventRecord") &&
           check_rt(s, cudaEventSynchronize(ev), "cudaEventSynchronize");
  });
  cudaEventDestroy(ev);
  cudaStreamDestroy(st);
}

void BM_StreamSynchronizeIdle(benchmark::State& s) {
  cudaStream_t st;
  if (!check_rt(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  timed_loop(s, kRealStreamSyncNs,
             [&] { return check_rt(s, cudaStreamSynchronize(st), "cudaStreamSynchronize"); });
  cudaStreamDestroy(st);
}

void BM_MallocFree1MiB(benchmark::State& s) {
  timed_loop(s, kRealMallocFree1MiBNs, [&] {
    void* p = nullptr;
    return check_rt(s, cudaMalloc(&p, 1 << 20), "cudaMalloc") &&
           check_rt(s, cudaFree(p), "cudaFree");
  });
}

constexpr size_t kCopyBytes = size_t{256} << 20;

// Best of a few plain memcpy runs between two touched 256 MiB buffers, in GB/s.
double host_memcpy_gbps() {
  static double gbps = [] {
    std::vector<unsigned char> a(kCopyBytes, 1), b(kCopyBytes, 2);
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
      auto t0 = Clock::now();
      std::memcpy(b.data(), a.data(), kCopyBytes);
      benchmark::ClobberMemory();
      best = std::min(best, seconds_since(t0));
    }
    return static_cast<double>(kCopyBytes) / best / 1e9;
  }();
  return gbps;
}

void report_bandwidth(benchmark::State& s, double seconds) {
  double n = static_cast<double>(s.iterations());
  if (n == 0 || seconds <= 0) return;
  double gbps = n * static_cast<double>(kCopyBytes) / seconds / 1e9;
  double host = host_memcpy_gbps();
  s.SetBytesProcessed(static_cast<int64_t>(n) * static_cast<int64_t>(kCopyBytes));
  s.counters["GBps"] = gbps;
  s.counters["host_memcpy_GBps"] = host;  // this machine, this run
  s.counters["vs_host_memcpy"] = gbps / host;
  s.counters["real_GBps"] = kRealH2DPinnedGBps;
  s.counters["real_vs_host_memcpy"] = kRealH2DPinnedGBps / kRealHostMemcpyGBps;
  s.counters["speedup"] = gbps / kRealH2DPinnedGBps;
}

void BM_MemcpyH2DPinned256MiB(benchmark::State& s) {
  void* host = nullptr;
  void* dev = nullptr;
  if (!check_rt(s, cudaMallocHost(&host, kCopyBytes), "cudaMallocHost(256 MiB)")) return;
  if (!check_rt(s, cudaMalloc(&dev, kCopyBytes), "cudaMalloc(256 MiB)")) {
    cudaFreeHost(host);
    return;
  }
  std::memset(host, 0x5A, kCopyBytes);
  // One untimed copy so that first-touch page faults on the destination are not counted.
  if (check_rt(s, cudaMemcpy(dev, host, kCopyBytes, cudaMemcpyHostToDevice), "cudaMemcpy")) {
    auto t0 = Clock::now();
    for (auto _ : s)
      if (!check_rt(s, cudaMemcpy(dev, host, kCopyBytes, cudaMemcpyHostToDevice), "cudaMemcpy"))
        break;
    report_bandwidth(s, seconds_since(t0));
  }
  cudaFree(dev);
  cudaFreeHost(host);
}

// The floor the emulator's copies stand on: memcpy between two pageable buffers.
void BM_HostMemcpy256MiB(benchmark::State& s) {
  std::vector<unsigned char> a(kCopyBytes, 1), b(kCopyBytes, 2);
  auto t0 = Clock::now();
  for (auto _ : s) {
    std::memcpy(b.data(), a.data(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  double seconds = seconds_since(t0);
  double n = static_cast<double>(s.iterations());
  s.SetBytesProcessed(static_cast<int64_t>(n) * static_cast<int64_t>(kCopyBytes));
  s.counters["GBps"] = n * static_cast<double>(kCopyBytes) / seconds / 1e9;
  s.counters["real_host_GBps"] = kRealHostMemcpyGBps;
}

// Fresh-process benchmarks run a fixed number of iterations: their manual time is tiny for
// the baseline, and a time-based run would spawn processes without end.
constexpr int kFreshIterations = 20;

}  // namespace

BENCHMARK_CAPTURE(BM_FreshProcess, noop, "noop", 0.0)
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshProcess, cuInit, "cuinit", kRealCuInitNs)
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
// REAL_DRIVER.md has one context figure, taken with cudaFree(0); it is the bar for both.
BENCHMARK_CAPTURE(BM_FreshProcess, PrimaryCtxRetain_SetCurrent, "context", kRealContextNs)
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshProcess, cudaFree0, "cudafree0", kRealContextNs)
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
// No real figure of its own: compare with cuInit + cudaFree0.
BENCHMARK_CAPTURE(BM_FreshProcess, cudaFree0_cold, "cudafree0_cold", 0.0)
    ->UseManualTime()->Iterations(kFreshIterations)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StreamCreateDestroy)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_EventRecordSynchronize, timing, cudaEventDefault,
                  kRealEventRecordSyncTimingNs)
    ->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_EventRecordSynchronize, disable_timing, cudaEventDisableTiming,
                  kRealEventRecordSyncNoTimingNs)
    ->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_StreamSynchronizeIdle)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_MallocFree1MiB)->UseRealTime()->Unit(benchmark::kNanosecond);
BENCHMARK(BM_MemcpyH2DPinned256MiB)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostMemcpy256MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--bench-child") == 0)
    return run_child(argv[2], std::atoi(argv[3]));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
