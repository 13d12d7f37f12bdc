// Managed memory: cuMemAllocManaged / cudaMallocManaged (flags, sizes, failures), what managed
// memory is (host access, copies and memsets, pointer attributes, the requested size as its
// bound), what other memory APIs make of it, how it is freed, and cuMemGetInfo. Expected codes
// and values measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0;
// tools/probe/probe_managed.cpp, keys "alloc.*", "props.*", "edge.*", "huge.*"), unless marked
// otherwise. Stream attachment: test_managed_attach.cpp; advice, prefetches and range queries:
// test_managed_advise.cpp.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "managed_common.hpp"
#include "multiprocess.hpp"

namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
// What the tests preset outputs to, to see whether a failing call wrote them.
constexpr unsigned long long kSentinel = 0xdead0000beefULL;

CUmemLocation dev0() {
  CUmemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = CU_MEM_LOCATION_TYPE_DEVICE;
  l.id = 0;
  return l;
}

void* vp(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
CUdeviceptr dp(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// cuPointerGetAttribute into a zeroed 8-byte slot (enough for every attribute read here).
CUresult attr(CUpointer_attribute a, CUdeviceptr p, unsigned long long& v) {
  v = 0;
  return cuPointerGetAttribute(&v, a, p);
}

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed);
  return v;
}
bool equal(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }

}  // namespace

// ---- device attributes ----------------------------------------------------------------------
TEST_CASE("managed memory device attributes", "[managed][attr]") {
  conformance_primary_ctx();
  int v = -77;
  CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0), CUDA_SUCCESS);
  CHECK(v == 1);
  v = -77;
  CHECK_RT(cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 0), cudaSuccess);
  CHECK(v == 1);
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  CHECK_RT(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  CHECK(prop.managedMemory == 1);
  bool check_concurrent = true;
#if !CUDA_SHIM_REAL_BACKEND  // a profile knob may describe a GPU without concurrent managed access
  check_concurrent = std::getenv("CUDA_SHIM_CONCURRENT_MANAGED_ACCESS") == nullptr;
#endif
  if (check_concurrent) {
    v = -77;
    CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0), CUDA_SUCCESS);
    CHECK(v == 1);
    v = -77;
    CHECK_RT(cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, 0), cudaSuccess);
    CHECK(v == 1);
    CHECK(prop.concurrentManagedAccess == 1);
  }
}

