// Emulator-only: exportable pools past the budget of memfds (emu/memory/pool_backing.hpp) hold
// no descriptor until exported, and move into a memfd of their own at their first export with
// every byte where it was, also while another thread writes into the pool; a move that cannot
// map its new file loses nothing.
#include <cuda.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

namespace {
// Set before the driver reads it (at the first exportable pool's window).
const int kBudget = (setenv("CUDA_SHIM_POOL_OWN_FILES", "2", 1), 2);
constexpr size_t kMiB = size_t(1) << 20;

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
    --n;
  }
  return n;
}

CUmemoryPool exportable(CUmemLocationType t) {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = t;
  p.location.id = 0;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.maxSize = size_t(64) << 20;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  return pool;
}

// kBudget exportable pools that hold their own files, so that the next one starts in the shared file.
std::vector<CUmemoryPool> spend_budget() {
  std::vector<CUmemoryPool> fill;
  for (int i = 0; i < kBudget; ++i) {
    fill.push_back(exportable(CU_MEM_LOCATION_TYPE_DEVICE));
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, fill.back(), nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  }
  return fill;
}

int export_fd(CUmemoryPool pool) {
  int fd = -1;
  REQUIRE(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  REQUIRE(fd >= 0);
  return fd;
}
}  // namespace

TEST_CASE("exportable pools past the budget take no descriptor until exported", "[mempool][own_files]") {
  primary();
  CUstream s;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  constexpr int kPools = 40;
  const size_t fds0 = open_fds();
  std::vector<CUmemoryPool> pools;
  std::vector<CUdeviceptr> ptrs;
  for (int i = 0; i < kPools; ++i) {
    pools.push_back(exportable(CU_MEM_LOCATION_TYPE_DEVICE));
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, kMiB, pools.back(), s) == CUDA_SUCCESS);
    REQUIRE(cuMemsetD32Async(d, 0xA0000000u + unsigned(i), kMiB / 4, s) == CUDA_SUCCESS);
    ptrs.push_back(d);
  }
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  // The budget's own files, and one shared file for the rest (a few for the driver besides).
  CHECK(open_fds() <= fds0 + kBudget + 2);

  // A pool past the budget moves at its export: the exported memfd holds its bytes, and the
  // pool's own address still reads them.
  for (int i : {kPools - 1, kPools / 2}) {
    const size_t before = open_fds();
    const int fd = export_fd(pools[i]);
    CHECK(open_fds() == before + 2);  // the pool's own memfd and the exported duplicate
    std::vector<unsigned> got(kMiB / 4);
    // The first allocation of a pool sits at the start of its window.
    REQUIRE(pread(fd, got.data(), kMiB, 0) == ssize_t(kMiB));
    CHECK(got.front() == 0xA0000000u + unsigned(i));
    CHECK(got.back() == 0xA0000000u + unsigned(i));
    std::fill(got.begin(), got.end(), 0);
    REQUIRE(cuMemcpyDtoH(got.data(), ptrs[i], kMiB) == CUDA_SUCCESS);
    CHECK(got[kMiB / 8] == 0xA0000000u + unsigned(i));
    // Writes after the move reach the exported memory.
    REQUIRE(cuMemsetD32(ptrs[i], 0xB0000000u + unsigned(i), kMiB / 4) == CUDA_SUCCESS);
    unsigned w = 0;
    REQUIRE(pread(fd, &w, sizeof w, 4096) == ssize_t(sizeof w));
    CHECK(w == 0xB0000000u + unsigned(i));
    // A second export hands out the same file again, moving nothing.
    const int fd2 = export_fd(pools[i]);
    CHECK(open_fds() == before + 3);
    REQUIRE(pread(fd2, &w, sizeof w, 0) == ssize_t(sizeof w));
    CHECK(w == 0xB0000000u + unsigned(i));
    close(fd2);
    close(fd);
  }
  // Pools not exported kept their bytes through their neighbours' moves.
  for (int i : {0, 1, 5, kPools - 2}) {
    unsigned w = 0;
    REQUIRE(cuMemcpyDtoH(&w, ptrs[i] + kMiB - 4, 4) == CUDA_SUCCESS);
    CHECK(w == 0xA0000000u + unsigned(i));
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    REQUIRE(cuMemFreeAsync(ptrs[i], s) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(pools[i]) == CUDA_SUCCESS);
  }
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
}

