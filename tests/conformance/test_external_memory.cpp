// External memory: cuImportExternalMemory, cuExternalMemoryGetMappedBuffer,
// cuExternalMemoryGetMappedMipmappedArray, cuDestroyExternalMemory. The memory imported here is
// a cuMemCreate allocation exported as a POSIX fd, which NVIDIA's driver imports as opaque-fd
// external memory as it would Vulkan's (test_external_vulkan.cpp imports Vulkan's). Expected
// codes measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "multiprocess.hpp"
#include "vmm_common.hpp"

namespace {

CUDA_EXTERNAL_MEMORY_HANDLE_DESC mem_desc(int fd, unsigned long long size, unsigned flags = 0,
                                          CUexternalMemoryHandleType t = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = t;
  d.handle.fd = fd;
  d.size = size;
  d.flags = flags;
  return d;
}

CUDA_EXTERNAL_MEMORY_BUFFER_DESC buf_desc(unsigned long long offset, unsigned long long size) {
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

int closed_fd_number() {
  int t = open("/dev/null", O_RDONLY);
  close(t);
  return t;
}

}  // namespace

// ---- importing ------------------------------------------------------------------------------
TEST_CASE("an exported cuMemCreate allocation imports as external memory that shares its bytes", "[external]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(kGran, 1);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), kGran), CUDA_SUCCESS);
  ExtMem x(e.fd(), kGran);
  CUdeviceptr p = x.map(0, kGran);
  CHECK(p != e.r.base);  // a mapping of its own
  std::vector<unsigned char> got(kGran);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), p, kGran), CUDA_SUCCESS);
  CHECK(got == a);
  // Writes through the buffer land in the allocation.
  auto b = pattern(4096, 2);
  REQUIRE_CU(cuMemcpyHtoD(p + 8192, b.data(), b.size()), CUDA_SUCCESS);
  std::vector<unsigned char> back(4096);
  REQUIRE_CU(cuMemcpyDtoH(back.data(), e.r + 8192, back.size()), CUDA_SUCCESS);
  CHECK(back == b);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

TEST_CASE("cuImportExternalMemory: the fd of a successful import is the driver's", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  ExtMem x(fd, kGran);
  CHECK_FALSE(mp::fd_is_open(fd));  // measured: closed by the driver
}

