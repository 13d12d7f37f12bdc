// External memory mapped: cuExternalMemoryGetMappedBuffer (ranges, flags, what a mapped buffer
// is), cuDestroyExternalMemory, the runtime's cudaImportExternalMemory and
// cudaExternalMemoryGetMappedBuffer, and cuExternalMemoryGetMappedMipmappedArray. The memory is a
// cuMemCreate allocation exported as a POSIX fd (external_common.hpp); importing it:
// test_external_memory.cpp. Expected codes measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0).
#include <cstring>
#include <vector>

#include "external_common.hpp"

// ---- mapped buffers -------------------------------------------------------------------------
TEST_CASE("mapped buffers: every mapping is new, and overlapping ones alias", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr a = x.map(0, kGran), b = x.map(0, kGran), c = x.map(65536, 65536);
  CHECK(a != b);
  auto v = pattern(65536, 4);
  REQUIRE_CU(cuMemcpyHtoD(c, v.data(), v.size()), CUDA_SUCCESS);
  std::vector<unsigned char> got(65536);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), b + 65536, got.size()), CUDA_SUCCESS);
  CHECK(got == v);
  for (CUdeviceptr p : {a, b, c}) CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuExternalMemoryGetMappedBuffer: ranges outside the memory", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = 0;
  for (auto [off, size] : {std::pair<unsigned long long, unsigned long long>{0, kGran + 1}, {1, kGran},
                           {kGran, 1}, {kGran - 4096, 8192}, {~0ull - 10, 4096}}) {
    INFO("offset " << off << " size " << size);
    auto b = buf_desc(off, size);
    CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuExternalMemoryGetMappedBuffer: size 0", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = 0;
  auto b = buf_desc(0, 0);
  CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuExternalMemoryGetMappedBuffer: flags", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = 0;
  auto b = buf_desc(0, 4096);
  b.flags = 1;
  CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuExternalMemoryGetMappedBuffer: NULL arguments", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = 0;
  auto b = buf_desc(0, 4096);
  CHECK_CU(cuExternalMemoryGetMappedBuffer(nullptr, x.m, &b), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, nullptr, &b), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuExternalMemoryGetMappedBuffer: odd offsets and sizes", "[external]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(8192, 10);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), a.size()), CUDA_SUCCESS);
  ExtMem x(e.fd(), kGran);
  for (auto [off, size] : {std::pair<unsigned long long, unsigned long long>{1, 1}, {256, 4097}, {4095, 2}}) {
    INFO("offset " << off << " size " << size);
    CUdeviceptr p = x.map(off, size);  // measured: no alignment asked
    CHECK(p % kGran == off % kGran);   // measured: a fresh 2 MiB-aligned range, at the offset's place
    std::vector<unsigned char> got(size);
    CHECK_CU(cuMemcpyDtoH(got.data(), p, size), CUDA_SUCCESS);
    CHECK(std::equal(got.begin(), got.end(), a.begin() + off));
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
}

