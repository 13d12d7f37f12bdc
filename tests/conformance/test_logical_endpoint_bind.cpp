// Logical endpoints (CUDA 13.3 driver API, "Logical Endpoint" section), one process: binding
// memory (cuLogicalEndpointBindAddr, BindMem), unbinding and destroying. Each test names the
// documented rule it checks. Where the docs give a code the test asserts it; where they give
// none, 13.3's return lists leave CUDA_ERROR_INVALID_VALUE as the only argument error. Ids,
// limits, creation: test_logical_endpoint.cpp.
// The emulated machine (CTest): 4 devices, devices 2 and 3 next to host NUMA node 1
// (le_machine.conf), IMEX channel 0. Sections marked "emulator" use cuda-shim's knobs.
#include "le_api.hpp"

#include <string>
#include <vector>

namespace {
constexpr unsigned long long MiB = 1ull << 20;
}  // namespace

TEST_CASE("cuLogicalEndpointBindAddr: every documented check", "[le][bind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  auto p = le_unicast(0, 8 * MiB);
  const cuuint64_t align = alignment_of(p);
  LeVmm mem(0, 4 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);

  SECTION("before cuLogicalEndpointQuery confirmed readiness: INVALID_VALUE (documented)") {
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
#if !CUDA_SHIM_REAL_BACKEND
    CHECK(last_explanation().find("cuLogicalEndpointQuery") != std::string::npos);
#endif
    ready_or_fail(ids[0]);
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 0), CUDA_SUCCESS);
  }
  SECTION("after readiness") {
    ready_or_fail(ids[0]);
    SECTION("offset, size and ptr must be multiples of bindAlignment") {
      if (align > 1) {
        CHECK_CU(le().BindAddr(ids[0], 0, align / 2, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align / 2, 0), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(le().BindAddr(ids[0], 0, 0, static_cast<char*>(mem.ptr()) + 4096, align, 0),
                 CUDA_ERROR_INVALID_VALUE);
      }
    }
    SECTION("size + offset within the endpoint") {
      CHECK_CU(le().BindAddr(ids[0], 0, 8 * MiB - align, mem.ptr(), 2 * align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 8 * MiB, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("size within the allocated memory") {
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 4 * MiB + align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, static_cast<char*>(mem.ptr()) + align, 4 * MiB, 0),
               CUDA_ERROR_INVALID_VALUE);  // runs past the end from ptr
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 4 * MiB, 0), CUDA_SUCCESS);
    }
    SECTION("size 0 and non-zero flags are INVALID_VALUE") {
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 0, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 1), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("unicast: dev must be the owner") {
      CHECK_CU(le().BindAddr(ids[0], 1, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 77, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("device memory must be the device's own") {
      auto p1 = le_unicast(1, 8 * MiB);
      REQUIRE_CU(le().Create(ids[1], &p1), CUDA_SUCCESS);
      ready_or_fail(ids[1]);
      CHECK_CU(le().BindAddr(ids[1], 1, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);  // device 0's
      LeVmm mem1(1, 2 * MiB, false);
      REQUIRE_CU(mem1.status, CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[1], 1, 0, mem1.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    }
    SECTION("memory not from cuMemCreate or cudaMallocAsync is INVALID_VALUE") {
      CUdeviceptr d = 0;
      REQUIRE_CU(cuMemAlloc(&d, 4 * MiB), CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, reinterpret_cast<void*>(d), align, 0), CUDA_ERROR_INVALID_VALUE);
      cuMemFree(d);
      std::vector<char> host(8 * MiB);
      void* h = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(host.data()) + align - 1) / align * align);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, h, align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("cudaMallocAsync memory binds") {
      void* d = nullptr;
      REQUIRE_RT(cudaMallocAsync(&d, 4 * MiB, nullptr), cudaSuccess);
      REQUIRE_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
      if (reinterpret_cast<uintptr_t>(d) % align == 0) CHECK_CU(le().BindAddr(ids[0], 0, 0, d, align, 0), CUDA_SUCCESS);
      CHECK_CU(le().Unbind(ids[0], 0, 0, align), CUDA_SUCCESS);
      cudaFreeAsync(d, nullptr);
      cudaStreamSynchronize(nullptr);
    }
    SECTION("bindings on one device do not overlap") {
      REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * align, 0), CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[0], 0, align, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 2 * align, mem.ptr(), align, 0), CUDA_SUCCESS);  // adjacent is fine
    }
    SECTION("an externally shareable endpoint binds only externally shareable memory") {
      auto f = le_unicast(0, 8 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
      REQUIRE_CU(le().Create(ids[1], &f), CUDA_SUCCESS);
      ready_or_fail(ids[1]);
      CHECK_CU(le().BindAddr(ids[1], 0, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      LeVmm fm(0, 2 * MiB, true);
      REQUIRE_CU(fm.status, CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[1], 0, 0, fm.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    }
  }
}

TEST_CASE("cuLogicalEndpointBindAddr: host NUMA memory must be on the node closest to dev", "[le][bind][numa]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  int ndev = 0, numa0 = -1, numa_last = -1;
  REQUIRE_CU(cuDeviceGetCount(&ndev), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceGetAttribute(&numa0, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceGetAttribute(&numa_last, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, ndev - 1), CUDA_SUCCESS);
  Ids ids(2);
  make_unicast(ids[0], 0, 4 * MiB);
  LeVmm near(0, 2 * MiB, false, numa0);
  REQUIRE_CU(near.status, CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, near.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  if (numa_last == numa0) {
    WARN("all devices share one host NUMA node: the far-node case needs another");
    return;
  }
  LeVmm far(ndev - 1, 2 * MiB, false, numa_last);
  REQUIRE_CU(far.status, CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 0, 2 * MiB, far.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  make_unicast(ids[1], ndev - 1, 4 * MiB);
  CHECK_CU(le().BindAddr(ids[1], ndev - 1, 0, far.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
}

TEST_CASE("cuLogicalEndpointBindMem: cuMemCreate handles at memOffset", "[le][bind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(1);
  make_unicast(ids[0], 0, 16 * MiB);
  const cuuint64_t align = alignment_of(le_unicast(0, 16 * MiB));
  LeVmm mem(0, 6 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);

  SECTION("whole and partial allocations") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 6 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 6 * MiB, mem.h, 2 * MiB, 4 * MiB, 0), CUDA_SUCCESS);  // one handle, twice
  }
  SECTION("memOffset must be a multiple of bindAlignment") {
    if (align > 1) CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, align / 2, align, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("size + memOffset within the allocation") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 2 * MiB, 6 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 8 * MiB, align, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a handle that is not a live allocation is INVALID_VALUE") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, 0, 0, align, 0), CUDA_ERROR_INVALID_VALUE);
#if !CUDA_SHIM_REAL_BACKEND
    // Garbage and released handles crash NVIDIA's VMM calls; the emulator answers instead.
    CHECK_CU(le().BindMem(ids[0], 0, 0, 0xdeadbeef000ull, 0, align, 0), CUDA_ERROR_INVALID_VALUE);
#endif
  }
  SECTION("the endpoint's size bounds size + offset") {
    CHECK_CU(le().BindMem(ids[0], 0, 12 * MiB, mem.h, 0, 6 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointUnbind: an offset of a bind, the size of one or of adjacent binds", "[le][unbind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  make_unicast(ids[0], 0, 16 * MiB);
  LeVmm mem(0, 8 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  // Bindings at [0,2) [2,4) [4,8) MiB and [10,12) MiB.
  REQUIRE_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 4 * MiB, mem.h, 4 * MiB, 4 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 10 * MiB, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);

  SECTION("the size of one bind") {
    CHECK_CU(le().Unbind(ids[0], 0, 2 * MiB, 2 * MiB), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[0], 0, 2 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // gone
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);  // the range is free again
  }
  SECTION("the combined size of adjacent binds") {
    CHECK_CU(le().Unbind(ids[0], 0, 0, 8 * MiB), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[0], 0, 10 * MiB, 2 * MiB), CUDA_SUCCESS);
  }
  SECTION("an offset that no bind gave is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 6 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // inside a binding
    CHECK_CU(le().Unbind(ids[0], 0, 8 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // nothing bound
  }
  SECTION("a size that splits a binding is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 6 * MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 4 * MiB), CUDA_SUCCESS);  // nothing was unbound by the failures
  }
  SECTION("a size spanning a gap is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 8 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a misaligned offset or size, size 0 or another device is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 0, MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 1, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an id not seen ready is INVALID_VALUE") {
    auto p = le_unicast(0, 4 * MiB);
    REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[1], 0, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointDestroy: back to reserved, this process's memory unbound, last reference frees",
          "[le][destroy]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(3);
  LeVmm mem(0, 2 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);

  SECTION("an id that names no endpoint is INVALID_VALUE") {
    CHECK_CU(le().Destroy(ids[0]), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Destroy(ids[0] + 500), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("twice is INVALID_VALUE, not a crash") {
    auto p = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("the id is reusable at once and starts with nothing bound") {
    make_unicast(ids[0], 0, 2 * MiB);
    REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);  // unbinds implicitly
    make_unicast(ids[0], 0, 2 * MiB);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // nothing bound
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  }
  SECTION("an endpoint lives while another id names it") {
    auto f = le_unicast(0, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
    REQUIRE_CU(le().Create(ids[0], &f), CUDA_SUCCESS);
    CUlogicalEndpointFabricHandle h;
    std::memset(&h, 0, sizeof h);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);
    ready_or_fail(ids[1]);  // the import still names a live endpoint
    REQUIRE_CU(le().Import(ids[2], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[1]), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[2]), CUDA_SUCCESS);  // the last reference: the endpoint is freed
    CHECK_CU(le().Import(ids[0], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
}
