// Device and host allocations, host registration, memory info, pointer attributes.
// Expected codes are those measured on NVIDIA's driver (H200, 580.159.04, CUDA 13.0).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

CUdeviceptr alloc(size_t n) {
  CUdeviceptr p = 0;
  REQUIRE_CU(cuMemAlloc(&p, n), CUDA_SUCCESS);
  return p;
}

template <class T>
CUresult attr(T& out, CUpointer_attribute a, CUdeviceptr p) {
  return cuPointerGetAttribute(&out, a, p);
}

}  // namespace

TEST_CASE("cuMemAlloc returns 512-byte aligned memory whose range covers interior pointers") {
  conformance_primary_ctx();
  CUdeviceptr p = alloc(1000);
  CHECK(p % 512 == 0);
  CUdeviceptr base = 0;
  size_t size = 0;
  CHECK_CU(cuMemGetAddressRange(&base, &size, p + 100), CUDA_SUCCESS);
  CHECK(base == p);
  CHECK(size == 1000);
  // Either output may be omitted.
  CHECK_CU(cuMemGetAddressRange(nullptr, &size, p + 999), CUDA_SUCCESS);
  CHECK_CU(cuMemGetAddressRange(&base, nullptr, p), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuMemAlloc of 0 bytes is CUDA_ERROR_INVALID_VALUE and clears the pointer") {
  conformance_primary_ctx();
  CUdeviceptr p = 0x1234;
  CHECK_CU(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(p == 0);
}

TEST_CASE("cuMemAlloc of more than the device has is CUDA_ERROR_OUT_OF_MEMORY") {
  conformance_primary_ctx();
  CUdeviceptr p = 0x1234;
  CHECK_CU(cuMemAlloc(&p, size_t(1) << 40), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(p == 0);
  CHECK_CU(cuMemAlloc(&p, size_t(1) << 62), CUDA_ERROR_OUT_OF_MEMORY);
}

TEST_CASE("cuMemAlloc with a NULL dptr is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  CHECK_CU(cuMemAlloc(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("memory calls without a current context are CUDA_ERROR_INVALID_CONTEXT") {
  conformance_primary_ctx();
  CUresult alloc_r = CUDA_SUCCESS, info_r = CUDA_SUCCESS, host_r = CUDA_SUCCESS;
  CUdeviceptr p = 0x1234;
  std::thread([&] {  // a fresh thread has no current context
    alloc_r = cuMemAlloc(&p, 16);
    size_t f = 0, t = 0;
    info_r = cuMemGetInfo(&f, &t);
    void* h = nullptr;
    host_r = cuMemAllocHost(&h, 16);
  }).join();
  CHECK_CU(alloc_r, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(p == 0);
  CHECK_CU(info_r, CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(host_r, CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("cuMemFree of NULL succeeds") {
  conformance_primary_ctx();
  CHECK_CU(cuMemFree(0), CUDA_SUCCESS);
}

TEST_CASE("cuMemFree of an interior pointer is CUDA_ERROR_INVALID_VALUE and frees nothing") {
  conformance_primary_ctx();
  CUdeviceptr p = alloc(64);
  CHECK_CU(cuMemFree(p + 4), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuMemFree twice is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  CUdeviceptr p = alloc(64);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemFree of a garbage or host pointer is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  CHECK_CU(cuMemFree(0x1234), CUDA_ERROR_INVALID_VALUE);
  std::vector<char> host(64);
  CHECK_CU(cuMemFree(reinterpret_cast<CUdeviceptr>(host.data())), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemGetInfo reports the device's total and accounts for a 1 GiB allocation") {
  conformance_primary_ctx();
  size_t free0 = 0, total = 0;
  REQUIRE_CU(cuMemGetInfo(&free0, &total), CUDA_SUCCESS);
  size_t dev_total = 0;
  REQUIRE_CU(cuDeviceTotalMem(&dev_total, 0), CUDA_SUCCESS);
  CHECK(total == dev_total);
  CHECK(free0 <= total);
  CUdeviceptr p = alloc(size_t(1) << 30);
  size_t free1 = 0;
  REQUIRE_CU(cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
  // At least the allocation; the real driver may add bookkeeping of its own (measured on
  // an H200 x2 machine: 1 GiB + 4 MiB; on a single H200: exactly 1 GiB).
  CHECK(free0 - free1 >= size_t(1) << 30);
  CHECK(free0 - free1 <= (size_t(1) << 30) + (size_t(8) << 20));
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(cuMemGetInfo(nullptr, &total), CUDA_SUCCESS);  // either output may be NULL
  CHECK_CU(cuMemGetInfo(&free1, nullptr), CUDA_SUCCESS);
}

TEST_CASE("cuMemGetAddressRange of an unknown pointer is CUDA_ERROR_NOT_FOUND") {
  conformance_primary_ctx();
  CUdeviceptr base = 0;
  size_t size = 0;
  CHECK_CU(cuMemGetAddressRange(&base, &size, 0x1234), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr p = alloc(64);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(cuMemGetAddressRange(&base, &size, p), CUDA_ERROR_NOT_FOUND);
}

TEST_CASE("cuMemAllocPitch rows hold the width and the allocation holds every row") {
  conformance_primary_ctx();
  CUdeviceptr p = 0;
  size_t pitch = 0;
  REQUIRE_CU(cuMemAllocPitch(&p, &pitch, 100, 7, 4), CUDA_SUCCESS);
  CHECK(pitch >= 100);
  CHECK(pitch % 4 == 0);
  size_t size = 0;
  CHECK_CU(cuMemGetAddressRange(nullptr, &size, p), CUDA_SUCCESS);
  CHECK(size >= pitch * 7);
  CHECK_CU(cuMemsetD2D8(p, pitch, 0x5a, 100, 7), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuMemAllocHost memory is page aligned, host accessible and mapped at the same address") {
  conformance_primary_ctx();
  void* h = nullptr;
  REQUIRE_CU(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
  CHECK(reinterpret_cast<uintptr_t>(h) % 4096 == 0);
  std::memset(h, 7, 64);
  unsigned flags = 77;
  CHECK_CU(cuMemHostGetFlags(&flags, h), CUDA_SUCCESS);
  CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP);
  CUdeviceptr d = 0;
  CHECK_CU(cuMemHostGetDevicePointer(&d, h, 0), CUDA_SUCCESS);
  CHECK(d == reinterpret_cast<CUdeviceptr>(h));
  CHECK_CU(cuMemFreeHost(h), CUDA_SUCCESS);
}

TEST_CASE("cuMemAllocHost of 0 bytes succeeds with a NULL pointer") {
  conformance_primary_ctx();
  void* h = reinterpret_cast<void*>(0x1234);
  CHECK_CU(cuMemAllocHost(&h, 0), CUDA_SUCCESS);
  CHECK(h == nullptr);
}

TEST_CASE("cuMemHostAlloc accepts PORTABLE, DEVICEMAP and WRITECOMBINED") {
  conformance_primary_ctx();
  for (unsigned fl : {0u, 1u, 2u, 4u, 7u}) {
    void* h = nullptr;
    CHECK_CU(cuMemHostAlloc(&h, 64, fl), CUDA_SUCCESS);
    REQUIRE(h != nullptr);
    static_cast<char*>(h)[63] = 1;
    unsigned got = 0;
    CHECK_CU(cuMemHostGetFlags(&got, h), CUDA_SUCCESS);
    CHECK((got & fl) == fl);
    CHECK_CU(cuMemFreeHost(h), CUDA_SUCCESS);
  }
}

TEST_CASE("cuMemHostAlloc with unknown flags is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  void* h = nullptr;
  CHECK_CU(cuMemHostAlloc(&h, 64, 0x8), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostAlloc(&h, 64, 0xff), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemFreeHost of malloc'd memory is CUDA_ERROR_INVALID_VALUE; of NULL succeeds") {
  conformance_primary_ctx();
  void* m = std::malloc(64);
  CHECK_CU(cuMemFreeHost(m), CUDA_ERROR_INVALID_VALUE);
  std::free(m);
  CHECK_CU(cuMemFreeHost(nullptr), CUDA_SUCCESS);
}

TEST_CASE("cuMemHostRegister makes host memory usable as a device address until unregistered") {
  conformance_primary_ctx();
  void* m = std::aligned_alloc(4096, 8192);
  REQUIRE(m);
  std::memset(m, 0, 8192);
  REQUIRE_CU(cuMemHostRegister(m, 4096, 0), CUDA_SUCCESS);
  unsigned flags = 77;
  CHECK_CU(cuMemHostGetFlags(&flags, m), CUDA_SUCCESS);
  CHECK(flags == CU_MEMHOSTREGISTER_DEVICEMAP);
  CUdeviceptr d = 0;
  CHECK_CU(cuMemHostGetDevicePointer(&d, m, 0), CUDA_SUCCESS);
  CHECK(d == reinterpret_cast<CUdeviceptr>(m));
  CHECK_CU(cuMemsetD8(d + 10, 0x42, 5), CUDA_SUCCESS);
  CHECK(static_cast<unsigned char*>(m)[10] == 0x42);
  CHECK(static_cast<unsigned char*>(m)[14] == 0x42);
  CHECK(static_cast<unsigned char*>(m)[15] == 0);
  unsigned type = 0;
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 100), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_HOST);
  CHECK_CU(cuMemHostUnregister(m), CUDA_SUCCESS);
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 100), CUDA_ERROR_INVALID_VALUE);
  std::free(m);
}

TEST_CASE("cuMemHostRegister of an unaligned pointer succeeds") {
  conformance_primary_ctx();
  char* m = static_cast<char*>(std::malloc(10000));
  CHECK_CU(cuMemHostRegister(m + 1, 100, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemHostUnregister(m + 1), CUDA_SUCCESS);
  std::free(m);
}

TEST_CASE("cuMemHostRegister of an already registered range is CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED") {
  conformance_primary_ctx();
  char* m = static_cast<char*>(std::aligned_alloc(4096, 8192));
  REQUIRE_CU(cuMemHostRegister(m, 4096, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemHostRegister(m, 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CHECK_CU(cuMemHostRegister(m + 100, 10, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CHECK_CU(cuMemHostUnregister(m), CUDA_SUCCESS);
  std::free(m);
}

TEST_CASE("cuMemHostUnregister of unregistered memory is CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED") {
  conformance_primary_ctx();
  char* m = static_cast<char*>(std::aligned_alloc(4096, 8192));
  CHECK_CU(cuMemHostUnregister(m), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  REQUIRE_CU(cuMemHostRegister(m, 4096, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemHostUnregister(m), CUDA_SUCCESS);
  CHECK_CU(cuMemHostUnregister(m), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  CHECK_CU(cuMemHostUnregister(reinterpret_cast<void*>(0x1234)), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  std::free(m);
}

TEST_CASE("cuMemHostUnregister of an interior pointer is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  char* m = static_cast<char*>(std::aligned_alloc(4096, 8192));
  REQUIRE_CU(cuMemHostRegister(m, 4096, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemHostUnregister(m + 8), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostUnregister(m), CUDA_SUCCESS);
  std::free(m);
}

TEST_CASE("device writes into read-only registered memory are CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  char* m = static_cast<char*>(std::aligned_alloc(4096, 8192));
  std::memset(m, 0, 4096);
  REQUIRE_CU(cuMemHostRegister(m, 4096, CU_MEMHOSTREGISTER_READ_ONLY), CUDA_SUCCESS);
  CHECK_CU(cuMemsetD8(reinterpret_cast<CUdeviceptr>(m), 1, 16), CUDA_ERROR_INVALID_VALUE);
  CHECK(m[0] == 0);
  CHECK_CU(cuMemHostUnregister(m), CUDA_SUCCESS);
  CHECK_CU(cuMemHostRegister(m, 4096, CU_MEMHOSTREGISTER_IOMEMORY), CUDA_ERROR_INVALID_VALUE);
  std::free(m);
}

TEST_CASE("pinned-memory queries on the wrong kind of pointer are CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  void* h = nullptr;
  REQUIRE_CU(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
  char* hc = static_cast<char*>(h);
  CUdeviceptr d = 0;
  CHECK_CU(cuMemHostGetDevicePointer(&d, hc + 8, 0), CUDA_SUCCESS);  // interior pointers map too
  CHECK(d == reinterpret_cast<CUdeviceptr>(hc + 8));
  CHECK_CU(cuMemHostGetDevicePointer(&d, h, 1), CUDA_ERROR_INVALID_VALUE);
  unsigned flags = 0;
  CHECK_CU(cuMemHostGetFlags(&flags, hc + 8), CUDA_SUCCESS);
  void* m = std::malloc(64);
  CHECK_CU(cuMemHostGetDevicePointer(&d, m, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostGetFlags(&flags, m), CUDA_ERROR_INVALID_VALUE);
  std::free(m);
  CUdeviceptr dev = 0;
  REQUIRE_CU(cuMemAlloc(&dev, 64), CUDA_SUCCESS);
  CHECK_CU(cuMemHostGetFlags(&flags, reinterpret_cast<void*>(dev)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFree(reinterpret_cast<CUdeviceptr>(h)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFreeHost(hc + 8), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocHost(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFree(dev), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeHost(h), CUDA_SUCCESS);
}

TEST_CASE("cuMemFree needs no current context") {
  conformance_primary_ctx();
  CUdeviceptr p = 0;
  REQUIRE_CU(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::thread([&] { r = cuMemFree(p); }).join();
  CHECK_CU(r, CUDA_SUCCESS);
}

TEST_CASE("cuMemAllocPitch rounds rows to 512 bytes and accepts element sizes 4, 8 and 16 only") {
  conformance_primary_ctx();
  CUdeviceptr p = 0;
  size_t pitch = 0;
  CHECK_CU(cuMemAllocPitch(&p, &pitch, 100, 4, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocPitch(&p, &pitch, 100, 4, 3), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocPitch(&p, &pitch, 0, 4, 4), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocPitch(&p, &pitch, 100, 0, 4), CUDA_ERROR_INVALID_VALUE);
  REQUIRE_CU(cuMemAllocPitch(&p, &pitch, 513, 4, 16), CUDA_SUCCESS);
  CHECK(pitch == 1024);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuMemHostRegister with bad flags, size 0 or NULL is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  void* m = std::malloc(4096);
  CHECK_CU(cuMemHostRegister(m, 4096, 0xff), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostRegister(m, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemHostRegister(nullptr, 4096, 0), CUDA_ERROR_INVALID_VALUE);
  std::free(m);
}

TEST_CASE("pointer attributes of device memory") {
  CUcontext ctx = conformance_primary_ctx();
  CUdeviceptr p = alloc(64);
  CUdeviceptr q = alloc(64);
  CUcontext c = nullptr;
  CHECK_CU(attr(c, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_SUCCESS);
  CHECK(c == ctx);
  unsigned type = 0;
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 8), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CUdeviceptr dp = 0;
  CHECK_CU(attr(dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 8), CUDA_SUCCESS);
  CHECK(dp == p + 8);
  void* hp = reinterpret_cast<void*>(0xdeadbeef);
  CHECK_CU(attr(hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_ERROR_INVALID_VALUE);
  CHECK(hp == nullptr);
  unsigned long long id1 = 0, id2 = 0;
  CHECK_CU(attr(id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, p), CUDA_SUCCESS);
  CHECK_CU(attr(id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, q), CUDA_SUCCESS);
  CHECK(id1 != 0);
  CHECK(id1 != id2);
  unsigned long long v = 0xdeadbeef;  // boolean attributes overwrite 4 bytes
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_IS_MANAGED, p), CUDA_SUCCESS);
  CHECK(v == 0);
  int ord = 77;
  CHECK_CU(attr(ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), CUDA_SUCCESS);
  CHECK(ord == 0);
  v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p), CUDA_SUCCESS);
  CHECK(v == 1);
  CUdeviceptr start = 0;
  size_t size = 0;
  CHECK_CU(attr(start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 63), CUDA_SUCCESS);
  CHECK(start == p);
  CHECK_CU(attr(size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 63), CUDA_SUCCESS);
  CHECK(size == 64);
  v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MAPPED, p), CUDA_SUCCESS);
  CHECK(v == 1);
  v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p), CUDA_SUCCESS);
  CHECK(v == 1);
  unsigned access = 0;
  CHECK_CU(attr(access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p), CUDA_SUCCESS);
  CHECK(access == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
  CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(0x1);
  CHECK_CU(attr(pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p), CUDA_SUCCESS);
  CHECK(pool == nullptr);
  unsigned long long handles = 77;
  CHECK_CU(attr(handles, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p), CUDA_SUCCESS);
  CHECK(handles == 0);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(q), CUDA_SUCCESS);
}

TEST_CASE("pointer attributes of pinned host memory") {
  CUcontext ctx = conformance_primary_ctx();
  void* h = nullptr;
  REQUIRE_CU(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
  auto hp = reinterpret_cast<CUdeviceptr>(h);
  unsigned type = 0;
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, hp), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_HOST);
  CUcontext c = nullptr;
  CHECK_CU(attr(c, CU_POINTER_ATTRIBUTE_CONTEXT, hp), CUDA_SUCCESS);
  CHECK(c == ctx);
  CUdeviceptr dp = 0;
  void* host = nullptr;
  CHECK_CU(attr(dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, hp), CUDA_SUCCESS);
  CHECK_CU(attr(host, CU_POINTER_ATTRIBUTE_HOST_POINTER, hp), CUDA_SUCCESS);
  CHECK(dp == hp);
  CHECK(host == h);
  unsigned long long v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, hp), CUDA_SUCCESS);
  CHECK(v == 0);
  v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, hp), CUDA_SUCCESS);
  CHECK(v == 0);
  size_t size = 0;
  CHECK_CU(attr(size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, hp), CUDA_SUCCESS);
  CHECK(size == 64);
  int ord = 77;
  CHECK_CU(attr(ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, hp), CUDA_SUCCESS);
  CHECK(ord == 0);
  CHECK_CU(cuMemFreeHost(h), CUDA_SUCCESS);
}

TEST_CASE("cuPointerGetAttribute of memory the driver does not know is CUDA_ERROR_INVALID_VALUE") {
  conformance_primary_ctx();
  std::vector<char> host(256);
  unsigned long long v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(host.data())),
           CUDA_ERROR_INVALID_VALUE);
  CHECK(v == 0xdeadbeef);
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0x1234), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr p = alloc(64);
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 64), CUDA_ERROR_INVALID_VALUE);  // one past the end
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_ERROR_INVALID_VALUE);  // freed
}

TEST_CASE("cuPointerGetAttributes leaves not-found values for unknown memory and succeeds") {
  conformance_primary_ctx();
  CUpointer_attribute as[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                               CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned mt = 77;
  int ord = 77, man = 77;
  void* data[3] = {&mt, &ord, &man};
  std::vector<char> host(256);
  CHECK_CU(cuPointerGetAttributes(3, as, data, reinterpret_cast<CUdeviceptr>(host.data())), CUDA_SUCCESS);
  CHECK(mt == 0);
  CHECK(ord == -2);
  CHECK(man == 0);
  mt = 77, ord = 77, man = 77;
  CHECK_CU(cuPointerGetAttributes(3, as, data, 0), CUDA_SUCCESS);
  CHECK(mt == 0);
  CHECK(ord == -2);
  {
    CUpointer_attribute a2[2] = {CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_CONTEXT};
    void* hp = nullptr;
    CUcontext c = reinterpret_cast<CUcontext>(0x1);
    void* d2[2] = {&hp, &c};
    CHECK_CU(cuPointerGetAttributes(2, a2, d2, 0x1234), CUDA_SUCCESS);
    CHECK(hp == reinterpret_cast<void*>(0x1234));  // unknown memory is taken to be host memory
    CHECK(c == nullptr);
  }
  CUdeviceptr p = alloc(64);
  mt = 77, ord = 77, man = 77;
  CHECK_CU(cuPointerGetAttributes(3, as, data, p), CUDA_SUCCESS);
  CHECK(mt == CU_MEMORYTYPE_DEVICE);
  CHECK(ord == 0);
  CHECK(man == 0);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuPointerSetAttribute sets SYNC_MEMOPS on device memory") {
  conformance_primary_ctx();
  CUdeviceptr p = alloc(64);
  unsigned long long v = 0xdeadbeef;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
  CHECK(v == 0);
  unsigned one = 1;
  CHECK_CU(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p + 8), CUDA_SUCCESS);
  CHECK_CU(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0x1234), CUDA_ERROR_INVALID_VALUE);
  v = 0;
  CHECK_CU(attr(v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

// Issue 22, item 3: a GPU has no descriptor per allocation. The emulator once took one memfd per
// live allocation, so under `ulimit -n 1024` the 1,019th cudaMalloc failed and the program's
// own open() calls failed while they were live.
TEST_CASE("thousands of live allocations of every kind fit under a 32-descriptor headroom, and open() still "
          "works", "[memory]") {
  conformance_primary_ctx();
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
  rlimit low = old;
  low.rlim_cur = open_fds() + 32;
  REQUIRE(low.rlim_cur <= old.rlim_max);
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::vector<CUdeviceptr> dev, managed;
  std::vector<void*> pinned;
  CUresult worst = CUDA_SUCCESS;
  auto keep = [&](CUresult r) {
    if (r != CUDA_SUCCESS && worst == CUDA_SUCCESS) worst = r;
    return r == CUDA_SUCCESS;
  };
  for (size_t i = 0; i < 3000; ++i) {
    CUdeviceptr p = 0;
    if (keep(cuMemAlloc(&p, 512 + (i % 64) * 1000))) dev.push_back(p);
  }
  for (size_t i = 0; i < 1500; ++i) {
    void* p = nullptr;
    if (keep(cuMemAllocHost(&p, 4096 + (i % 4) * 4096))) pinned.push_back(p);
  }
  for (size_t i = 0; i < 300; ++i) {
    CUdeviceptr p = 0;
    if (keep(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL))) managed.push_back(p);
  }
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const bool opened = fd >= 0;
  if (fd >= 0) ::close(fd);
  // A few spot checks that the memory is real and distinct.
  const unsigned char a = 0xa5, b = 0x5a;
  unsigned char got = 0;
  if (dev.size() == 3000 && pinned.size() == 1500) {
    CHECK_CU(cuMemcpyHtoD(dev[0], &a, 1), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyHtoD(dev[2999], &b, 1), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoH(&got, dev[0], 1), CUDA_SUCCESS);
    CHECK(got == a);
    static_cast<unsigned char*>(pinned[1499])[0] = b;
    CHECK_CU(cuMemcpyHtoD(dev[1], pinned[1499], 1), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoH(&got, dev[1], 1), CUDA_SUCCESS);
    CHECK(got == b);
  }
  for (CUdeviceptr p : dev) CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  for (void* p : pinned) CHECK_CU(cuMemFreeHost(p), CUDA_SUCCESS);
  for (CUdeviceptr p : managed) CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
  CHECK(cu_name(worst) == std::string("CUDA_SUCCESS"));
  CHECK(dev.size() == 3000);
  CHECK(pinned.size() == 1500);
  CHECK(managed.size() == 300);
  CHECK(opened);
}
