// External semaphores: cuImportExternalSemaphore, cuSignal/WaitExternalSemaphoresAsync,
// cuDestroyExternalSemaphore. The argument checks run on both backends (codes measured on
// NVIDIA's driver 580.159.04, H200). Importable semaphore fds come from another API: on a GPU
// machine from Vulkan (test_external_vulkan.cpp), under cuda-shim from its exportable
// semaphores (cuda_shim_ext.h), which the stream-order tests here use.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common.hpp"
#include "multiprocess.hpp"
#if !CUDA_SHIM_REAL_BACKEND
#include <cuda_shim_ext.h>
#endif

namespace {

CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sem_desc(CUexternalSemaphoreHandleType t, int fd) {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = t;
  d.handle.fd = fd;
  return d;
}

CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS signal_params(unsigned long long v) {
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.params.fence.value = v;
  return p;
}
CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wait_params(unsigned long long v) {
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.params.fence.value = v;
  return p;
}

// Stays NOT_READY for a while: the stream is blocked on a wait.
bool stays_busy(CUstream s, int ms = 100) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (cuStreamQuery(s) != CUDA_ERROR_NOT_READY) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

// ---- imports that fail, on every driver ------------------------------------------------------
TEST_CASE("cuImportExternalSemaphore: NULL arguments", "[external][semaphore]") {
  conformance_primary_ctx();
  CUexternalSemaphore s = nullptr;
  auto d = sem_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, -1);
  CHECK_CU(cuImportExternalSemaphore(nullptr, &d), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuImportExternalSemaphore(&s, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuImportExternalSemaphore: fd -1", "[external][semaphore]") {
  conformance_primary_ctx();
  CUexternalSemaphore s = nullptr;
  // Measured: the two fd types disagree.
  auto d = sem_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, -1);
  CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_UNKNOWN);
  d = sem_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD, -1);
  CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuImportExternalSemaphore: an fd that no exporter made stays the caller's", "[external][semaphore]") {
  conformance_primary_ctx();
  CUexternalSemaphore s = nullptr;
  int memfd = mp::plain_memfd(4096);
  int efd = eventfd(0, EFD_CLOEXEC);
  for (int fd : {memfd, efd}) {
    for (auto t : {CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD}) {
      auto d = sem_desc(t, fd);
      CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_UNKNOWN);  // measured
      CHECK(mp::fd_is_open(fd));  // measured: unlike a memory import, the fd stays the caller's
    }
  }
  close(memfd);
  close(efd);
}

TEST_CASE("cuImportExternalSemaphore: an exported cuMemCreate allocation imports as a semaphore",
          "[external][semaphore]") {
  conformance_primary_ctx();
  CUmemGenericAllocationHandle h = 0;
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  REQUIRE_CU(cuMemCreate(&h, 2 << 20, &p, 0), CUDA_SUCCESS);
  for (auto t : {CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD}) {
    int fd = -1;
    REQUIRE_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
    CUexternalSemaphore s = nullptr;
    auto d = sem_desc(t, fd);
    CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_SUCCESS);  // measured: the driver takes any object it made
    CHECK_FALSE(mp::fd_is_open(fd));
    CHECK_CU(cuDestroyExternalSemaphore(s), CUDA_SUCCESS);
  }
  cuMemRelease(h);
}

