// Built against NVIDIA's headers and linked with NVIDIA's -lcudart -lcuda, then run
// with LD_LIBRARY_PATH pointing at cuda-shim's build/lib: the drop-in promise.
// Checks the facts of ../shared/REAL_DRIVER.md under CUDA_SHIM_DRIVER_VERSION=13000.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

static int failures = 0;
#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) {                                               \
      std::fprintf(stderr, "dropin: FAILED %s (line %d)\n", #cond, __LINE__); \
      ++failures;                                                \
    }                                                            \
  } while (0)

int main() {
  int v = 0;
  EXPECT(cudaDriverGetVersion(&v) == cudaSuccess && v == 13000);
  EXPECT(cudaRuntimeGetVersion(&v) == cudaSuccess && v == 13000);
  int n = 0;
  EXPECT(cudaGetDeviceCount(&n) == cudaSuccess && n == 1);
  EXPECT(cuInit(0) == CUDA_SUCCESS);
  EXPECT(cuDriverGetVersion(&v) == CUDA_SUCCESS && v == 13000);
  size_t total = 0;
  EXPECT(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS && total == 150109880320ull);
  struct {
    CUdevice_attribute a;
    int v;
  } want[] = {
      {CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0},
      {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
      {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
      {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, 0},
      {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 9},
      {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0},
      {CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0},
      {CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, 0},
      {CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
      {CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, 1},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
  };
  for (auto& w : want) {
    int got = -1;
    CUresult r = cuDeviceGetAttribute(&got, w.a, 0);
    if (r != CUDA_SUCCESS || got != w.v) {
      std::fprintf(stderr, "dropin: attribute %d: ret %d value %d, want %d\n", w.a, r, got, w.v);
      ++failures;
    }
  }
  // Logical endpoint attributes (13.3) and unknown attributes are refused on a 13.0 driver.
  EXPECT(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(153), 0) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(154), 0) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(9999), 0) == CUDA_ERROR_INVALID_VALUE);
  // cuGetProcAddress_v2 as measured: unknown name, and a version newer than the driver.
  void* p = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  EXPECT(cuGetProcAddress("cuNoSuchFunction", &p, 13000, 0, &st) == CUDA_SUCCESS);
  EXPECT(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && p == nullptr);
  EXPECT(cuGetProcAddress("cuMemAlloc", &p, 13030, 0, &st) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuGetProcAddress("cuMemAlloc", &p, 13000, 0, &st) == CUDA_SUCCESS && p != nullptr);
  // The runtime path: allocate, copy, read back.
  void* d = nullptr;
  char in[64], out[64];
  for (int i = 0; i < 64; ++i) in[i] = static_cast<char>(i * 3);
  EXPECT(cudaMalloc(&d, sizeof in) == cudaSuccess);
  EXPECT(cudaMemcpy(d, in, sizeof in, cudaMemcpyHostToDevice) == cudaSuccess);
  EXPECT(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(std::memcmp(in, out, sizeof in) == 0);
  EXPECT(cudaFree(d) == cudaSuccess);
  std::printf("dropin: %s (%d failure%s)\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
