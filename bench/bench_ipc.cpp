// Speed of pool pointer sharing between processes, on whichever driver the binary finds
// (bench/run.sh runs it on ours and on NVIDIA's), with a local stream-ordered alloc+free pair of
// the same run as a yardstick (local_pair_us).
// The exporter is a child process (this binary, forked before any CUDA call) that sends the
// pool's descriptor and export data over a socketpair, as real programs do.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "multiprocess.hpp"  // tests/conformance: fds and bytes over a socketpair

namespace {

constexpr int kPointers = 2048;

bool init() {
  static bool done = [] {
    CUdevice d;
    CUcontext c;
    return cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&d, 0) == CUDA_SUCCESS &&
           cuDevicePrimaryCtxRetain(&c, d) == CUDA_SUCCESS && cuCtxSetCurrent(c) == CUDA_SUCCESS;
  }();
  return done;
}


// cuMemPoolExportPointer alone, over 1000 live allocations of an exported pool; the baseline
// is a cuMemAllocFromPoolAsync + cuMemFreeAsync pair of the same pool, timed in this run.
void BM_ExportPointer(benchmark::State& s) {
  if (!init()) return s.SkipWithError("no context");
  CUmemoryPool pool = bench::exportable_pool(CU_MEM_LOCATION_TYPE_DEVICE);
  int fd = -1;  // pointers are exportable once the pool was
  if (cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
    return s.SkipWithError("pool export failed");
  close(fd);
  constexpr int kN = 1000;
  std::vector<CUdeviceptr> ds(kN);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < 20; ++r)
    for (auto& d : ds) {
      cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr);
      cuMemFreeAsync(d, nullptr);
    }
  double base = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / (20 * kN);
  for (auto& d : ds) cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr);
  CUmemPoolPtrExportData x;
  for (auto _ : s) {
    auto t1 = std::chrono::steady_clock::now();
    for (CUdeviceptr d : ds)
      if (cuMemPoolExportPointer(&x, d) != CUDA_SUCCESS) return s.SkipWithError("export failed");
    s.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
  }
  for (CUdeviceptr d : ds) cuMemFreeAsync(d, nullptr);
  cuCtxSynchronize();
  cuMemPoolDestroy(pool);
  bench::ops(s, kN);
  s.counters["local_pair_us"] = base / 1e3;
}
BENCHMARK(BM_ExportPointer)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The exporter child: kPointers allocations of its pool exported; fd and data go to the parent.
int exporter(int sock, CUmemLocationType t) {
  if (!init()) return 1;
  CUmemoryPool pool = bench::exportable_pool(t);
  int fd = -1;
  if (cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
    return 1;
  std::vector<CUmemPoolPtrExportData> xs(kPointers);
  for (auto& x : xs) {
    CUdeviceptr d = 0;
    if (cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr) != CUDA_SUCCESS || cuMemPoolExportPointer(&x, d) != CUDA_SUCCESS)
      return 1;
  }
  mp::Channel ch(sock);
  if (!ch.send_fd(fd) || !ch.send(xs.data(), xs.size() * sizeof xs[0])) return 1;
  char done;
  ch.recv(&done, 1);  // stay alive (and keep the exports live) until the parent is done
  return 0;
}

struct Peer {
  pid_t pid = -1;
  mp::Channel ch;
  int fd = -1;
  std::vector<CUmemPoolPtrExportData> xs;
  bool start(CUmemLocationType t) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
    pid = fork();
    if (pid == 0) {
      close(sv[0]);
      std::exit(exporter(sv[1], t));  // exit, not _exit: the child leaves the registry
    }
    close(sv[1]);
    ch = mp::Channel(sv[0]);
    fd = ch.recv_fd();
    xs.resize(kPointers);
    return fd >= 0 && ch.recv(xs.data(), xs.size() * sizeof xs[0]);
  }
  ~Peer() {
    if (ch.fd() >= 0) ch.send("x", 1);
    ch = mp::Channel();  // closes our end
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
};

// The exporters are forked in main(), before this process makes any CUDA call.
Peer g_device_peer, g_numa_peer;
bool g_peers_ok = false;

// cuMemPoolImportPointer + cuMemFree of the imported pointer, against a local stream-ordered
// pair (cuMemAllocFromPoolAsync + cuMemFreeAsync) as the baseline.
void import_bench(benchmark::State& s, CUmemLocationType t) {
  Peer& peer = t == CU_MEM_LOCATION_TYPE_DEVICE ? g_device_peer : g_numa_peer;
  if (!g_peers_ok) return s.SkipWithError("the exporter child failed");
  if (!init()) return s.SkipWithError("no context");
  CUmemoryPool pool = nullptr;
  if (cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(peer.fd)),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
    return s.SkipWithError("import failed");
  CUmemoryPool local = bench::exportable_pool(t);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kPointers; ++i) {
    CUdeviceptr d = 0;
    cuMemAllocFromPoolAsync(&d, 4096, local, nullptr);
    cuMemFreeAsync(d, nullptr);
  }
  double base = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kPointers;
  double fr = 0;
  int iters = 0;
  std::vector<CUdeviceptr> ds(peer.xs.size());
  for (auto _ : s) {
    // The import alone is what the real figure times; freeing the imports is timed apart.
    auto t1 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ds.size(); ++i)
      if (cuMemPoolImportPointer(&ds[i], pool, &peer.xs[i]) != CUDA_SUCCESS)
        return s.SkipWithError("import pointer failed");
    auto t2 = std::chrono::steady_clock::now();
    for (CUdeviceptr d : ds) cuMemFree(d);
    auto t3 = std::chrono::steady_clock::now();
    s.SetIterationTime(std::chrono::duration<double>(t2 - t1).count());
    fr += std::chrono::duration<double, std::nano>(t3 - t2).count() / kPointers;
    ++iters;
  }
  fr /= iters ? iters : 1;
  cuMemPoolDestroy(pool);
  cuMemPoolDestroy(local);
  bench::ops(s, kPointers);
  s.counters["local_pair_us"] = base / 1e3;
  s.counters["free_import_us"] = fr / 1e3;
}
void BM_ImportPointer_Device(benchmark::State& s) { import_bench(s, CU_MEM_LOCATION_TYPE_DEVICE); }
void BM_ImportPointer_HostNuma(benchmark::State& s) { import_bench(s, CU_MEM_LOCATION_TYPE_HOST_NUMA); }
BENCHMARK(BM_ImportPointer_Device)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ImportPointer_HostNuma)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  g_peers_ok = g_device_peer.start(CU_MEM_LOCATION_TYPE_DEVICE) && g_numa_peer.start(CU_MEM_LOCATION_TYPE_HOST_NUMA);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
