// The occupancy calculator: cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags),
// cuOccupancyMaxPotentialBlockSize and cuOccupancyAvailableDynamicSMemPerBlock, on the sm_90
// cubin of module_kernels.cu (registers as ptxas counted them, so both drivers see the same
// kernel). Expected values are an H200's (driver 580): blocks per SM are limited by its 64 warps,
// 32 blocks, 64 K registers in 4 partitions and 228 KiB of shared memory with 1 KiB reserved a block.
#include "module_common.hpp"

namespace {

int sms() {
  int n = 0;
  REQUIRE_CU(cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  return n;
}

int active(CUfunction f, int threads, size_t dyn) {
  int n = -7;
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, threads, dyn), CUDA_SUCCESS);
  int m = -7;
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&m, f, threads, dyn, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE),
           CUDA_SUCCESS);
  CHECK(m == n);
  return n;
}

}  // namespace

TEST_CASE("cuOccupancyMaxActiveBlocksPerMultiprocessor: warps, blocks and shared memory limit it", "[occupancy]") {
  conformance_primary_ctx();
  Module mod(cubin90().data());
  CUfunction ext = mod.fn(kExternC), shared = mod.fn(kShared), bounded = mod.fn(kBounded);
  CHECK(active(ext, 1, 0) == 32);     // the block limit
  CHECK(active(ext, 96, 0) == 21);    // 3 warps a block: 64 / 3
  CHECK(active(ext, 128, 0) == 16);
  CHECK(active(ext, 640, 0) == 3);
  CHECK(active(ext, 1024, 0) == 2);
  CHECK(active(ext, 1025, 0) == 0);   // past the device's block size: none, not an error
  CHECK(active(ext, 32, 48 * 1024) == 4);       // 228 KiB / (48 + 1 KiB)
  CHECK(active(ext, 32, 48 * 1024 + 1) == 0);   // more than the kernel may use without opting in
  CHECK(active(shared, 32, 0) == 32);  // 4 KiB static + 1 KiB reserved: 45 would fit; the block limit
  CHECK(active(shared, 32, 40 * 1024) == 5);
  // A kernel's own bound (256 threads) is not the calculator's: only the device's block limit is.
  CHECK(active(bounded, 512, 0) == 4);
  int n = -7;
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, ext, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, ext, -1, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, ext, 128, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, nullptr, 128, 0), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, ext, 128, 0, 7), CUDA_ERROR_INVALID_VALUE);
  CHECK(n == -7);
}

TEST_CASE("cuOccupancyMaxActiveBlocksPerMultiprocessor follows opt-in and the shared-memory carveout", "[occupancy]") {
  conformance_primary_ctx();
  Module mod(cubin90().data());
  CUfunction f = mod.fn(kExternC);
  REQUIRE_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024), CUDA_SUCCESS);
  CHECK(active(f, 128, 50 * 1024) == 4);
  CHECK(active(f, 128, 100 * 1024) == 2);
  CHECK(active(f, 128, 101 * 1024) == 0);
  // Carveout 0: the SM's smallest shared-memory configuration that holds one block.
  REQUIRE_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 0), CUDA_SUCCESS);
  CHECK(active(f, 128, 0) == 8);           // 8 KiB of 1 KiB blocks
  CHECK(active(f, 128, 4096) == 1);        // 8 KiB holds one 5 KiB block
  CHECK(active(f, 128, 50 * 1024) == 1);   // 64 KiB holds one 51 KiB block
}

