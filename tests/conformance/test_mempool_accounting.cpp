// Pool accounting: ReservedMem/UsedMem current and high, the 32 MiB reservation chunks,
// 512-byte sub-allocation, release at synchronization, the release threshold,
// cuMemPoolTrimTo, and attribute get/set rules. Shared behaviour is checked for every
// pool kind (TEMPLATE_TEST_CASE).
#include <string>
#include <vector>

#include "pool_common.hpp"
#include "real_answers.hpp"

TEMPLATE_TEST_CASE("accounting: first allocation reserves a 32 MiB chunk; frees release it at synchronize",
                   "[mempool][accounting]", DevicePool, HostPool, HostNumaPool, ManagedPool, ManagedNoLocationPool) {
  conformance_primary_ctx();
  INFO(TestType::name);
  ScopedStream s;
  ScopedPool pool(TestType::props());
  CHECK(reserved(pool) == 0);
  CUdeviceptr a = 0, b = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 1, pool, s), CUDA_SUCCESS);
  CHECK(a % 512 == 0);
  CHECK(reserved(pool) == kChunk);
  CHECK(used(pool) == 1);  // used memory counts the bytes asked for
  REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 1000, pool, s), CUDA_SUCCESS);
  CHECK(b - a == 512);
  CHECK(used(pool) == 1001);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
  CHECK(used(pool) == 0);          // at once
  CHECK(reserved(pool) == kChunk);  // until the host observes the frees
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == 0);  // release threshold 0
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == kChunk);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 1001);
}

TEST_CASE("accounting: reservations grow by 32 MiB chunks of one contiguous range", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  struct Row {
    size_t first, reserved_after_first, reserved_after_one_more_byte, next_offset;
  };
  const Row rows[] = {
      {1, kChunk, kChunk, 512},
      {2 * kMiB, kChunk, kChunk, 2 * kMiB},
      {kChunk - 1, kChunk, 2 * kChunk, kChunk},
      {kChunk, kChunk, 2 * kChunk, kChunk},
      {kChunk + 1, 2 * kChunk, 2 * kChunk, kChunk + 512},
      {33 * kMiB, 2 * kChunk, 2 * kChunk, 33 * kMiB},
      {2 * kChunk, 2 * kChunk, 3 * kChunk, 2 * kChunk},
      {100 * kMiB, 4 * kChunk, 4 * kChunk, 100 * kMiB},
      {1024 * kMiB, 32 * kChunk, 33 * kChunk, 1024 * kMiB},
  };
  for (const Row& row : rows) {
    INFO("first allocation of " << row.first << " bytes");
    ScopedPool pool(pool_props());
    CUdeviceptr a = 0, b = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&a, row.first, pool, s), CUDA_SUCCESS);
    CHECK(reserved(pool) == row.reserved_after_first);
    REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 1, pool, s), CUDA_SUCCESS);
    CHECK(reserved(pool) == row.reserved_after_one_more_byte);
    CHECK(b - a == row.next_offset);
    CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
    CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK(reserved(pool) == 0);
  }
}

TEST_CASE("accounting: sub-allocations are 512-byte granular and placed one after another", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  const size_t sizes[] = {1, 1000, 513, 512, 511, 256, 1, 1024, 4096, 4097, 1, 65536, 1};
  CUdeviceptr first = 0, prev = 0;
  size_t prev_size = 0, total = 0;
  for (size_t n : sizes) {
    CUdeviceptr d = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&d, n, pool, s), CUDA_SUCCESS);
    if (!first) first = d;
    if (prev) CHECK(d - prev == round_up(prev_size, 512));
    prev = d;
    prev_size = n;
    total += n;
  }
  CHECK(first % (2 * kMiB) == 0);  // a pool's first allocation starts a 2 MiB-aligned chunk
  CHECK(used(pool) == total);
  CHECK(reserved(pool) == kChunk);
}

