// Memory pools shared between processes: cuMemPoolExportToShareableHandle / ImportFrom-
// ShareableHandle (POSIX fds over SCM_RIGHTS), cuMemPoolExportPointer / ImportPointer, what an
// imported pool may do, freeing order. The child is this binary re-run (multiprocess.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"

namespace {

CUmemPoolProps shareable_props(CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = t;
  p.location.id = id;
  return p;
}

struct ExportedPool {
  CUmemoryPool pool = nullptr;
  explicit ExportedPool(const CUmemPoolProps& p) { REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS); }
  ~ExportedPool() {
    cuCtxSynchronize();
    cuMemPoolDestroy(pool);
  }
  int export_fd() {
    int fd = -1;
    REQUIRE_CU(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
    return fd;
  }
  CUdeviceptr alloc(size_t n, unsigned char fill) {
    CUdeviceptr d = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&d, n, pool, nullptr), CUDA_SUCCESS);
    REQUIRE_CU(cuMemsetD8Async(d, fill, n, nullptr), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
    return d;
  }
};

CUmemPoolPtrExportData export_ptr(CUdeviceptr d) {
  CUmemPoolPtrExportData x;
  std::memset(&x, 0, sizeof x);
  REQUIRE_CU(cuMemPoolExportPointer(&x, d), CUDA_SUCCESS);
  return x;
}

// The child's side: import the pool from the fd and the pointer from the bytes.
struct Imported {
  CUmemoryPool pool = nullptr;
  CUdeviceptr ptr = 0;
};

bool all_bytes(const std::vector<unsigned char>& v, unsigned char b) {
  for (unsigned char c : v)
    if (c != b) return false;
  return true;
}

}  // namespace

// Child: imports the pool and one pointer, reports what it read, writes 0x5b, frees it.
MP_CHILD(pool_reader) {
  child_primary_ctx();
  int fd = ch.recv_fd();
  auto x = ch.recv_pod<CUmemPoolPtrExportData>();
  size_t n = static_cast<size_t>(ch.recv_int());
  CUmemoryPool pool = nullptr;
  CUresult r = cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  ch.send_int(r);
  ch.send_int(mp::fd_is_open(fd));  // the importer keeps its descriptor
  if (r != CUDA_SUCCESS) return 1;
  CUdeviceptr d = 0;
  r = cuMemPoolImportPointer(&d, pool, &x);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 1;
  std::vector<unsigned char> buf(n);
  ch.send_int(cuMemcpyDtoH(buf.data(), d, n));
  ch.send_int(all_bytes(buf, 0xa7));
  ch.send_int(cuMemsetD8(d, 0x5b, n));
  ch.send_int(cuCtxSynchronize());
  // What an imported pool may not do.
  CUdeviceptr extra = 0;
  ch.send_int(cuMemAllocFromPoolAsync(&extra, 256, pool, nullptr));
  int other = -1;
  ch.send_int(cuMemPoolExportToShareableHandle(&other, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemPoolPtrExportData again;
  ch.send_int(cuMemPoolExportPointer(&again, d));
  ch.send_int(cuMemFree(d));
  ch.send_int(cuMemFree(d));  // freed twice
  ch.send_int(cuMemPoolDestroy(pool));
  (void)ch.recv_int();  // wait until the parent is done asserting
  return 0;
}

TEST_CASE("pool memory written in one process is read and written in another", "[mempool][ipc]") {
  conformance_primary_ctx();
  ExportedPool ep(shareable_props());
  const size_t n = 3 * 4096 + 100;
  CUdeviceptr d = ep.alloc(n, 0xa7);
  int fd = ep.export_fd();
  CHECK(mp::fd_cloexec(fd));
  auto x = export_ptr(d);

  auto c = mp::spawn("pool_reader");
  REQUIRE(c.ch.send_fd(fd));
  c.ch.send_pod(x);
  c.ch.send_int(static_cast<int64_t>(n));
  REQUIRE(c.ch.recv_int() == CUDA_SUCCESS);  // import the pool
  CHECK(c.ch.recv_int() == 1);               // its descriptor stays open there
  REQUIRE(c.ch.recv_int() == CUDA_SUCCESS);  // import the pointer
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);    // read it
  CHECK(c.ch.recv_int() == 1);               // the exporter's bytes
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);    // write it
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);
  std::vector<unsigned char> back(n);
  REQUIRE_CU(cuMemcpyDtoH(back.data(), d, n), CUDA_SUCCESS);
  CHECK(all_bytes(back, 0x5b));  // and the importer's writes are the exporter's memory
  CHECK(c.ch.recv_int() == CUDA_ERROR_INVALID_VALUE);  // an imported pool does not allocate
  CHECK(c.ch.recv_int() == CUDA_ERROR_INVALID_VALUE);  // nor export itself
  CHECK(c.ch.recv_int() == CUDA_ERROR_INVALID_VALUE);  // nor export its pointers
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);              // cuMemFree of an imported pointer
  CHECK(c.ch.recv_int() == CUDA_ERROR_INVALID_VALUE);  // ... twice
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);              // destroying the imported pool
  c.ch.send_int(0);
  CHECK(c.wait() == 0);
  close(fd);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
}