namespace {
std::string hex(const unsigned char* b, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += {d[b[i] >> 4], d[b[i] & 15]};
  return s;
}
}  // namespace

// The importer: this binary again, given the moved pool's descriptor (inherited: exported
// descriptors are not close-on-exec) and the pointer's export data.
TEST_CASE("own_files child: imports a moved pool", "[.own_files_child]") {
  primary();
  const int fd = std::atoi(std::getenv("OWN_FILES_FD"));
  const std::string data = std::getenv("OWN_FILES_PTR");
  CUmemPoolPtrExportData x;
  REQUIRE(data.size() == 2 * sizeof x);
  for (size_t i = 0; i < sizeof x; ++i) x.reserved[i] = static_cast<unsigned char>(std::stoi(data.substr(2 * i, 2), nullptr, 16));
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t(fd)),
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemPoolImportPointer(&d, pool, &x) == CUDA_SUCCESS);
  std::vector<unsigned> got(kMiB / 4);
  REQUIRE(cuMemcpyDtoH(got.data(), d, kMiB) == CUDA_SUCCESS);
  size_t wrong = 0;
  for (size_t k = 0; k < got.size(); ++k) wrong += got[k] != 0xC0000000u + unsigned(k);
  CHECK(wrong == 0);
  REQUIRE(cuMemsetD32(d + 4, 0xD00Du, 1) == CUDA_SUCCESS);  // the exporter sees the importer's write
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
}

TEST_CASE("another process imports a pool that moved at its export, with its bytes", "[mempool][own_files]") {
  primary();
  const std::vector<CUmemoryPool> fill = spend_budget();
  CUmemoryPool pool = exportable(CU_MEM_LOCATION_TYPE_DEVICE);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&d, kMiB, pool, nullptr) == CUDA_SUCCESS);
  std::vector<unsigned> v(kMiB / 4);
  for (size_t k = 0; k < v.size(); ++k) v[k] = 0xC0000000u + unsigned(k);
  REQUIRE(cuMemcpyHtoD(d, v.data(), kMiB) == CUDA_SUCCESS);
  const int fd = export_fd(pool);  // the move
  CUmemPoolPtrExportData x;
  REQUIRE(cuMemPoolExportPointer(&x, d) == CUDA_SUCCESS);
  std::string out;
  const int st = run_self("OWN_FILES_FD=" + std::to_string(fd) + " OWN_FILES_PTR=" + hex(x.reserved, sizeof x),
                          "[.own_files_child]", out);
  INFO(out);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  unsigned w = 0;
  REQUIRE(cuMemcpyDtoH(&w, d + 4, 4) == CUDA_SUCCESS);
  CHECK(w == 0xD00Du);
  close(fd);
  REQUIRE(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  for (CUmemoryPool p : fill) REQUIRE(cuMemPoolDestroy(p) == CUDA_SUCCESS);
}