// ---- cuMemAllocManaged ----------------------------------------------------------------------
TEST_CASE("cuMemAllocManaged: flags must be CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST", "[managed][alloc]") {
  conformance_primary_ctx();
  for (unsigned f : {0x1u, 0x2u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    REQUIRE_CU(cuMemAllocManaged(&d, 4096, f), CUDA_SUCCESS);
    CHECK(d != 0);
    CHECK(d % (2 * kMiB) == 0);  // measured: a lone allocation starts a 2 MiB chunk
    CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
  }
  // 4 is CU_MEM_ATTACH_SINGLE: stream attachment, not an allocation flag (measured).
  for (unsigned f : {0x0u, 0x3u, 0x4u, 0x5u, 0x6u, 0x7u, 0x8u, 0x10u, 0x80000000u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    CHECK_CU(cuMemAllocManaged(&d, 4096, f), CUDA_ERROR_INVALID_VALUE);
    CHECK(d == 0);  // measured: the output is cleared
  }
}

TEST_CASE("cuMemAllocManaged: size 0", "[managed][alloc]") {
  conformance_primary_ctx();
  for (unsigned f : {0x1u, 0x2u, 0x4u, 0x8u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    CHECK_CU(cuMemAllocManaged(&d, 0, f), CUDA_ERROR_INVALID_VALUE);
    CHECK(d == 0);
  }
}

TEST_CASE("cuMemAllocManaged: NULL dptr", "[managed][alloc]") {
  conformance_primary_ctx();
  CHECK_CU(cuMemAllocManaged(nullptr, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocManaged(nullptr, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocManaged(nullptr, 4096, 8), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemAllocManaged: the requested size is the allocation's size", "[managed][alloc]") {
  conformance_primary_ctx();
  for (size_t n : {size_t(1), size_t(4096), size_t(4097), 64 * kKiB + 1, 2 * kMiB + 1, 3 * kMiB}) {
    INFO("size " << n);
    Managed m(n);
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK_CU(cuMemGetAddressRange(&base, &size, m), CUDA_SUCCESS);
    CHECK(base == m.p);
    CHECK(size == n);
    unsigned long long rs = 0;
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_RANGE_SIZE, m, rs), CUDA_SUCCESS);
    CHECK(rs == n);
  }
}

// As the probe measured it: the primary context made current, then unbound with
// cuCtxSetCurrent(NULL). On a thread of its own, whose context stack holds just that one (a
// stack left deeper by another test would pop to a context still current).
TEST_CASE("cuMemAllocManaged: no current context", "[managed][alloc]") {
  const CUcontext primary = conformance_primary_ctx();
  Managed m(64 * kKiB);
  const CUdeviceptr p = m;
  CUresult set = CUDA_ERROR_UNKNOWN, unset = CUDA_ERROR_UNKNOWN, alloc = CUDA_SUCCESS, managed = CUDA_ERROR_UNKNOWN;
  CUcontext after = primary;
  CUdeviceptr d = kSentinel;
  unsigned long long is_managed = 0;
  std::thread([&] {
    set = cuCtxSetCurrent(primary);
    unset = cuCtxSetCurrent(nullptr);
    cuCtxGetCurrent(&after);
    alloc = cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL);
    managed = attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, p, is_managed);
  }).join();
  REQUIRE_CU(set, CUDA_SUCCESS);
  REQUIRE_CU(unset, CUDA_SUCCESS);
  REQUIRE(after == nullptr);
  CHECK_CU(alloc, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(d == 0);
  // Measured: pointer queries need no context.
  CHECK_CU(managed, CUDA_SUCCESS);
  CHECK(is_managed == 1);
  // A thread that never had a context.
  alloc = CUDA_SUCCESS;
  d = kSentinel;
  std::thread([&] { alloc = cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL); }).join();
  CHECK_CU(alloc, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(d == 0);
}

TEST_CASE("cuMemFree of managed memory needs no current context", "[managed][free]") {
  const CUcontext primary = conformance_primary_ctx();
  CUdeviceptr p = 0, q = 0;
  REQUIRE_CU(cuMemAllocManaged(&p, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocManaged(&q, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CUresult unset = CUDA_ERROR_UNKNOWN, rp = CUDA_ERROR_UNKNOWN, rq = CUDA_ERROR_UNKNOWN;
  CUcontext after = primary;
  std::thread([&] {  // as the probe measured it: made current, then unbound
    cuCtxSetCurrent(primary);
    unset = cuCtxSetCurrent(nullptr);
    cuCtxGetCurrent(&after);
    rp = cuMemFree(p);
  }).join();
  std::thread([&] { rq = cuMemFree(q); }).join();  // a thread that never had a context
  REQUIRE_CU(unset, CUDA_SUCCESS);
  REQUIRE(after == nullptr);
  CHECK_CU(rp, CUDA_SUCCESS);  // measured
  CHECK_CU(rq, CUDA_SUCCESS);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, p, v), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, q, v), CUDA_ERROR_INVALID_VALUE);
}

MP_CHILD(managed_before_init) {
  CUdeviceptr d = kSentinel;
  ch.send_int(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL));
  ch.send_int(d == 0);
  return 0;
}

TEST_CASE("cuMemAllocManaged: before cuInit", "[managed][alloc]") {
  auto c = mp::spawn("managed_before_init");
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_NOT_INITIALIZED);
  CHECK(c.ch.recv_int() == 1);  // measured: out=null
  CHECK(c.wait() == 0);
}

// Far beyond the device and the host together. Asked in a child: it never touches the memory,
// but a driver that granted it would reserve that much address space.
MP_CHILD(managed_huge) {
  child_primary_ctx();
  for (size_t n : {size_t(1) << 50, ~size_t(0)}) {
    CUdeviceptr d = kSentinel;
    CUresult r = cuMemAllocManaged(&d, n, CU_MEM_ATTACH_GLOBAL);
    ch.send_int(r);
    ch.send_int(d == 0);
    if (r == CUDA_SUCCESS) cuMemFree(d);
  }
  void* p = reinterpret_cast<void*>(kSentinel);
  cudaError_t e = cudaMallocManaged(&p, size_t(1) << 50, cudaMemAttachGlobal);
  ch.send_int(e);
  ch.send_int(p == nullptr);
  if (e == cudaSuccess) cudaFree(p);
  return 0;
}

TEST_CASE("cuMemAllocManaged / cudaMallocManaged: more than the machine holds", "[managed][alloc]") {
  auto c = mp::spawn("managed_huge");
  for (const char* n : {"1 << 50", "SIZE_MAX"}) {
    INFO(n);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(c.ch.recv_int() == 1);  // out=null
  }
  CHECK_RT(static_cast<cudaError_t>(c.ch.recv_int()), cudaErrorMemoryAllocation);
  CHECK(c.ch.recv_int() == 1);
  CHECK(c.wait() == 0);
}

// ---- cudaMallocManaged ----------------------------------------------------------------------
TEST_CASE("cudaMallocManaged: flags", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  for (unsigned f : {unsigned(cudaMemAttachGlobal), unsigned(cudaMemAttachHost)}) {
    INFO("flags " << f);
    void* p = nullptr;
    REQUIRE_RT(cudaMallocManaged(&p, 4096, f), cudaSuccess);
    CHECK(p != nullptr);
    CHECK_RT(cudaFree(p), cudaSuccess);
  }
  for (unsigned f : {0u, 3u, 4u, 8u}) {
    INFO("flags " << f);
    void* p = reinterpret_cast<void*>(kSentinel);
    CHECK_RT(cudaMallocManaged(&p, 4096, f), cudaErrorInvalidValue);
    CHECK(p == nullptr);
  }
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);  // not sticky: cleared by the read
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

TEST_CASE("cudaMallocManaged: size 0 succeeds with NULL, before the flags are checked", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  void* p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0, cudaMemAttachGlobal), cudaSuccess);
  CHECK(p == nullptr);
  p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0, 8), cudaSuccess);
  CHECK(p == nullptr);
  p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0), cudaSuccess);  // default flags: cudaMemAttachGlobal
  CHECK(p == nullptr);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

