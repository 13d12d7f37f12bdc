// Fabric handles (CU_MEM_HANDLE_TYPE_FABRIC) for pools, and the emulated IMEX channels that
// decide who may export and import them. A real machine without an IMEX channel refuses
// fabric exports with CUDA_ERROR_NOT_PERMITTED; the emulator grants a channel through
// CUDA_SHIM_IMEX_CHANNEL=<n>, and processes on one channel form one IMEX domain.
#include <unistd.h>

#include <cstring>
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
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr), CUDA_SUCCESS);
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
  cuMemFreeAsync(d, nullptr);
  cuCtxSynchronize();
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
