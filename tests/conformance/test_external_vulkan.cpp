// External memory and semaphores against a real Vulkan driver: Vulkan allocates and
// exports (opaque fd), CUDA imports (cudaImportExternalMemory / ...Semaphore), and each
// side sees the other's writes. On CI the Vulkan device is Mesa's lavapipe (llvmpipe,
// CPU memory in a memfd); on a GPU machine it is NVIDIA's ICD on the CUDA device (same
// UUID). lavapipe of Mesa 22.3 has no VK_KHR_external_semaphore_fd: the semaphore tests
// say so and pass there; they run on NVIDIA.
// No Vulkan at all (no loader, no ICD): WARN and pass, unless CUDA_SHIM_REQUIRE_VULKAN=1
// (CI sets it through CTest), which makes it a failure.
// "measured": the H200 run of the old tools/probe/probe_extmem.cpp (driver 580, NVIDIA's
// Vulkan ICD; its vk.* keys, named in the comments, are in git history; the probe cases
// tests/probe/cases/external*.cases cover the rest and leave Vulkan to this file).
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "vk_exporter.hpp"

namespace {
std::vector<unsigned char> pattern(size_t n, unsigned seed = 1) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed + (i >> 12));
  return v;
}
bool all_of(const std::vector<unsigned char>& v, size_t from, size_t n, unsigned char b) {
  for (size_t i = from; i < from + n; ++i)
    if (v[i] != b) return false;
  return true;
}

// One Vulkan device for the whole run, never destroyed: ICDs (lavapipe's LLVM, NVIDIA's)
// dislike being torn down at exit next to the CUDA driver. It is the CUDA device 0's
// twin where UUIDs match (a GPU machine), else lavapipe.
vkx::Exporter& vk() {
  static vkx::Exporter* x = [] {
    cudaDeviceProp p;
    std::memset(&p, 0, sizeof p);
    bool have = cudaGetDeviceProperties(&p, 0) == cudaSuccess;
    return new vkx::Exporter(have ? reinterpret_cast<const unsigned char*>(p.uuid.bytes) : nullptr);
  }();
  return *x;
}

bool vulkan_required() {
  const char* e = std::getenv("CUDA_SHIM_REQUIRE_VULKAN");
  return e && std::strcmp(e, "1") == 0;
}

// Leaves the test case (passing, with a warning) when there is no Vulkan to test with.
#define NEED_VULKAN()                                                                    \
  do {                                                                                   \
    if (!vk().ok()) {                                                                    \
      if (vulkan_required()) FAIL("CUDA_SHIM_REQUIRE_VULKAN=1 but: " << vk().why());     \
      WARN("skipped, no Vulkan: " << vk().why());                                        \
      return;                                                                            \
    }                                                                                    \
  } while (0)

// Allocates exportable memory or fails the test with Vulkan's reason.
// staging: Vulkan reads and writes through vkCmdCopyBuffer even where it could map the
// memory (NVIDIA's device-local memory always goes that way; lavapipe tries both).
std::unique_ptr<vkx::Memory> vk_alloc(size_t n, bool dedicated = false, bool staging = false) {
  auto m = vk().allocate(n, dedicated, staging);
  INFO("Vulkan device: " << vk().device_name() << "; " << vk().error());
  REQUIRE(m != nullptr);
  return m;
}

cudaExternalMemoryHandleDesc opaque_fd_desc(int fd, unsigned long long size, unsigned flags = 0) {
  cudaExternalMemoryHandleDesc d;
  std::memset(&d, 0, sizeof d);
  d.type = cudaExternalMemoryHandleTypeOpaqueFd;
  d.handle.fd = fd;
  d.size = size;
  d.flags = flags;
  return d;
}

// Whether fd is open and still the file it was (fd numbers get reused).
bool same_file_open(int fd, const struct stat& was) {
  struct stat now;
  return fstat(fd, &now) == 0 && now.st_dev == was.st_dev && now.st_ino == was.st_ino;
}
// After a failed import: some failures leave the fd open (size 0, bad flags), others
// close it (a file that is not NVIDIA's: measured import.src.memfd = fd=closed).
void close_if_open(int fd) {
  if (fcntl(fd, F_GETFD) != -1) close(fd);
}