TEST_CASE("a host pool moves while another thread writes into it, losing no write", "[mempool][own_files]") {
  primary();
  CUstream s;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  // Spend the budget, so that the pool under test starts in a shared file.
  std::vector<CUmemoryPool> fill;
  std::vector<CUdeviceptr> fill_ptrs;
  for (int i = 0; i < kBudget + 1; ++i) {
    fill.push_back(exportable(CU_MEM_LOCATION_TYPE_HOST_NUMA));
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, fill.back(), s) == CUDA_SUCCESS);
    fill_ptrs.push_back(d);
  }
  CUmemoryPool pool = exportable(CU_MEM_LOCATION_TYPE_HOST_NUMA);
  constexpr size_t kBytes = 48 * kMiB;
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&d, kBytes, pool, s) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  auto* cells = reinterpret_cast<unsigned*>(d);  // a host-NUMA pool: the address is host memory
  const size_t n = kBytes / sizeof(unsigned);
  std::atomic<size_t> progress{0};
  std::thread writer([&] {
    for (size_t k = 0; k < n; ++k) {
      cells[k] = unsigned(k) * 2654435761u + 1;
      if ((k & 4095) == 0) progress.store(k, std::memory_order_relaxed);
    }
    progress.store(n, std::memory_order_relaxed);
  });
  while (progress.load(std::memory_order_relaxed) < n / 8) std::this_thread::yield();
  const int fd = export_fd(pool);  // mid-way through the writer's pass
  const bool mid = progress.load(std::memory_order_relaxed) < n;
  writer.join();
  INFO("the export came while the writer was " << (mid ? "still writing" : "done already"));
  size_t wrong = 0, wrong_fd = 0;
  std::vector<unsigned> back(n);
  REQUIRE(pread(fd, back.data(), kBytes, 0) == ssize_t(kBytes));
  for (size_t k = 0; k < n; ++k) {
    wrong += cells[k] != unsigned(k) * 2654435761u + 1;
    wrong_fd += back[k] != unsigned(k) * 2654435761u + 1;
  }
  CHECK(wrong == 0);
  CHECK(wrong_fd == 0);
  close(fd);
  REQUIRE(cuMemFreeAsync(d, s) == CUDA_SUCCESS);
  for (CUdeviceptr p : fill_ptrs) REQUIRE(cuMemFreeAsync(p, s) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  for (CUmemoryPool p : fill) REQUIRE(cuMemPoolDestroy(p) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
}

namespace {
size_t vm_size_bytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  size_t kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmSize: %zu kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}
}  // namespace

// The move maps the new file elsewhere before it replaces the view: a mapping the process cannot
// make (here: its address-space limit) refuses the export and leaves the pool as it was.
TEST_CASE("a pool whose move cannot map its new file keeps its bytes, and moves at a later export",
          "[mempool][own_files]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  WARN("skipped: the sanitizers' allocators map memory of their own under the lowered address-space limit");
  return;
#endif
  primary();
  const std::vector<CUmemoryPool> fill = spend_budget();
  CUmemoryPool pool = exportable(CU_MEM_LOCATION_TYPE_DEVICE);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&d, kMiB, pool, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD32(d, 0xE0E0E0E0u, kMiB / 4) == CUDA_SUCCESS);

  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
  const size_t vm = vm_size_bytes();
  REQUIRE(vm > 0);
  rlimit tight = old;
  tight.rlim_cur = vm + 16 * kMiB;  // less than the pool's 64 MiB window
  REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
  int fd = -1;
  const CUresult r = cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
  CHECK(r == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(last_why().find("own memfd") != std::string::npos);

  // Every byte is where it was, and the pool still takes writes.
  std::vector<unsigned> got(kMiB / 4);
  REQUIRE(cuMemcpyDtoH(got.data(), d, kMiB) == CUDA_SUCCESS);
  CHECK(std::count(got.begin(), got.end(), 0xE0E0E0E0u) == ptrdiff_t(got.size()));
  REQUIRE(cuMemsetD32(d + 8, 0xF00Du, 1) == CUDA_SUCCESS);

  // With the limit back, the export moves the pool and hands out its bytes.
  fd = export_fd(pool);
  unsigned w[3] = {};
  REQUIRE(pread(fd, w, sizeof w, 0) == ssize_t(sizeof w));
  CHECK(w[0] == 0xE0E0E0E0u);
  CHECK(w[2] == 0xF00Du);
  close(fd);
  REQUIRE(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  for (CUmemoryPool p : fill) REQUIRE(cuMemPoolDestroy(p) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
}