TEST_CASE("cuImportExternalMemory: a smaller size than the allocation is accepted", "[external]") {
  conformance_primary_ctx();
  Exported e;
  for (unsigned long long size : {1ull, 4096ull, 1ull << 20}) {
    INFO("size " << size);
    ExtMem x(e.fd(), size);
    CUdeviceptr p = x.map(0, size);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
}

TEST_CASE("cuImportExternalMemory: size 0", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  auto d = mem_desc(fd, 0);
  CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  CHECK(mp::fd_is_open(fd));  // a failed import leaves the fd with the caller
  close(fd);
}

TEST_CASE("cuImportExternalMemory: a size larger than the allocation imports; mappings past its end fail",
          "[external]") {
  conformance_primary_ctx();
  Exported e;
  CUdeviceptr p = 0;
  {
    ExtMem x(e.fd(), 2 * kGran);  // measured: the size is not checked against the object here
    auto b = buf_desc(0, 2 * kGran);
    CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
    b = buf_desc(0, kGran + 1);
    CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
    p = x.map(0, kGran);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
  {
    ExtMem x(e.fd(), 1ull << 50);
    auto b = buf_desc(0, 1ull << 50);  // measured: no address space that large
    CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_OUT_OF_MEMORY);
  }
  {
    ExtMem x(e.fd(), kMiB);  // a smaller import cannot map more than it imported
    auto b = buf_desc(0, kGran);
    CHECK_CU(cuExternalMemoryGetMappedBuffer(&p, x.m, &b), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuImportExternalMemory: the dedicated flag is accepted, other flags are not", "[external]") {
  conformance_primary_ctx();
  Exported e;
  {
    ExtMem x(e.fd(), kGran, CUDA_EXTERNAL_MEMORY_DEDICATED);
    CUdeviceptr p = x.map(0, kGran);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  for (unsigned flags : {2u, 0x80000000u}) {
    INFO("flags " << flags);
    auto d = mem_desc(fd, kGran, flags);
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
    CHECK(mp::fd_is_open(fd));
  }
  close(fd);
}

TEST_CASE("cuImportExternalMemory: reserved words that are not zero", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  auto d = mem_desc(fd, kGran);
  d.reserved[3] = 1;
  CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  CHECK(mp::fd_is_open(fd));
  close(fd);
}

TEST_CASE("cuImportExternalMemory: NULL arguments", "[external]") {
  conformance_primary_ctx();
  CUexternalMemory m = nullptr;
  auto d = mem_desc(-1, kGran);
  CHECK_CU(cuImportExternalMemory(nullptr, &d), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuImportExternalMemory(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuImportExternalMemory: fd -1 and a closed fd", "[external]") {
  conformance_primary_ctx();
  CUexternalMemory m = nullptr;
  for (int fd : {-1, closed_fd_number()}) {
    INFO("fd " << fd);
    auto d = mem_desc(fd, kGran);
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_UNKNOWN);  // measured
  }
}

TEST_CASE("cuImportExternalMemory: fds that no exporter made are refused, and consumed", "[external]") {
  conformance_primary_ctx();
  CUexternalMemory m = nullptr;
  int memfd = mp::plain_memfd(kGran);
  int devnull = open("/dev/null", O_RDWR);
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  for (int fd : {memfd, devnull, sv[0]}) {
    INFO("fd " << fd);
    auto d = mem_desc(fd, kGran);
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_UNKNOWN);
    // Measured: past the descriptor's own checks the driver owns the fd, failure or not.
    CHECK_FALSE(mp::fd_is_open(fd));
    if (mp::fd_is_open(fd)) close(fd);
  }
  close(sv[1]);
}

TEST_CASE("cuImportExternalMemory: a memory pool's exported fd", "[external]") {
  conformance_primary_ctx();
  CUmemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&pool, &pp), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&p, kGran, pool, nullptr), CUDA_SUCCESS);
  int fd = -1;
  REQUIRE_CU(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  CUexternalMemory m = nullptr;
  auto d = mem_desc(fd, kGran);
  CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_NOT_SUPPORTED);  // measured
  CHECK_FALSE(mp::fd_is_open(fd));
  if (mp::fd_is_open(fd)) close(fd);
  cuMemFreeAsync(p, nullptr);
  cuStreamSynchronize(nullptr);
  cuMemPoolDestroy(pool);
}

TEST_CASE("cuImportExternalMemory: Windows and NvSciBuf handle types on Linux", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  for (int t : {2, 3, 4, 8}) {  // measured: NOT_SUPPORTED given a handle, INVALID_VALUE for an all-zero one
    INFO("type " << t);
    auto d = mem_desc(fd, kGran, 0, static_cast<CUexternalMemoryHandleType>(t));
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_NOT_SUPPORTED);
    std::memset(&d.handle, 0, sizeof d.handle);
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  }
  for (int t : {5, 6, 7}) {  // measured: the D3D resource types are INVALID_VALUE either way
    INFO("type " << t);
    auto d = mem_desc(fd, kGran, 0, static_cast<CUexternalMemoryHandleType>(t));
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK(mp::fd_is_open(fd));  // never the driver's
  close(fd);
}

TEST_CASE("cuImportExternalMemory: type 9 (a dma-buf fd)", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  auto d = mem_desc(fd, kGran, 0, static_cast<CUexternalMemoryHandleType>(9));
  CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_NOT_SUPPORTED);  // measured
  CHECK(mp::fd_is_open(fd));
  d.handle.fd = -1;
  CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  close(fd);
}