TEST_CASE("accounting: chunks are released only when nothing in them is live", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  std::vector<CUdeviceptr> v(40);
  for (auto& d : v) REQUIRE_CU(cuMemAllocFromPoolAsync(&d, kMiB, pool, s), CUDA_SUCCESS);
  for (size_t i = 1; i < v.size(); ++i) CHECK(v[i] - v[i - 1] == kMiB);  // contiguous across chunks
  CHECK(reserved(pool) == 2 * kChunk);
  for (size_t i = 0; i < v.size(); ++i)
    if (i != 35) CHECK_CU(cuMemFreeAsync(v[i], s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);  // the second chunk holds v[35]
  CHECK_CU(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);
  CHECK_CU(cuMemFreeAsync(v[35], s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == 0);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 40 * kMiB);
}

TEST_CASE("accounting: which synchronization releases a pool's freed memory", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  struct Row {
    const char* name;
    bool releases;
    void (*sync)(CUstream s);
  };
  const Row rows[] = {
      {"nothing (time passes)", false, [](CUstream) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }},
      {"cuStreamSynchronize of the freeing stream", true, [](CUstream s) { cuStreamSynchronize(s); }},
      {"cuStreamSynchronize of another, idle stream", false,
       [](CUstream) {
         CUstream o = nullptr;
         cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
         cuStreamSynchronize(o);
         cuStreamDestroy(o);
       }},
      {"cuStreamQuery of the freeing stream", false,
       [](CUstream s) {
         wait_idle_unobserved(s);
         cuStreamQuery(s);
       }},
      {"cuEventSynchronize of an event recorded after the free", true,
       [](CUstream s) {
         CUevent e = nullptr;
         cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
         cuEventRecord(e, s);
         cuEventSynchronize(e);
         cuEventDestroy(e);
       }},
      {"cuEventQuery of an event recorded after the free", false,
       [](CUstream s) {
         CUevent e = nullptr;
         cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
         cuEventRecord(e, s);
         wait_idle_unobserved(s);
         cuEventQuery(e);
         cuEventDestroy(e);
       }},
      {"cuEventSynchronize of an event on a stream that waited for the free", true,
       [](CUstream s) {
         CUevent e1 = nullptr, e2 = nullptr;
         CUstream o = nullptr;
         cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING);
         cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
         cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
         cuEventRecord(e1, s);
         cuStreamWaitEvent(o, e1, 0);
         cuEventRecord(e2, o);
         cuEventSynchronize(e2);
         cuEventDestroy(e1);
         cuEventDestroy(e2);
         cuStreamDestroy(o);
       }},
      {"cuCtxSynchronize", true, [](CUstream) { cuCtxSynchronize(); }},
      {"cudaDeviceSynchronize", true, [](CUstream) { cudaDeviceSynchronize(); }},
      {"cuStreamSynchronize of the legacy stream (the freeing stream is non-blocking)", false,
       [](CUstream) { cuStreamSynchronize(nullptr); }},
      {"cuMemPoolTrimTo(0) before anything observed the free", false, nullptr},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    ScopedPool pool(pool_props());
    CUdeviceptr d = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 1000, pool, s), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    REQUIRE_CU(cuMemFreeAsync(d, s), CUDA_SUCCESS);
    if (row.sync) row.sync(s);
    else CHECK_CU(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
    CHECK(reserved(pool) == (row.releases ? 0 : kChunk));
  }
}

TEST_CASE("accounting: the release threshold keeps memory reserved across synchronization", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  cuuint64_t thr = 40 * kMiB;
  REQUIRE_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr), CUDA_SUCCESS);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == thr);
  CUdeviceptr a = 0, b = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 30 * kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 30 * kMiB, pool, s), CUDA_SUCCESS);
  CHECK(reserved(pool) == 2 * kChunk);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);  // released down to (at most) the threshold
  // cuMemPoolTrimTo keeps at least its argument: 32 MiB is not given up to keep 20 MiB.
  CHECK_CU(cuMemPoolTrimTo(pool, 50 * kMiB), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 20 * kMiB), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  CHECK(reserved(pool) == 0);
  thr = UINT64_MAX;
  REQUIRE_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 1, pool, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);  // kept
}

TEST_CASE("accounting: cuMemPoolTrimTo releases whole chunks while at least minBytesToKeep remain",
          "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  cuuint64_t thr = UINT64_MAX;
  REQUIRE_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr), CUDA_SUCCESS);
  CUdeviceptr a = 0, b = 0, c = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 30 * kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 30 * kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&c, 30 * kMiB, pool, s), CUDA_SUCCESS);
  CHECK(b - a == 30 * kMiB);  // allocations span chunk boundaries
  CHECK(c - a == 60 * kMiB);
  CHECK(reserved(pool) == 3 * kChunk);
  CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  CHECK(reserved(pool) == 3 * kChunk);  // every chunk still holds part of a or c
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(c, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == 3 * kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 40 * kMiB), CUDA_SUCCESS);
  CHECK(reserved(pool) == 2 * kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 33 * kMiB), CUDA_SUCCESS);
  CHECK(reserved(pool) == 2 * kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 32 * kMiB), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);
  CHECK_CU(cuMemPoolTrimTo(pool, 1), CUDA_SUCCESS);
  CHECK(reserved(pool) == kChunk);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 3 * kChunk);
  // Released address space is reused first fit.
  CUdeviceptr big = 0, s1 = 0, s2 = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&big, 100 * kMiB, pool, s), CUDA_SUCCESS);
  CHECK(big == a);
  CHECK_CU(cuMemFreeAsync(big, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&s1, 40 * kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&s2, 40 * kMiB, pool, s), CUDA_SUCCESS);
  CHECK(s1 == big);
  CHECK(s2 - big == 40 * kMiB);
  CHECK_CU(cuMemFreeAsync(s1, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(s2, s), CUDA_SUCCESS);
}

