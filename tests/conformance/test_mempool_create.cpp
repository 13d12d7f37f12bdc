// cuMemPoolCreate / cuMemPoolDestroy: every props field, capacity and limits.
// Expected error codes: NVIDIA's recorded answers (REAL_CU: tests/probe/cases/pool_conformance.cases).
#include <functional>
#include <string>
#include <vector>

#include "pool_common.hpp"
#include "real_answers.hpp"

namespace {

struct PropsCase {
  const char* name;
  std::function<void(CUmemPoolProps&)> edit;
  CUresult expected;
};

// One row per rule: the props differ from a valid device pool in one field.
const std::vector<PropsCase>& props_cases() {
  static const std::vector<PropsCase> cases = {
      {"a plain device pool", [](CUmemPoolProps&) {}, CUDA_SUCCESS},
      {"allocType INVALID (0)", [](CUmemPoolProps& p) { p.allocType = CU_MEM_ALLOCATION_TYPE_INVALID; },
       REAL_CU("pool.conf.create.alloc_type_invalid")},
      {"allocType 3", [](CUmemPoolProps& p) { p.allocType = static_cast<CUmemAllocationType>(3); },
       REAL_CU("pool.conf.create.alloc_type_3")},
      {"allocType 0x7fffffff", [](CUmemPoolProps& p) { p.allocType = static_cast<CUmemAllocationType>(0x7fffffff); },
       REAL_CU("pool.conf.create.alloc_type_max")},
      {"handleTypes POSIX fd", [](CUmemPoolProps& p) { p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; },
       CUDA_SUCCESS},
      {"handleTypes fabric", [](CUmemPoolProps& p) { p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC; }, CUDA_SUCCESS},
      {"handleTypes POSIX fd | fabric",
       [](CUmemPoolProps& p) {
         p.handleTypes = static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                                                CU_MEM_HANDLE_TYPE_FABRIC);
       },
       CUDA_SUCCESS},
      {"handleTypes WIN32", [](CUmemPoolProps& p) { p.handleTypes = CU_MEM_HANDLE_TYPE_WIN32; },
       REAL_CU("pool.conf.create.handle_win32")},
      {"handleTypes WIN32_KMT", [](CUmemPoolProps& p) { p.handleTypes = CU_MEM_HANDLE_TYPE_WIN32_KMT; },
       REAL_CU("pool.conf.create.handle_win32_kmt")},
      {"handleTypes POSIX fd | WIN32",
       [](CUmemPoolProps& p) {
         p.handleTypes = static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                                                CU_MEM_HANDLE_TYPE_WIN32);
       },
       REAL_CU("pool.conf.create.handle_fd_win32")},
      {"handleTypes unknown bit 0x10", [](CUmemPoolProps& p) { p.handleTypes = static_cast<CUmemAllocationHandleType>(0x10); },
       REAL_CU("pool.conf.create.handle_bit_0x10")},
      {"handleTypes unknown bit 0x80000000",
       [](CUmemPoolProps& p) { p.handleTypes = static_cast<CUmemAllocationHandleType>(0x80000000u); },
       REAL_CU("pool.conf.create.handle_bit_0x80000000")},
      {"location device -1", [](CUmemPoolProps& p) { p.location.id = -1; }, REAL_CU("pool.conf.create.device_neg")},
      {"location device 99", [](CUmemPoolProps& p) { p.location.id = 99; }, REAL_CU("pool.conf.create.device_99")},
      {"location host (id ignored: 77)",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST;
         p.location.id = 77;
       },
       CUDA_SUCCESS},
      {"location host with POSIX fd handles",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST;
         p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
       },
       REAL_CU("pool.conf.create.host_fd_handles")},
      {"location host with fabric handles",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST;
         p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
       },
       REAL_CU("pool.conf.create.host_fabric_handles")},
      {"location host NUMA 0", [](CUmemPoolProps& p) { p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; },
       CUDA_SUCCESS},
      {"location host NUMA 0 with POSIX fd handles",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
         p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
       },
       CUDA_SUCCESS},
      {"location host NUMA -1",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
         p.location.id = -1;
       },
       REAL_CU("pool.conf.create.numa_neg")},
      {"location host NUMA 99",
       [](CUmemPoolProps& p) {
         p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
         p.location.id = 99;
       },
       REAL_CU("pool.conf.create.numa_99")},
      {"location HOST_NUMA_CURRENT", [](CUmemPoolProps& p) { p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; },
       REAL_CU("pool.conf.create.numa_current")},
      {"location NONE for a pinned pool", [](CUmemPoolProps& p) { p.location.type = CU_MEM_LOCATION_TYPE_NONE; },
       REAL_CU("pool.conf.create.location_none_pinned")},
      {"location type 5", [](CUmemPoolProps& p) { p.location.type = static_cast<CUmemLocationType>(5); },
       REAL_CU("pool.conf.create.location_type_5")},
      {"location type -1", [](CUmemPoolProps& p) { p.location.type = static_cast<CUmemLocationType>(-1); },
       REAL_CU("pool.conf.create.location_type_neg")},
      {"win32SecurityAttributes set, no handles (ignored)",
       [](CUmemPoolProps& p) { p.win32SecurityAttributes = reinterpret_cast<void*>(0x1234); }, CUDA_SUCCESS},
      {"win32SecurityAttributes set with POSIX fd handles (ignored)",
       [](CUmemPoolProps& p) {
         p.win32SecurityAttributes = reinterpret_cast<void*>(0x1234);
         p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
       },
       CUDA_SUCCESS},
      {"usage HW_DECOMPRESS (2)", [](CUmemPoolProps& p) { p.usage = 2; }, CUDA_SUCCESS},
      {"usage 0xffff", [](CUmemPoolProps& p) { p.usage = 0xffff; }, CUDA_SUCCESS},
      {"reserved[0] != 0", [](CUmemPoolProps& p) { p.reserved[0] = 1; }, REAL_CU("pool.conf.create.reserved_0")},
      {"reserved[53] != 0", [](CUmemPoolProps& p) { p.reserved[53] = 0xff; }, REAL_CU("pool.conf.create.reserved_53")},
      {"maxSize 1", [](CUmemPoolProps& p) { p.maxSize = 1; }, CUDA_SUCCESS},
      {"maxSize 2 MiB + 1", [](CUmemPoolProps& p) { p.maxSize = 2 * kMiB + 1; }, CUDA_SUCCESS},
      {"maxSize 16 TiB", [](CUmemPoolProps& p) { p.maxSize = size_t(1) << 44; }, CUDA_SUCCESS},
      {"maxSize 64 TiB (more address space than pools have)", [](CUmemPoolProps& p) { p.maxSize = size_t(1) << 46; },
       REAL_CU("pool.conf.create.max_size_64tib")},
      {"maxSize 2^62", [](CUmemPoolProps& p) { p.maxSize = size_t(1) << 62; }, REAL_CU("pool.conf.create.max_size_2p62")},
      {"managed, device 0", [](CUmemPoolProps& p) { p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; }, CUDA_SUCCESS},
      {"managed, no location",
       [](CUmemPoolProps& p) {
         p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
         p.location.type = CU_MEM_LOCATION_TYPE_NONE;
       },
       CUDA_SUCCESS},
      {"managed, host",
       [](CUmemPoolProps& p) {
         p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
         p.location.type = CU_MEM_LOCATION_TYPE_HOST;
       },
       CUDA_SUCCESS},
      {"managed, host NUMA 0",
       [](CUmemPoolProps& p) {
         p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
         p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
       },
       CUDA_SUCCESS},
      {"managed with POSIX fd handles",
       [](CUmemPoolProps& p) {
         p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
         p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
       },
       REAL_CU("pool.conf.create.managed_fd_handles")},
      {"managed with a maxSize",
       [](CUmemPoolProps& p) {
         p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
         p.maxSize = 64 * kMiB;
       },
       REAL_CU("pool.conf.create.managed_max_size")},
  };
  return cases;
}

}  // namespace