// An imported Vulkan allocation and its mapped buffers; frees them in the documented
// order (cudaFree each mapping, then cudaDestroyExternalMemory).
struct Imported {
  cudaExternalMemory_t mem = nullptr;
  std::vector<void*> maps;
  Imported() = default;
  Imported(const Imported&) = delete;
  ~Imported() {
    for (void* p : maps) cudaFree(p);
    if (mem) cudaDestroyExternalMemory(mem);
  }
  // Imports m's memory through a fresh fd. On success the fd is CUDA's (the test never
  // touches it again); on failure it is closed here if the driver left it open.
  cudaError_t import(vkx::Memory& m, unsigned flags = 0) {
    int fd = m.export_fd();
    INFO(m.error());
    REQUIRE(fd >= 0);
    cudaExternalMemoryHandleDesc d = opaque_fd_desc(fd, m.allocation_size(), flags);
    cudaError_t e = cudaImportExternalMemory(&mem, &d);
    if (e != cudaSuccess) close_if_open(fd), mem = nullptr;
    return e;
  }
  cudaError_t map(void** p, unsigned long long offset, unsigned long long size) {
    cudaExternalMemoryBufferDesc b;
    std::memset(&b, 0, sizeof b);
    b.offset = offset;
    b.size = size;
    cudaError_t e = cudaExternalMemoryGetMappedBuffer(p, mem, &b);
    if (e == cudaSuccess) maps.push_back(*p);
    return e;
  }
};

}  // namespace

// What the emulator builds on (measured with Debian bookworm's Mesa 22.3.6): lavapipe's
// opaque fd is a sealed memfd holding a 4096-byte header, then the allocation, then 40
// bytes; vkMapMemory and a MAP_SHARED mapping of the fd at 4096 are the same memory.
// allocationSize is the buffer's size unrounded (1, 4097, ...). Only on llvmpipe.
TEST_CASE("external vulkan: lavapipe's opaque fd is a memfd, the allocation at offset 4096") {
  NEED_VULKAN();
  if (!vk().is_llvmpipe()) {
    WARN("skipped: the Vulkan device is " << vk().device_name() << ", not llvmpipe");
    return;
  }
  for (size_t n : {size_t{1}, size_t{4097}, size_t{64} << 10, (size_t{1} << 20) + 3}) {
    INFO("size " << n);
    auto m = vk_alloc(n);
    CHECK(m->allocation_size() == n);
    REQUIRE(m->host_visible());
    int fd = m->export_fd();
    REQUIRE(fd >= 0);
    char link[256] = {0};
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    REQUIRE(readlink(path.c_str(), link, sizeof link - 1) > 0);
    CHECK(std::string(link) == "/memfd:llvmpipe memory fd (deleted)");
    struct stat st;
    REQUIRE(fstat(fd, &st) == 0);
    CHECK(static_cast<unsigned long long>(st.st_size) == m->allocation_size() + 4136);
    CHECK(fcntl(fd, F_GET_SEALS) == (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW));  // no ftruncate

    // Vulkan writes through vkMapMemory; the fd's bytes from 4096 on are them.
    auto pat = pattern(n, 3);
    REQUIRE(m->write(0, pat.data(), n));
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
    REQUIRE(p != MAP_FAILED);
    CHECK(std::memcmp(p, pat.data(), n) == 0);
    // And the other way round.
    std::memset(p, 0x5a, n);
    std::vector<unsigned char> back(n);
    REQUIRE(m->read(0, back.data(), n));
    CHECK(all_of(back, 0, n, 0x5a));
    munmap(p, n);

    // Every export is the same memfd; it outlives vkFreeMemory while an fd is open.
    int fd2 = m->export_fd();
    struct stat st2;
    REQUIRE(fstat(fd2, &st2) == 0);
    CHECK(st2.st_ino == st.st_ino);
    m.reset();
    unsigned char b = 0;
    CHECK(pread(fd2, &b, 1, 4096) == 1);
    CHECK(b == 0x5a);
    close(fd);
    close(fd2);
  }
}

