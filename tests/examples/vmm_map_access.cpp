// Virtual memory management, step by step: physical memory (cuMemCreate), an address range
// (cuMemAddressReserve), a mapping of one onto the other (cuMemMap), then access
// (cuMemSetAccess): mapped memory is unreachable until a device is given access to it.
// Sizes must be multiples of the granularity; a mapping takes the whole allocation.
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <cstdio>

static void show(const char* call, CUresult r) {
  const char* name = "?";
  cuGetErrorName(r, &name);
  std::printf("%s -> %s\n", call, name);
#ifdef CUDA_SHIM_EXT
  char why[512];
  if (r != CUDA_SUCCESS && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
#endif
}

int main() {
  CUcontext ctx;
  cuInit(0);
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);

  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  size_t gran = 0;
  cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  std::printf("granularity: %zu MiB\n", gran >> 20);

  // The mistake: a size that is not a multiple of the granularity.
  CUmemGenericAllocationHandle h;
  show("cuMemCreate(1 MiB)", cuMemCreate(&h, 1 << 20, &prop, 0));
  show("cuMemCreate(2 MiB)", cuMemCreate(&h, gran, &prop, 0));

  CUdeviceptr va = 0;
  show("cuMemAddressReserve(4 MiB)", cuMemAddressReserve(&va, 2 * gran, 0, 0, 0));
  // Another mistake: mapping half of the allocation.
  show("cuMemMap(1 MiB of it)", cuMemMap(va, gran / 2, 0, h, 0));
  show("cuMemMap(all of it)", cuMemMap(va, gran, 0, h, 0));

  // Mapped, but no device may touch it yet.
  show("cuMemsetD32 before cuMemSetAccess", cuMemsetD32(va, 7, 4));
  CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  show("cuMemSetAccess(device 0, READWRITE)", cuMemSetAccess(va, gran, &access, 1));
  show("cuMemsetD32 after cuMemSetAccess", cuMemsetD32(va, 7, 4));
  unsigned int back[4] = {};
  cuMemcpyDtoH(back, va, sizeof back);
  std::printf("read back: %u %u %u %u\n", back[0], back[1], back[2], back[3]);

  // The handle may be released while mapped: the memory lives until it is unmapped.
  show("cuMemRelease", cuMemRelease(h));
  show("cuMemUnmap", cuMemUnmap(va, gran));
  show("cuMemAddressFree", cuMemAddressFree(va, 2 * gran));
  cuDevicePrimaryCtxRelease(0);
  return 0;
}