TEST_CASE("cuMemPoolExportToShareableHandle: bad inputs", "[mempool][ipc]") {
  conformance_primary_ctx();
  int fd = -1;
  SECTION("a pool created without handle types") {
    CUmemPoolProps p = shareable_props();
    p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    ExportedPool ep(p);
    CHECK_CU(cuMemPoolExportToShareableHandle(&fd, ep.pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a handle type the pool was not created with") {
    ExportedPool ep(shareable_props());
    unsigned char h[64];
    CHECK_CU(cuMemPoolExportToShareableHandle(h, ep.pool, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemPoolExportToShareableHandle(h, ep.pool, CU_MEM_HANDLE_TYPE_NONE, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemPoolExportToShareableHandle(h, ep.pool, CU_MEM_HANDLE_TYPE_WIN32, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("flags 1") {
    ExportedPool ep(shareable_props());
    CHECK_CU(cuMemPoolExportToShareableHandle(&fd, ep.pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1),
             CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a NULL pool") {
    CHECK_CU(cuMemPoolExportToShareableHandle(&fd, nullptr, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("the default pool (created without handle types)") {
    CUmemoryPool def = nullptr;
    REQUIRE_CU(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
    CHECK_CU(cuMemPoolExportToShareableHandle(&fd, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("two exports are two descriptors") {
    ExportedPool ep(shareable_props());
    int a = ep.export_fd(), b = ep.export_fd();
    CHECK(a != b);
    close(a);
    close(b);
  }
}

TEST_CASE("cuMemPoolImportFromShareableHandle: descriptors that are no exported pool", "[mempool][ipc]") {
  conformance_primary_ctx();
  CUmemoryPool pool = nullptr;
  auto as_handle = [](int fd) { return reinterpret_cast<void*>(static_cast<intptr_t>(fd)); };
  SECTION("fd -1") {
    CHECK_CU(cuMemPoolImportFromShareableHandle(&pool, as_handle(-1), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a plain memfd") {
    int fd = mp::plain_memfd(1 << 20);
    CHECK_CU(cuMemPoolImportFromShareableHandle(&pool, as_handle(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
    CHECK(mp::fd_is_open(fd));  // a refused descriptor stays the caller's
    close(fd);
  }
  SECTION("/dev/null") {
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    CHECK_CU(cuMemPoolImportFromShareableHandle(&pool, as_handle(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
    close(fd);
  }
  SECTION("a NULL pool_out") {
    ExportedPool ep(shareable_props());
    int fd = ep.export_fd();
    CHECK_CU(cuMemPoolImportFromShareableHandle(nullptr, as_handle(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_INVALID_VALUE);
    close(fd);
  }
}

TEST_CASE("cuMemPoolExportPointer: pointers that cannot be exported", "[mempool][ipc]") {
  conformance_primary_ctx();
  CUmemPoolPtrExportData x;
  SECTION("cuMemAlloc memory") {
    CUdeviceptr d = 0;
    REQUIRE_CU(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    CHECK_CU(cuMemPoolExportPointer(&x, d), CUDA_ERROR_INVALID_VALUE);
    cuMemFree(d);
  }
  SECTION("memory of a pool without handle types") {
    CUmemPoolProps p = shareable_props();
    p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    ExportedPool ep(p);
    CUdeviceptr d = ep.alloc(512, 1);
    CHECK_CU(cuMemPoolExportPointer(&x, d), CUDA_ERROR_INVALID_VALUE);
    cuMemFreeAsync(d, nullptr);
  }
  SECTION("a NULL shareData_out") {
    ExportedPool ep(shareable_props());
    CUdeviceptr d = ep.alloc(512, 1);
    CHECK_CU(cuMemPoolExportPointer(nullptr, d), CUDA_ERROR_INVALID_VALUE);
    cuMemFreeAsync(d, nullptr);
  }
  SECTION("exporting one pointer twice gives the same bytes") {
    ExportedPool ep(shareable_props());
    CUdeviceptr d = ep.alloc(512, 1);
    auto a = export_ptr(d), b = export_ptr(d);
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    cuMemFreeAsync(d, nullptr);
  }
  SECTION("a pool that is not imported takes no pointer") {
    ExportedPool ep(shareable_props());
    CUdeviceptr d = ep.alloc(512, 1);
    auto a = export_ptr(d);
    CUdeviceptr out = 0;
    CHECK_CU(cuMemPoolImportPointer(&out, ep.pool, &a), CUDA_ERROR_INVALID_VALUE);
    cuMemFreeAsync(d, nullptr);
  }
}
