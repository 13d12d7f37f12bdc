// Threads: 16 threads share ONE context (the primary context, made current in each) for a few
// seconds (CUDA_SHIM_STRESS_MS, default 3000) and loop random mixes of what a multithreaded
// host program does: synchronous allocations and copies, their own streams and events,
// stream-ordered allocations from the default pool and from one pool all threads share, async
// copies followed by host functions, pinned host memory, VMM create/reserve/map/access/unmap/
// release, legacy IPC handles, cuMemGetInfo and pool attribute reads. Each thread checks only
// its own objects (round-tripped bytes, every call's code); at the end the shared pool's
// UsedMemCurrent is back to 0. Plain CUDA API: runs on NVIDIA's driver too. Built with
// -DCUDA_SHIM_SANITIZE=thread it is ThreadSanitizer's workload for the emulator.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kThreads = 16;
constexpr size_t kGran = size_t(2) << 20;

int stress_ms() {
  const char* e = std::getenv("CUDA_SHIM_STRESS_MS");
  int v = e ? std::atoi(e) : 0;
  return v > 0 ? v : 3000;
}

enum Op {
  kSyncAlloc,
  kStreamsEvents,
  kDefaultPool,
  kSharedPool,
  kAsyncCopyHostFn,
  kPinned,
  kVmm,
  kIpcHandle,
  kMemInfo,
  kPoolAttrs,
  kDefaultStreams,
  kOps
};
const char* const kOpNames[kOps] = {"sync alloc+copy", "streams+events", "default pool", "shared pool",
                                    "async copy+host fn", "pinned host", "vmm", "ipc handle", "mem info",
                                    "pool attributes", "default streams"};

struct Result {
  uint64_t ops[kOps] = {};
  uint64_t failures = 0;
  std::string first;  // the first failure, for the report
};

// What a thread's host function checks: the bytes that came back, in stream order before it.
struct HostCheck {
  const unsigned char* got;
  unsigned char want;
  size_t n;
  std::atomic<int> verdict{-1};  // -1 not run, 0 mismatch, 1 ok
};
void host_check(void* p) {
  auto* c = static_cast<HostCheck*>(p);
  bool ok = true;
  for (size_t i = 0; i < c->n; ++i) ok = ok && c->got[i] == c->want;
  c->verdict.store(ok ? 1 : 0, std::memory_order_release);
}

class Worker {
 public:
  Worker(int id, CUcontext ctx, CUmemoryPool shared, Result& r) : id_(id), ctx_(ctx), shared_(shared), r_(r), rng_(0x5eed + id) {}

