// Fabric handles (CU_MEM_HANDLE_TYPE_FABRIC) for pools, and the emulated IMEX channels that
// decide who may export and import them. A real machine without an IMEX channel refuses
// fabric exports with CUDA_ERROR_NOT_PERMITTED; the emulator grants a channel through
// CUDA_SHIM_IMEX_CHANNEL=<n>, and processes on one channel form one IMEX domain.
// Every code here depends on the machine's IMEX set-up (a channel or none, the daemon), which the
// recorded probe run (tests/probe/recorded, a machine without channels) does not vary: they stay
// literals, measured on driver 580 without a channel or (emulator) the emulator's documented ones.
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"

namespace {

CUmemoryPool fabric_pool() {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_FABRIC |
                                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  if (cuMemPoolCreate(&pool, &p) != CUDA_SUCCESS) return nullptr;
  return pool;
}

}  // namespace

// Exporter: a fabric pool with one allocation of 0x6e; sends the pool's fabric handle and the
// pointer's export data (or the export's error code), then waits for the parent.
MP_CHILD(fabric_exporter) {
  child_primary_ctx();
  CUmemoryPool pool = fabric_pool();
  CUdeviceptr d = 0;
  if (!pool || cuMemAllocFromPoolAsync(&d, 8192, pool, nullptr) != CUDA_SUCCESS) return 1;
  cuMemsetD8(d, 0x6e, 8192);
  cuCtxSynchronize();
  CUmemFabricHandle fh;
  std::memset(&fh, 0, sizeof fh);
  CUresult r = cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0);
  ch.send_int(r);
  CUmemPoolPtrExportData x;
  std::memset(&x, 0, sizeof x);
  cuMemPoolExportPointer(&x, d);
  ch.send_pod(fh);
  ch.send_pod(x);
  (void)ch.recv_int();  // importers are done
  cuMemFreeAsync(d, nullptr);
  cuCtxSynchronize();
  cuMemPoolDestroy(pool);
  return 0;
}

// Importer: imports the fabric handle and the pointer, reads it; sends both codes and a verdict.
MP_CHILD(fabric_importer) {
  child_primary_ctx();
  auto fh = ch.recv_pod<CUmemFabricHandle>();
  auto x = ch.recv_pod<CUmemPoolPtrExportData>();
  CUmemoryPool pool = nullptr;
  CUresult r = cuMemPoolImportFromShareableHandle(&pool, &fh, CU_MEM_HANDLE_TYPE_FABRIC, 0);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 0;
  CUdeviceptr d = 0;
  ch.send_int(cuMemPoolImportPointer(&d, pool, &x));
  std::vector<unsigned char> buf(8192);
  bool ok = cuMemcpyDtoH(buf.data(), d, buf.size()) == CUDA_SUCCESS;
  for (unsigned char c : buf) ok = ok && c == 0x6e;
  ch.send_int(ok);
  cuMemFree(d);
  cuMemPoolDestroy(pool);
  return 0;
}