TEST_CASE("cuImportExternalSemaphore: Windows, D3D, keyed-mutex and NvSciSync types on Linux", "[external][semaphore]") {
  conformance_primary_ctx();
  CUexternalSemaphore s = nullptr;
  for (int t : {2, 3, 4, 5, 6, 7, 8, 10}) {
    INFO("type " << t);
    auto d = sem_desc(static_cast<CUexternalSemaphoreHandleType>(t), -1);
    CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_NOT_SUPPORTED);  // measured
    std::memset(&d.handle, 0, sizeof d.handle);
    CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuImportExternalSemaphore: type 0 and unknown types", "[external][semaphore]") {
  conformance_primary_ctx();
  CUexternalSemaphore s = nullptr;
  for (int t : {0, 100, -1}) {
    INFO("type " << t);
    auto d = sem_desc(static_cast<CUexternalSemaphoreHandleType>(t), -1);
    CHECK_CU(cuImportExternalSemaphore(&s, &d), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuSignal/WaitExternalSemaphoresAsync: zero semaphores", "[external][semaphore]") {
  conformance_primary_ctx();
  // Measured: refused, also with valid arrays.
  CHECK_CU(cuSignalExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuWaitExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuSignal/WaitExternalSemaphoresAsync: NULL arrays", "[external][semaphore]") {
  conformance_primary_ctx();
  auto sp = signal_params(1);
  auto wp = wait_params(1);
  CHECK_CU(cuSignalExternalSemaphoresAsync(nullptr, &sp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuWaitExternalSemaphoresAsync(nullptr, &wp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUexternalSemaphore none = nullptr;
  CHECK_CU(cuWaitExternalSemaphoresAsync(&none, &wp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);  // measured
}

TEST_CASE("cuDestroyExternalSemaphore: NULL", "[external][semaphore]") {
  conformance_primary_ctx();
  CHECK_CU(cuDestroyExternalSemaphore(nullptr), CUDA_ERROR_INVALID_VALUE);  // measured
}

TEST_CASE("cudaImportExternalSemaphore: the runtime's codes for an fd no exporter made", "[external][semaphore][runtime]") {
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  cudaExternalSemaphore_t s = nullptr;
  cudaExternalSemaphoreHandleDesc d;
  std::memset(&d, 0, sizeof d);
  d.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
  d.handle.fd = -1;
  CHECK_RT(cudaImportExternalSemaphore(&s, &d), cudaErrorUnknown);  // measured
  CHECK_RT(cudaImportExternalSemaphore(&s, nullptr), cudaErrorInvalidValue);
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);
}

#if !CUDA_SHIM_REAL_BACKEND
// ---- stream order, with cuda-shim's exportable semaphores standing in for Vulkan's -------------
namespace {

struct Imported {
  int fd = -1;  // the exporter's own descriptor (the import took a duplicate)
  CUexternalSemaphore sem = nullptr;
  Imported(bool timeline, unsigned long long initial = 0) {
    REQUIRE(cuShimExportableSemaphoreCreate(&fd, timeline, initial) == CUDA_SUCCESS);
    int give = dup(fd);
    auto d = sem_desc(timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
                               : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, give);
    REQUIRE_CU(cuImportExternalSemaphore(&sem, &d), CUDA_SUCCESS);
  }
  ~Imported() {
    if (sem) cuDestroyExternalSemaphore(sem);
    close(fd);
  }
};

struct Stream {
  CUstream s = nullptr;
  Stream() { REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS); }
  ~Stream() { cuStreamDestroy(s); }
  operator CUstream() const { return s; }
};

}  // namespace

TEST_CASE("a timeline wait holds the stream until the other side signals the value", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported t(true, 0);
  Stream s;
  auto wp = wait_params(7);
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&t.sem, &wp, 1, s), CUDA_SUCCESS);
  // Work queued after the wait runs after it: a copy into host memory.
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAlloc(&d, 64), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8Async(d, 0x5a, 64, s), CUDA_SUCCESS);
  CHECK(stays_busy(s));
  REQUIRE(cuShimExportableSemaphoreSignal(t.fd, 6) == CUDA_SUCCESS);  // not enough
  CHECK(stays_busy(s, 50));
  REQUIRE(cuShimExportableSemaphoreSignal(t.fd, 7) == CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned char b = 0;
  CHECK_CU(cuMemcpyDtoH(&b, d, 1), CUDA_SUCCESS);
  CHECK(b == 0x5a);
  cuMemFree(d);
}

TEST_CASE("a timeline signal sets the counter in stream order", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported t(true, 3);
  Imported gate(true, 0);
  Stream s;
  auto wp = wait_params(1);
  auto sp = signal_params(9);
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&gate.sem, &wp, 1, s), CUDA_SUCCESS);
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, s), CUDA_SUCCESS);
  unsigned long long v = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  REQUIRE(cuShimExportableSemaphoreGetValue(t.fd, &v) == CUDA_SUCCESS);
  CHECK(v == 3);  // the signal waits behind the gate
  CHECK(cuShimExportableSemaphoreWait(t.fd, 9, 20) == CUDA_ERROR_NOT_READY);
  REQUIRE(cuShimExportableSemaphoreSignal(gate.fd, 1) == CUDA_SUCCESS);
  CHECK(cuShimExportableSemaphoreWait(t.fd, 9, 5000) == CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE(cuShimExportableSemaphoreGetValue(t.fd, &v) == CUDA_SUCCESS);
  CHECK(v == 9);
  // Measured with Vulkan: a lower value sets the counter back.
  sp = signal_params(4);
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE(cuShimExportableSemaphoreGetValue(t.fd, &v) == CUDA_SUCCESS);
  CHECK(v == 4);
}