TEST_CASE("cuImportExternalMemory: type 0 and unknown types", "[external]") {
  conformance_primary_ctx();
  Exported e;
  int fd = e.fd();
  CUexternalMemory m = nullptr;
  for (int t : {0, 100, -1}) {
    INFO("type " << t);
    auto d = mem_desc(fd, kGran, 0, static_cast<CUexternalMemoryHandleType>(t));
    CHECK_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK(mp::fd_is_open(fd));
  close(fd);
}

TEST_CASE("the same allocation imported twice: two objects, one memory", "[external]") {
  conformance_primary_ctx();
  Exported e;
  ExtMem x(e.fd(), kGran), y(e.fd(), kGran);
  CHECK(x.m != y.m);
  CUdeviceptr p = x.map(0, kGran), q = y.map(0, kGran);
  auto a = pattern(512, 3);
  REQUIRE_CU(cuMemcpyHtoD(p + 100, a.data(), a.size()), CUDA_SUCCESS);
  std::vector<unsigned char> got(512);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), q + 100, got.size()), CUDA_SUCCESS);
  CHECK(got == a);
  cuMemFree(p);
  cuMemFree(q);
}

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

// ---- another process ------------------------------------------------------------------------
MP_CHILD(external_importer) {
  child_primary_ctx();
  int fd = ch.recv_fd();
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = mem_desc(fd, kGran);
  CUexternalMemory m = nullptr;
  CUresult r = cuImportExternalMemory(&m, &d);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 10;
  CUdeviceptr p = 0;
  auto b = buf_desc(0, kGran);
  ch.send_int(cuExternalMemoryGetMappedBuffer(&p, m, &b));
  std::vector<unsigned char> got(4096);
  cuMemcpyDtoH(got.data(), p, got.size());
  ch.send_int(got == pattern(4096, 7) ? 1 : 0);
  auto mine = pattern(4096, 8);
  ch.send_int(cuMemcpyHtoD(p + 4096, mine.data(), mine.size()));
  if (ch.recv_int() != 42) return 11;
  cuMemFree(p);
  cuDestroyExternalMemory(m);
  return 0;
}

