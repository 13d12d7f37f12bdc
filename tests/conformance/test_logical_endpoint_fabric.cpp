// Logical endpoints (CUDA 13.3 driver API, "Logical Endpoint" section), one process: fabric
// handles (export, import), multicast teams bound per device, on the emulator the system
// conditions the docs name, fabric accesses and the endpoint state, endpoints used from many
// threads, and NCCL's entry-point lookup. Each test names the documented rule it checks. Ids,
// limits, creation: test_logical_endpoint.cpp; binds: test_logical_endpoint_bind.cpp; across
// processes: test_logical_endpoint_ipc.cpp.
// The emulated machine (CTest): 4 devices, devices 2 and 3 next to host NUMA node 1
// (le_machine.conf), IMEX channel 0. Sections marked "emulator" use cuda-shim's knobs.
#include "le_api.hpp"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {
constexpr unsigned long long MiB = 1ull << 20;
}  // namespace

TEST_CASE("cuLogicalEndpointExport and Import: fabric handles", "[le][export]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(4);
  auto f = le_unicast(0, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  REQUIRE_CU(le().Create(ids[0], &f), CUDA_SUCCESS);
  CUlogicalEndpointFabricHandle h;
  std::memset(&h, 0, sizeof h);

  SECTION("export needs no readiness; import into another reserved id of the same process") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CUlogicalEndpointFabricHandle h2;
    REQUIRE_CU(le().Export(&h2, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[2], &h2, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);  // twice is allowed
    ready_or_fail(ids[0], 3);
  }
  SECTION("an imported unicast endpoint cannot be bound to any memory") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    ready_or_fail(ids[1]);
    LeVmm fm(0, 2 * MiB, true);
    REQUIRE_CU(fm.status, CUDA_SUCCESS);
    CHECK_CU(le().BindAddr(ids[1], 0, 0, fm.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().BindMem(ids[1], 0, 0, fm.h, 0, 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an endpoint created without FABRIC in ipcHandleTypes does not export: INVALID_VALUE") {
    auto p = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(ids[3], &p), CUDA_SUCCESS);
    CHECK_CU(le().Export(&h, ids[3], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("handle type NONE, a NULL handle or an id without endpoint is INVALID_VALUE") {
    CHECK_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Export(nullptr, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Export(&h, ids[1], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Import(ids[1], nullptr, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("import into an id that is not reserved, or already associated, is INVALID_VALUE") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Import(ids[0] + 1000, &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Import(ids[0], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a handle that describes no endpoint cannot be supported: NOT_SUPPORTED") {
    CUlogicalEndpointFabricHandle junk;
    for (unsigned i = 0; i < sizeof junk.data; ++i) junk.data[i] = static_cast<unsigned char>(i * 37 + 11);
    CHECK_CU(le().Import(ids[1], &junk, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    h.data[20] ^= 0x5a;  // one changed bit of the identity: no longer a live endpoint
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("emulator: without an IMEX channel export and import are NOT_PERMITTED") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    Env e("CUDA_SHIM_IMEX_CHANNEL", nullptr);
    CUlogicalEndpointFabricHandle h2;
    CHECK_CU(le().Export(&h2, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
    CHECK(last_explanation().find("IMEX") != std::string::npos);
  }
  SECTION("emulator: another IMEX channel is NOT_PERMITTED") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    Env e("CUDA_SHIM_IMEX_CHANNEL", "7");
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
  }
  SECTION("emulator: an IMEX daemon that is not running cannot serve handles: NOT_SUPPORTED") {
    Env e("CUDA_SHIM_IMEX_DAEMON", "not_ready");
    CHECK_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
#endif
}

TEST_CASE("multicast endpoints in one process: team, binds per device", "[le][multicast]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  LE_REQUIRE_DEVICES(2);
  Ids ids(1);
  auto m = le_multicast(2, 4 * MiB);
  REQUIRE_CU(le().Create(ids[0], &m), CUDA_SUCCESS);
  REQUIRE_CU(le().AddDevice(ids[0], 0), CUDA_SUCCESS);
  LeVmm m0(0, 2 * MiB, false), m1(1, 2 * MiB, false);
  REQUIRE_CU(m0.status, CUDA_SUCCESS);
  REQUIRE_CU(m1.status, CUDA_SUCCESS);
  int st = -1;
  REQUIRE_CU(le().Query(ids[0], 1, &st), CUDA_SUCCESS);
  CHECK(st == 0);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, m0.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // team incomplete
  REQUIRE_CU(le().AddDevice(ids[0], 1), CUDA_SUCCESS);
  ready_or_fail(ids[0]);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, m0.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 1, 0, m1.ptr(), 2 * MiB, 0), CUDA_SUCCESS);  // same offset, another replica
  CHECK_CU(le().BindAddr(ids[0], 1, 2 * MiB, m0.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // device 0's memory
  if (ndev > 2) {
    LeVmm m2(2, 2 * MiB, false);
    CHECK_CU(le().BindAddr(ids[0], 2, 0, m2.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // not in the team
  }
  CHECK_CU(le().Unbind(ids[0], 1, 0, 2 * MiB), CUDA_SUCCESS);
  CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_SUCCESS);
}

#if !CUDA_SHIM_REAL_BACKEND
TEST_CASE("emulator: system conditions the docs name, injected", "[le][faults]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  make_unicast(ids[0], 0, 8 * MiB);
  make_unicast(ids[1], 0, 8 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  LeVmm mem(0, 6 * MiB, true);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  int st = 0;

  SECTION("bind resources exhausted: OUT_OF_MEMORY") {
    Env e("CUDA_SHIM_LE_BIND_LIMIT", "2");
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 4 * MiB, mem.h, 4 * MiB, 2 * MiB, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(last_explanation().find("bind resources") != std::string::npos);
  }
  SECTION("an illegal system configuration: ILLEGAL_STATE from Bind, Unbind, Query, GetLimits") {
    REQUIRE_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
    Env e("CUDA_SHIM_LE_FAULT", "illegal_state");
    cuuint64_t a = 0, mx = 0;
    auto p = le_unicast(0, 0);
    CHECK_CU(le().GetLimits(&a, &mx, &p), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().Query(ids[0], 1, &st), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_ERROR_ILLEGAL_STATE);
  }
  SECTION("the IMEX daemon not running: SYSTEM_NOT_READY for fabric endpoints only") {
    Env e("CUDA_SHIM_IMEX_DAEMON", "not_ready");
    CHECK_CU(le().Query(ids[1], 1, &st), CUDA_ERROR_SYSTEM_NOT_READY);
    CHECK_CU(le().BindMem(ids[1], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_ERROR_SYSTEM_NOT_READY);
    CHECK_CU(le().Query(ids[0], 1, &st), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  }
}

TEST_CASE("emulator: fabric accesses through an endpoint reach the bound memory", "[le][access]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  REQUIRE(le().Access != nullptr);
  Ids ids(2);
  make_unicast(ids[0], 0, 8 * MiB);
  LeVmm a(0, 2 * MiB, false), b(0, 2 * MiB, false);
  REQUIRE_CU(a.status, CUDA_SUCCESS);
  REQUIRE_CU(b.status, CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(a.va, 0x11, 2 * MiB), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(b.va, 0x22, 2 * MiB), CUDA_SUCCESS);
  REQUIRE_CU(le().BindAddr(ids[0], 0, 0, a.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 2 * MiB, b.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  // A read spanning both bindings sees both allocations' bytes.
  std::vector<unsigned char> buf(4096);
  REQUIRE(le().Access(ids[0], 0, 2 * MiB - 2048, buf.data(), buf.size(), 0) == CUDA_SUCCESS);
  CHECK(buf[0] == 0x11);
  CHECK(buf[2047] == 0x11);
  CHECK(buf[2048] == 0x22);
  // A write through the endpoint lands in the allocation.
  std::vector<unsigned char> w(100, 0x7e);
  REQUIRE(le().Access(ids[0], -1, 2 * MiB + 1000, w.data(), w.size(), 1) == CUDA_SUCCESS);
  std::vector<unsigned char> got(100);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), b.va + 1000, got.size()), CUDA_SUCCESS);
  CHECK(all_bytes(got, 0x7e));
  // Outside the bound ranges: no access.
  CHECK(le().Access(ids[0], 0, 4 * MiB, buf.data(), 16, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(last_explanation().find("only valid on bound ranges") != std::string::npos);
  // Not seen ready: no access.
  auto p = le_unicast(0, 2 * MiB);
  REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);
  CHECK(le().Access(ids[1], 0, 0, buf.data(), 16, 0) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("emulator: the endpoint state names ids, team and bindings", "[le][state]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  auto state = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(RTLD_DEFAULT, "cuShimLogicalEndpointState"));
  REQUIRE(state != nullptr);
  Ids ids(2);
  make_unicast(ids[0], 0, 4 * MiB);
  auto m = le_multicast(2, 2 * MiB);
  REQUIRE_CU(le().Create(ids[1], &m), CUDA_SUCCESS);
  REQUIRE_CU(le().AddDevice(ids[1], 1), CUDA_SUCCESS);
  LeVmm mem(0, 2 * MiB, false);
  REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  std::string s(state(nullptr, 0) + 1, '\0');
  s.resize(state(s.data(), s.size()));
  std::string me = std::to_string(getpid());
  CHECK(s.find("unicast owner device 0") != std::string::npos);
  CHECK(s.find("multicast team 1/2 [1 (pid " + me + ")]") != std::string::npos);
  CHECK(s.find("waiting for devices") != std::string::npos);
  CHECK(s.find("id " + std::to_string(ids[0]) + " in pid " + me + " (created)") != std::string::npos);
  CHECK(s.find("device 0: [0x0, 0x200000) -> vmm") != std::string::npos);
}
#endif

TEST_CASE("threads: endpoints made, bound and destroyed concurrently in one process", "[le][threads]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  constexpr int kThreads = 8, kRounds = 12;
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t, &failures] {
      auto bad = [&](bool ok) {
        if (!ok) failures.fetch_add(1);
        return !ok;
      };
      CUcontext ctx = nullptr;
      if (bad(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS) || bad(cuCtxSetCurrent(ctx) == CUDA_SUCCESS)) return;
      LeVmm mem(0, 4 * MiB, false);
      if (bad(mem.status == CUDA_SUCCESS)) return;
      for (int r = 0; r < kRounds; ++r) {
        CUlogicalEndpointId base = 0;
        if (bad(le().IdReserve(&base, 2) == CUDA_SUCCESS)) return;
        auto p = le_unicast(0, 4 * MiB);
        bool ready = false;
        bad(le().Create(base, &p) == CUDA_SUCCESS);
        bad(le().Create(base + 1, &p) == CUDA_SUCCESS);
        bad(le_wait_ready(base, 2, ready) == CUDA_SUCCESS && ready);
        bad(le().BindAddr(base, 0, 0, mem.ptr(), 4 * MiB, 0) == CUDA_SUCCESS);
        bad(le().BindMem(base + 1, 0, 0, mem.h, 0, 2 * MiB, 0) == CUDA_SUCCESS);
        bad(le().BindMem(base + 1, 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0) == CUDA_SUCCESS);
        if (le().Access) {
          unsigned char b[64];
          std::memset(b, t, sizeof b);
          bad(le().Access(base, -1, 4096 * t, b, sizeof b, 1) == CUDA_SUCCESS);
        }
        bad(le().Unbind(base + 1, 0, 0, 4 * MiB) == CUDA_SUCCESS);
        bad(le().Destroy(base) == CUDA_SUCCESS);  // unbinds the other binding itself
        bad(le().Destroy(base + 1) == CUDA_SUCCESS);
        bad(le().IdRelease(base, 2) == CUDA_SUCCESS);
      }
      cuDevicePrimaryCtxRelease(0);
    });
  for (auto& th : ts) th.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("NCCL's lookup: cudaGetDriverEntryPointByVersion(name, 13030) reaches the same entries", "[le][procaddr]") {
  LE_REQUIRE_API();
  REQUIRE_RT(cudaFree(nullptr), cudaSuccess);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  REQUIRE_RT(cudaGetDriverEntryPointByVersion("cuLogicalEndpointIdReserve", &fn, 13030, cudaEnableDefault, &q),
             cudaSuccess);
  REQUIRE(q == cudaDriverEntryPointSuccess);
  CHECK(fn == reinterpret_cast<void*>(le().IdReserve));
  auto reserve = reinterpret_cast<CUresult (*)(CUlogicalEndpointId*, cuuint32_t)>(fn);
  CUlogicalEndpointId base = 0;
  REQUIRE_CU(reserve(&base, 2), CUDA_SUCCESS);
  CHECK_CU(le().IdRelease(base, 2), CUDA_SUCCESS);
}