TEST_CASE("a binary semaphore's wait consumes one signal", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported b(false);
  Stream s;
  auto sp = signal_params(0);
  auto wp = wait_params(0);
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(&b.sem, &sp, 1, s), CUDA_SUCCESS);
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&b.sem, &wp, 1, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);  // measured: signal then wait on one stream completes
  unsigned long long v = 9;
  REQUIRE(cuShimExportableSemaphoreGetValue(b.fd, &v) == CUDA_SUCCESS);
  CHECK(v == 0);  // unsignaled again
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&b.sem, &wp, 1, s), CUDA_SUCCESS);
  CHECK(stays_busy(s));  // the second wait needs a second signal
  REQUIRE(cuShimExportableSemaphoreSignal(b.fd, 0) == CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
}

TEST_CASE("several semaphores in one call: all are signaled, all are waited for", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported a(true), b(true), c(false);
  Stream s;
  CUexternalSemaphore sems[3] = {a.sem, b.sem, c.sem};
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp[3] = {wait_params(1), wait_params(2), wait_params(0)};
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(sems, wp, 3, s), CUDA_SUCCESS);
  REQUIRE(cuShimExportableSemaphoreSignal(a.fd, 1) == CUDA_SUCCESS);
  REQUIRE(cuShimExportableSemaphoreSignal(c.fd, 0) == CUDA_SUCCESS);
  CHECK(stays_busy(s, 50));  // b is still at 0
  REQUIRE(cuShimExportableSemaphoreSignal(b.fd, 2) == CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp[3] = {signal_params(10), signal_params(20), signal_params(0)};
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(sems, sp, 3, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned long long va = 0, vb = 0, vc = 0;
  cuShimExportableSemaphoreGetValue(a.fd, &va);
  cuShimExportableSemaphoreGetValue(b.fd, &vb);
  cuShimExportableSemaphoreGetValue(c.fd, &vc);
  CHECK(va == 10);
  CHECK(vb == 20);
  CHECK(vc == 1);
}

TEST_CASE("a timeline semaphore imported as OPAQUE_FD behaves as a binary one", "[external][semaphore]") {
  conformance_primary_ctx();
  int fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&fd, 1, 0) == CUDA_SUCCESS);
  CUexternalSemaphore s = nullptr;
  auto d = sem_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, dup(fd));
  REQUIRE_CU(cuImportExternalSemaphore(&s, &d), CUDA_SUCCESS);  // measured with Vulkan: accepted
  auto sp = signal_params(42);
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(&s, &sp, 1, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  unsigned long long v = 0;
  cuShimExportableSemaphoreGetValue(fd, &v);
  CHECK(v == 1);  // a binary signal: the fence value is ignored
  CHECK_CU(cuDestroyExternalSemaphore(s), CUDA_SUCCESS);
  close(fd);
}

TEST_CASE("cuImportExternalSemaphore: the fd of a successful import is the driver's", "[external][semaphore]") {
  conformance_primary_ctx();
  int fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&fd, 1, 0) == CUDA_SUCCESS);
  CUexternalSemaphore s = nullptr;
  auto d = sem_desc(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD, fd);
  REQUIRE_CU(cuImportExternalSemaphore(&s, &d), CUDA_SUCCESS);
  CHECK_FALSE(mp::fd_is_open(fd));
  CHECK_CU(cuDestroyExternalSemaphore(s), CUDA_SUCCESS);
}

TEST_CASE("cuDestroyExternalSemaphore: destroyed twice", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported t(true);
  CHECK_CU(cuDestroyExternalSemaphore(t.sem), CUDA_SUCCESS);
  CHECK_CU(cuDestroyExternalSemaphore(t.sem), CUDA_ERROR_INVALID_HANDLE);
  auto sp = signal_params(1);
  CHECK_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, nullptr), CUDA_ERROR_INVALID_HANDLE);
  t.sem = nullptr;
}

