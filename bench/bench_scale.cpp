// Scale: does any call get slower as devices or processes are added? (issue 23)
//
//  - BM_Emu_Devices/N: a fresh process with N emulated devices (CUDA_SHIM_DEVICES=N; 72 is an
//    NVL72 rack, 576 the largest NVLink domain) times cuInit, one primary context, and the
//    per-call cost of a few calls on the LAST device: cuMemAlloc+cuMemFree, cudaMallocAsync +
//    cudaFreeAsync, cuDeviceGetAttribute, cuMemGetInfo. The benchmark's time is the alloc pair.
//  - BM_Emu_Importers/N: N other processes import one exportable pool and one of its pointers
//    and stay alive; this process then times, per call, cuMemAllocFromPoolAsync + cuMemFreeAsync
//    of that pool, cuMemPoolExportPointer and cuMemGetInfo (every process's usage: one running
//    total per device, so its cost should not grow with the number of processes).
//    Counters: the importers' idle RSS and private memory per process, and the registry's size.
// Emulator only: NVIDIA's driver runs one real device here and a context per process costs
// hundreds of MiB of GPU memory, so neither sweep means anything there.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "multiprocess.hpp"  // tests/conformance: this binary re-run as a child, fds over a socketpair

namespace {

using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

// kB of a /proc/self/{status,smaps_rollup} line ("VmRSS:", "Private_Dirty:").
long proc_kb(const char* file, const char* key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  return -1;
}

bool ctx_on(int ordinal) {
  CUdevice d;
  CUcontext c;
  return cuDeviceGet(&d, ordinal) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&c, d) == CUDA_SUCCESS &&
         cuCtxSetCurrent(c) == CUDA_SUCCESS;
}

template <class F>
double per_call_ns(int n, F&& f) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) f();
  return ns_since(t0) / n;
}

// ------------------------------------------------------------------ devices

struct DeviceReport {
  double init_ns, ctx_ns, alloc_pair_ns, async_pair_ns, attr_ns, meminfo_ns;
  int count, status;
  long rss_kb;
};

MP_CHILD(devices) {
  DeviceReport r{};
  auto t0 = Clock::now();
  r.status = cuInit(0);
  r.init_ns = ns_since(t0);
  if (r.status == 0) r.status = cuDeviceGetCount(&r.count);
  const int last = r.count - 1;
  t0 = Clock::now();
  if (r.status == 0 && !ctx_on(last)) r.status = -2;
  r.ctx_ns = ns_since(t0);
  if (r.status == 0 && cudaSetDevice(last) != cudaSuccess) r.status = -3;
  if (r.status == 0) {
    CUdeviceptr d;
    r.alloc_pair_ns = per_call_ns(20000, [&] {
      cuMemAlloc(&d, 1 << 20);
      cuMemFree(d);
    });
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    void* p;
    r.async_pair_ns = per_call_ns(200000, [&] {
      cudaMallocAsync(&p, 256, st);
      cudaFreeAsync(p, st);
    });
    CUdevice dev;
    cuDeviceGet(&dev, last);
    int v;
    r.attr_ns = per_call_ns(200000, [&] { cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev); });
    size_t fr, tot;
    r.meminfo_ns = per_call_ns(200000, [&] { cuMemGetInfo(&fr, &tot); });
    cudaStreamDestroy(st);
  }
  r.rss_kb = proc_kb("/proc/self/status", "VmRSS:");
  ch.send_pod(r);
  return 0;
}

void BM_Emu_Devices(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  const int n = static_cast<int>(s.range(0));
  DeviceReport r{};
  for (auto _ : s) {
    mp::Child c = mp::spawn("devices", {"CUDA_SHIM_DEVICES=" + std::to_string(n)});
    r = c.ch.recv_pod<DeviceReport>();
    if (c.wait() != 0 || r.status != 0 || r.count != n)
      return s.SkipWithError(("child failed: status " + std::to_string(r.status)).c_str());
    s.SetIterationTime(r.alloc_pair_ns * 1e-9);
  }
  bench::ops(s, 1);
  s.counters["cuInit_us"] = r.init_ns / 1e3;
  s.counters["first_ctx_us"] = r.ctx_ns / 1e3;
  s.counters["async_pair_ns"] = r.async_pair_ns;
  s.counters["attribute_ns"] = r.attr_ns;
  s.counters["meminfo_ns"] = r.meminfo_ns;
  s.counters["rss_MiB"] = r.rss_kb / 1024.0;
}
BENCHMARK(BM_Emu_Devices)->Arg(1)->Arg(8)->Arg(72)->Arg(576)->Iterations(3)->UseManualTime()->Unit(benchmark::kNanosecond);