TEST_CASE("cudaMallocManaged: NULL devPtr", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  CHECK_RT(cudaMallocManaged(nullptr, 4096, cudaMemAttachGlobal), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("cudaMallocManaged: default flags, a one-byte allocation", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, 1), cudaSuccess);
  CHECK(reinterpret_cast<uintptr_t>(p) % (2 * kMiB) == 0);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, dp(p), v), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_RT(cudaFree(p), cudaSuccess);
  REQUIRE_RT(cudaMallocManaged(&p, 1, cudaMemAttachHost), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaSuccess);
}

// ---- what managed memory is -----------------------------------------------------------------
TEST_CASE("managed memory: the host reads and writes it through the pointer", "[managed][access]") {
  conformance_primary_ctx();
  const size_t n = kMiB;
  Managed m(n);
  std::memset(m.host(), 0x5a, n);
  unsigned sum = 0;
  for (size_t i = 0; i < n; i += 4096) sum += m.host()[i];
  CHECK(sum == (n / 4096) * 0x5a);
  std::vector<unsigned char> back(n);
  CHECK_CU(cuMemcpyDtoH(back.data(), m, n), CUDA_SUCCESS);
  CHECK(all_bytes(back, 0x5a));
  // A device memset is visible to the host once the context is synchronized.
  CHECK_CU(cuMemsetD8(m + 4096, 0x11, 4096), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(m.host()[4095] == 0x5a);
  CHECK(m.host()[4096] == 0x11);
  CHECK(m.host()[8191] == 0x11);
  CHECK(m.host()[8192] == 0x5a);
  // ATTACH_HOST memory too.
  Managed h(64 * kKiB, CU_MEM_ATTACH_HOST);
  std::memset(h.host(), 0x21, 64 * kKiB);
  std::vector<unsigned char> hb(64 * kKiB);
  CHECK_CU(cuMemcpyDtoH(hb.data(), h, hb.size()), CUDA_SUCCESS);
  CHECK(all_bytes(hb, 0x21));
}

TEST_CASE("managed memory: synchronous copies and memsets in every direction", "[managed][copy]") {
  conformance_primary_ctx();
  const size_t n = kMiB;
  Managed m(n);
  CUdeviceptr dev = 0;
  REQUIRE_CU(cuMemAlloc(&dev, n), CUDA_SUCCESS);
  const auto e = pattern(n, 3);
  std::vector<unsigned char> hb(n);

  CHECK_CU(cuMemcpyHtoD(m, e.data(), n), CUDA_SUCCESS);  // measured
  CHECK(equal(m.host(), e.data(), n));
  CHECK_CU(cuMemcpyDtoD(dev, m, n), CUDA_SUCCESS);  // measured: managed -> device
  CHECK_CU(cuMemcpyDtoH(hb.data(), dev, n), CUDA_SUCCESS);
  CHECK(equal(hb.data(), e.data(), n));
  CHECK_CU(cuMemsetD8(dev, 0x33, n), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoD(m, dev, n), CUDA_SUCCESS);  // measured: device -> managed
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(m.host()[0] == 0x33);
  CHECK(m.host()[n - 1] == 0x33);
  CHECK_CU(cuMemcpy(m, dp(e.data()), n), CUDA_SUCCESS);  // measured: unified, host -> managed
  CHECK(equal(m.host(), e.data(), n));
  std::fill(hb.begin(), hb.end(), 0);
  CHECK_CU(cuMemcpy(dp(hb.data()), m, n), CUDA_SUCCESS);  // unified, managed -> host
  CHECK(equal(hb.data(), e.data(), n));
  {
    Managed m2(n);
    CHECK_CU(cuMemcpyDtoD(m2, m, n), CUDA_SUCCESS);  // measured: managed -> managed
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(equal(m2.host(), m.host(), n));
  }
  CHECK_CU(cuMemsetD16(m, 0x0102, n / 2), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(m.host()[0] == 0x02);
  CHECK(m.host()[1] == 0x01);
  CHECK_CU(cuMemsetD32(m, 0x01020304, n / 4), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(m.host()[0] == 0x04);
  CHECK(m.host()[3] == 0x01);

  // The runtime, every cudaMemcpyKind.
  const auto f = pattern(n, 9);
  CHECK_RT(cudaMemcpy(vp(m), f.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK(equal(m.host(), f.data(), n));
  std::fill(hb.begin(), hb.end(), 0);
  CHECK_RT(cudaMemcpy(hb.data(), vp(m), n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(equal(hb.data(), f.data(), n));
  CHECK_RT(cudaMemcpy(vp(dev), vp(m), n, cudaMemcpyDeviceToDevice), cudaSuccess);
  CHECK_RT(cudaMemset(vp(m), 0x44, n), cudaSuccess);
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  CHECK(m.host()[n / 2] == 0x44);
  CHECK_RT(cudaMemcpy(vp(m), vp(dev), n, cudaMemcpyDefault), cudaSuccess);
  CHECK(equal(m.host(), f.data(), n));
  CHECK_RT(cudaMemcpy(vp(m), m.host() + n / 2, n / 2, cudaMemcpyDefault), cudaSuccess);  // within managed memory
  CHECK(equal(m.host(), f.data() + n / 2, n / 2));
  CHECK_RT(cudaGetLastError(), cudaSuccess);
  CHECK_CU(cuMemFree(dev), CUDA_SUCCESS);
}

TEST_CASE("managed memory: asynchronous copies and memsets in every direction", "[managed][copy]") {
  conformance_primary_ctx();
  const size_t n = kMiB;
  Managed m(n);
  CUdeviceptr dev = 0;
  void* pinned = nullptr;
  REQUIRE_CU(cuMemAlloc(&dev, n), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocHost(&pinned, n), CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  const auto e = pattern(n, 5);
  std::vector<unsigned char> hb(n);

  CHECK_CU(cuMemsetD32Async(m, 0x01020304, n / 4, s), CUDA_SUCCESS);  // measured
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(m.host()[0] == 0x04);
  CHECK(m.host()[3] == 0x01);
  CHECK_CU(cuMemcpyAsync(dev, m, n, s), CUDA_SUCCESS);  // measured: managed -> device
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(hb.data(), dev, n), CUDA_SUCCESS);
  CHECK(equal(hb.data(), m.host(), n));

  CHECK_CU(cuMemcpyHtoDAsync(m, e.data(), n, s), CUDA_SUCCESS);  // pageable -> managed
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(equal(m.host(), e.data(), n));
  CHECK_CU(cuMemcpyDtoHAsync(pinned, m, n, s), CUDA_SUCCESS);  // managed -> pinned
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(equal(pinned, e.data(), n));
  CHECK_CU(cuMemsetD8Async(dev, 0x66, n, s), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoDAsync(m, dev, n, s), CUDA_SUCCESS);  // device -> managed
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(m.host()[0] == 0x66);
  CHECK(m.host()[n - 1] == 0x66);
  std::memset(pinned, 0x77, n);
  CHECK_CU(cuMemcpyAsync(m, dp(pinned), n, s), CUDA_SUCCESS);  // unified: pinned -> managed
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(m.host()[n / 3] == 0x77);
  {
    Managed m2(n);
    CHECK_CU(cuMemcpyDtoDAsync(m2, m, n, s), CUDA_SUCCESS);  // managed -> managed
    CHECK_CU(cuMemsetD16Async(m, 0x0a0b, n / 2, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK(m2.host()[n - 1] == 0x77);
    CHECK(m.host()[0] == 0x0b);
    CHECK(m.host()[1] == 0x0a);
  }
  // The runtime, on the stream and on the legacy default stream.
  const auto f = pattern(n, 11);
  cudaStream_t rs = reinterpret_cast<cudaStream_t>(s);
  CHECK_RT(cudaMemcpyAsync(vp(m), f.data(), n, cudaMemcpyHostToDevice, rs), cudaSuccess);
  CHECK_RT(cudaMemcpyAsync(pinned, vp(m), n, cudaMemcpyDeviceToHost, rs), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(rs), cudaSuccess);
  CHECK(equal(pinned, f.data(), n));
  CHECK_RT(cudaMemsetAsync(vp(m), 0x12, n, nullptr), cudaSuccess);
  CHECK_RT(cudaMemcpyAsync(vp(dev), vp(m), n, cudaMemcpyDefault, nullptr), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
  CHECK(m.host()[n - 1] == 0x12);
  CHECK_CU(cuMemcpyDtoH(hb.data(), dev, n), CUDA_SUCCESS);
  CHECK(all_bytes(hb, 0x12));
  CHECK_RT(cudaGetLastError(), cudaSuccess);

  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeHost(pinned), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(dev), CUDA_SUCCESS);
}

// Measured: the allocation ends at the requested size, not at the 512-byte slot the driver
// packs it in (a 4097-byte allocation sits in 4608 bytes).
TEST_CASE("managed memory: the requested size bounds copies, memsets and lookups", "[managed][edge]") {
  conformance_primary_ctx();
  Managed a(4097);
  std::vector<unsigned char> hb(8192);
  CHECK_CU(cuMemsetD8(a, 0, 4097), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(hb.data(), a, 4097), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyHtoD(a, hb.data(), 4097), CUDA_SUCCESS);
  CHECK_CU(cuMemsetD8(a, 0, 4608), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemcpyDtoH(hb.data(), a, 4608), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemcpyHtoD(a, hb.data(), 4608), CUDA_ERROR_INVALID_VALUE);
  {
    unsigned long long v = 0;
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a + 4096, v), CUDA_SUCCESS);
    CHECK(v == 1);
    CUdeviceptr b = 0;
    size_t s = 0;
    CHECK_CU(cuMemGetAddressRange(&b, &s, a + 4096), CUDA_SUCCESS);
    CHECK(b == a.p);
    CHECK(s == 4097);
  }
  for (size_t off : {size_t(4097), size_t(4607), size_t(4608)}) {
    INFO("offset " << off);
    unsigned long long v = 0;
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a + off, v), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr b = 0;
    size_t s = 0;
    CHECK_CU(cuMemGetAddressRange(&b, &s, a + off), CUDA_ERROR_NOT_FOUND);
  }
  unsigned fl = 77;
  CHECK_CU(cuMemHostGetFlags(&fl, vp(a + 100)), CUDA_SUCCESS);
  CHECK(fl == 2);
}

// ---- pointer attributes ---------------------------------------------------------------------
TEST_CASE("managed memory: pointer attributes at the base, inside and at the last byte", "[managed][attr]") {
  const CUcontext primary = conformance_primary_ctx();
  const size_t n = kMiB;
  Managed m(n);
  unsigned long long base_buffer_id = 0;
  REQUIRE_CU(attr(CU_POINTER_ATTRIBUTE_BUFFER_ID, m, base_buffer_id), CUDA_SUCCESS);
  CHECK(base_buffer_id != 0);
  for (size_t off : {size_t(0), size_t(4101), n - 1}) {
    INFO("offset " << off);
    const CUdeviceptr p = m + off;
    unsigned long long v = 0;
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p, v), CUDA_SUCCESS);
    CHECK(v == CU_MEMORYTYPE_DEVICE);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p, v), CUDA_SUCCESS);
    CHECK(v == 0);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, p, v), CUDA_SUCCESS);
    CHECK(v == 1);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p, v), CUDA_SUCCESS);
    CHECK(v == 0);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p, v), CUDA_SUCCESS);
    CHECK(v == 0);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_MAPPED, p, v), CUDA_SUCCESS);
    CHECK(v == 1);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p, v), CUDA_SUCCESS);
    CHECK(v == m.p);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_RANGE_SIZE, p, v), CUDA_SUCCESS);
    CHECK(v == n);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p, v), CUDA_SUCCESS);
    CHECK(v == 0);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p, v), CUDA_SUCCESS);
    CHECK(v == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);  // 3
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_BUFFER_ID, p, v), CUDA_SUCCESS);
    CHECK(v == base_buffer_id);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p, v), CUDA_SUCCESS);
    CHECK(v != 0);
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p, v), CUDA_SUCCESS);
    CHECK(v == 0);
    unsigned sync = 77;  // a 4-byte attribute
    CHECK_CU(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
    CHECK(sync == 1);
    CUdeviceptr dptr = 0;
    CHECK_CU(cuPointerGetAttribute(&dptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p), CUDA_SUCCESS);
    CHECK(dptr == p);
    void* hptr = nullptr;
    CHECK_CU(cuPointerGetAttribute(&hptr, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_SUCCESS);
    CHECK(hptr == vp(p));
    CUcontext c = nullptr;
    CHECK_CU(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_SUCCESS);
    CHECK(c == primary);
    CUdeviceptr b = 0;
    size_t s = 0;
    CHECK_CU(cuMemGetAddressRange(&b, &s, p), CUDA_SUCCESS);
    CHECK(b == m.p);
    CHECK(s == n);
    unsigned long long access = 99;
    CUmemLocation l = dev0();
    CHECK_CU(cuMemGetAccess(&access, &l, p), CUDA_SUCCESS);  // measured: answers, with no access
    CHECK(access == 0);
    CUpointer_attribute as[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    unsigned type = 77, managed = 77;
    int ordinal = 77;
    void* data[3] = {&type, &managed, &ordinal};
    CHECK_CU(cuPointerGetAttributes(3, as, data, p), CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CHECK(managed == 1);
    CHECK(ordinal == 0);
  }
}

TEST_CASE("managed memory: pointer attributes one past the end", "[managed][attr]") {
  conformance_primary_ctx();
  const size_t n = kMiB;
  Managed m(n);  // nothing else is allocated while it lives: m + n belongs to no allocation
  const CUdeviceptr p = m + n;
  for (auto a : {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                 CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                 CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR,
                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                 CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
                 CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                 CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID,
                 CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE}) {
    INFO("attribute " << static_cast<int>(a));
    unsigned long long v = 0;
    CHECK_CU(attr(a, p, v), CUDA_ERROR_INVALID_VALUE);
  }
  CUdeviceptr b = 0;
  size_t s = 0;
  CHECK_CU(cuMemGetAddressRange(&b, &s, p), CUDA_ERROR_NOT_FOUND);
  unsigned long long access = 99;
  CUmemLocation l = dev0();
  CHECK_CU(cuMemGetAccess(&access, &l, p), CUDA_ERROR_INVALID_VALUE);
  // The plural form answers for memory it does not know: type 0, not managed, ordinal -2.
  CUpointer_attribute as[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                               CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  unsigned type = 77, managed = 77;
  int ordinal = 77;
  void* data[3] = {&type, &managed, &ordinal};
  CHECK_CU(cuPointerGetAttributes(3, as, data, p), CUDA_SUCCESS);
  CHECK(type == 0);
  CHECK(managed == 0);
  CHECK(ordinal == -2);
}

TEST_CASE("managed memory: CONTEXT is the allocating context", "[managed][attr]") {
  const CUcontext primary = conformance_primary_ctx();
  Managed m(64 * kKiB);
  CUcontext c2 = nullptr;
  REQUIRE_CU(cuCtxCreate(&c2, nullptr, 0, 0), CUDA_SUCCESS);  // pushed: current now
  CUcontext c = nullptr;
  CHECK_CU(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, m), CUDA_SUCCESS);
  CHECK(c == primary);  // not the current one
  unsigned long long flags = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, m, flags), CUDA_SUCCESS);
  CHECK(flags == 3);
  CUdeviceptr d2 = 0;
  REQUIRE_CU(cuMemAllocManaged(&d2, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  c = nullptr;
  CHECK_CU(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d2), CUDA_SUCCESS);
  CHECK(c == c2);
  CUcontext popped = nullptr;
  REQUIRE_CU(cuCtxPopCurrent(&popped), CUDA_SUCCESS);  // the primary context is current again
  CHECK(popped == c2);
  c = nullptr;
  CHECK_CU(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d2), CUDA_SUCCESS);
  CHECK(c == c2);
  CHECK_CU(cuMemFree(d2), CUDA_SUCCESS);  // measured: freed from another context
  CHECK_CU(cuCtxDestroy(c2), CUDA_SUCCESS);
  CUcontext cur = nullptr;
  CHECK_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  CHECK(cur == primary);
}