// (a) Vulkan writes, CUDA reads the whole allocation through a buffer at offset 0.
TEST_CASE("external vulkan: CUDA reads what Vulkan wrote") {
  NEED_VULKAN();
  const bool staging = GENERATE(false, true);
  INFO("Vulkan side through " << (staging ? "a staging copy" : "vkMapMemory where host-visible"));
  const size_t n = size_t{1} << 20;
  auto m = vk_alloc(n, false, staging);
  auto pat = pattern(m->allocation_size(), 11);
  REQUIRE(m->write(0, pat.data(), pat.size()));

  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  CHECK(im.mem != nullptr);
  void* d = nullptr;
  REQUIRE_RT(im.map(&d, 0, m->allocation_size()), cudaSuccess);
  REQUIRE(d != nullptr);
  std::vector<unsigned char> got(pat.size());
  REQUIRE_RT(cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(got == pat);

  // The mapping is device memory of device 0, no host pointer (measured rt.map.full.attrs).
  cudaPointerAttributes a;
  std::memset(&a, 0, sizeof a);
  REQUIRE_RT(cudaPointerGetAttributes(&a, d), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeDevice);
  CHECK(a.device == 0);
  CHECK(a.devicePointer == d);
  CHECK(a.hostPointer == nullptr);
}

// (b) CUDA writes (memset and memcpy), Vulkan reads.
TEST_CASE("external vulkan: Vulkan reads what CUDA wrote") {
  NEED_VULKAN();
  const bool staging = GENERATE(false, true);
  INFO("Vulkan side through " << (staging ? "a staging copy" : "vkMapMemory where host-visible"));
  const size_t n = size_t{256} << 10;
  auto m = vk_alloc(n, false, staging);
  REQUIRE(m->fill(0, m->allocation_size(), 0));
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  char* d = nullptr;
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&d), 0, m->allocation_size()), cudaSuccess);

  REQUIRE_RT(cudaMemset(d, 0xa5, n), cudaSuccess);
  auto pat = pattern(1000, 5);
  REQUIRE_RT(cudaMemcpy(d + 4096, pat.data(), pat.size(), cudaMemcpyHostToDevice), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<unsigned char> got(n);
  REQUIRE(m->read(0, got.data(), n));
  CHECK(all_of(got, 0, 4096, 0xa5));
  CHECK(std::memcmp(got.data() + 4096, pat.data(), pat.size()) == 0);
  CHECK(all_of(got, 4096 + pat.size(), n - 4096 - pat.size(), 0xa5));
}

