// Memory of one device shared with a process whose current device is another: a pool of
// device 1 imported, and a legacy IPC handle of device 1's memory opened, by a child working on
// device 0. Measured on two H100s (driver 580, CUDA 13.0); the emulator runs this with two
// devices and eight. With one device the case says so and checks nothing. Its codes stay
// literals: they are answers between two devices, which the recorded probe run (one GPU) cannot ask.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "multiprocess.hpp"
#include "pool_common.hpp"

namespace {

constexpr size_t kPoolBytes = 4096;
constexpr size_t kIpcBytes = 64 * 1024;

bool all_of(CUdeviceptr d, size_t n, unsigned char b) {
  std::vector<unsigned char> v(n);
  return cuMemcpyDtoH(v.data(), d, n) == CUDA_SUCCESS && all_bytes(v, b);
}

}  // namespace

// Child on device 0: what it may do with device 1's pool and legacy IPC memory. Sends one
// integer per step, in the order the parent checks them.
MP_CHILD(other_device_importer) {
  child_primary_ctx(0);
  int fd = ch.recv_fd();
  auto x = ch.recv_pod<CUmemPoolPtrExportData>();
  auto h = ch.recv_pod<cudaIpcMemHandle_t>();
  CUmemoryPool pool = nullptr;
  CUresult r = cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 1;
  for (int dev = 0; dev < 2; ++dev) {
    CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    CUmemAccess_flags f = static_cast<CUmemAccess_flags>(0x77);
    ch.send_int(cuMemPoolGetAccess(&f, pool, &l));
    ch.send_int(f);
  }
  CUdeviceptr d = 0;
  r = cuMemPoolImportPointer(&d, pool, &x);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 1;
  // Device 0 reaches the pool's memory once the importer grants it access.
  unsigned char b = 0;
  ch.send_int(cuMemcpyDtoH(&b, d, 1));
  CUmemAccessDesc a0{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  ch.send_int(cuMemPoolSetAccess(pool, &a0, 1));
  ch.send_int(all_of(d, kPoolBytes, 41));
  int ordinal = -1;
  ch.send_int(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
  ch.send_int(ordinal);
  ch.send_int(cuMemFree(d));
  ch.send_int(cuMemPoolDestroy(pool));
  // Legacy IPC: opened from device 0, the memory reports the device it was opened on.
  void* q = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&q, h, 0);
  ch.send_int(e);
  e = cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess);
  ch.send_int(e);
  if (e != cudaSuccess) return 1;
  ch.send_int(all_of(reinterpret_cast<CUdeviceptr>(q), kIpcBytes, 42));
  ordinal = -1;
  ch.send_int(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(q)));
  ch.send_int(ordinal);
  ch.send_int(cudaIpcCloseMemHandle(q));
  int cur = -1;
  ch.send_int(cudaGetDevice(&cur));
  ch.send_int(cur);
  (void)ch.recv_int();  // until the parent is done
  return 0;
}

TEST_CASE("multi-device IPC: a process on device 0 imports device 1's pool and IPC memory", "[multi-gpu][ipc]") {
  conformance_primary_ctx();
  if (device_count() < 2) {
    SUCCEED("one device");
    return;
  }
  CUcontext c0 = nullptr, c1 = nullptr;
  REQUIRE_CU(cuCtxGetCurrent(&c0), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CUmemPoolProps p = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 1);
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS);
  int fd = -1;
  REQUIRE_CU(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, kPoolBytes, pool, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8Async(a, 41, kPoolBytes, nullptr), CUDA_SUCCESS);
  CUmemPoolPtrExportData x;
  std::memset(&x, 0, sizeof x);
  REQUIRE_CU(cuMemPoolExportPointer(&x, a), CUDA_SUCCESS);
  REQUIRE_RT(cudaSetDevice(1), cudaSuccess);
  void* m = nullptr;
  REQUIRE_RT(cudaMalloc(&m, kIpcBytes), cudaSuccess);
  REQUIRE_RT(cudaMemset(m, 42, kIpcBytes), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  cudaIpcMemHandle_t h;
  REQUIRE_RT(cudaIpcGetMemHandle(&h, m), cudaSuccess);

  auto c = mp::spawn("other_device_importer");
  REQUIRE(c.ch.send_fd(fd));
  c.ch.send_pod(x);
  c.ch.send_pod(h);
  auto cu = [&] { return static_cast<CUresult>(c.ch.recv_int()); };
  auto rt = [&] { return static_cast<cudaError_t>(c.ch.recv_int()); };
  REQUIRE_CU(cu(), CUDA_SUCCESS);  // import
  CHECK_CU(cu(), CUDA_SUCCESS);    // access of device 0
  CHECK(c.ch.recv_int() == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK_CU(cu(), CUDA_SUCCESS);    // access of device 1, where the pool lives
  CHECK(c.ch.recv_int() == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  REQUIRE_CU(cu(), CUDA_SUCCESS);  // import pointer
  CHECK_CU(cu(), CUDA_ERROR_INVALID_VALUE);  // read from device 0 before access
  CHECK_CU(cu(), CUDA_SUCCESS);    // grant device 0
  CHECK(c.ch.recv_int() == 1);     // reads what device 1 wrote
  CHECK_CU(cu(), CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == 1);     // the pointer's device: the pool's
  CHECK_CU(cu(), CUDA_SUCCESS);    // free
  CHECK_CU(cu(), CUDA_SUCCESS);    // destroy the imported pool
  CHECK_RT(rt(), cudaErrorInvalidValue);  // IPC open without cudaIpcMemLazyEnablePeerAccess
  REQUIRE_RT(rt(), cudaSuccess);          // IPC open with it
  CHECK(c.ch.recv_int() == 1);
  CHECK_CU(cu(), CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == 0);  // reported on the device it was opened on
  CHECK_RT(rt(), cudaSuccess);  // close
  CHECK_RT(rt(), cudaSuccess);
  CHECK(c.ch.recv_int() == 0);  // the child's device is still 0
  c.ch.send_int(0);
  CHECK(c.wait() == 0);

  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  CHECK_RT(cudaFree(m), cudaSuccess);
  ::close(fd);
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  REQUIRE_CU(cuCtxSetCurrent(c0), CUDA_SUCCESS);
  CHECK_CU(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}
