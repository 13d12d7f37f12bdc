// External memory: cuImportExternalMemory (sizes, flags, handle types, fds), and another process
// importing the exported fd. The memory imported here is a cuMemCreate allocation exported as a
// POSIX fd, which NVIDIA's driver imports as opaque-fd external memory as it would Vulkan's
// (test_external_vulkan.cpp imports Vulkan's). Mapped buffers, the runtime's forms and mipmapped
// arrays: test_external_memory_map.cpp; who owns an fd handed over: test_external_memory_fd.cpp.
// Expected codes measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0).

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "external_common.hpp"
#include "multiprocess.hpp"

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
