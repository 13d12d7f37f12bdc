// VMM allocations shared between processes: a POSIX fd exported with
// cuMemExportToShareableHandle travels over a socketpair (SCM_RIGHTS); the other process
// imports, maps and grants access, and both see each other's bytes. Negative imports, who owns
// the fd, and fabric handles without an IMEX channel. Expected codes measured on NVIDIA's driver
// 580.159.04 (H100).
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "multiprocess.hpp"
#include "real_answers.hpp"
#include "vmm_common.hpp"

namespace {

// Children report through the channel; Catch's assertions belong to the parent.
bool child_init() {
  CUcontext c = nullptr;
  return cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS &&
         cuCtxSetCurrent(c) == CUDA_SUCCESS;
}

CUresult import_fd(CUmemGenericAllocationHandle& h, int fd, CUmemAllocationHandleType t =
                                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
  return cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)), t);
}

// Reserves, maps and grants access to an imported allocation of `size` bytes.
CUresult map_whole(CUmemGenericAllocationHandle h, size_t size, CUmemLocationType who, CUdeviceptr& at) {
  CUresult r = cuMemAddressReserve(&at, size, 0, 0, 0);
  if (r != CUDA_SUCCESS) return r;
  if ((r = cuMemMap(at, size, 0, h, 0)) != CUDA_SUCCESS) return r;
  return grant(at, size, who, 0);
}

constexpr size_t kBytes = 4096;

}  // namespace

// Imports the parent's device allocation, checks its bytes, writes its own.
MP_CHILD(vmm_device_peer) {
  if (!child_init()) return 10;
  int fd = ch.recv_fd();
  CUmemGenericAllocationHandle h = 0;
  ch.send_int(import_fd(h, fd));
  ch.send_int(mp::fd_is_open(fd) ? 1 : 0);  // the caller keeps the descriptor
  CUdeviceptr at = 0;
  ch.send_int(map_whole(h, kGran, CU_MEM_LOCATION_TYPE_DEVICE, at));
  std::vector<unsigned char> got(kBytes, 0);
  CUresult r = cuMemcpyDtoH(got.data(), at, kBytes);
  ch.send_int(r == CUDA_SUCCESS && got == pattern(kBytes, 1) ? 1 : 0);
  auto mine = pattern(kBytes, 2);
  ch.send_int(cuMemcpyHtoD(at + kBytes, mine.data(), kBytes));
  if (ch.recv_int() != 42) return 11;  // the parent has read them
  cuMemUnmap(at, kGran);
  cuMemAddressFree(at, kGran);
  cuMemRelease(h);
  close(fd);
  return 0;
}

TEST_CASE("a device allocation's fd crosses processes; both sides see each other's bytes", "[vmm][ipc]") {
  conformance_primary_ctx();
  ScopedReserve r(kGran);
  ScopedHandle h(kGran, vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  REQUIRE_CU(cuMemMap(r, kGran, 0, h, 0), CUDA_SUCCESS);
  REQUIRE_CU(grant(r, kGran), CUDA_SUCCESS);
  auto mine = pattern(kBytes, 1);
  REQUIRE_CU(cuMemcpyHtoD(r, mine.data(), kBytes), CUDA_SUCCESS);
  int fd = -1;
  REQUIRE_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);

  auto c = mp::spawn("vmm_device_peer");
  REQUIRE(c.ch.send_fd(fd));
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);  // import
  CHECK(c.ch.recv_int() == 1);                                     // its fd still open
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);  // reserve, map, access
  CHECK(c.ch.recv_int() == 1);                                     // it saw our bytes
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);  // it wrote its own
  std::vector<unsigned char> got(kBytes, 0);
  CHECK_CU(cuMemcpyDtoH(got.data(), r + kBytes, kBytes), CUDA_SUCCESS);
  CHECK(got == pattern(kBytes, 2));
  c.ch.send_int(42);
  CHECK(c.wait() == 0);
  close(fd);
  REQUIRE_CU(cuMemUnmap(r, kGran), CUDA_SUCCESS);
}

// Host-located memory: the child reads and writes it with plain loads and stores.
MP_CHILD(vmm_host_peer) {
  if (!child_init()) return 10;
  int fd = ch.recv_fd();
  CUmemGenericAllocationHandle h = 0;
  ch.send_int(import_fd(h, fd));
  CUmemAllocationProp q;
  std::memset(&q, 0, sizeof q);
  cuMemGetAllocationPropertiesFromHandle(&q, h);
  ch.send_int(q.location.type);
  CUdeviceptr at = 0;
  ch.send_int(map_whole(h, kGran, CU_MEM_LOCATION_TYPE_HOST, at));
  auto* p = reinterpret_cast<unsigned char*>(at);
  auto want = pattern(kBytes, 4);
  ch.send_int(std::memcmp(p, want.data(), kBytes) == 0 ? 1 : 0);
  std::memset(p + kBytes, 0xc3, kBytes);
  ch.send_int(1);
  if (ch.recv_int() != 42) return 11;
  cuMemUnmap(at, kGran);
  cuMemAddressFree(at, kGran);
  cuMemRelease(h);
  return 0;
}

