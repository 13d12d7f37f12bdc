// What importing a handle gives once its exporter was killed with SIGKILL or exited normally, one
// handle at a time: legacy memory, an IPC event and a pool allocation with its pool's descriptor.
// Measured on an H100 with driver 580 (ipc_kill_stress.hpp's kDead* codes, which
// test_ipc_kill_stress.cpp expects under load).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "common.hpp"
#include "ipc_kill_stress.hpp"
#include "multiprocess.hpp"

using namespace kill9;


// Exports legacy memory (0x5e), an IPC event (recorded, complete) and a pool allocation (0x6f),
// sends them, then waits to be killed (1) or exits normally (0).
MP_CHILD(kill9_exporter) {
  child_primary_ctx();
  const size_t n = 1 << 16;
  CUdeviceptr legacy = 0, pooled = 0;
  CUevent ev = nullptr;
  CUmemoryPool pool = nullptr;
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  int fd = -1;
  CUipcMemHandle h;
  CUipcEventHandle eh;
  CUmemPoolPtrExportData x;
  std::memset(&x, 0, sizeof x);
  bool ok = cuMemAlloc(&legacy, n) == CUDA_SUCCESS && cuMemsetD8(legacy, 0x5e, n) == CUDA_SUCCESS &&
            cuIpcGetMemHandle(&h, legacy) == CUDA_SUCCESS &&
            cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
            cuEventRecord(ev, nullptr) == CUDA_SUCCESS && cuIpcGetEventHandle(&eh, ev) == CUDA_SUCCESS &&
            cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS &&
            cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS &&
            cuMemAllocFromPoolAsync(&pooled, n, pool, nullptr) == CUDA_SUCCESS &&
            cuMemsetD8(pooled, 0x6f, n) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS &&
            cuMemPoolExportPointer(&x, pooled) == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 1);
  if (!ok) return 1;
  ch.send_pod(h);
  ch.send_pod(eh);
  ch.send_pod(x);
  ch.send_fd(fd);
  if (ch.recv_int() == 1) pause();  // killed here
  return 0;
}

TEST_CASE("handles of an exporter that was killed or exited: the codes", "[ipc][kill]") {
  conformance_primary_ctx();
  const bool killed = GENERATE(true, false);
  CAPTURE(killed);
  auto c = mp::spawn("kill9_exporter");
  REQUIRE(c.ch.recv_int() == 0);
  auto h = c.ch.recv_pod<CUipcMemHandle>();
  auto eh = c.ch.recv_pod<CUipcEventHandle>();
  auto x = c.ch.recv_pod<CUmemPoolPtrExportData>();
  int fd = c.ch.recv_fd();
  REQUIRE(fd >= 0);
  c.ch.send_int(killed ? 1 : 0);
  if (killed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.kill(SIGKILL);
    REQUIRE(c.wait() == 128 + SIGKILL);
  } else {
    REQUIRE(c.wait() == 0);
  }

  CUdeviceptr d = 0;
  CUresult lr = cuIpcOpenMemHandle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  CHECK_CU(lr, kDeadLegacy);
  if (lr == CUDA_SUCCESS) cuIpcCloseMemHandle(d);
  CUevent ev = nullptr;
  CUresult er = cuIpcOpenEventHandle(&ev, eh);
  CHECK_CU(er, kDeadEvent);
  if (er == CUDA_SUCCESS) {
    CHECK_CU(cuEventQuery(ev), CUDA_SUCCESS);  // it was recorded and complete
    CHECK_CU(cuEventSynchronize(ev), CUDA_SUCCESS);
    CHECK_CU(cuEventDestroy(ev), CUDA_SUCCESS);
  }
  // The descriptor holds the pool's memory: it imports, and so does the pointer (whose bytes
  // are not the exporter's to promise any more).
  CUmemoryPool pool = nullptr;
  REQUIRE_CU(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_SUCCESS);
  CUdeviceptr p = 0;
  CUresult pr = cuMemPoolImportPointer(&p, pool, &x);
  CHECK_CU(pr, CUDA_SUCCESS);
  if (pr == CUDA_SUCCESS) {
    std::vector<unsigned char> buf(1 << 16);
    CHECK_CU(cuMemcpyDtoH(buf.data(), p, buf.size()), CUDA_SUCCESS);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
  }
  CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  ::close(fd);
}