TEST_CASE("another process imports the exported fd as external memory; both see each other's bytes",
          "[external][ipc]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(4096, 7);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), a.size()), CUDA_SUCCESS);
  int fd = e.fd();
  auto c = mp::spawn("external_importer");
  REQUIRE(c.ch.send_fd(fd));
  close(fd);  // the child has its own descriptor now
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == 1);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  std::vector<unsigned char> got(4096);
  CHECK_CU(cuMemcpyDtoH(got.data(), e.r + 4096, got.size()), CUDA_SUCCESS);
  CHECK(got == pattern(4096, 8));
  c.ch.send_int(42);
  CHECK(c.wait() == 0);
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
namespace {

CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mip_desc(size_t w, size_t h, unsigned levels, unsigned long long off = 0) {
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

}  // namespace

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

// ---- fd ownership: a descriptor handed over is never used again -----------------------------
// Once an import takes the caller's fd, that number is the process's to reuse: the driver must
// never read, seek, map or close it again. A sentinel (a memfd with known bytes and a file
// offset of its own) is put at the very number, then the import's objects are used and
// destroyed, and other imports run; the sentinel stays open, with its bytes, offset and inode.
namespace {

struct Sentinel {
  int fd = -1;
  ino_t ino = 0;
  static constexpr off_t kOffset = 1234;
  static std::vector<unsigned char> bytes() { return pattern(8192, 77); }
  // Takes number n, which must be free (the import consumed it).
  explicit Sentinel(int n) {
    REQUIRE_FALSE(mp::fd_is_open(n));
    int t = mp::plain_memfd(8192);
    REQUIRE(t >= 0);
    auto b = bytes();
    REQUIRE(pwrite(t, b.data(), b.size(), 0) == static_cast<ssize_t>(b.size()));
    REQUIRE(lseek(t, kOffset, SEEK_SET) == kOffset);
    if (t != n) {
      REQUIRE(dup2(t, n) == n);
      close(t);
    }
    fd = n;
    struct stat st {};
    REQUIRE(fstat(fd, &st) == 0);
    ino = st.st_ino;
  }
  ~Sentinel() {
    if (mp::fd_is_open(fd)) close(fd);
  }
  void check() const {
    INFO("sentinel at fd " << fd);
    REQUIRE(mp::fd_is_open(fd));
    struct stat st {};
    REQUIRE(fstat(fd, &st) == 0);
    CHECK(st.st_ino == ino);  // the same file, never closed and replaced
    CHECK(st.st_size == 8192);
    CHECK(lseek(fd, 0, SEEK_CUR) == kOffset);
    std::vector<unsigned char> got(8192);
    CHECK(pread(fd, got.data(), got.size(), 0) == 8192);
    CHECK(got == bytes());
  }
};

CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sem_handle_desc(CUexternalSemaphoreHandleType t, int fd) {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = t;
  d.handle.fd = fd;
  return d;
}

}  // namespace

TEST_CASE("fd ownership: after cuImportExternalMemory the fd's number is never touched again", "[external][fd]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(kGran, 9);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), kGran), CUDA_SUCCESS);
  const int fd = e.fd();
  CUexternalMemory m = nullptr;
  auto d = mem_desc(fd, kGran);
  REQUIRE_CU(cuImportExternalMemory(&m, &d), CUDA_SUCCESS);
  Sentinel s(fd);  // the kernel would hand this number out next; here it surely is

  // Buffers and an array mapped from it, used and freed.
  CUdeviceptr p = 0, q = 0;
  auto b0 = buf_desc(0, kGran), b1 = buf_desc(4096, 8192);
  REQUIRE_CU(cuExternalMemoryGetMappedBuffer(&p, m, &b0), CUDA_SUCCESS);
  REQUIRE_CU(cuExternalMemoryGetMappedBuffer(&q, m, &b1), CUDA_SUCCESS);
  std::vector<unsigned char> got(kGran);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), p, kGran), CUDA_SUCCESS);
  CHECK(got == a);
  auto w = pattern(8192, 10);
  REQUIRE_CU(cuMemcpyHtoD(q, w.data(), w.size()), CUDA_SUCCESS);
  CUmipmappedArray mm = nullptr;
  auto md = mip_desc(64, 64, 2);
  REQUIRE_CU(cuExternalMemoryGetMappedMipmappedArray(&mm, m, &md), CUDA_SUCCESS);
  s.check();
  CHECK_CU(cuMipmappedArrayDestroy(mm), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(q), CUDA_SUCCESS);
  CHECK_CU(cuDestroyExternalMemory(m), CUDA_SUCCESS);
  s.check();
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);  // the last mapping goes after the object
  s.check();

  // Other imports come and go: successful ones and refused ones (which consume their own fd).
  for (int i = 0; i < 4; ++i) {
    ExtMem x(e.fd(), kGran);
    CUdeviceptr r = x.map(0, 4096);
    CHECK_CU(cuMemFree(r), CUDA_SUCCESS);
    int plain = mp::plain_memfd(kGran);
    auto pd = mem_desc(plain, kGran);
    CUexternalMemory refused = nullptr;
    CHECK_CU(cuImportExternalMemory(&refused, &pd), CUDA_ERROR_UNKNOWN);
    CHECK_FALSE(mp::fd_is_open(plain));
  }
  s.check();
  // The exporter's own memory is intact (the buffer's write reached it).
  std::vector<unsigned char> back(8192);
  REQUIRE_CU(cuMemcpyDtoH(back.data(), e.r + 4096, back.size()), CUDA_SUCCESS);
  CHECK(back == w);
}

TEST_CASE("fd ownership: a refused cuImportExternalMemory consumes the fd once", "[external][fd]") {
  conformance_primary_ctx();
  // Refused past the descriptor checks: the driver owns the fd and closes it, exactly once.
  int plain = mp::plain_memfd(kGran);
  auto d = mem_desc(plain, kGran);
  CUexternalMemory m = nullptr;
  REQUIRE_CU(cuImportExternalMemory(&m, &d), CUDA_ERROR_UNKNOWN);
  Sentinel s(plain);
  Exported e;
  for (int i = 0; i < 3; ++i) {
    ExtMem x(e.fd(), kGran);
    CUdeviceptr r = x.map(0, 4096);
    CHECK_CU(cuMemFree(r), CUDA_SUCCESS);
  }
  // Refused before the descriptor checks (size 0): the fd stays the caller's, untouched.
  int keep = e.fd();
  auto z = mem_desc(keep, 0);
  CHECK_CU(cuImportExternalMemory(&m, &z), CUDA_ERROR_INVALID_VALUE);
  CHECK(mp::fd_is_open(keep));
  close(keep);
  s.check();
}

