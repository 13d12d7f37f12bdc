// Helpers of the handle robustness unit tests (test_handle_robustness*.cpp): explanations that
// name a handle, garbage handles, objects of every handle kind to destroy, and the check that the
// process still works afterwards.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

namespace handle_robustness {


constexpr size_t kGran = size_t(2) << 20;

// The last failure's explanation contains every one of `words`.
inline bool says(std::initializer_list<std::string> words) {
  std::string w = last_why();
  for (auto& s : words)
    if (w.find(s) == std::string::npos) {
      UNSCOPED_INFO("explanation \"" << w << "\" lacks \"" << s << "\"");
      return false;
    }
  return true;
}
// A handle as explanations print it (fmt's pointer form).
inline std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return b;
}

// The four kinds of garbage a program may pass as a handle: a small integer, all ones, the
// address of a stack variable, and the address of freed heap memory.
struct Garbage {
  int on_stack = 0;
  std::vector<void*> values;
  Garbage() {
    void* heap = std::malloc(24);
    std::free(heap);
    values = {reinterpret_cast<void*>(0x1234), reinterpret_cast<void*>(~uintptr_t(0)), &on_stack, heap};
  }
};

inline CUmemAllocationProp vmm_prop() {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

inline CUmemPoolProps pool_props() {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

// External memory imported from a cuMemCreate allocation's exported fd.
inline CUexternalMemory import_memory() {
  CUmemAllocationProp p = vmm_prop();
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, kGran, &p, 0) == CUDA_SUCCESS);
  int fd = -1;
  REQUIRE(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);  // the fd keeps the memory
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = kGran;
  CUexternalMemory m = nullptr;
  REQUIRE(cuImportExternalMemory(&m, &d) == CUDA_SUCCESS);
  return m;
}

inline CUexternalSemaphore import_semaphore() {
  int fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&fd, 1, 0) == CUDA_SUCCESS);
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  d.handle.fd = fd;
  CUexternalSemaphore s = nullptr;
  REQUIRE(cuImportExternalSemaphore(&s, &d) == CUDA_SUCCESS);
  return s;
}

inline CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mip_desc() {
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC d;
  std::memset(&d, 0, sizeof d);
  d.arrayDesc.Width = 64;
  d.arrayDesc.Height = 64;
  d.arrayDesc.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.arrayDesc.NumChannels = 4;
  d.numLevels = 2;
  return d;
}

inline void host_fn(void* p) { ++*static_cast<int*>(p); }

// The process still works: allocate, copy both ways, free; a stream, an event, a pool allocation.
inline void still_works() {
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 1 << 16) == CUDA_SUCCESS);
  std::vector<unsigned char> a(1 << 16), b(1 << 16, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 7 + 3);
  REQUIRE(cuMemcpyHtoD(d, a.data(), a.size()) == CUDA_SUCCESS);
  REQUIRE(cuMemcpyDtoH(b.data(), d, b.size()) == CUDA_SUCCESS);
  CHECK(a == b);
  CHECK(cuMemFree(d) == CUDA_SUCCESS);
  CUstream s = nullptr;
  CUevent e = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAllocAsync(&p, 4096, s) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoDAsync(p, a.data(), 4096, s) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(p, s) == CUDA_SUCCESS);
  CHECK(cuEventRecord(e, s) == CUDA_SUCCESS);
  CHECK(cuEventSynchronize(e) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_SUCCESS);
}

}  // namespace handle_robustness