TEST_CASE("fabric pool export without an IMEX channel is not permitted", "[ipc][fabric]") {
  conformance_primary_ctx();
  CUmemoryPool pool = fabric_pool();
  REQUIRE(pool != nullptr);  // creating a fabric-capable pool needs no channel (measured)
  CUmemFabricHandle fh;
  CHECK_CU(cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_NOT_PERMITTED);
  // A handle nobody exported cannot be served.
  std::memset(&fh, 0, sizeof fh);
  CUmemoryPool imported = nullptr;
  CHECK_CU(cuMemPoolImportFromShareableHandle(&imported, &fh, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_NOT_SUPPORTED);
  // Measured: without a channel, a pool that is also fabric-shareable is not exportable as a
  // descriptor either.
  int fd = -1;
  CHECK_CU(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
           CUDA_ERROR_OPERATING_SYSTEM);
#if !CUDA_SHIM_REAL_BACKEND
  // Driver 580 crashes (SIGSEGV) destroying a pool whose fabric export failed (measured in a
  // child process); the emulator destroys it.
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
#endif
}

#if !CUDA_SHIM_REAL_BACKEND
TEST_CASE("(emulator) fabric handles cross processes of one IMEX domain only", "[ipc][fabric]") {
  auto exporter = mp::spawn("fabric_exporter", {"CUDA_SHIM_IMEX_CHANNEL=3"});
  REQUIRE(exporter.ch.recv_int() == CUDA_SUCCESS);
  auto fh = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto x = exporter.ch.recv_pod<CUmemPoolPtrExportData>();

  auto run_importer = [&](std::vector<std::string> env) {
    auto c = mp::spawn("fabric_importer", env);
    c.ch.send_pod(fh);
    c.ch.send_pod(x);
    std::vector<int64_t> codes;
    int64_t r = c.ch.recv_int();
    codes.push_back(r);
    if (r == CUDA_SUCCESS) {
      codes.push_back(c.ch.recv_int());
      codes.push_back(c.ch.recv_int());
    }
    CHECK(c.wait() == 0);
    return codes;
  };
  SECTION("same channel: imported, and the bytes are the exporter's") {
    auto codes = run_importer({"CUDA_SHIM_IMEX_CHANNEL=3"});
    REQUIRE(codes.size() == 3);
    CHECK(codes[1] == CUDA_SUCCESS);
    CHECK(codes[2] == 1);
  }
  SECTION("another channel: another IMEX domain") {
    auto codes = run_importer({"CUDA_SHIM_IMEX_CHANNEL=4"});
    CHECK(codes[0] == CUDA_ERROR_NOT_PERMITTED);
  }
  SECTION("no channel") {
    auto codes = run_importer({"CUDA_SHIM_IMEX_CHANNEL="});
    CHECK(codes[0] == CUDA_ERROR_NOT_PERMITTED);
  }
  SECTION("the IMEX daemon not running") {
    auto codes = run_importer({"CUDA_SHIM_IMEX_CHANNEL=3", "CUDA_SHIM_IMEX_DAEMON=not_ready"});
    CHECK(codes[0] == CUDA_ERROR_SYSTEM_NOT_READY);
  }
  SECTION("altered bytes name no export") {
    fh.data[20] ^= 0xff;
    auto codes = run_importer({"CUDA_SHIM_IMEX_CHANNEL=3"});
    CHECK(codes[0] == CUDA_ERROR_NOT_SUPPORTED);
  }
  exporter.ch.send_int(0);
  CHECK(exporter.wait() == 0);
}
#endif

#if !CUDA_SHIM_REAL_BACKEND
namespace {
CUmemAllocationProp vmm_prop(unsigned handle_types) {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
  return p;
}
// Maps handle h at a fresh reservation with read-write access for device 0.
CUdeviceptr map_rw(CUmemGenericAllocationHandle h, size_t n) {
  CUdeviceptr va = 0;
  if (cuMemAddressReserve(&va, n, 0, 0, 0) != CUDA_SUCCESS || cuMemMap(va, n, 0, h, 0) != CUDA_SUCCESS) return 0;
  CUmemAccessDesc a;
  std::memset(&a, 0, sizeof a);
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.location.id = 0;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return cuMemSetAccess(va, n, &a, 1) == CUDA_SUCCESS ? va : 0;
}
constexpr size_t kVmmBytes = 2 << 20;
}  // namespace

// Exporter: a fabric cuMemCreate allocation filled with 0x7c; sends its fabric handle.
MP_CHILD(vmm_fabric_exporter) {
  child_primary_ctx();
  CUmemAllocationProp p = vmm_prop(CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemCreate(&h, kVmmBytes, &p, 0);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 0;
  CUdeviceptr va = map_rw(h, kVmmBytes);
  cuMemsetD8(va, 0x7c, kVmmBytes);
  cuCtxSynchronize();
  CUmemFabricHandle fh;
  ch.send_int(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  ch.send_pod(fh);
  (void)ch.recv_int();
  return 0;
}

// Importer: imports the fabric handle, maps it and checks the bytes.
MP_CHILD(vmm_fabric_importer) {
  child_primary_ctx();
  auto fh = ch.recv_pod<CUmemFabricHandle>();
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
  ch.send_int(r);
  if (r != CUDA_SUCCESS) return 0;
  CUdeviceptr va = map_rw(h, kVmmBytes);
  std::vector<unsigned char> buf(kVmmBytes);
  bool ok = va && cuMemcpyDtoH(buf.data(), va, kVmmBytes) == CUDA_SUCCESS;
  for (unsigned char c : buf) ok = ok && c == 0x7c;
  ch.send_int(ok);
  return 0;
}

TEST_CASE("(emulator) cuMemCreate fabric memory: channels decide who may create, export and import", "[ipc][fabric][vmm]") {
  conformance_primary_ctx();
  CUmemAllocationProp p = vmm_prop(CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemGenericAllocationHandle h = 0;
  CHECK_CU(cuMemCreate(&h, kVmmBytes, &p, 0), CUDA_ERROR_NOT_PERMITTED);  // this process has no channel

  auto exporter = mp::spawn("vmm_fabric_exporter", {"CUDA_SHIM_IMEX_CHANNEL=5"});
  REQUIRE(exporter.ch.recv_int() == CUDA_SUCCESS);
  REQUIRE(exporter.ch.recv_int() == CUDA_SUCCESS);
  auto fh = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto import = [&](std::vector<std::string> env) {
    auto c = mp::spawn("vmm_fabric_importer", env);
    c.ch.send_pod(fh);
    std::vector<int64_t> out{c.ch.recv_int()};
    if (out[0] == CUDA_SUCCESS) out.push_back(c.ch.recv_int());
    CHECK(c.wait() == 0);
    return out;
  };
  auto same = import({"CUDA_SHIM_IMEX_CHANNEL=5"});
  REQUIRE(same.size() == 2);
  CHECK(same[1] == 1);  // the exporter's bytes
  CHECK(import({"CUDA_SHIM_IMEX_CHANNEL=6"})[0] == CUDA_ERROR_NOT_PERMITTED);
  CHECK(import({"CUDA_SHIM_IMEX_CHANNEL=5", "CUDA_SHIM_IMEX_DAEMON=not_ready"})[0] == CUDA_ERROR_SYSTEM_NOT_READY);
  exporter.ch.send_int(0);
  CHECK(exporter.wait() == 0);
}
#endif

#if !CUDA_SHIM_REAL_BACKEND
// ---- unforgeable fabric handles ------------------------------------------------------------
// The emulator's fabric handle: magic and version (bytes 0-7), the registry record's 128-bit
// random token (8-23) and the object's (24-39). A handle nobody exported, a changed bit, random
// bytes, or the handle of memory its exporter released or of an exporter that exited: all
// CUDA_ERROR_NOT_SUPPORTED, README's "a handle nobody exported".

// Exporter: a fabric pool (one allocation) and a fabric cuMemCreate allocation; sends both
// handles. Then on command 1 releases both and says so, on command 2 exits.
MP_CHILD(fabric_release_exporter) {
  child_primary_ctx();
  CUmemoryPool pool = fabric_pool();
  CUdeviceptr d = 0;
  if (!pool || cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr) != CUDA_SUCCESS) return 1;
  CUmemFabricHandle ph, vh;
  std::memset(&ph, 0, sizeof ph);
  std::memset(&vh, 0, sizeof vh);
  CUresult r = cuMemPoolExportToShareableHandle(&ph, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0);
  CUmemAllocationProp p = vmm_prop(CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemGenericAllocationHandle h = 0;
  if (r == CUDA_SUCCESS) r = cuMemCreate(&h, kVmmBytes, &p, 0);
  if (r == CUDA_SUCCESS) r = cuMemExportToShareableHandle(&vh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0);
  ch.send_int(r);
  ch.send_pod(ph);
  ch.send_pod(vh);
  for (;;) {
    int64_t cmd = ch.recv_int();
    if (cmd == 1) {
      bool ok = cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS &&
                cuMemPoolDestroy(pool) == CUDA_SUCCESS && cuMemRelease(h) == CUDA_SUCCESS;
      ch.send_int(ok ? 0 : 1);
    } else {
      return 0;
    }
  }
}

// Importer: imports each handle sent (pool handles, then VMM handles) and reports each code.
MP_CHILD(fabric_import_each) {
  child_primary_ctx();
  const int64_t pools = ch.recv_int(), vmms = ch.recv_int();
  std::vector<CUmemFabricHandle> hs;
  for (int64_t i = 0; i < pools + vmms; ++i) hs.push_back(ch.recv_pod<CUmemFabricHandle>());
  for (int64_t i = 0; i < pools + vmms; ++i) {
    if (i < pools) {
      CUmemoryPool pool = nullptr;
      CUresult r = cuMemPoolImportFromShareableHandle(&pool, &hs[i], CU_MEM_HANDLE_TYPE_FABRIC, 0);
      ch.send_int(r);
      if (r == CUDA_SUCCESS) cuMemPoolDestroy(pool);
    } else {
      CUmemGenericAllocationHandle h = 0;
      CUresult r = cuMemImportFromShareableHandle(&h, &hs[i], CU_MEM_HANDLE_TYPE_FABRIC);
      ch.send_int(r);
      if (r == CUDA_SUCCESS) cuMemRelease(h);
    }
  }
  return 0;
}

namespace {
std::vector<int64_t> import_each(const std::vector<CUmemFabricHandle>& pools, const std::vector<CUmemFabricHandle>& vmms,
                                 const std::string& channel) {
  auto c = mp::spawn("fabric_import_each", {"CUDA_SHIM_IMEX_CHANNEL=" + channel});
  c.ch.send_int(static_cast<int64_t>(pools.size()));
  c.ch.send_int(static_cast<int64_t>(vmms.size()));
  for (auto& h : pools) c.ch.send_pod(h);
  for (auto& h : vmms) c.ch.send_pod(h);
  std::vector<int64_t> codes;
  for (size_t i = 0; i < pools.size() + vmms.size(); ++i) codes.push_back(c.ch.recv_int());
  CHECK(c.wait() == 0);
  return codes;
}
CUmemFabricHandle random_fabric_handle() {
  CUmemFabricHandle h;
  std::random_device rd;
  for (auto& b : h.data) b = static_cast<unsigned char>(rd());
  return h;
}
std::vector<CUmemFabricHandle> flips(const CUmemFabricHandle& h) {
  std::vector<CUmemFabricHandle> out;
  for (int bit = 0; bit < 40 * 8; ++bit) {
    CUmemFabricHandle f = h;
    f.data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    out.push_back(f);
  }
  return out;
}
}  // namespace

TEST_CASE("(emulator) forged fabric handles: flipped bits and random bytes import nothing", "[ipc][fabric][forgery]") {
  auto exporter = mp::spawn("fabric_release_exporter", {"CUDA_SHIM_IMEX_CHANNEL=7"});
  REQUIRE(exporter.ch.recv_int() == CUDA_SUCCESS);
  auto ph = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto vh = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto pools = flips(ph), vmms = flips(vh);
  for (int i = 0; i < 32; ++i) {
    pools.push_back(random_fabric_handle());
    vmms.push_back(random_fabric_handle());
  }
  pools.push_back(ph);  // the controls: the genuine handles import in the same process
  vmms.push_back(vh);
  auto codes = import_each(pools, vmms, "7");
  REQUIRE(codes.size() == pools.size() + vmms.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    const bool genuine = i == pools.size() - 1 || i == codes.size() - 1;
    INFO((i < pools.size() ? "pool" : "vmm") << " handle " << i << (genuine ? " (genuine)" : " (forged)"));
    CHECK(codes[i] == (genuine ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED));
  }
  exporter.ch.send_int(2);
  CHECK(exporter.wait() == 0);
}

TEST_CASE("(emulator) fabric handles replayed after a release or the exporter's exit import nothing",
          "[ipc][fabric][forgery]") {
  auto exporter = mp::spawn("fabric_release_exporter", {"CUDA_SHIM_IMEX_CHANNEL=8"});
  REQUIRE(exporter.ch.recv_int() == CUDA_SUCCESS);
  auto ph = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto vh = exporter.ch.recv_pod<CUmemFabricHandle>();
  auto live = import_each({ph}, {vh}, "8");
  CHECK(live == std::vector<int64_t>{CUDA_SUCCESS, CUDA_SUCCESS});
  exporter.ch.send_int(1);  // the exporter destroys the pool and releases the allocation
  REQUIRE(exporter.ch.recv_int() == 0);
  auto released = import_each({ph}, {vh}, "8");
  CHECK(released == std::vector<int64_t>{CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED});
  exporter.ch.send_int(2);
  CHECK(exporter.wait() == 0);

  // An exporter that exits (or is killed) with its exports live.
  for (bool kill : {false, true}) {
    CAPTURE(kill);
    auto e = mp::spawn("fabric_release_exporter", {"CUDA_SHIM_IMEX_CHANNEL=8"});
    REQUIRE(e.ch.recv_int() == CUDA_SUCCESS);
    auto p2 = e.ch.recv_pod<CUmemFabricHandle>();
    auto v2 = e.ch.recv_pod<CUmemFabricHandle>();
    if (kill) {
      e.kill(SIGKILL);
      CHECK(e.wait() == 128 + SIGKILL);
    } else {
      e.ch.send_int(2);
      CHECK(e.wait() == 0);
    }
    auto gone = import_each({p2}, {v2}, "8");
    CHECK(gone == std::vector<int64_t>{CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED});
  }
}
#endif
