// Streams and events: the control calls a test suite makes around every piece of work
// (create/destroy, record+synchronize, synchronize or query an idle stream, query a completed
// event), and the cost of the ABI door itself on a call that does almost nothing.
//
// The runtime calls run unchanged on NVIDIA's driver (bench/run.sh --real), so the report puts
// them side by side. BM_Emu_CallOverhead compares cuDriverGetVersion with a host function that
// does the same work through an indirect call: the difference is what the door (PLT, error
// translation, the explanation and trace flags) adds to every call. The idle trace's cost, in
// one run: BM_Host_CallOverheadIdleFlag is the same host function behind a copy of the door's
// observing-feature check (a relaxed load of a flag that is off, one predictable branch) against
// BM_Host_CallOverhead with no check; BM_Emu_CallOverheadHooked takes the door's hooked path (what
// trace, strict mode and fault injection switch on). Run the binary under CUDA_SHIM_TRACE=/dev/null
// to see BM_Emu_CallOverhead with the trace written.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "bench_common.hpp"

namespace {

void BM_StreamCreateDestroy(benchmark::State& s) {
  if (!bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)")) return;
  for (auto _ : s) {
    cudaStream_t st;
    if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) break;
    if (!bench::rt_ok(s, cudaStreamDestroy(st), "cudaStreamDestroy")) break;
  }
  bench::ops(s, 1);
}