// (c) A buffer mapped at an offset starts at that byte of the allocation; two buffers of
// one import alias the same memory.
TEST_CASE("external vulkan: a buffer mapped at an offset") {
  NEED_VULKAN();
  const size_t n = size_t{256} << 10, off = size_t{64} << 10, len = size_t{64} << 10;
  auto m = vk_alloc(n);
  auto pat = pattern(m->allocation_size(), 23);
  REQUIRE(m->write(0, pat.data(), pat.size()));
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  char* whole = nullptr;
  char* part = nullptr;
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&part), off, len), cudaSuccess);
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&whole), 0, m->allocation_size()), cudaSuccess);

  std::vector<unsigned char> got(len);
  REQUIRE_RT(cudaMemcpy(got.data(), part, len, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(std::memcmp(got.data(), pat.data() + off, len) == 0);

  // Written through the offset buffer: Vulkan and the whole-range buffer see it at off+10.
  REQUIRE_RT(cudaMemset(part + 10, 0x3c, 100), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned char> vk_got(120);
  REQUIRE(m->read(off, vk_got.data(), vk_got.size()));
  CHECK(std::memcmp(vk_got.data(), pat.data() + off, 10) == 0);
  CHECK(all_of(vk_got, 10, 100, 0x3c));
  CHECK(std::memcmp(vk_got.data() + 110, pat.data() + off + 110, 10) == 0);
  unsigned char b = 0;
  REQUIRE_RT(cudaMemcpy(&b, whole + off + 10, 1, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(b == 0x3c);
}

// (d) A dedicated allocation (VkMemoryDedicatedAllocateInfo) is imported with
// cudaExternalMemoryDedicated.
TEST_CASE("external vulkan: a dedicated allocation") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{128} << 10, true);
  REQUIRE(m->dedicated());
  auto pat = pattern(m->allocation_size(), 31);
  REQUIRE(m->write(0, pat.data(), pat.size()));
  Imported im;
  REQUIRE_RT(im.import(*m, cudaExternalMemoryDedicated), cudaSuccess);
  char* d = nullptr;
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&d), 0, m->allocation_size()), cudaSuccess);
  std::vector<unsigned char> got(pat.size());
  REQUIRE_RT(cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(got == pat);
  REQUIRE_RT(cudaMemset(d + 100, 0x11, 50), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned char> back(200);
  REQUIRE(m->read(0, back.data(), back.size()));
  CHECK(std::memcmp(back.data(), pat.data(), 100) == 0);
  CHECK(all_of(back, 100, 50, 0x11));
  CHECK(std::memcmp(back.data() + 150, pat.data() + 150, 50) == 0);
}

// (e) After a successful import the fd is CUDA's: the driver closes it during the import
// (measured vk.mem.plain.rt.import = cudaSuccess fd=closed), so the application must
// not. The import keeps the memory alive on its own (measured vk.mem.afterVkFree).
TEST_CASE("external vulkan: the imported fd belongs to CUDA") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  REQUIRE(m->fill(0, m->allocation_size(), 0x6b));
  int fd = m->export_fd();
  REQUIRE(fd >= 0);
  struct stat was;
  REQUIRE(fstat(fd, &was) == 0);
  cudaExternalMemoryHandleDesc desc = opaque_fd_desc(fd, m->allocation_size());
  cudaExternalMemory_t mem = nullptr;
  cudaError_t e = cudaImportExternalMemory(&mem, &desc);
  if (e != cudaSuccess) close_if_open(fd);
  REQUIRE_RT(e, cudaSuccess);
  CHECK_FALSE(same_file_open(fd, was));  // measured: closed by the import

  // Vulkan lets go of its allocation; CUDA's import still holds the memory.
  m.reset();
  cudaExternalMemoryBufferDesc b;
  std::memset(&b, 0, sizeof b);
  b.size = 64 << 10;
  void* d = nullptr;
  REQUIRE_RT(cudaExternalMemoryGetMappedBuffer(&d, mem, &b), cudaSuccess);
  std::vector<unsigned char> got(b.size);
  CHECK_RT(cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_of(got, 0, got.size(), 0x6b));
  CHECK_RT(cudaFree(d), cudaSuccess);
  CHECK_RT(cudaDestroyExternalMemory(mem), cudaSuccess);
  CHECK_FALSE(same_file_open(fd, was));

  // Repeated import/destroy cycles: no fd per cycle piles up in the process (the exact
  // count is left alone: Vulkan's driver may open files of its own).
  size_t before = open_fds();
  for (int i = 0; i < 8; ++i) {
    auto mi = vk_alloc(size_t{64} << 10);
    Imported im;
    REQUIRE_RT(im.import(*mi), cudaSuccess);
  }
  size_t after = open_fds();
  INFO("open fds before 8 import/destroy cycles: " << before << ", after: " << after);
  CHECK(after < before + 8);
}

// Misuse of a Vulkan fd: rejected before the driver takes the fd, which stays open and
// the application's (measured risky.importNullOut, rt.import.size0, rt.import.flags2).
TEST_CASE("external vulkan: NULL extMem_out") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  int fd = m->export_fd();
  REQUIRE(fd >= 0);
  cudaExternalMemoryHandleDesc d = opaque_fd_desc(fd, m->allocation_size());
  CHECK_RT(cudaImportExternalMemory(nullptr, &d), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(fcntl(fd, F_GETFD) != -1);
  close_if_open(fd);
}

TEST_CASE("external vulkan: NULL memHandleDesc") {
  cudaExternalMemory_t mem = nullptr;
  CHECK_RT(cudaImportExternalMemory(&mem, nullptr), cudaErrorInvalidValue);  // measured risky.importNullDesc
  CHECK(mem == nullptr);
  cudaGetLastError();
}