  void run(std::chrono::steady_clock::time_point until) {
    if (!ok(cuCtxSetCurrent(ctx_), "cuCtxSetCurrent")) return;
    if (!ok(cuStreamCreate(&own_, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) return;
    if (!ok(cuMemAllocHost(reinterpret_cast<void**>(&src_), kBuf), "cuMemAllocHost") ||
        !ok(cuMemAllocHost(reinterpret_cast<void**>(&dst_), kBuf), "cuMemAllocHost"))
      return;
    while (std::chrono::steady_clock::now() < until && r_.failures == 0) {
      Op op = static_cast<Op>(rng_() % kOps);
      ++iter_;
      switch (op) {
        case kSyncAlloc: sync_alloc(); break;
        case kStreamsEvents: streams_events(); break;
        case kDefaultPool: pool_round_trip(nullptr); break;
        case kSharedPool: pool_round_trip(shared_); break;
        case kAsyncCopyHostFn: async_copy_host_fn(); break;
        case kPinned: pinned(); break;
        case kVmm: vmm(); break;
        case kIpcHandle: ipc_handle(); break;
        case kMemInfo: mem_info(); break;
        case kPoolAttrs: pool_attrs(); break;
        case kDefaultStreams: default_streams(); break;
        default: break;
      }
      ++r_.ops[op];
    }
    ok(cuStreamSynchronize(own_), "cuStreamSynchronize");
    ok(cuStreamDestroy(own_), "cuStreamDestroy");
    ok(cuMemFreeHost(src_), "cuMemFreeHost");
    ok(cuMemFreeHost(dst_), "cuMemFreeHost");
  }

 private:
  static constexpr size_t kBuf = 64 << 10;

  bool ok(CUresult r, const char* what, CUresult want = CUDA_SUCCESS) {
    if (r == want) return true;
    fail(std::string(what) + " returned " + cu_name(r) + " (wanted " + cu_name(want) + ")");
    return false;
  }
  void fail(const std::string& why) {
    if (r_.failures++ == 0) r_.first = "thread " + std::to_string(id_) + ", iteration " + std::to_string(iter_) + ": " + why;
  }
  size_t size() { return 1 + rng_() % kBuf; }
  unsigned char byte() { return static_cast<unsigned char>(id_ * 16 + iter_ % 13 + 1); }
  bool same(const unsigned char* p, unsigned char b, size_t n, const char* what) {
    for (size_t i = 0; i < n; ++i)
      if (p[i] != b) {
        fail(std::string(what) + ": byte " + std::to_string(i) + " is " + std::to_string(p[i]) + ", wrote " +
             std::to_string(b));
        return false;
      }
    return true;
  }

  // cuMemAlloc, HtoD, DtoH, compare, cuMemFree.
  void sync_alloc() {
    size_t n = size();
    CUdeviceptr d = 0;
    if (!ok(cuMemAlloc(&d, n), "cuMemAlloc")) return;
    unsigned char b = byte();
    std::vector<unsigned char> in(n, b), out(n, 0);
    ok(cuMemcpyHtoD(d, in.data(), n), "cuMemcpyHtoD");
    ok(cuMemcpyDtoH(out.data(), d, n), "cuMemcpyDtoH");
    same(out.data(), b, n, "cuMemAlloc round trip");
    ok(cuMemFree(d), "cuMemFree");
  }

  // Two streams and events of its own: record, wait, query, synchronize, destroy.
  void streams_events() {
    CUstream a = nullptr, b = nullptr;
    CUevent e = nullptr, t0 = nullptr, t1 = nullptr;
    // Half of them blocking: the legacy default stream (which every thread uses) then orders
    // itself after them, and they after it, while other threads destroy theirs.
    const unsigned flags = rng_() % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
    if (!ok(cuStreamCreate(&a, flags), "cuStreamCreate") ||
        !ok(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
        !ok(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
        !ok(cuEventCreate(&t0, 0), "cuEventCreate") || !ok(cuEventCreate(&t1, 0), "cuEventCreate"))
      return;
    size_t n = size();
    unsigned char v = byte();
    CUdeviceptr d = 0;
    if (ok(cuMemAlloc(&d, n), "cuMemAlloc")) {
      ok(cuEventRecord(t0, a), "cuEventRecord");
      ok(cuMemsetD8Async(d, v, n, a), "cuMemsetD8Async");
      ok(cuEventRecord(e, a), "cuEventRecord");
      ok(cuStreamWaitEvent(b, e, 0), "cuStreamWaitEvent");
      ok(cuMemcpyDtoHAsync(dst_, d, n, b), "cuMemcpyDtoHAsync");  // ordered after the memset
      ok(cuEventRecord(t1, b), "cuEventRecord");
      CUresult q = cuEventQuery(e);
      if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) ok(q, "cuEventQuery");
      q = cuStreamQuery(b);
      if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) ok(q, "cuStreamQuery");
      if (rng_() % 4 == 0) {
        // Destroyed with work still queued (allowed: it completes, then the resources go); the
        // other stream still waits on it through the event.
        ok(cuStreamDestroy(a), "cuStreamDestroy (busy)");
        ok(cuEventDestroy(e), "cuEventDestroy (pending)");
        a = nullptr;
        e = nullptr;
      }
      ok(cuEventSynchronize(t1), "cuEventSynchronize");
      ok(cuEventQuery(t1), "cuEventQuery");
      float ms = -1;
      if (ok(cuEventElapsedTime(&ms, t0, t1), "cuEventElapsedTime") && ms < 0) fail("negative elapsed time");
      same(dst_, v, n, "memset seen through an event wait");
      if (a) ok(cuStreamSynchronize(a), "cuStreamSynchronize");
      ok(cuMemFree(d), "cuMemFree");
    }
    if (e) ok(cuEventDestroy(e), "cuEventDestroy");
    ok(cuEventDestroy(t0), "cuEventDestroy");
    ok(cuEventDestroy(t1), "cuEventDestroy");
    if (a) ok(cuStreamDestroy(a), "cuStreamDestroy");
    ok(cuStreamDestroy(b), "cuStreamDestroy");
  }

  // Stream-ordered allocation (default pool, or the shared one), copies both ways, free.
  void pool_round_trip(CUmemoryPool pool) {
    size_t n = size();
    CUdeviceptr d = 0;
    CUresult r = pool ? cuMemAllocFromPoolAsync(&d, n, pool, own_) : cuMemAllocAsync(&d, n, own_);
    if (!ok(r, pool ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync")) return;
    unsigned char b = byte();
    std::memset(src_, b, n);
    ok(cuMemcpyHtoDAsync(d, src_, n, own_), "cuMemcpyHtoDAsync");
    ok(cuMemcpyDtoHAsync(dst_, d, n, own_), "cuMemcpyDtoHAsync");
    ok(cuMemFreeAsync(d, own_), "cuMemFreeAsync");
    ok(cuStreamSynchronize(own_), "cuStreamSynchronize");
    same(dst_, b, n, pool ? "shared pool round trip" : "default pool round trip");
  }

  // cuMemcpyAsync there and back, then a host function that checks the bytes in stream order.
  void async_copy_host_fn() {
    size_t n = size();
    CUdeviceptr d = 0;
    if (!ok(cuMemAllocAsync(&d, n, own_), "cuMemAllocAsync")) return;
    unsigned char b = byte();
    std::memset(src_, b, n);
    std::memset(dst_, 0, n);
    HostCheck c{dst_, b, n};
    ok(cuMemcpyAsync(d, reinterpret_cast<CUdeviceptr>(src_), n, own_), "cuMemcpyAsync");
    ok(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst_), d, n, own_), "cuMemcpyAsync");
    ok(cuLaunchHostFunc(own_, host_check, &c), "cuLaunchHostFunc");
    ok(cuMemFreeAsync(d, own_), "cuMemFreeAsync");
    ok(cuStreamSynchronize(own_), "cuStreamSynchronize");
    int v = c.verdict.load(std::memory_order_acquire);
    if (v != 1) fail(v < 0 ? "the host function did not run before cuStreamSynchronize returned"
                           : "the host function saw other bytes than the copy brought back");
  }

  void pinned() {
    size_t n = size();
    void* p = nullptr;
    if (!ok(cuMemAllocHost(&p, n), "cuMemAllocHost")) return;
    unsigned char b = byte();
    std::memset(p, b, n);
    CUdeviceptr d = 0;
    if (ok(cuMemAlloc(&d, n), "cuMemAlloc")) {
      ok(cuMemcpyHtoD(d, p, n), "cuMemcpyHtoD");
      std::memset(p, 0, n);
      ok(cuMemcpyDtoH(p, d, n), "cuMemcpyDtoH");
      same(static_cast<unsigned char*>(p), b, n, "pinned round trip");
      ok(cuMemFree(d), "cuMemFree");
    }
    ok(cuMemFreeHost(p), "cuMemFreeHost");
  }

  void vmm() {
    CUmemAllocationProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle h = 0;
    if (!ok(cuMemCreate(&h, kGran, &prop, 0), "cuMemCreate")) return;
    CUdeviceptr va = 0;
    if (ok(cuMemAddressReserve(&va, kGran, 0, 0, 0), "cuMemAddressReserve")) {
      if (ok(cuMemMap(va, kGran, 0, h, 0), "cuMemMap")) {
        CUmemAccessDesc a;
        std::memset(&a, 0, sizeof a);
        a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        a.location.id = 0;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (ok(cuMemSetAccess(va, kGran, &a, 1), "cuMemSetAccess")) {
          size_t n = size();
          size_t off = (rng_() % (kGran - n)) & ~size_t(15);
          unsigned char b = byte();
          std::vector<unsigned char> in(n, b), out(n, 0);
          ok(cuMemcpyHtoD(va + off, in.data(), n), "cuMemcpyHtoD (vmm)");
          ok(cuMemcpyDtoH(out.data(), va + off, n), "cuMemcpyDtoH (vmm)");
          same(out.data(), b, n, "vmm round trip");
        }
        ok(cuMemUnmap(va, kGran), "cuMemUnmap");
      }
      ok(cuMemAddressFree(va, kGran), "cuMemAddressFree");
    }
    ok(cuMemRelease(h), "cuMemRelease");
  }

  void ipc_handle() {
    CUdeviceptr d = 0;
    if (!ok(cuMemAlloc(&d, 4096), "cuMemAlloc")) return;
    CUipcMemHandle h1, h2;
    ok(cuIpcGetMemHandle(&h1, d), "cuIpcGetMemHandle");
    ok(cuIpcGetMemHandle(&h2, d), "cuIpcGetMemHandle");
    if (std::memcmp(&h1, &h2, sizeof h1) != 0) fail("one allocation gave two different IPC handles");
    ok(cuMemFree(d), "cuMemFree");
  }

  // The context's legacy default stream (one for all threads) and this thread's per-thread
  // stream: a stream-ordered allocation, copies and a host function on each.
  void default_streams() {
    CUstream s = rng_() % 2 ? CU_STREAM_LEGACY : CU_STREAM_PER_THREAD;
    size_t n = size();
    CUdeviceptr d = 0;
    if (!ok(cuMemAllocAsync(&d, n, s), "cuMemAllocAsync (default stream)")) return;
    unsigned char b = byte();
    std::memset(src_, b, n);
    std::memset(dst_, 0, n);
    HostCheck c{dst_, b, n};
    ok(cuMemcpyHtoDAsync(d, src_, n, s), "cuMemcpyHtoDAsync (default stream)");
    ok(cuMemcpyDtoHAsync(dst_, d, n, s), "cuMemcpyDtoHAsync (default stream)");
    ok(cuLaunchHostFunc(s, host_check, &c), "cuLaunchHostFunc (default stream)");
    ok(cuMemFreeAsync(d, s), "cuMemFreeAsync (default stream)");
    ok(cuStreamSynchronize(s), "cuStreamSynchronize (default stream)");
    if (c.verdict.load(std::memory_order_acquire) != 1) fail("a default stream's host function saw other bytes");
  }

  void mem_info() {
    size_t free = 0, total = 0;
    if (ok(cuMemGetInfo(&free, &total), "cuMemGetInfo") && (total == 0 || free > total))
      fail("cuMemGetInfo: free " + std::to_string(free) + " of total " + std::to_string(total));
  }

  void pool_attrs() {
    CUmemoryPool def = nullptr;
    if (!ok(cuDeviceGetDefaultMemPool(&def, 0), "cuDeviceGetDefaultMemPool")) return;
    for (CUmemoryPool p : {def, shared_}) {
      cuuint64_t v = 0;
      for (auto a : {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
                     CU_MEMPOOL_ATTR_USED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                     CU_MEMPOOL_ATTR_RELEASE_THRESHOLD})
        ok(cuMemPoolGetAttribute(p, a, &v), "cuMemPoolGetAttribute");
      int flag = -1;
      ok(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag), "cuMemPoolGetAttribute");
    }
  }

  int id_;
  CUcontext ctx_;
  CUmemoryPool shared_;
  Result& r_;
  std::mt19937 rng_;
  uint64_t iter_ = 0;
  CUstream own_ = nullptr;
  unsigned char* src_ = nullptr;  // pinned staging buffers of this thread
  unsigned char* dst_ = nullptr;
};

}  // namespace

