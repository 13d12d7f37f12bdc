// Helpers shared by the external-memory conformance tests (test_external_memory*.cpp): the
// import, buffer and mipmapped-array descriptors, a cuMemCreate allocation exported as a POSIX fd
// (what they import), and an imported object. NVIDIA's API only, so they also run on the real
// driver.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "vmm_common.hpp"

inline CUDA_EXTERNAL_MEMORY_HANDLE_DESC mem_desc(int fd, unsigned long long size, unsigned flags = 0,
                                          CUexternalMemoryHandleType t = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = t;
  d.handle.fd = fd;
  d.size = size;
  d.flags = flags;
  return d;
}

inline CUDA_EXTERNAL_MEMORY_BUFFER_DESC buf_desc(unsigned long long offset, unsigned long long size) {
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC d;
  std::memset(&d, 0, sizeof d);
  d.offset = offset;
  d.size = size;
  return d;
}

// A 2 MiB device allocation, mapped and accessible here, and the means to export it again.
struct Exported {
  ScopedReserve r{kGran};
  ScopedHandle h{kGran, vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)};
  Exported() {
    REQUIRE_CU(cuMemMap(r, kGran, 0, h.h, 0), CUDA_SUCCESS);
    REQUIRE_CU(grant(r, kGran), CUDA_SUCCESS);
  }
  ~Exported() {
    cuCtxSynchronize();
    cuMemUnmap(r, kGran);
  }
  // A fresh fd of the allocation (each import takes one).
  int fd() {
    int fd = -1;
    REQUIRE_CU(cuMemExportToShareableHandle(&fd, h.h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
    return fd;
  }
};

struct ExtMem {
  CUexternalMemory m = nullptr;
  ExtMem() = default;
  ExtMem(int fd, unsigned long long size, unsigned flags = 0) {
    auto d = mem_desc(fd, size, flags);
    REQUIRE_CU(cuImportExternalMemory(&m, &d), CUDA_SUCCESS);
  }
  ~ExtMem() {
    if (m) cuDestroyExternalMemory(m);
  }
  CUdeviceptr map(unsigned long long off, unsigned long long size) {
    CUdeviceptr p = 0;
    auto b = buf_desc(off, size);
    REQUIRE_CU(cuExternalMemoryGetMappedBuffer(&p, m, &b), CUDA_SUCCESS);
    return p;
  }
};

inline int closed_fd_number() {
  int t = open("/dev/null", O_RDONLY);
  close(t);
  return t;
}

inline CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mip_desc(size_t w, size_t h, unsigned levels,
                                                          unsigned long long off = 0) {
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC d;
  std::memset(&d, 0, sizeof d);
  d.offset = off;
  d.arrayDesc.Width = w;
  d.arrayDesc.Height = h;
  d.arrayDesc.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.arrayDesc.NumChannels = 4;
  d.numLevels = levels;
  return d;
}