// Non-blocking streams skip the legacy default stream's implicit ordering.
void BM_StreamCreateDestroyNonBlocking(benchmark::State& s) {
  if (!bench::rt_ok(s, cudaFree(nullptr), "cudaFree(0)")) return;
  for (auto _ : s) {
    cudaStream_t st;
    if (!bench::rt_ok(s, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")) break;
    if (!bench::rt_ok(s, cudaStreamDestroy(st), "cudaStreamDestroy")) break;
  }
  bench::ops(s, 1);
}

// One record + one synchronize of the same event on an idle stream.
void BM_EventRecordSynchronize(benchmark::State& s, unsigned flags) {
  cudaStream_t st;
  cudaEvent_t ev;
  if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  if (!bench::rt_ok(s, cudaEventCreateWithFlags(&ev, flags), "cudaEventCreateWithFlags")) return;
  for (auto _ : s) {
    if (!bench::rt_ok(s, cudaEventRecord(ev, st), "cudaEventRecord")) break;
    if (!bench::rt_ok(s, cudaEventSynchronize(ev), "cudaEventSynchronize")) break;
  }
  bench::ops(s, 1);
  cudaEventDestroy(ev);
  cudaStreamDestroy(st);
}

// The same on the legacy default stream (stream 0): the implicit-synchronization rules apply.
void BM_EventRecordSynchronizeDefaultStream(benchmark::State& s) {
  cudaEvent_t ev;
  if (!bench::rt_ok(s, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags")) return;
  for (auto _ : s) {
    if (!bench::rt_ok(s, cudaEventRecord(ev, nullptr), "cudaEventRecord")) break;
    if (!bench::rt_ok(s, cudaEventSynchronize(ev), "cudaEventSynchronize")) break;
  }
  bench::ops(s, 1);
  cudaEventDestroy(ev);
}

void BM_StreamSynchronizeIdle(benchmark::State& s) {
  cudaStream_t st;
  if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  for (auto _ : s)
    if (!bench::rt_ok(s, cudaStreamSynchronize(st), "cudaStreamSynchronize")) break;
  bench::ops(s, 1);
  cudaStreamDestroy(st);
}

void BM_StreamQueryIdle(benchmark::State& s) {
  cudaStream_t st;
  if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  for (auto _ : s)
    if (!bench::rt_ok(s, cudaStreamQuery(st), "cudaStreamQuery")) break;
  bench::ops(s, 1);
  cudaStreamDestroy(st);
}

void BM_EventQueryCompleted(benchmark::State& s) {
  cudaStream_t st;
  cudaEvent_t ev;
  if (!bench::rt_ok(s, cudaStreamCreate(&st), "cudaStreamCreate")) return;
  if (!bench::rt_ok(s, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags")) return;
  if (!bench::rt_ok(s, cudaEventRecord(ev, st), "cudaEventRecord") ||
      !bench::rt_ok(s, cudaEventSynchronize(ev), "cudaEventSynchronize"))
    return;
  for (auto _ : s)
    if (!bench::rt_ok(s, cudaEventQuery(ev), "cudaEventQuery")) break;
  bench::ops(s, 1);
  cudaEventDestroy(ev);
  cudaStreamDestroy(st);
}

// ---- the ABI door ------------------------------------------------------------------------

// The work cuDriverGetVersion's body does (check the pointer, store the version), behind an
// indirect call the compiler cannot inline: the floor any exported function stands on.
__attribute__((noinline)) int host_get_version(int* v) {
  if (!v) return 1;
  *v = 13000;
  return 0;
}
int (*volatile g_host_get_version)(int*) = host_get_version;

// The door's flag, copied: off, it must cost nothing measurable.
std::atomic<bool> g_idle_flag{false};
__attribute__((noinline)) int host_get_version_hooked(int* v) {
  benchmark::ClobberMemory();
  return host_get_version(v);
}
__attribute__((noinline)) int host_get_version_flagged(int* v) {
  if (g_idle_flag.load(std::memory_order_relaxed)) [[unlikely]]
    return host_get_version_hooked(v);
  if (!v) return 1;
  *v = 13000;
  return 0;
}
int (*volatile g_host_get_version_flagged)(int*) = host_get_version_flagged;

void BM_Emu_CallOverhead(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  int v = 0;
  for (auto _ : s) {
    CUresult r = cuDriverGetVersion(&v);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(v);
  }
  bench::ops(s, 1);
  bench::baseline(s, "BM_Host_CallOverhead");
}

void BM_Host_CallOverhead(benchmark::State& s) {
  int v = 0;
  for (auto _ : s) {
    int r = g_host_get_version(&v);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(v);
  }
  bench::ops(s, 1);
}

void BM_Host_CallOverheadIdleFlag(benchmark::State& s) {
  int v = 0;
  for (auto _ : s) {
    int r = g_host_get_version_flagged(&v);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(v);
  }
  bench::ops(s, 1);
  bench::baseline(s, "BM_Host_CallOverhead");
}

// The door's hooked path, switched on by a fault rule that never fires (another entry's, far
// away): the call is numbered and checked against the rules. Against BM_Emu_CallOverhead.
void BM_Emu_CallOverheadHooked(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  using SetFaults = int (*)(const char*);
  auto set = reinterpret_cast<SetFaults>(dlsym(RTLD_DEFAULT, "cuShimSetFaults"));
  if (!set || set("cuMemCreate:CUDA_ERROR_OUT_OF_MEMORY@1000000000") != 0) {
    s.SkipWithError("cuShimSetFaults");
    return;
  }
  int v = 0;
  for (auto _ : s) {
    CUresult r = cuDriverGetVersion(&v);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(v);
  }
  set(nullptr);
  bench::ops(s, 1);
  bench::baseline(s, "BM_Emu_CallOverhead");
}

// A failing call pays for its explanation (formatted once per failure); shown for scale.
void BM_Emu_CallOverheadFailing(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  for (auto _ : s) {
    CUresult r = cuDriverGetVersion(nullptr);
    benchmark::DoNotOptimize(r);
  }
  bench::ops(s, 1);
}

}  // namespace

BENCHMARK(BM_StreamCreateDestroy)->UseRealTime();
BENCHMARK(BM_StreamCreateDestroyNonBlocking)->UseRealTime();
BENCHMARK_CAPTURE(BM_EventRecordSynchronize, timing, cudaEventDefault)->UseRealTime();
BENCHMARK_CAPTURE(BM_EventRecordSynchronize, disable_timing, cudaEventDisableTiming)->UseRealTime();
BENCHMARK(BM_EventRecordSynchronizeDefaultStream)->UseRealTime();
BENCHMARK(BM_StreamSynchronizeIdle)->UseRealTime();
BENCHMARK(BM_StreamQueryIdle)->UseRealTime();
BENCHMARK(BM_EventQueryCompleted)->UseRealTime();
BENCHMARK(BM_Emu_CallOverhead)->UseRealTime();
BENCHMARK(BM_Host_CallOverhead)->UseRealTime();
BENCHMARK(BM_Host_CallOverheadIdleFlag)->UseRealTime();
BENCHMARK(BM_Emu_CallOverheadHooked)->UseRealTime();
BENCHMARK(BM_Emu_CallOverheadFailing)->UseRealTime();

BENCHMARK_MAIN();