TEST_CASE("fd ownership: external semaphores take the fd on success only", "[external][fd][semaphore]") {
  conformance_primary_ctx();
  Exported e;  // the driver imports its own exported allocation as a semaphore (measured)
  const int fd = e.fd();
  auto d = sem_handle_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, fd);
  CUexternalSemaphore sem = nullptr;
  REQUIRE_CU(cuImportExternalSemaphore(&sem, &d), CUDA_SUCCESS);
  Sentinel s(fd);
  CUstream st = nullptr;
  REQUIRE_CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
  std::memset(&sp, 0, sizeof sp);
  CHECK_CU(cuSignalExternalSemaphoresAsync(&sem, &sp, 1, st), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(st), CUDA_SUCCESS);
  CHECK_CU(cuDestroyExternalSemaphore(sem), CUDA_SUCCESS);
  s.check();

  // A refused semaphore import leaves its fd open, its bytes and offset as they were.
  int plain = mp::plain_memfd(4096, 0x3d);
  REQUIRE(lseek(plain, 17, SEEK_SET) == 17);
  auto pd = sem_handle_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, plain);
  CUexternalSemaphore refused = nullptr;
  CHECK_CU(cuImportExternalSemaphore(&refused, &pd), CUDA_ERROR_UNKNOWN);
  CHECK(mp::fd_is_open(plain));
  CHECK(lseek(plain, 0, SEEK_CUR) == 17);
  unsigned char c = 0;
  CHECK(pread(plain, &c, 1, 4095) == 1);
  CHECK(c == 0x3d);
  close(plain);
  // More semaphores come and go.
  for (int i = 0; i < 3; ++i) {
    auto di = sem_handle_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD, e.fd());
    CUexternalSemaphore x = nullptr;
    REQUIRE_CU(cuImportExternalSemaphore(&x, &di), CUDA_SUCCESS);
    CHECK_CU(cuDestroyExternalSemaphore(x), CUDA_SUCCESS);
  }
  CHECK_CU(cuStreamDestroy(st), CUDA_SUCCESS);
  s.check();
}

TEST_CASE("fd ownership: cuMemImportFromShareableHandle never takes the fd", "[external][fd][vmm]") {
  conformance_primary_ctx();
  Exported e;
  auto a = pattern(4096, 11);
  REQUIRE_CU(cuMemcpyHtoD(e.r, a.data(), a.size()), CUDA_SUCCESS);
  int fd = e.fd();  // (the driver's exported fd is not seekable: its offset is not compared)
  CUmemGenericAllocationHandle h = 0;
  REQUIRE_CU(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
             CUDA_SUCCESS);
  REQUIRE(mp::fd_is_open(fd));  // the caller's still
  close(fd);
  Sentinel s(fd);  // the caller's number, reused by the caller
  ScopedReserve r(kGran);
  REQUIRE_CU(cuMemMap(r, kGran, 0, h, 0), CUDA_SUCCESS);
  REQUIRE_CU(grant(r, kGran), CUDA_SUCCESS);
  std::vector<unsigned char> got(4096);
  CHECK_CU(cuMemcpyDtoH(got.data(), r, got.size()), CUDA_SUCCESS);
  CHECK(got == a);
  CHECK_CU(cuMemUnmap(r, kGran), CUDA_SUCCESS);
  CHECK_CU(cuMemRelease(h), CUDA_SUCCESS);
  s.check();
  // A refused import leaves the fd alone too.
  int plain = mp::plain_memfd(kGran);
  CHECK_CU(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(plain)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_ERROR_UNKNOWN);
  CHECK(mp::fd_is_open(plain));
  close(plain);
  s.check();
}
