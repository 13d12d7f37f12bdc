// Issue 23: cuMemCreate allocations made without a shareable handle type are carved from the
// memory arenas (no descriptor each), and reservations come from address space the emulator
// keeps. What only the emulator can show: the descriptors behind live handles, that a released
// allocation's successor and a freed reservation's successor start from nothing, and that an
// allocation asked to be shareable still has its own memfd.
#include <dirent.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "unit_common.hpp"

namespace {

constexpr size_t kGran = size_t(2) << 20;

size_t memfds(const char* prefix) {
  size_t n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return n;
  while (dirent* e = readdir(d)) {
    char link[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t len = readlink(path.c_str(), link, sizeof link - 1);
    n += len > 0 && std::strncmp(link, prefix, std::strlen(prefix)) == 0;
  }
  closedir(d);
  return n;
}

CUmemAllocationProp prop_of(CUmemLocationType t, unsigned handle_types = 0) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = t;
  p.location.id = 0;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
  return p;
}

void grant(CUdeviceptr p, size_t n, CUmemLocationType t) {
  CUmemAccessDesc d{};
  d.location.type = t;
  d.location.id = 0;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  REQUIRE(cuMemSetAccess(p, n, &d, 1) == CUDA_SUCCESS);
}

// Whether host code could read the byte at p (the kernel answers instead of a signal).
bool host_readable(uintptr_t p) {
  char b;
  iovec local{&b, 1}, remote{reinterpret_cast<void*>(p), 1};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

}  // namespace

TEST_CASE("live cuMemCreate handles without handle types share the arenas' memfds", "[vmm][arena]") {
  primary();
  const size_t before = memfds("/memfd:cuda-shim");
  std::vector<CUmemGenericAllocationHandle> hs(3000);
  const CUmemAllocationProp dev = prop_of(CU_MEM_LOCATION_TYPE_DEVICE);
  const CUmemAllocationProp host = prop_of(CU_MEM_LOCATION_TYPE_HOST);
  for (size_t i = 0; i < hs.size(); ++i)
    REQUIRE(cuMemCreate(&hs[i], kGran, i % 3 ? &dev : &host, 0) == CUDA_SUCCESS);
  // 6 GB of sparse memory: two arenas, not 3000 memfds.
  CHECK(memfds("/memfd:cuda-shim") <= before + 3);
  // Asked to be shareable: a memfd of its own from the start, named for importers.
  CUmemGenericAllocationHandle shared = 0;
  const CUmemAllocationProp fd_prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  const size_t vmm_before = memfds("/memfd:cuda-shim:vmm:");
  REQUIRE(cuMemCreate(&shared, kGran, &fd_prop, 0) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim:vmm:") == vmm_before + 1);
  CHECK(cuMemRelease(shared) == CUDA_SUCCESS);
  CHECK(memfds("/memfd:cuda-shim:vmm:") == vmm_before);
  for (auto h : hs) CHECK(cuMemRelease(h) == CUDA_SUCCESS);
}

TEST_CASE("a released allocation's successor starts from zeros; mappings alias its bytes", "[vmm][arena]") {
  primary();
  const CUmemAllocationProp dev = prop_of(CU_MEM_LOCATION_TYPE_DEVICE);
  CUdeviceptr r = 0;
  REQUIRE(cuMemAddressReserve(&r, 2 * kGran, 0, 0, 0) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle a = 0, b = 0;
  REQUIRE(cuMemCreate(&a, kGran, &dev, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemCreate(&b, kGran, &dev, 0) == CUDA_SUCCESS);
  // a at both halves: one allocation's bytes under two addresses.
  REQUIRE(cuMemMap(r, kGran, 0, a, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(r + kGran, kGran, 0, a, 0) == CUDA_SUCCESS);
  grant(r, 2 * kGran, CU_MEM_LOCATION_TYPE_DEVICE);
  REQUIRE(cuMemsetD8(r, 0x5a, kGran) == CUDA_SUCCESS);
  std::vector<unsigned char> got(kGran, 0);
  REQUIRE(cuMemcpyDtoH(got.data(), r + kGran, kGran) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0x5a; }));
  REQUIRE(cuMemUnmap(r, 2 * kGran) == CUDA_SUCCESS);
  // b where a was: b's bytes (zeros), none of a's.
  REQUIRE(cuMemMap(r, kGran, 0, b, 0) == CUDA_SUCCESS);
  grant(r, kGran, CU_MEM_LOCATION_TYPE_DEVICE);
  REQUIRE(cuMemcpyDtoH(got.data(), r, kGran) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0; }));
  REQUIRE(cuMemUnmap(r, kGran) == CUDA_SUCCESS);
  // a released, and the next allocation (the same extent, first fit) reads zeros.
  REQUIRE(cuMemRelease(a) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle c = 0;
  REQUIRE(cuMemCreate(&c, kGran, &dev, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(r + kGran, kGran, 0, c, 0) == CUDA_SUCCESS);
  grant(r + kGran, kGran, CU_MEM_LOCATION_TYPE_DEVICE);
  std::fill(got.begin(), got.end(), 1);
  REQUIRE(cuMemcpyDtoH(got.data(), r + kGran, kGran) == CUDA_SUCCESS);
  CHECK(std::all_of(got.begin(), got.end(), [](unsigned char x) { return x == 0; }));
  CHECK(cuMemUnmap(r + kGran, kGran) == CUDA_SUCCESS);
  CHECK(cuMemAddressFree(r, 2 * kGran) == CUDA_SUCCESS);
  CHECK(cuMemRelease(b) == CUDA_SUCCESS);
  CHECK(cuMemRelease(c) == CUDA_SUCCESS);
}

TEST_CASE("a freed reservation's address space shows nothing of its last tenant", "[vmm][arena]") {
  primary();
  const CUmemAllocationProp host = prop_of(CU_MEM_LOCATION_TYPE_HOST);
  CUdeviceptr r = 0;
  REQUIRE(cuMemAddressReserve(&r, kGran, 0, 0, 0) == CUDA_SUCCESS);
  CHECK(!host_readable(r));  // reserved, nothing mapped
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, kGran, &host, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(r, kGran, 0, h, 0) == CUDA_SUCCESS);
  grant(r, kGran, CU_MEM_LOCATION_TYPE_HOST);
  std::memset(reinterpret_cast<void*>(r), 0x42, kGran);  // host memory, the host's once granted
  REQUIRE(cuMemUnmap(r, kGran) == CUDA_SUCCESS);
  CHECK(!host_readable(r));
  REQUIRE(cuMemAddressFree(r, kGran) == CUDA_SUCCESS);
  CHECK(!host_readable(r));
  // The same address again (the driver's address space is reused too): still nothing there.
  CUdeviceptr r2 = 0;
  REQUIRE(cuMemAddressReserve(&r2, kGran, 0, r, 0) == CUDA_SUCCESS);
  CHECK(r2 == r);
  CHECK(!host_readable(r2));
  CUmemGenericAllocationHandle h2 = 0;
  REQUIRE(cuMemCreate(&h2, kGran, &host, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(r2, kGran, 0, h2, 0) == CUDA_SUCCESS);
  CHECK(!host_readable(r2));  // mapped, no access granted yet
  grant(r2, kGran, CU_MEM_LOCATION_TYPE_HOST);
  CHECK(reinterpret_cast<unsigned char*>(r2)[kGran - 1] == 0);
  CHECK(cuMemUnmap(r2, kGran) == CUDA_SUCCESS);
  CHECK(cuMemAddressFree(r2, kGran) == CUDA_SUCCESS);
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);
  CHECK(cuMemRelease(h2) == CUDA_SUCCESS);
}
