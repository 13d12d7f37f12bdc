// External memory and fd ownership: a descriptor handed to cuImportExternalMemory,
// cuImportExternalSemaphore or cuMemImportFromShareableHandle is taken (or not) as NVIDIA's driver
// takes it, and a number it took is never used again. The memory is a cuMemCreate allocation
// exported as a POSIX fd (external_common.hpp). Expected codes measured on NVIDIA's driver
// 580.159.04 (H200, CUDA 13.0).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "external_common.hpp"
#include "multiprocess.hpp"

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