TEST_CASE("external vulkan: import size 0") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  int fd = m->export_fd();
  REQUIRE(fd >= 0);
  cudaExternalMemoryHandleDesc d = opaque_fd_desc(fd, 0);
  cudaExternalMemory_t mem = nullptr;
  CHECK_RT(cudaImportExternalMemory(&mem, &d), cudaErrorInvalidValue);  // measured vk.mem.plain.size0
  cudaGetLastError();
  CHECK(mem == nullptr);
  CHECK(fcntl(fd, F_GETFD) != -1);
  close_if_open(fd);
}

TEST_CASE("external vulkan: import flags other than cudaExternalMemoryDedicated") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  int fd = m->export_fd();
  REQUIRE(fd >= 0);
  cudaExternalMemoryHandleDesc d = opaque_fd_desc(fd, m->allocation_size(), 2);
  cudaExternalMemory_t mem = nullptr;
  CHECK_RT(cudaImportExternalMemory(&mem, &d), cudaErrorInvalidValue);  // measured rt.import.flags2
  cudaGetLastError();
  CHECK(mem == nullptr);
  CHECK(fcntl(fd, F_GETFD) != -1);
  close_if_open(fd);
}

// Buffers must lie inside the import, with size > 0 and flags 0 (measured rt.map.*).
TEST_CASE("external vulkan: a mapped buffer past the end of the allocation") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  void* d = nullptr;
  CHECK_RT(im.map(&d, 0, m->allocation_size() + 1), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(im.map(&d, 4096, m->allocation_size()), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(im.map(&d, m->allocation_size(), 1), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("external vulkan: a mapped buffer of size 0") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  void* d = nullptr;
  CHECK_RT(im.map(&d, 0, 0), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("external vulkan: a mapped buffer with flags") {
  NEED_VULKAN();
  auto m = vk_alloc(size_t{64} << 10);
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  cudaExternalMemoryBufferDesc b;
  std::memset(&b, 0, sizeof b);
  b.size = m->allocation_size();
  b.flags = 1;
  void* d = nullptr;
  CHECK_RT(cudaExternalMemoryGetMappedBuffer(&d, im.mem, &b), cudaErrorInvalidValue);
  cudaGetLastError();
}

// (f) Semaphores. Timeline: CUDA's stream waits for Vulkan's value 7 before a copy; Vulkan
// waits for CUDA's 9. Binary: Vulkan signals, CUDA waits; CUDA signals, Vulkan waits.
TEST_CASE("external vulkan: timeline semaphore both ways") {
  NEED_VULKAN();
  if (!vk().has_timeline_semaphores()) {
    WARN("skipped: " << vk().semaphore_why());
    return;
  }
  const size_t n = size_t{64} << 10;
  auto m = vk_alloc(n);
  REQUIRE(m->fill(0, n, 0));
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  char* d = nullptr;
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&d), 0, n), cudaSuccess);

  auto sem = vk().create_semaphore(true, 0);
  INFO(vk().error());
  REQUIRE(sem != nullptr);
  int fd = sem->export_fd();
  REQUIRE(fd >= 0);
  cudaExternalSemaphoreHandleDesc sd;
  std::memset(&sd, 0, sizeof sd);
  sd.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
  sd.handle.fd = fd;
  cudaExternalSemaphore_t ext = nullptr;
  cudaError_t e = cudaImportExternalSemaphore(&ext, &sd);
  if (e != cudaSuccess) close_if_open(fd);
  REQUIRE_RT(e, cudaSuccess);

  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  unsigned char* host = nullptr;
  REQUIRE_RT(cudaMallocHost(reinterpret_cast<void**>(&host), n), cudaSuccess);
  std::memset(host, 0, n);

  // The copy is queued behind the wait for 7: it must not run before Vulkan's data is there
  // (measured vk.sem.timeline.cudaWait9.after300ms = blocked).
  cudaExternalSemaphoreWaitParams wp;
  std::memset(&wp, 0, sizeof wp);
  wp.params.fence.value = 7;
  REQUIRE_RT(cudaWaitExternalSemaphoresAsync(&ext, &wp, 1, s), cudaSuccess);
  REQUIRE_RT(cudaMemcpyAsync(host, d, n, cudaMemcpyDeviceToHost, s), cudaSuccess);
  usleep(100 * 1000);
  CHECK_RT(cudaStreamQuery(s), cudaErrorNotReady);
  REQUIRE(m->fill(0, n, 0x77));
  REQUIRE(sem->signal(7));
  REQUIRE_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(host[0] == 0x77);
  CHECK(host[n - 1] == 0x77);

  // CUDA writes then signals 9; Vulkan's host wait returns and sees the write.
  CHECK(sem->value() == 7);
  REQUIRE_RT(cudaMemsetAsync(d, 0x99, n, s), cudaSuccess);
  cudaExternalSemaphoreSignalParams sp;
  std::memset(&sp, 0, sizeof sp);
  sp.params.fence.value = 9;
  REQUIRE_RT(cudaSignalExternalSemaphoresAsync(&ext, &sp, 1, s), cudaSuccess);
  bool waited = sem->wait(9, 10ull * 1000 * 1000 * 1000);
  INFO(sem->error());
  CHECK(waited);
  CHECK(sem->value() == 9);
  std::vector<unsigned char> got(n);
  REQUIRE(m->read(0, got.data(), n));
  CHECK(all_of(got, 0, n, 0x99));

  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFreeHost(host), cudaSuccess);
  CHECK_RT(cudaDestroyExternalSemaphore(ext), cudaSuccess);
}