// ------------------------------------------------------------------ processes

struct ImporterReport {
  int status;
  long rss_kb, private_kb;
};

// Imports the pool and one pointer, reports its memory, then idles until the parent hangs up.
MP_CHILD(importer) {
  ImporterReport r{};
  int fd = ch.recv_fd();
  auto x = ch.recv_pod<CUmemPoolPtrExportData>();
  CUmemoryPool pool = nullptr;
  CUdeviceptr d = 0;
  r.status = cuInit(0);
  if (r.status == 0 && !ctx_on(0)) r.status = -2;
  if (r.status == 0)
    r.status = cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r.status == 0) r.status = cuMemPoolImportPointer(&d, pool, &x);
  r.rss_kb = proc_kb("/proc/self/status", "VmRSS:");
  r.private_kb = proc_kb("/proc/self/smaps_rollup", "Private_Dirty:");
  ch.send_pod(r);
  char bye;
  ch.recv(&bye, 1);  // EOF when the parent is done
  if (d) cuMemFree(d);
  return 0;
}

long registry_bytes() {
  const char* name = std::getenv("CUDA_SHIM_REGISTRY");
  std::string path = std::string("/dev/shm/") + (name && *name ? name : "cuda-shim-" + std::to_string(getuid()));
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_blocks) * 512 : -1;
}

void BM_Emu_Importers(benchmark::State& s) {
  if (!bench::emulator_only(s)) return;
  const int n = static_cast<int>(s.range(0));
  if (cuInit(0) != CUDA_SUCCESS || !ctx_on(0)) return s.SkipWithError("no context");
  CUmemoryPool pool = bench::exportable_pool();
  int fd = -1;
  CUdeviceptr shared = 0;
  CUmemPoolPtrExportData x{};
  if (!pool || cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS ||
      cuMemAllocFromPoolAsync(&shared, 4096, pool, nullptr) != CUDA_SUCCESS || cuMemPoolExportPointer(&x, shared) != CUDA_SUCCESS)
    return s.SkipWithError("pool export failed");
  std::vector<mp::Child> kids;
  kids.reserve(n);
  for (int i = 0; i < n; ++i) {
    kids.push_back(mp::spawn("importer"));
    kids.back().ch.send_fd(fd);
    kids.back().ch.send_pod(x);
  }
  double rss = 0, priv = 0;
  for (auto& k : kids) {
    auto r = k.ch.recv_pod<ImporterReport>();
    if (r.status != 0) return s.SkipWithError(("importer failed: " + std::to_string(r.status)).c_str());
    rss += r.rss_kb;
    priv += r.private_kb;
  }
  CUdeviceptr d;
  CUmemPoolPtrExportData y;
  size_t fr, tot;
  double exp_ns = 0, info_ns = 0;
  for (auto _ : s) {
    auto t0 = Clock::now();
    for (int i = 0; i < 10000; ++i) {
      cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr);
      cuMemFreeAsync(d, nullptr);
    }
    s.SetIterationTime(ns_since(t0) * 1e-9);
    exp_ns = per_call_ns(10000, [&] { cuMemPoolExportPointer(&y, shared); });
    info_ns = per_call_ns(10000, [&] { cuMemGetInfo(&fr, &tot); });
  }
  bench::ops(s, 10000);
  s.counters["export_pointer_ns"] = exp_ns;
  s.counters["meminfo_ns"] = info_ns;
  s.counters["importer_rss_MiB"] = n ? rss / n / 1024 : 0;
  s.counters["importer_private_MiB"] = n ? priv / n / 1024 : 0;
  s.counters["registry_KiB"] = registry_bytes() / 1024.0;
  for (auto& k : kids) k.ch = mp::Channel();  // hang up: every importer frees and exits
  for (auto& k : kids) k.wait();
  cuMemFreeAsync(shared, nullptr);
  cuCtxSynchronize();
  cuMemPoolDestroy(pool);
  close(fd);
}
BENCHMARK(BM_Emu_Importers)->Arg(1)->Arg(100)->Arg(600)->Iterations(1)->UseManualTime()->Unit(benchmark::kNanosecond);

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  if (mp::run_child_if_asked(argc, argv, rc)) return rc;
  // 600 importers each hold a socket; raise the descriptor limit to what the system allows.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