TEST_CASE("accounting: UsedMemCurrent drops at the free call, even while the stream is busy", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 1000, pool, s), CUDA_SUCCESS);
  Blocker gate;
  gate.block(s);
  REQUIRE_CU(cuMemFreeAsync(d, s), CUDA_SUCCESS);
  CHECK(used(pool) == 0);
  CHECK(reserved(pool) == kChunk);
  gate.release();
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(reserved(pool) == 0);
}

TEST_CASE("accounting: pool reservations count against cuMemGetInfo", "[mempool][accounting]") {
  conformance_primary_ctx();
  ScopedStream s;
  size_t f0 = 0, f1 = 0, f2 = 0, t = 0;
  REQUIRE_CU(cuMemGetInfo(&f0, &t), CUDA_SUCCESS);
  ScopedPool pool(pool_props());
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 1, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemGetInfo(&f1, &t), CUDA_SUCCESS);
  CHECK(f0 - f1 == kChunk);
  CHECK_CU(cuMemFreeAsync(d, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemGetInfo(&f2, &t), CUDA_SUCCESS);
  CHECK(f2 == f0);
}

TEST_CASE("attributes: high-water marks can only be reset to 0; current values are read-only",
          "[mempool][attributes]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(pool_props());
  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 5000, pool, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 100, pool, s), CUDA_SUCCESS);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 5000);
  cuuint64_t zero = 0, five = 5;
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero), CUDA_SUCCESS);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 100);  // reset to the current value
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &five), REAL_CU("pool.conf.accounting.set.used_high_nonzero"));
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &five), REAL_CU("pool.conf.accounting.set.reserved_high_nonzero"));
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &zero), REAL_CU("pool.conf.accounting.set.reserved_current"));
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero), REAL_CU("pool.conf.accounting.set.used_current"));
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
}

TEST_CASE("attributes: reuse flags are booleans written as 4-byte ints", "[mempool][attributes]") {
  conformance_primary_ctx();
  ScopedPool pool(pool_props());
  int two = 2, minus = -1;
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &two), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &minus), CUDA_SUCCESS);
  unsigned char buf[8];
  std::memset(buf, 0xab, sizeof buf);
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, buf), CUDA_SUCCESS);
  int v = 0;
  std::memcpy(&v, buf, sizeof v);
  CHECK(v == 1);
  CHECK(buf[4] == 0xab);  // only four bytes written
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v), CUDA_SUCCESS);
  CHECK(v == 1);
  int off = 0;
  CHECK_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &off), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &v), CUDA_SUCCESS);
  CHECK(v == 0);
}

TEST_CASE("attributes: unknown attributes, NULL values and NULL pools are CUDA_ERROR_INVALID_VALUE",
          "[mempool][attributes]") {
  conformance_primary_ctx();
  ScopedPool pool(pool_props());
  cuuint64_t v = 0;
  for (int a : {0, 9, 10, 100}) {
    INFO("attribute " << a);
    const std::string n = std::to_string(a);
    CHECK_CU(cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(a), &v), REAL_CU("pool.conf.accounting.get.attr_" + n));
    CHECK_CU(cuMemPoolSetAttribute(pool, static_cast<CUmemPool_attribute>(a), &v), REAL_CU("pool.conf.accounting.set.attr_" + n));
  }
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, nullptr), REAL_CU("pool.conf.accounting.get.null_value"));
  CHECK_CU(cuMemPoolGetAttribute(nullptr, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v), REAL_CU("pool.conf.accounting.get.null_pool"));
  CHECK_CU(cuMemPoolSetAttribute(nullptr, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v), REAL_CU("pool.conf.accounting.set.null_pool"));
  CHECK_CU(cuMemPoolTrimTo(nullptr, 0), REAL_CU("pool.conf.accounting.trim.null_pool"));
  unsigned long long rv = 0, five = 5;
  CHECK_RT(cudaMemPoolGetAttribute(reinterpret_cast<cudaMemPool_t>(pool.pool), cudaMemPoolAttrUsedMemHigh, &rv),
           cudaSuccess);
  CHECK_RT(cudaMemPoolSetAttribute(reinterpret_cast<cudaMemPool_t>(pool.pool), cudaMemPoolAttrUsedMemHigh, &five),
           REAL_RT("pool.conf.accounting.rt.set.used_high_nonzero"));
  CHECK_RT(cudaMemPoolGetAttribute(nullptr, cudaMemPoolAttrUsedMemHigh, &rv), REAL_RT("pool.conf.accounting.rt.get.null_pool"));
  CHECK_RT(cudaMemPoolTrimTo(nullptr, 0), REAL_RT("pool.conf.accounting.rt.trim.null_pool"));
  CHECK_RT(cudaGetLastError(), REAL_RT("pool.conf.accounting.rt.last_error"));
}
