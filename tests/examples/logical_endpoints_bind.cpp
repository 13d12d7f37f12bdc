// Logical endpoints (CUDA 13.3): reserve an id, create a unicast endpoint on device 0, wait
// until it is constructed, bind memory behind it, and reach that memory through the endpoint
// as a kernel's fabric put would (cuShimLogicalEndpointAccess, cuda-shim only). The entries
// are resolved as NCCL does, with cuGetProcAddress at version 13030. Two mistakes: binding
// before any Query saw the endpoint ready, and a size that is not a multiple of bindAlignment.
#define CUDA_SHIM_ENABLE_13030_API 1  // cuda-shim's cuda.h: declare the 13.3 types
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <cstdio>

static void show(const char* call, CUresult r) {
  const char* name = "?";
  cuGetErrorName(r, &name);
  std::printf("%s -> %s\n", call, name);
  char why[512];
  if (r != CUDA_SUCCESS && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
}

// Resolves entry `name` of CUDA 13.3 into fn (left NULL on an older driver).
template <class F> static void get(const char* name, F& fn) {
  CUdriverProcAddressQueryResult q;
  cuGetProcAddress(name, reinterpret_cast<void**>(&fn), 13030, CU_GET_PROC_ADDRESS_DEFAULT, &q);
}

int main() {
  CUcontext ctx;
  cuInit(0);
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  decltype(&cuLogicalEndpointGetLimits) GetLimits = nullptr;
  decltype(&cuLogicalEndpointIdReserve) IdReserve = nullptr;
  decltype(&cuLogicalEndpointCreate) Create = nullptr;
  decltype(&cuLogicalEndpointQuery) Query = nullptr;
  decltype(&cuLogicalEndpointBindAddr) BindAddr = nullptr;
  decltype(&cuLogicalEndpointUnbind) Unbind = nullptr;
  decltype(&cuLogicalEndpointDestroy) Destroy = nullptr;
  decltype(&cuLogicalEndpointIdRelease) IdRelease = nullptr;
  get("cuLogicalEndpointGetLimits", GetLimits), get("cuLogicalEndpointIdReserve", IdReserve);
  get("cuLogicalEndpointCreate", Create), get("cuLogicalEndpointQuery", Query);
  get("cuLogicalEndpointBindAddr", BindAddr), get("cuLogicalEndpointUnbind", Unbind);
  get("cuLogicalEndpointDestroy", Destroy), get("cuLogicalEndpointIdRelease", IdRelease);
  if (!BindAddr) return std::printf("this driver has no logical endpoints (CUDA 13.3 needed)\n"), 0;

  const size_t size = 4 << 20;
  CUlogicalEndpointProp prop = {};
  prop.type = CU_LOGICAL_ENDPOINT_TYPE_UNICAST;
  prop.unicast.device = 0;
  prop.size = size;
  cuuint64_t align = 0, max = 0;
  show("cuLogicalEndpointGetLimits", GetLimits(&align, &max, &prop));
  std::printf("bindAlignment = %llu MiB\n", (unsigned long long)align >> 20);
  CUlogicalEndpointId id;
  show("cuLogicalEndpointIdReserve(1)", IdReserve(&id, 1));
  show("cuLogicalEndpointCreate(unicast, device 0, 4 MiB)", Create(id, &prop));

  // Memory to bind: a cuMemCreate mapping (its address is aligned to the 2 MiB granularity).
  CUmemAllocationProp mp = {};
  mp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  mp.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemGenericAllocationHandle h;
  CUdeviceptr va;
  cuMemCreate(&h, size, &mp, 0);
  cuMemAddressReserve(&va, size, 0, 0, 0);
  cuMemMap(va, size, 0, h, 0);
  CUmemAccessDesc rw = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  cuMemSetAccess(va, size, &rw, 1);

  void* ptr = reinterpret_cast<void*>(va);
  show("cuLogicalEndpointBindAddr before any Query", BindAddr(id, 0, 0, ptr, size, 0));
  int ready = 0;  // construction takes time: poll until the endpoint is ready
  while (!ready && Query(id, 1, &ready) == CUDA_SUCCESS) {
  }
  std::printf("cuLogicalEndpointQuery: ready\n");
  show("cuLogicalEndpointBindAddr(1 MiB)", BindAddr(id, 0, 0, ptr, 1 << 20, 0));
  show("cuLogicalEndpointBindAddr(4 MiB)", BindAddr(id, 0, 0, ptr, size, 0));

  // A put through the endpoint lands in the bound memory.
  unsigned int v = 1234, back = 0;
  show("put 1234 at offset 64", static_cast<CUresult>(cuShimLogicalEndpointAccess(id, -1, 64, &v, sizeof v, 1)));
  cuMemcpyDtoH(&back, va + 64, sizeof back);
  std::printf("the bound memory at offset 64 reads %u\n", back);
  show("cuLogicalEndpointUnbind", Unbind(id, 0, 0, size));
  show("cuLogicalEndpointDestroy", Destroy(id));
  show("cuLogicalEndpointIdRelease", IdRelease(id, 1));
  cuMemUnmap(va, size), cuMemAddressFree(va, size), cuMemRelease(h);
  return 0;
}