TEST_CASE("external vulkan: binary semaphore round trip") {
  NEED_VULKAN();
  if (!vk().has_semaphores()) {
    WARN("skipped: " << vk().semaphore_why());
    return;
  }
  const size_t n = size_t{64} << 10;
  auto m = vk_alloc(n);
  Imported im;
  REQUIRE_RT(im.import(*m), cudaSuccess);
  char* d = nullptr;
  REQUIRE_RT(im.map(reinterpret_cast<void**>(&d), 0, n), cudaSuccess);

  auto sem = vk().create_semaphore(false);
  INFO(vk().error());
  REQUIRE(sem != nullptr);
  int fd = sem->export_fd();
  REQUIRE(fd >= 0);
  cudaExternalSemaphoreHandleDesc sd;
  std::memset(&sd, 0, sizeof sd);
  sd.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
  sd.handle.fd = fd;
  cudaExternalSemaphore_t ext = nullptr;
  cudaError_t e = cudaImportExternalSemaphore(&ext, &sd);
  if (e != cudaSuccess) close_if_open(fd);
  REQUIRE_RT(e, cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);

  // Vulkan writes and signals (a queue submission); CUDA waits, then copies.
  REQUIRE(m->fill(0, n, 0x21));
  REQUIRE(sem->signal());
  cudaExternalSemaphoreWaitParams wp;
  std::memset(&wp, 0, sizeof wp);
  REQUIRE_RT(cudaWaitExternalSemaphoresAsync(&ext, &wp, 1, s), cudaSuccess);
  std::vector<unsigned char> got(n);
  REQUIRE_RT(cudaMemcpyAsync(got.data(), d, n, cudaMemcpyDeviceToHost, s), cudaSuccess);
  REQUIRE_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(all_of(got, 0, n, 0x21));

  // CUDA writes and signals; Vulkan's queue waits on it (submitted after the signal, as
  // Vulkan requires for binary semaphores), then reads.
  REQUIRE_RT(cudaMemsetAsync(d, 0x42, n, s), cudaSuccess);
  cudaExternalSemaphoreSignalParams sp;
  std::memset(&sp, 0, sizeof sp);
  REQUIRE_RT(cudaSignalExternalSemaphoresAsync(&ext, &sp, 1, s), cudaSuccess);
  REQUIRE_RT(cudaStreamSynchronize(s), cudaSuccess);
  bool waited = sem->wait(0, 10ull * 1000 * 1000 * 1000);
  INFO(sem->error());
  CHECK(waited);
  REQUIRE(m->read(0, got.data(), n));
  CHECK(all_of(got, 0, n, 0x42));

  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaDestroyExternalSemaphore(ext), cudaSuccess);
}