TEST_CASE("host-NUMA memory shared between processes is plain host memory on both sides", "[vmm][ipc]") {
  conformance_primary_ctx();
  ScopedReserve r(kGran);
  ScopedHandle h(kGran, vmm_prop(CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa_id(),
                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  REQUIRE_CU(cuMemMap(r, kGran, 0, h, 0), CUDA_SUCCESS);
  REQUIRE_CU(grant(r, kGran, CU_MEM_LOCATION_TYPE_HOST), CUDA_SUCCESS);
  auto* p = reinterpret_cast<unsigned char*>(r.base);
  auto mine = pattern(kBytes, 4);
  std::memcpy(p, mine.data(), kBytes);
  int fd = -1;
  REQUIRE_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  auto c = mp::spawn("vmm_host_peer");
  REQUIRE(c.ch.send_fd(fd));
  close(fd);  // the descriptor in flight is the child's own now
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == CU_MEM_LOCATION_TYPE_HOST_NUMA);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == 1);
  CHECK(c.ch.recv_int() == 1);
  CHECK(p[kBytes] == 0xc3);
  CHECK(p[2 * kBytes - 1] == 0xc3);
  c.ch.send_int(42);
  CHECK(c.wait() == 0);
  REQUIRE_CU(cuMemUnmap(r, kGran), CUDA_SUCCESS);
}

// Creates memory, writes it, hands the fd over and exits.
MP_CHILD(vmm_exporter) {
  if (!child_init()) return 10;
  CUmemAllocationProp p = vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemGenericAllocationHandle h = 0;
  if (cuMemCreate(&h, kGran, &p, 0) != CUDA_SUCCESS) return 12;
  CUdeviceptr at = 0;
  if (map_whole(h, kGran, CU_MEM_LOCATION_TYPE_DEVICE, at) != CUDA_SUCCESS) return 13;
  auto bytes = pattern(kBytes, 6);
  if (cuMemcpyHtoD(at, bytes.data(), kBytes) != CUDA_SUCCESS) return 14;
  int fd = -1;
  if (cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS) return 15;
  ch.send_fd(fd);
  return 0;
}

TEST_CASE("an exported fd keeps the memory after the exporter exits", "[vmm][ipc]") {
  conformance_primary_ctx();
  auto c = mp::spawn("vmm_exporter");
  int fd = c.ch.recv_fd();
  REQUIRE(fd >= 0);
  REQUIRE(c.wait() == 0);
  CUmemGenericAllocationHandle h = 0;
  REQUIRE_CU(import_fd(h, fd), CUDA_SUCCESS);
  close(fd);
  CUdeviceptr at = 0;
  REQUIRE_CU(map_whole(h, kGran, CU_MEM_LOCATION_TYPE_DEVICE, at), CUDA_SUCCESS);
  std::vector<unsigned char> got(kBytes, 0);
  CHECK_CU(cuMemcpyDtoH(got.data(), at, kBytes), CUDA_SUCCESS);
  CHECK(got == pattern(kBytes, 6));
  CHECK_CU(cuMemUnmap(at, kGran), CUDA_SUCCESS);
  CHECK_CU(cuMemAddressFree(at, kGran), CUDA_SUCCESS);
  CHECK_CU(cuMemRelease(h), CUDA_SUCCESS);
}

// Imports that must fail, in a process that never exported anything.
MP_CHILD(vmm_bad_imports) {
  if (!child_init()) return 10;
  int good = ch.recv_fd();
  CUmemGenericAllocationHandle h = 0;
  ch.send_int(import_fd(h, -1));
  int plain = mp::plain_memfd(kGran, 0x5a);
  ch.send_int(import_fd(h, plain));
  close(plain);
  ch.send_int(import_fd(h, plain));  // closed now
  ch.send_int(import_fd(h, good, CU_MEM_HANDLE_TYPE_WIN32));
  ch.send_int(import_fd(h, good, CU_MEM_HANDLE_TYPE_NONE));
  ch.send_int(mp::fd_is_open(good) ? 1 : 0);
  // Without an IMEX channel there is no fabric memory.
  CUmemAllocationProp p = vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC);
  ch.send_int(cuMemCreate(&h, kGran, &p, 0));
  close(good);
  return 0;
}

TEST_CASE("imports of what no driver exported are refused", "[vmm][ipc]") {
  conformance_primary_ctx();
  ScopedHandle h(kGran, vmm_prop(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  int fd = -1;
  REQUIRE_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  auto c = mp::spawn("vmm_bad_imports");
  REQUIRE(c.ch.send_fd(fd));
  close(fd);
  // What NVIDIA's driver answered (tests/probe/cases/ipc_conformance.cases).
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), REAL_CU("ipc.conf.vmm_import.fd_minus1"));
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), REAL_CU("ipc.conf.vmm_import.memfd"));
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), REAL_CU("ipc.conf.vmm_import.closed_fd"));
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), REAL_CU("ipc.conf.vmm_import.type_win32"));  // WIN32
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), REAL_CU("ipc.conf.vmm_import.type_none"));   // NONE
  CHECK(c.ch.recv_int() == 1);  // failed imports leave the descriptor alone too
  // Fabric without an IMEX channel: the answer depends on the machine's IMEX set-up (the
  // recording machine has none), so it stays the literal measured there.
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_NOT_PERMITTED);
  CHECK(c.wait() == 0);
}