TEST_CASE("16 threads share one context: allocations, streams, events, pools, VMM, IPC handles", "[threads][stress]") {
  CUcontext ctx = conformance_primary_ctx();
  CUmemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pp.location.id = 0;
  CUmemoryPool shared = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&shared, &pp), CUDA_SUCCESS);

  const int ms = stress_ms();
  std::vector<Result> results(kThreads);
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  const auto until = t0 + std::chrono::milliseconds(ms);
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { Worker(i, ctx, shared, results[i]).run(until); });
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  unsigned long long total = 0, per_op[kOps] = {};
  for (int i = 0; i < kThreads; ++i) {
    INFO(results[i].first);
    CHECK(results[i].failures == 0);
    for (int o = 0; o < kOps; ++o) {
      per_op[o] += results[i].ops[o];
      total += results[i].ops[o];
    }
  }
  std::printf("thread-stress: %d threads, %llu operations\n", kThreads, total);
  std::printf("thread-stress: %.2f s (CUDA_SHIM_STRESS_MS=%d), %.0f operations/s;", secs, ms, total / secs);
  for (int o = 0; o < kOps; ++o) std::printf(" %s %llu%s", kOpNames[o], per_op[o], o + 1 < kOps ? "," : "\n");
  std::fflush(stdout);
  for (int o = 0; o < kOps; ++o) {
    INFO(kOpNames[o]);
    CHECK(per_op[o] > 0);  // every kind of operation ran
  }

  // Every thread freed what it took from the shared pool.
  REQUIRE_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  cuuint64_t used = 1;
  REQUIRE_CU(cuMemPoolGetAttribute(shared, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  CHECK(used == 0);
  cuuint64_t high = 0;
  REQUIRE_CU(cuMemPoolGetAttribute(shared, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high), CUDA_SUCCESS);
  CHECK(high > 0);
  CHECK_CU(cuMemPoolDestroy(shared), CUDA_SUCCESS);

  // The context still works for this thread.
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  std::vector<unsigned char> a(4096, 0x2f), b(4096, 0);
  CHECK_CU(cuMemcpyHtoD(d, a.data(), a.size()), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(b.data(), d, b.size()), CUDA_SUCCESS);
  CHECK(a == b);
  CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
}