TEST_CASE("cuMemPoolCreate validates every field of CUmemPoolProps as the driver does", "[mempool]") {
  conformance_primary_ctx();
  for (const auto& c : props_cases()) {
    INFO(c.name);
    CUmemPoolProps p = pool_props();
    c.edit(p);
    CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(0x1);
    CUresult r = cuMemPoolCreate(&pool, &p);
    CHECK_CU(r, c.expected);
    if (r == CUDA_SUCCESS) {
      // A created pool serves allocations and is destroyed cleanly.
      CUdeviceptr d = 0;
      CHECK_CU(cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr), CUDA_SUCCESS);
      CHECK(d != 0);
      CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
      CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
      CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
    }
  }
}

TEST_CASE("cuMemPoolCreate with a device ordinal of the second device", "[mempool][multi-gpu]") {
  conformance_primary_ctx();
  const int n = device_count();
  CUmemPoolProps p = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, n);  // one past the last
  CUmemoryPool pool = nullptr;
  CHECK_CU(cuMemPoolCreate(&pool, &p), REAL_CU("pool.conf.create.device_past_last"));
  if (n >= 2) {
    p.location.id = 1;
    REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS);
    CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  }
}

TEST_CASE("cuMemPoolCreate with NULL pool is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CUmemPoolProps p = pool_props();
  CHECK_CU(cuMemPoolCreate(nullptr, &p), REAL_CU("pool.conf.create.null_pool"));
}

