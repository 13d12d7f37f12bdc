// Managed memory: what it is. The host reads and writes it through the pointer, copies and
// memsets take it in every direction, pointer attributes describe it, the requested size bounds
// it, and other memory APIs (host, IPC, VMM) refuse it. Expected codes and values measured on
// NVIDIA's driver 580.159.04 (H200, CUDA 13.0; tools/probe/probe_managed.cpp, keys "props.*",
// "edge.*"), unless marked otherwise. Allocation, frees and cuMemGetInfo: test_managed.cpp.
#include <cstdint>
#include <cstring>
#include <vector>

#include "common.hpp"
#include "managed_common.hpp"

using namespace managed_conf;

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