TEST_CASE("cuOccupancyMaxPotentialBlockSize: the block size with the most resident threads", "[occupancy]") {
  conformance_primary_ctx();
  Module mod(cubin90().data());
  CUfunction ext = mod.fn(kExternC), shared = mod.fn(kShared), bounded = mod.fn(kBounded);
  int grid = -7, block = -7;
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, ext, nullptr, 0, 0), CUDA_SUCCESS);
  CHECK(block == 1024);
  CHECK(grid == 2 * sms());
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, ext, nullptr, 0, 200), CUDA_SUCCESS);
  CHECK(block == 128);  // 16 blocks of 128 fill the SM; 192 leaves room
  CHECK(grid == 16 * sms());
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, bounded, nullptr, 0, 0), CUDA_SUCCESS);
  CHECK(block == 256);
  CHECK(grid == 8 * sms());
  // The limit itself is tried, not only whole warps: shared memory allows 9 blocks (4 + 20 + 1
  // KiB each), and 9 of 200 threads beat 9 of 192.
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, shared, nullptr, 20 * 1024, 200), CUDA_SUCCESS);
  CHECK(block == 200);
  CHECK(grid == 9 * sms());
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, ext, nullptr, 64 * 1024, 0), CUDA_SUCCESS);
  CHECK(block == 0);  // no block size can have that much dynamic shared memory
  CHECK(grid == 0);
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(nullptr, &block, ext, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, nullptr, ext, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, nullptr, nullptr, 0, 0), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, ext, nullptr, 0, -5), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuOccupancyAvailableDynamicSMemPerBlock: the SM's share per block, within the kernel's maximum",
          "[occupancy]") {
  conformance_primary_ctx();
  Module mod(cubin90().data());
  CUfunction ext = mod.fn(kExternC), shared = mod.fn(kShared);
  auto avail = [](CUfunction f, int blocks, int threads, CUresult want = CUDA_SUCCESS) {
    size_t s = 777;
    CHECK_CU(cuOccupancyAvailableDynamicSMemPerBlock(&s, f, blocks, threads), want);
    if (want != CUDA_SUCCESS) CHECK(s == 777);  // untouched on failure
    return s;
  };
  CHECK(avail(ext, 1, 128) == 49152);  // cuBLAS asks this in cublasCreate
  CHECK(avail(ext, 8, 128) == 233472 / 8);
  CHECK(avail(ext, 32, 32) == 233472 / 32);
  CHECK(avail(shared, 8, 32) == 233472 / 8 - 4096);
  avail(ext, 0, 128, CUDA_ERROR_INVALID_VALUE);
  avail(ext, 33, 32, CUDA_ERROR_INVALID_VALUE);    // past the block limit
  avail(ext, 3, 1024, CUDA_ERROR_INVALID_VALUE);   // 96 warps
  avail(ext, 1, 2048, CUDA_ERROR_INVALID_VALUE);   // past the device's block size
  CHECK(avail(shared, 16, 32) == 233472 / 16 - 4096);
  size_t s = 0;
  CHECK_CU(cuOccupancyAvailableDynamicSMemPerBlock(&s, nullptr, 1, 128), CUDA_ERROR_INVALID_HANDLE);
}

// Cluster occupancy (measured on an H200 with a kernel of the same limits, ../shared/REAL_DRIVER.md):
// clusters stay inside a GPC, on distinct SMs, at most 8 blocks of them on an SM.
namespace {
int clusters(CUfunction f, unsigned threads, unsigned dyn, unsigned cluster, CUresult want = CUDA_SUCCESS) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a.value.clusterDim.x = cluster;
  a.value.clusterDim.y = 1;
  a.value.clusterDim.z = 1;
  CUlaunchConfig c{};
  c.gridDimX = cluster * 4, c.gridDimY = 1, c.gridDimZ = 1;
  c.blockDimX = threads, c.blockDimY = 1, c.blockDimZ = 1;
  c.sharedMemBytes = dyn;
  c.attrs = &a;
  c.numAttrs = 1;
  int n = -7;
  CHECK_CU(cuOccupancyMaxActiveClusters(&n, f, &c), want);
  return n;
}
}  // namespace

TEST_CASE("cuOccupancyMaxActiveClusters: clusters inside GPCs, as an H200 counts them", "[occupancy][cluster]") {
  conformance_primary_ctx();
  if (sms() != 132) return;  // the measured answers are for 132 SMs (H100/H200)
  Module mod(cubin90().data());
  CUfunction f = mod.fn(kExternC);
  REQUIRE_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448), CUDA_SUCCESS);
  CHECK(clusters(f, 128, 0, 9, CUDA_ERROR_INVALID_CLUSTER_SIZE) == -7);  // past the portable 8
  REQUIRE_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  const int one[] = {132, 66, 39, 30, 22, 17, 15, 15, 9, 7, 7, 7, 7, 7, 7, 7, 2};            // 1 block an SM
  const int two[] = {264, 132, 79, 62, 47, 39, 32, 30, 23, 21, 16, 16, 14, 14, 14, 14, 4};   // 2
  const int eight[] = {1056, 528, 327, 248, 193, 163, 139, 124, 102, 88, 81, 74, 67, 65, 58, 58, 16};  // 8
  for (unsigned cs = 1; cs <= 17; ++cs) {
    CAPTURE(cs);
    CHECK(clusters(f, 128, 232448, cs) == one[cs - 1]);
    CHECK(clusters(f, 1024, 0, cs) == two[cs - 1]);
    CHECK(clusters(f, 128, 100000, cs) == two[cs - 1]);
    CHECK(clusters(f, 128, 0, cs) == eight[cs - 1]);
  }
  CUlaunchConfig c{};
  c.gridDimX = 64, c.gridDimY = 1, c.gridDimZ = 1, c.blockDimX = 128, c.blockDimY = 1, c.blockDimZ = 1;
  int n = -7;
  CHECK_CU(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_SUCCESS);  // no cluster dimension: none
  CHECK(n == 0);
  CHECK_CU(cuOccupancyMaxPotentialClusterSize(&n, f, &c), CUDA_SUCCESS);
  CHECK(n == 16);
  REQUIRE_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0), CUDA_SUCCESS);
  CHECK_CU(cuOccupancyMaxPotentialClusterSize(&n, f, &c), CUDA_SUCCESS);
  CHECK(n == 8);
  CHECK_CU(cuOccupancyMaxActiveClusters(nullptr, f, &c), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxActiveClusters(&n, f, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuOccupancyMaxActiveClusters(&n, nullptr, &c), CUDA_ERROR_INVALID_VALUE);
}