TEST_CASE("cuMemPoolCreate with NULL props is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool pool = nullptr;
  CHECK_CU(cuMemPoolCreate(&pool, nullptr), REAL_CU("pool.conf.create.null_props"));
}

TEST_CASE("cuMemPoolCreate needs cuInit but no current context", "[mempool]") {
  conformance_primary_ctx();
  CUresult created = CUDA_ERROR_UNKNOWN, destroyed = CUDA_ERROR_UNKNOWN;
  std::thread([&] {  // a fresh thread has no current context
    CUmemPoolProps p = pool_props();
    CUmemoryPool pool = nullptr;
    created = cuMemPoolCreate(&pool, &p);
    if (created == CUDA_SUCCESS) destroyed = cuMemPoolDestroy(pool);
  }).join();
  CHECK_CU(created, CUDA_SUCCESS);
  CHECK_CU(destroyed, CUDA_SUCCESS);
}

TEST_CASE("a pool's capacity is its maxSize rounded up to 32 MiB", "[mempool]") {
  conformance_primary_ctx();
  struct Row {
    size_t max_size, one_mib_allocations;
  };
  for (Row row : {Row{1, 32}, Row{2 * kMiB + 1, 32}, Row{32 * kMiB, 32}, Row{33 * kMiB, 64}, Row{64 * kMiB + 1, 96}}) {
    INFO("maxSize " << row.max_size);
    CUmemPoolProps p = pool_props();
    p.maxSize = row.max_size;
    ScopedPool pool(p);
    std::vector<CUdeviceptr> v;
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < row.one_mib_allocations + 1; ++i) {
      CUdeviceptr d = 0;
      r = cuMemAllocFromPoolAsync(&d, kMiB, pool, nullptr);
      if (r != CUDA_SUCCESS) {
        CHECK(d == 0);
        break;
      }
      v.push_back(d);
    }
    CHECK(v.size() == row.one_mib_allocations);
    CHECK_CU(r, REAL_CU("pool.conf.create.capacity_full"));
    CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == row.one_mib_allocations * kMiB);
    for (auto d : v) CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
    // One allocation as large as the capacity fits; one byte more does not.
    CUdeviceptr big = 0;
    CHECK_CU(cuMemAllocFromPoolAsync(&big, row.one_mib_allocations * kMiB, pool, nullptr), CUDA_SUCCESS);
    CHECK_CU(cuMemFreeAsync(big, nullptr), CUDA_SUCCESS);
    CHECK_CU(cuMemAllocFromPoolAsync(&big, row.one_mib_allocations * kMiB + 1, pool, nullptr),
             REAL_CU("pool.conf.create.capacity_one_byte_more"));
  }
}

