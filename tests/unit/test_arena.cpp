// Issue 22, item 3: cuMemAlloc, cuMemAllocHost and cuMemAllocManaged carve their memory from a
// few large arenas (emu/memory/arena.hpp), so live allocations cost no descriptors. What only
// the emulator can show: how many memfds stand behind the allocations, that a freed extent's
// next tenant starts from zeros, and that legacy IPC gives an allocation a memfd of its own.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "unit_common.hpp"

namespace {

struct Memfd {
  int fd;
  off_t size;
};

// This process's descriptors whose link starts with `prefix` (e.g. "/memfd:cuda-shim-device").
std::vector<Memfd> memfds(const char* prefix) {
  std::vector<Memfd> out;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char link[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
    if (n <= 0 || std::strncmp(link, prefix, std::strlen(prefix)) != 0) continue;
    struct stat st {};
    int fd = std::atoi(e->d_name);
    if (fstat(fd, &st) == 0) out.push_back({fd, st.st_size});
  }
  closedir(d);
  return out;
}

}  // namespace

TEST_CASE("live allocations of every kind share a few memfds", "[arena]") {
  primary();
  std::vector<CUdeviceptr> dev, managed;
  std::vector<void*> pinned;
  for (int i = 0; i < 2000; ++i) {
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, 1 + static_cast<size_t>(i) * 97) == CUDA_SUCCESS);
    dev.push_back(p);
    void* h = nullptr;
    REQUIRE(cuMemAllocHost(&h, 4096) == CUDA_SUCCESS);
    pinned.push_back(h);
    if (i % 4 == 0) {
      REQUIRE(cuMemAllocManaged(&p, 8192, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
      CHECK(p % (2u << 20) == 0);  // measured: managed allocations start 2 MiB chunks
      managed.push_back(p);
    }
  }
  // About 200 MB of device allocations: one arena; pinned and managed: one each.
  CHECK(memfds("/memfd:cuda-shim-device").size() <= 2);
  CHECK(memfds("/memfd:cuda-shim-host").size() <= 2);
  CHECK(memfds("/memfd:cuda-shim-managed").size() <= 2);
  for (CUdeviceptr p : dev) CHECK(cuMemFree(p) == CUDA_SUCCESS);
  for (void* h : pinned) CHECK(cuMemFreeHost(h) == CUDA_SUCCESS);
  for (CUdeviceptr p : managed) CHECK(cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("a freed allocation's successor starts from zeros and its neighbours keep their bytes", "[arena]") {
  primary();
  const size_t n = 3 * 4096;
  CUdeviceptr a = 0, b = 0, c = 0;
  REQUIRE(cuMemAlloc(&a, n) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&b, n) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD8(a, 0xee, n) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD8(b, 0x77, n) == CUDA_SUCCESS);
  REQUIRE(cuMemFree(a) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&c, n) == CUDA_SUCCESS);
  CHECK(c == a);  // first fit: the freed extent is used again
  std::vector<unsigned char> got(n, 1);
  REQUIRE(cuMemcpyDtoH(got.data(), c, n) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0; }));
  REQUIRE(cuMemcpyDtoH(got.data(), b, n) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0x77; }));
  // Managed memory opens its view to the host; whoever gets the extent next starts closed.
  CUdeviceptr m = 0;
  REQUIRE(cuMemAllocManaged(&m, n, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  std::memset(reinterpret_cast<void*>(m), 0x31, n);
  REQUIRE(cuMemFree(m) == CUDA_SUCCESS);
  CUdeviceptr m2 = 0;
  REQUIRE(cuMemAllocManaged(&m2, n, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  CHECK(m2 == m);
  CHECK(reinterpret_cast<unsigned char*>(m2)[n - 1] == 0);
  CHECK(cuMemFree(m2) == CUDA_SUCCESS);
  CHECK(cuMemFree(b) == CUDA_SUCCESS);
  CHECK(cuMemFree(c) == CUDA_SUCCESS);
}

TEST_CASE("cuIpcGetMemHandle gives the allocation a memfd of its own, with its bytes", "[arena]") {
  primary();
  const size_t n = 5 * 4096 + 1;
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, n) == CUDA_SUCCESS);
  std::vector<unsigned char> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
  REQUIRE(cuMemcpyHtoD(p, pattern.data(), n) == CUDA_SUCCESS);
  const size_t before = memfds("/memfd:cuda-shim-device").size();
  CUipcMemHandle h;
  REQUIRE(cuIpcGetMemHandle(&h, p) == CUDA_SUCCESS);
  auto after = memfds("/memfd:cuda-shim-device");
  REQUIRE(after.size() == before + 1);
  bool own = false;  // one of them holds exactly this allocation's pages
  for (auto& m : after) own |= m.size == static_cast<off_t>(6 * 4096);
  CHECK(own);
  std::vector<unsigned char> got(n);
  REQUIRE(cuMemcpyDtoH(got.data(), p, n) == CUDA_SUCCESS);
  CHECK(got == pattern);
  // Exported again: the same memory, nothing moves.
  CUipcMemHandle h2;
  REQUIRE(cuIpcGetMemHandle(&h2, p) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim-device").size() == before + 1);
  // Freed, its own memfd goes and its extent returns to the arena, zeroed.
  REQUIRE(cuMemFree(p) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim-device").size() == before);
  CUdeviceptr q = 0;
  REQUIRE(cuMemAlloc(&q, n) == CUDA_SUCCESS);
  CHECK(q == p);
  REQUIRE(cuMemcpyDtoH(got.data(), q, n) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0; }));
  CHECK(cuMemFree(q) == CUDA_SUCCESS);
}

TEST_CASE("an allocation larger than an arena gets one of its own, gone with it", "[arena]") {
  primary();
  const size_t before = memfds("/memfd:cuda-shim-device").size();
  const size_t n = (size_t(5) << 30) + 123;  // sparse: costs address space, not memory
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, n) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim-device").size() == before + 1);
  const unsigned char x = 0x9c;
  unsigned char got = 0;
  REQUIRE(cuMemcpyHtoD(p + n - 1, &x, 1) == CUDA_SUCCESS);
  REQUIRE(cuMemcpyDtoH(&got, p + n - 1, 1) == CUDA_SUCCESS);
  CHECK(got == x);
  REQUIRE(cuMemFree(p) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim-device").size() == before);
}