TEST_CASE("a mapped buffer is device memory that cuMemFree frees once", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = x.map(4096, 65536);
  unsigned int type = 0;
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CUdeviceptr base = 0;
  size_t size = 0;
  CHECK_CU(cuMemGetAddressRange(&base, &size, p + 100), CUDA_SUCCESS);
  CHECK(base == p);
  CHECK(size == 65536);
  int ipc = 9;
  CHECK_CU(cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p), CUDA_SUCCESS);
  CHECK(ipc == 0);  // measured
  unsigned long long types = 9;
  CHECK_CU(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p), CUDA_SUCCESS);
  CHECK(types == 0);
  CUcontext ctx = nullptr, cur = nullptr;
  CHECK_CU(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_SUCCESS);
  cuCtxGetCurrent(&cur);
  CHECK(ctx == cur);  // measured: the importing (primary) context
  CUmemLocation loc;
  std::memset(&loc, 0, sizeof loc);
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  unsigned long long acc = 9;
  CHECK_CU(cuMemGetAccess(&acc, &loc, p), CUDA_SUCCESS);
  CHECK(acc == 0);  // measured: no VMM access flags, although the device reads and writes it
  CUipcMemHandle ih;
  CHECK_CU(cuIpcGetMemHandle(&ih, p), CUDA_ERROR_INVALID_VALUE);
  CUmemGenericAllocationHandle h = 0;
  CHECK_CU(cuMemRetainAllocationHandle(&h, reinterpret_cast<void*>(p)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFreeAsync(p, nullptr), CUDA_ERROR_NOT_SUPPORTED);  // measured: and it stays mapped
  CHECK_CU(cuMemsetD8(p, 1, 16), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeHost(reinterpret_cast<void*>(p)), CUDA_ERROR_INVALID_VALUE);  // measured (a cuMemAlloc block would go)
  CHECK_CU(cuMemFree(p + 4096), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuDestroyExternalMemory: NULL", "[external]") {
  conformance_primary_ctx();
  CHECK_CU(cuDestroyExternalMemory(nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuDestroyExternalMemory: buffers mapped from it stay until freed", "[external]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(4096, 5);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), a.size()), CUDA_SUCCESS);
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = x.map(0, kGran);
  REQUIRE_CU(cuDestroyExternalMemory(x.m), CUDA_SUCCESS);
  x.m = nullptr;
  std::vector<unsigned char> got(4096);
  CHECK_CU(cuMemcpyDtoH(got.data(), p, got.size()), CUDA_SUCCESS);
  CHECK(got == a);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("imported memory outlives the exporter's handle and mapping", "[external]") {
  conformance_primary_ctx();
  CUmemGenericAllocationHandle h = 0;
  auto prop = vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  REQUIRE_CU(cuMemCreate(&h, kGran, &prop, 0), CUDA_SUCCESS);
  int fd = -1;
  REQUIRE_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  ExtMem x(fd, kGran);
  REQUIRE_CU(cuMemRelease(h), CUDA_SUCCESS);
  CUdeviceptr p = x.map(0, kGran);
  auto a = pattern(4096, 6);
  CHECK_CU(cuMemcpyHtoD(p, a.data(), a.size()), CUDA_SUCCESS);
  std::vector<unsigned char> got(4096);
  CHECK_CU(cuMemcpyDtoH(got.data(), p, got.size()), CUDA_SUCCESS);
  CHECK(got == a);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

// ---- the runtime ----------------------------------------------------------------------------
TEST_CASE("cudaImportExternalMemory and cudaExternalMemoryGetMappedBuffer", "[external][runtime]") {
  conformance_primary_ctx();
  Exported e;
  cudaExternalMemoryHandleDesc d;
  std::memset(&d, 0, sizeof d);
  d.type = cudaExternalMemoryHandleTypeOpaqueFd;
  d.handle.fd = e.fd();
  d.size = kGran;
  cudaExternalMemory_t m = nullptr;
  REQUIRE_RT(cudaImportExternalMemory(&m, &d), cudaSuccess);
  cudaExternalMemoryBufferDesc b;
  std::memset(&b, 0, sizeof b);
  b.size = kGran;
  void* p = nullptr;
  REQUIRE_RT(cudaExternalMemoryGetMappedBuffer(&p, m, &b), cudaSuccess);
  CHECK_RT(cudaMemset(p, 0x11, 4096), cudaSuccess);
  unsigned char c = 0;
  CHECK_CU(cuMemcpyDtoH(&c, e.r + 4095, 1), CUDA_SUCCESS);
  CHECK(c == 0x11);
  b.size = kGran + 1;
  void* q = nullptr;
  CHECK_RT(cudaExternalMemoryGetMappedBuffer(&q, m, &b), cudaErrorInvalidValue);
  CHECK_RT(cudaFree(p), cudaSuccess);
  CHECK_RT(cudaDestroyExternalMemory(m), cudaSuccess);
  d.handle.fd = -1;
  CHECK_RT(cudaImportExternalMemory(&m, &d), cudaErrorUnknown);  // measured: the driver's code, mapped 1:1
  CHECK_RT(cudaGetLastError(), cudaErrorUnknown);
  d.size = 0;
  CHECK_RT(cudaImportExternalMemory(&m, &d), cudaErrorInvalidValue);
}

// ---- mipmapped arrays -----------------------------------------------------------------------
TEST_CASE("a mipmapped array over external memory: levels, descriptors, copies", "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUmipmappedArray mm = nullptr;
  auto d = mip_desc(256, 256, 3);
  REQUIRE_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_SUCCESS);
  CUarray l0 = nullptr, l2 = nullptr, again = nullptr;
  REQUIRE_CU(cuMipmappedArrayGetLevel(&l0, mm, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuMipmappedArrayGetLevel(&l2, mm, 2), CUDA_SUCCESS);
  REQUIRE_CU(cuMipmappedArrayGetLevel(&again, mm, 0), CUDA_SUCCESS);
  CHECK(l0 == again);
  CHECK(l0 != l2);
  CUDA_ARRAY3D_DESCRIPTOR a3;
  REQUIRE_CU(cuArray3DGetDescriptor(&a3, l2), CUDA_SUCCESS);
  CHECK(a3.Width == 64);
  CHECK(a3.Height == 64);
  CHECK(a3.Depth == 0);
  CHECK(a3.Format == CU_AD_FORMAT_UNSIGNED_INT8);
  CHECK(a3.NumChannels == 4);
  CUDA_ARRAY_DESCRIPTOR a2;
  REQUIRE_CU(cuArrayGetDescriptor(&a2, l0), CUDA_SUCCESS);
  CHECK(a2.Width == 256);
  CHECK(a2.Height == 256);
  // A round trip through level 2: host -> array -> host.
  auto img = pattern(64 * 4 * 64, 9);
  CUDA_MEMCPY2D up;
  std::memset(&up, 0, sizeof up);
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = img.data();
  up.srcPitch = 64 * 4;
  up.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  up.dstArray = l2;
  up.WidthInBytes = 64 * 4;
  up.Height = 64;
  REQUIRE_CU(cuMemcpy2D(&up), CUDA_SUCCESS);
  std::vector<unsigned char> back(img.size());
  CUDA_MEMCPY2D down;
  std::memset(&down, 0, sizeof down);
  down.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  down.srcArray = l2;
  down.dstMemoryType = CU_MEMORYTYPE_HOST;
  down.dstHost = back.data();
  down.dstPitch = 64 * 4;
  down.WidthInBytes = 64 * 4;
  down.Height = 64;
  REQUIRE_CU(cuMemcpy2D(&down), CUDA_SUCCESS);
  CHECK(back == img);
  // A box past the level's edge.
  down.srcY = 1;
  CHECK_CU(cuMemcpy2D(&down), CUDA_ERROR_INVALID_VALUE);
  CUarray none = nullptr;
  CHECK_CU(cuMipmappedArrayGetLevel(&none, mm, 3), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_MEMORY_REQUIREMENTS req;
  CHECK_CU(cuMipmappedArrayGetMemoryRequirements(&req, mm, 0), CUDA_ERROR_INVALID_VALUE);  // measured
  CHECK_CU(cuArrayDestroy(l2), CUDA_SUCCESS);  // measured: a level may be "destroyed"
  CHECK_CU(cuMipmappedArrayDestroy(mm), CUDA_SUCCESS);
}

TEST_CASE("cuExternalMemoryGetMappedMipmappedArray: flags are not checked, levels shrink as documented",
          "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  struct Case {
    size_t w, h, d;
    unsigned flags, levels;
    size_t lw, lh, ld;  // the last level
  };
  for (const Case& c : {Case{256, 256, 0, 0x80000000u, 1, 256, 256, 0}, Case{64, 64, 4, 0, 3, 16, 16, 1},
                        Case{64, 64, 4, CUDA_ARRAY3D_LAYERED, 3, 16, 16, 4}, Case{256, 0, 0, 0, 1, 256, 0, 0}}) {
    INFO(c.w << "x" << c.h << "x" << c.d << " flags " << c.flags);
    auto d = mip_desc(c.w, c.h, c.levels, 4096);
    d.arrayDesc.Depth = c.d;
    d.arrayDesc.Flags = c.flags;
    CUmipmappedArray mm = nullptr;
    REQUIRE_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_SUCCESS);
    CUarray last = nullptr;
    REQUIRE_CU(cuMipmappedArrayGetLevel(&last, mm, c.levels - 1), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR a;
    REQUIRE_CU(cuArray3DGetDescriptor(&a, last), CUDA_SUCCESS);
    CHECK(a.Width == c.lw);
    CHECK(a.Height == c.lh);
    CHECK(a.Depth == c.ld);
    CHECK(a.Flags == c.flags);
    CHECK_CU(cuMipmappedArrayDestroy(mm), CUDA_SUCCESS);
  }
}

TEST_CASE("cuExternalMemoryGetMappedMipmappedArray: bad formats and NULL arguments", "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUmipmappedArray mm = nullptr;
  auto d = mip_desc(256, 256, 1);
  d.arrayDesc.NumChannels = 3;
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
  d = mip_desc(256, 256, 1);
  d.arrayDesc.Format = static_cast<CUarray_format>(0);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
  d = mip_desc(0, 256, 1);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
  d = mip_desc(256, 256, 1);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(nullptr, x.m, &d), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, nullptr, &d), CUDA_ERROR_INVALID_VALUE);
  d = mip_desc(1024, 512, 1);  // exactly 2 MiB fits
  REQUIRE_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_SUCCESS);
  CHECK_CU(cuMipmappedArrayDestroy(mm), CUDA_SUCCESS);
  d.offset = kGran - 65536;  // ... but not from an offset
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
}

#if !CUDA_SHIM_REAL_BACKEND
// The real driver corrupts its heap here (measured: SIGABRT); the documented answer instead.
TEST_CASE("cuExternalMemoryGetMappedMipmappedArray: numLevels 0", "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUmipmappedArray mm = nullptr;
  auto d = mip_desc(256, 256, 0);
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
}
#endif

TEST_CASE("cuExternalMemoryGetMappedMipmappedArray: more levels than the extent has", "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUmipmappedArray mm = nullptr;
  auto d = mip_desc(256, 256, 10);  // 256 -> 1 is 9 levels
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuExternalMemoryGetMappedMipmappedArray: an array larger than the memory", "[external][array]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran);
  CUmipmappedArray mm = nullptr;
  auto d = mip_desc(4096, 4096, 1);  // 64 MiB of RGBA8 in 2 MiB
  CHECK_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, x.m, &d), CUDA_ERROR_INVALID_VALUE);
}