TEST_CASE("cudaPointerGetAttributes: cudaMemoryTypeManaged", "[managed][attr][runtime]") {
  conformance_primary_ctx();
  Managed m(kMiB);
  cudaPointerAttributes pa;
  std::memset(&pa, 0x7f, sizeof pa);
  CHECK_RT(cudaPointerGetAttributes(&pa, vp(m + 100)), cudaSuccess);
  CHECK(pa.type == cudaMemoryTypeManaged);
  CHECK(pa.device == 0);
  CHECK(pa.devicePointer == vp(m + 100));
  CHECK(pa.hostPointer == vp(m + 100));
}

// ---- other memory APIs fed managed memory ---------------------------------------------------
TEST_CASE("managed memory is not host memory, IPC memory or a VMM allocation", "[managed][other]") {
  conformance_primary_ctx();
  Managed m(kMiB);
  CUdeviceptr d = kSentinel;
  CHECK_CU(cuMemHostGetDevicePointer(&d, vp(m), 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(d == 0);  // measured: out=null
  unsigned fl = 77;
  CHECK_CU(cuMemHostGetFlags(&fl, vp(m)), CUDA_SUCCESS);  // measured: answers, DEVICEMAP
  CHECK(fl == 2);
  fl = 77;
  CHECK_CU(cuMemHostGetFlags(&fl, vp(m + 4101)), CUDA_SUCCESS);
  CHECK(fl == 2);
  CHECK_CU(cuMemHostRegister(vp(m), 64 * kKiB, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostUnregister(vp(m)), CUDA_ERROR_INVALID_VALUE);
  CUipcMemHandle ih;
  std::memset(&ih, 0, sizeof ih);
  CHECK_CU(cuIpcGetMemHandle(&ih, m), CUDA_ERROR_INVALID_VALUE);
  cudaIpcMemHandle_t rh;
  CHECK_RT(cudaIpcGetMemHandle(&rh, vp(m)), cudaErrorInvalidValue);
  cudaGetLastError();
  CUmemGenericAllocationHandle gh = 0;
  CHECK_CU(cuMemRetainAllocationHandle(&gh, vp(m)), CUDA_ERROR_INVALID_VALUE);
  // None of it changed the allocation.
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, m, v), CUDA_SUCCESS);
  CHECK(v == 1);
  m.host()[0] = 1;
}

// ---- frees ----------------------------------------------------------------------------------
TEST_CASE("cuMemFree of managed memory: only the base, only once", "[managed][free]") {
  conformance_primary_ctx();
  Managed m(kMiB);
  CHECK_CU(cuMemFree(m + 4096), CUDA_ERROR_INVALID_VALUE);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, m, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
  m.host()[4096] = 1;

  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocManaged(&a, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a, v), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr b = 0;
  size_t s = 0;
  CHECK_CU(cuMemGetAddressRange(&b, &s, a), CUDA_ERROR_NOT_FOUND);
}

TEST_CASE("cuMemFreeHost of managed memory", "[managed][free]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  CHECK_CU(cuMemFreeHost(vp(m)), CUDA_ERROR_INVALID_VALUE);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, m, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
}

TEST_CASE("cuMemFreeAsync of managed memory", "[managed][free]") {
  conformance_primary_ctx();
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocManaged(&a, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cudaFree and cudaFreeHost of managed memory", "[managed][free][runtime]") {
  conformance_primary_ctx();
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, 64 * kKiB, cudaMemAttachGlobal), cudaSuccess);
  CHECK_RT(cudaFreeHost(p), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(static_cast<char*>(p) + 4096), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(p), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

// ---- cuMemGetInfo ---------------------------------------------------------------------------
// In whole MiB, as the probe printed it: on a real GPU, free memory moves by less now and then.
static long long drop_mib(size_t before, size_t after) {
  return (static_cast<long long>(before) - static_cast<long long>(after)) / static_cast<long long>(kMiB);
}

// Measured: a managed allocation, and the host touching it, take no device memory (prefetching
// it to the device would: test_managed_advise.cpp's business). Nothing else allocates meanwhile.
TEST_CASE("cuMemGetInfo: a managed allocation takes no device memory", "[managed][info]") {
  conformance_primary_ctx();
  size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
  REQUIRE_CU(cuMemGetInfo(&free0, &total), CUDA_SUCCESS);
  {
    Managed big(64 * kMiB);
    REQUIRE_CU(cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
    CHECK(drop_mib(free0, free1) == 0);
    std::memset(big.host(), 1, 64 * kMiB);
    REQUIRE_CU(cuMemGetInfo(&free2, &total), CUDA_SUCCESS);
    CHECK(drop_mib(free0, free2) == 0);
  }
}
