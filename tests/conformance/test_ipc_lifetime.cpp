// Lifetime across processes: an importer killed with SIGKILL mid-use does not disturb the
// exporter or a third process; processes killed while exporting leave nothing that blocks the
// others; (emulator) the last process out removes the registry and `gc` removes what a
// crashed run left.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"
#if !CUDA_SHIM_REAL_BACKEND
#include <cuda_shim_ext.h>
#endif

namespace {

struct Shared {
  CUmemoryPool pool = nullptr;
  CUdeviceptr pooled = 0, legacy = 0;
  int fd = -1;
  CUmemPoolPtrExportData x{};
  CUipcMemHandle h{};
};

constexpr size_t kBytes = 1 << 16;

// Imports the pool pointer and the legacy handle sent by the parent.
bool import_both(mp::Channel& ch, CUdeviceptr& pooled, CUdeviceptr& legacy) {
  int fd = ch.recv_fd();
  auto x = ch.recv_pod<CUmemPoolPtrExportData>();
  auto h = ch.recv_pod<CUipcMemHandle>();
  CUmemoryPool pool = nullptr;
  if (cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
    return false;
  close(fd);
  return cuMemPoolImportPointer(&pooled, pool, &x) == CUDA_SUCCESS &&
         cuIpcOpenMemHandle(&legacy, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS;
}

void send_both(mp::Channel& ch, const Shared& s) {
  ch.send_fd(s.fd);
  ch.send_pod(s.x);
  ch.send_pod(s.h);
}

}  // namespace

// Imports, writes 0x22 to both, says so, then keeps using the memory until killed.
MP_CHILD(importer_to_kill) {
  child_primary_ctx();
  CUdeviceptr a = 0, b = 0;
  if (!import_both(ch, a, b)) {
    ch.send_int(1);
    return 1;
  }
  cuMemsetD8(a, 0x22, kBytes);
  cuMemsetD8(b, 0x22, kBytes);
  cuCtxSynchronize();
  ch.send_int(0);
  std::vector<unsigned char> buf(kBytes);
  for (;;) cuMemcpyDtoH(buf.data(), a, kBytes);  // mid-use when the SIGKILL lands
}

// A third process: sees 0x22 in both, writes 0x33, closes.
MP_CHILD(third_process) {
  child_primary_ctx();
  CUdeviceptr a = 0, b = 0;
  if (!import_both(ch, a, b)) {
    ch.send_int(1);
    return 1;
  }
  std::vector<unsigned char> buf(kBytes);
  bool ok = cuMemcpyDtoH(buf.data(), a, kBytes) == CUDA_SUCCESS && all_bytes(buf, 0x22);
  ok = ok && cuMemcpyDtoH(buf.data(), b, kBytes) == CUDA_SUCCESS && all_bytes(buf, 0x22);
  ok = ok && cuMemsetD8(a, 0x33, kBytes) == CUDA_SUCCESS && cuMemsetD8(b, 0x33, kBytes) == CUDA_SUCCESS;
  ok = ok && cuCtxSynchronize() == CUDA_SUCCESS;
  ok = ok && cuMemFree(a) == CUDA_SUCCESS && cuIpcCloseMemHandle(b) == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 2);
  return 0;
}

TEST_CASE("an importer killed with SIGKILL mid-use: the exporter and a third process carry on", "[ipc][kill]") {
  conformance_primary_ctx();
  Shared s;
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  REQUIRE_CU(cuMemPoolCreate(&s.pool, &p), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&s.pooled, kBytes, s.pool, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAlloc(&s.legacy, kBytes), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(s.pooled, 0x11, kBytes), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(s.legacy, 0x11, kBytes), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolExportToShareableHandle(&s.fd, s.pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolExportPointer(&s.x, s.pooled), CUDA_SUCCESS);
  REQUIRE_CU(cuIpcGetMemHandle(&s.h, s.legacy), CUDA_SUCCESS);

  auto victim = mp::spawn("importer_to_kill");
  send_both(victim.ch, s);
  REQUIRE(victim.ch.recv_int() == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  victim.kill(SIGKILL);
  CHECK(victim.wait() == 128 + SIGKILL);

  // The exporter sees what the killed importer wrote and keeps working.
  std::vector<unsigned char> buf(kBytes);
  REQUIRE_CU(cuMemcpyDtoH(buf.data(), s.pooled, kBytes), CUDA_SUCCESS);
  CHECK(all_bytes(buf, 0x22));
  CUdeviceptr more = 0;
  CHECK_CU(cuMemAllocFromPoolAsync(&more, 4096, s.pool, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(more, nullptr), CUDA_SUCCESS);

  auto third = mp::spawn("third_process");
  send_both(third.ch, s);
  CHECK(third.ch.recv_int() == 0);
  CHECK(third.wait() == 0);
  REQUIRE_CU(cuMemcpyDtoH(buf.data(), s.legacy, kBytes), CUDA_SUCCESS);
  CHECK(all_bytes(buf, 0x33));

#if !CUDA_SHIM_REAL_BACKEND
  // Nothing of the dead importer remains in the registry; our exports are still there.
  std::string state(cuShimIpcState(nullptr, 0) + 1, '\0');
  state.resize(cuShimIpcState(state.data(), state.size()));
  CHECK(state.find("process " + std::to_string(victim.pid)) == std::string::npos);
  CHECK(state.find("ipc-mem") != std::string::npos);
#endif
  CHECK_CU(cuMemFree(s.legacy), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(s.pooled, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  close(s.fd);
  CHECK_CU(cuMemPoolDestroy(s.pool), CUDA_SUCCESS);
}

// Exports and frees in a loop until killed: the registry's lock is often held when it dies.
MP_CHILD(export_churn) {
  child_primary_ctx();
  ch.send_int(0);
  for (;;) {
    CUdeviceptr d = 0;
    CUipcMemHandle h;
    if (cuMemAlloc(&d, 4096) == CUDA_SUCCESS) {
      cuIpcGetMemHandle(&h, d);
      cuMemFree(d);
    }
  }
}

TEST_CASE("processes killed while exporting never block the others", "[ipc][kill]") {
  conformance_primary_ctx();
  std::mt19937 rng(12345);
  for (int round = 0; round < 12; ++round) {
    auto c = mp::spawn("export_churn");
    REQUIRE(c.ch.recv_int() == 0);
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 3000));
    c.kill(SIGKILL);
    REQUIRE(c.wait() == 128 + SIGKILL);
    // The survivor exports and frees at once (a lock left by the dead process is recovered).
    CUdeviceptr d = 0;
    CUipcMemHandle h;
    REQUIRE_CU(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    auto t0 = std::chrono::steady_clock::now();
    CHECK_CU(cuIpcGetMemHandle(&h, d), CUDA_SUCCESS);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
  }
}

#if !CUDA_SHIM_REAL_BACKEND
// Exports something in registry `CUDA_SHIM_REGISTRY`, then exits or waits to be killed.
MP_CHILD(export_and_exit) {
  child_primary_ctx();
  CUdeviceptr d = 0;
  CUipcMemHandle h;
  bool ok = cuMemAlloc(&d, 4096) == CUDA_SUCCESS && cuIpcGetMemHandle(&h, d) == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 1);
  if (ch.recv_int() == 1) pause();  // to be killed
  return 0;
}

TEST_CASE("(emulator) the last process out removes the registry; gc removes a crashed run's", "[ipc][kill]") {
  auto exists = [](const std::string& n) {
    struct stat st;
    return stat(("/dev/shm/" + n).c_str(), &st) == 0;
  };
  std::string clean = "cuda-shim-test-clean-" + std::to_string(getpid());
  std::string crashed = "cuda-shim-test-crashed-" + std::to_string(getpid());
  {
    auto c = mp::spawn("export_and_exit", {"CUDA_SHIM_REGISTRY=" + clean});
    REQUIRE(c.ch.recv_int() == 0);
    CHECK(exists(clean));
    c.ch.send_int(0);
    CHECK(c.wait() == 0);
    CHECK_FALSE(exists(clean));  // removed by its last process
  }
  {
    auto c = mp::spawn("export_and_exit", {"CUDA_SHIM_REGISTRY=" + crashed});
    REQUIRE(c.ch.recv_int() == 0);
    c.ch.send_int(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.kill(SIGKILL);
    CHECK(c.wait() == 128 + SIGKILL);
    CHECK(exists(crashed));  // a crashed run leaves its segment
    std::string out(1 << 16, '\0');  // one call: a second would find nothing left to remove
    out.resize(std::min(out.size() - 1, cuShimCollectGarbage(out.data(), out.size())));
    CHECK(out.find(crashed) != std::string::npos);
    CHECK_FALSE(exists(crashed));
  }
}
#endif