TEST_CASE("a wait queued before the semaphore is destroyed still completes", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported t(true);
  Stream s;
  auto wp = wait_params(2);
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&t.sem, &wp, 1, s), CUDA_SUCCESS);
  REQUIRE_CU(cuDestroyExternalSemaphore(t.sem), CUDA_SUCCESS);
  t.sem = nullptr;
  CHECK(stays_busy(s, 50));
  REQUIRE(cuShimExportableSemaphoreSignal(t.fd, 2) == CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
}

TEST_CASE("cuSignal/WaitExternalSemaphoresAsync: flags and reserved words", "[external][semaphore]") {
  conformance_primary_ctx();
  Imported t(true);
  auto sp = signal_params(1);
  // Measured: every flag, the NvSciBuf one included, for a semaphore that is not NvSciSync.
  for (unsigned f : {1u, 0x80000000u}) {
    sp.flags = f;
    CHECK_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  }
  sp = signal_params(1);
  sp.reserved[0] = 1;
  CHECK_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  sp = signal_params(1);
  sp.params.reserved[0] = 1;
  CHECK_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  auto wp = wait_params(0);
  for (unsigned f : {1u, 2u}) {
    wp.flags = f;
    CHECK_CU(cuWaitExternalSemaphoresAsync(&t.sem, &wp, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  }
  // Measured: the keyed-mutex fields are ignored.
  wp = wait_params(0);
  wp.params.keyedMutex.key = 5;
  wp.params.keyedMutex.timeoutMs = 10;
  CHECK_CU(cuWaitExternalSemaphoresAsync(&t.sem, &wp, 1, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

// The other side is another process: it holds the exported semaphore and signals it.
MP_CHILD(semaphore_peer) {
  int fd = ch.recv_fd();
  unsigned long long v = 0;
  if (cuShimExportableSemaphoreGetValue(fd, &v) != CUDA_SUCCESS || v != 0) return 10;
  ch.send_int(1);  // ready
  if (ch.recv_int() != 2) return 11;
  if (cuShimExportableSemaphoreSignal(fd, 5) != CUDA_SUCCESS) return 12;
  // Then waits for the parent's stream to signal 6.
  ch.send_int(cuShimExportableSemaphoreWait(fd, 6, 10000));
  close(fd);
  return 0;
}

TEST_CASE("a semaphore shared with another process orders both sides", "[external][semaphore][ipc]") {
  conformance_primary_ctx();
  Imported t(true);
  auto c = mp::spawn("semaphore_peer");
  REQUIRE(c.ch.send_fd(t.fd));
  REQUIRE(c.ch.recv_int() == 1);
  Stream s;
  auto wp = wait_params(5);
  auto sp = signal_params(6);
  REQUIRE_CU(cuWaitExternalSemaphoresAsync(&t.sem, &wp, 1, s), CUDA_SUCCESS);
  REQUIRE_CU(cuSignalExternalSemaphoresAsync(&t.sem, &sp, 1, s), CUDA_SUCCESS);
  CHECK(stays_busy(s, 50));
  c.ch.send_int(2);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  CHECK(c.wait() == 0);
}

TEST_CASE("cudaSignal/WaitExternalSemaphoresAsync order the runtime's streams", "[external][semaphore][runtime]") {
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  int fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&fd, 1, 0) == CUDA_SUCCESS);
  cudaExternalSemaphoreHandleDesc d;
  std::memset(&d, 0, sizeof d);
  d.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
  d.handle.fd = dup(fd);
  cudaExternalSemaphore_t sem = nullptr;
  REQUIRE_RT(cudaImportExternalSemaphore(&sem, &d), cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaExternalSemaphoreWaitParams wp;
  std::memset(&wp, 0, sizeof wp);
  wp.params.fence.value = 4;
  cudaExternalSemaphoreSignalParams sp;
  std::memset(&sp, 0, sizeof sp);
  sp.params.fence.value = 8;
  REQUIRE_RT(cudaWaitExternalSemaphoresAsync(&sem, &wp, 1, s), cudaSuccess);
  REQUIRE_RT(cudaSignalExternalSemaphoresAsync(&sem, &sp, 1, s), cudaSuccess);
  CHECK_RT(cudaStreamQuery(s), cudaErrorNotReady);
  REQUIRE(cuShimExportableSemaphoreSignal(fd, 4) == CUDA_SUCCESS);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  unsigned long long v = 0;
  cuShimExportableSemaphoreGetValue(fd, &v);
  CHECK(v == 8);
  CHECK_RT(cudaDestroyExternalSemaphore(sem), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  close(fd);
}
#endif
