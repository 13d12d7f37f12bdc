// The drop-in promise for the memory APIs: built against NVIDIA's headers, linked with NVIDIA's
// -lcudart -lcuda, run on cuda-shim's libraries through LD_LIBRARY_PATH. Every runtime entry
// here must resolve under libcudart.so.13's version node, as NVIDIA's does: stream-ordered pools,
// a VMM allocation exported and imported as external memory, managed memory with attach, advise
// and prefetch.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;
#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "dropin_memory: FAILED %s (line %d)\n", #cond, __LINE__); \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

int main() {
  EXPECT(cudaSetDevice(0) == cudaSuccess);
  cudaStream_t s = nullptr;
  EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);

  // A pool that can be shared, an allocation from it, and its exported fd.
  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = 0;
  cudaMemPool_t pool = nullptr;
  EXPECT(cudaMemPoolCreate(&pool, &pp) == cudaSuccess);
  void* pa = nullptr;
  EXPECT(cudaMallocFromPoolAsync(&pa, 1 << 20, pool, s) == cudaSuccess);
  EXPECT(cudaMemsetAsync(pa, 0x5a, 1 << 20, s) == cudaSuccess);
  int pool_fd = -1;
  EXPECT(cudaMemPoolExportToShareableHandle(&pool_fd, pool, cudaMemHandleTypePosixFileDescriptor, 0) == cudaSuccess);
  EXPECT(pool_fd >= 0);
  cudaMemPoolPtrExportData ed;
  EXPECT(cudaMemPoolExportPointer(&ed, pa) == cudaSuccess);
  EXPECT(cudaFreeAsync(pa, s) == cudaSuccess);
  EXPECT(cudaStreamSynchronize(s) == cudaSuccess);

  // A cuMemCreate allocation, exported as a POSIX fd and imported back as external memory.
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t gran = 0;
  EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle h = 0;
  EXPECT(cuMemCreate(&h, gran, &prop, 0) == CUDA_SUCCESS);
  int vmm_fd = -1;
  EXPECT(cuMemExportToShareableHandle(&vmm_fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  cudaExternalMemoryHandleDesc md;
  std::memset(&md, 0, sizeof md);
  md.type = cudaExternalMemoryHandleTypeOpaqueFd;
  md.handle.fd = vmm_fd;
  md.size = gran;
  cudaExternalMemory_t ext = nullptr;
  EXPECT(cudaImportExternalMemory(&ext, &md) == cudaSuccess);
  cudaExternalMemoryBufferDesc bd;
  std::memset(&bd, 0, sizeof bd);
  bd.size = gran;
  void* a = nullptr;
  void* b = nullptr;
  EXPECT(cudaExternalMemoryGetMappedBuffer(&a, ext, &bd) == cudaSuccess);
  EXPECT(cudaExternalMemoryGetMappedBuffer(&b, ext, &bd) == cudaSuccess);
  EXPECT(cudaMemset(a, 0x3c, 4096) == cudaSuccess);
  unsigned char byte = 0;
  EXPECT(cudaMemcpy(&byte, static_cast<char*>(b) + 4095, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(byte == 0x3c);  // two mappings, one memory
  EXPECT(cudaFree(a) == cudaSuccess);
  EXPECT(cudaFree(b) == cudaSuccess);
  EXPECT(cudaDestroyExternalMemory(ext) == cudaSuccess);
  EXPECT(cuMemRelease(h) == CUDA_SUCCESS);

  // Managed memory: the host writes, the stream-ordered calls accept it.
  int* m = nullptr;
  EXPECT(cudaMallocManaged(reinterpret_cast<void**>(&m), 4096, cudaMemAttachGlobal) == cudaSuccess);
  if (m) {
    m[0] = 42;
    EXPECT(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle) == cudaSuccess);
    cudaMemLocation dev;
    std::memset(&dev, 0, sizeof dev);
    dev.type = cudaMemLocationTypeDevice;
    dev.id = 0;
    EXPECT(cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, dev) == cudaSuccess);
    EXPECT(cudaMemPrefetchAsync(m, 4096, dev, 0, s) == cudaSuccess);
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
    int pref = -7;
    EXPECT(cudaMemRangeGetAttribute(&pref, sizeof pref, cudaMemRangeAttributePreferredLocation, m, 4096) ==
           cudaSuccess);
    EXPECT(pref == 0);
    EXPECT(m[0] == 42);
    EXPECT(cudaFree(m) == cudaSuccess);
  }

  close(pool_fd);
  EXPECT(cudaMemPoolDestroy(pool) == cudaSuccess);
  EXPECT(cudaStreamDestroy(s) == cudaSuccess);
  std::printf("dropin_memory: %s (%d failure%s)\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