TEST_CASE("pools share the device address space: creation fails with CUDA_ERROR_OUT_OF_MEMORY once it is used up",
          "[mempool]") {
  conformance_primary_ctx();
  // Measured: each pool reserves its capacity (the device's memory when maxSize is 0) in a
  // 64 TiB space that every device's default pool also draws on.
  size_t total = 0;
  REQUIRE_CU(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
  const unsigned long long cap = round_up(total, kChunk);
  const unsigned long long fit = (1ull << 46) / cap;
  std::vector<CUmemoryPool> pools;
  CUresult r = CUDA_SUCCESS;
  for (unsigned long long i = 0; i < fit + 8; ++i) {
    CUmemPoolProps p = pool_props();
    CUmemoryPool pool = nullptr;
    r = cuMemPoolCreate(&pool, &p);
    if (r != CUDA_SUCCESS) break;
    pools.push_back(pool);
  }
  CHECK_CU(r, REAL_CU("pool.conf.create.address_space_used_up"));
  // Measured on H200s (driver 580.159.04): from run to run either every pool of the budget fits
  // or one fewer (467 or 466 beside the default pool; the driver's own reservations vary).
  const size_t made = pools.size() + static_cast<size_t>(device_count());
  CHECK(made <= fit);
  CHECK(made + 1 >= fit);
  // Destroying one makes room for one.
  REQUIRE(!pools.empty());
  CHECK_CU(cuMemPoolDestroy(pools.back()), CUDA_SUCCESS);
  CUmemPoolProps p = pool_props();
  CHECK_CU(cuMemPoolCreate(&pools.back(), &p), CUDA_SUCCESS);
  for (auto pool : pools) CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
}

TEST_CASE("cuMemPoolDestroy of the device's default pool is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool def = nullptr;
  REQUIRE_CU(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(def), REAL_CU("pool.conf.create.destroy_default_device"));
  CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST, 0};
  CUmemoryPool host_def = nullptr;
  REQUIRE_CU(cuMemGetDefaultMemPool(&host_def, &host, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(host_def), REAL_CU("pool.conf.create.destroy_default_host"));
  CUmemLocation dev{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool managed_def = nullptr;
  REQUIRE_CU(cuMemGetDefaultMemPool(&managed_def, &dev, CU_MEM_ALLOCATION_TYPE_MANAGED), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(managed_def), REAL_CU("pool.conf.create.destroy_default_managed"));
}

TEST_CASE("cuMemPoolDestroy of NULL is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CHECK_CU(cuMemPoolDestroy(nullptr), REAL_CU("pool.conf.create.destroy_null"));
}

TEST_CASE("a destroyed pool's handle is CUDA_ERROR_INVALID_VALUE everywhere", "[mempool]") {
  conformance_primary_ctx();
  CUmemPoolProps p = pool_props();
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  cuuint64_t v = 0;
  CHECK_CU(cuMemPoolDestroy(pool), REAL_CU("pool.conf.create.destroyed.destroy"));
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v), REAL_CU("pool.conf.create.destroyed.get_attr"));
  CHECK_CU(cuMemPoolTrimTo(pool, 0), REAL_CU("pool.conf.create.destroyed.trim"));
  CUdeviceptr d = 0;
  CHECK_CU(cuMemAllocFromPoolAsync(&d, 16, pool, nullptr), REAL_CU("pool.conf.create.destroyed.alloc"));
}

TEST_CASE("destroying a pool with live allocations defers its release until they are freed", "[mempool]") {
  conformance_primary_ctx();
  ScopedStream s;
  CUmemPoolProps p = pool_props();
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  // The memory stays usable, and still names its pool.
  unsigned char in[4] = {1, 2, 3, 4}, out[4] = {};
  CHECK_CU(cuMemcpyHtoD(d, in, 4), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(out, d, 4), CUDA_SUCCESS);
  CHECK(out[3] == 4);
  CUmemoryPool owner = nullptr;
  CHECK_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d), CUDA_SUCCESS);
  CHECK(owner == pool);
  // The handle itself is dead.
  cuuint64_t v = 0;
  CHECK_CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v), REAL_CU("pool.conf.create.destroyed_live.get_attr"));
  CUdeviceptr e = 0;
  CHECK_CU(cuMemAllocFromPoolAsync(&e, 16, pool, s), REAL_CU("pool.conf.create.destroyed_live.alloc"));
  // Its allocations are still freed normally.
  CHECK_CU(cuMemFreeAsync(d, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
}

TEST_CASE("freeing the last allocation of a destroyed pool succeeds", "[mempool]") {
  conformance_primary_ctx();
  ScopedStream s;
  CUmemPoolProps p = pool_props();
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS);
  CUdeviceptr a = 0, b = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&b, kMiB, pool, s), CUDA_SUCCESS);
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  // Its memory is gone with it.
  unsigned t = 0;
  CHECK_CU(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a), REAL_CU("pool.conf.create.destroyed_freed.ptr_attr"));
}
