// Logical endpoints across processes, in the call sequences their public users make:
//  - NCCL (cft_dev_runtime): every rank GetLimits -> IdReserve(n) -> Create(base + rank) ->
//    poll Query -> BindAddr -> Export; the handles are exchanged; each rank imports its peers
//    at base + peer and polls Query(base, n). Four processes on four devices.
//  - NVSHMEM (mem_heap): a symmetric heap grown in cuMemCreate chunks bound with BindMem at
//    successive offsets, unbound at teardown with the combined size.
//  - A multicast team spread over processes: created in one, imported by the others, each adds
//    its own device; nobody is ready until the team is full.
// The parent only relays bytes. What one rank bound is what the others reach through the
// endpoint: cuda-shim's cuShimLogicalEndpointAccess performs the fabric get/put a kernel would.
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "le_api.hpp"
#include "multiprocess.hpp"

namespace {

constexpr unsigned long long MiB = 1ull << 20;
constexpr unsigned kRanks = 4;

// Exit codes of the children name the step that failed.
#define STEP(cond, code) \
  do {                   \
    if (!(cond)) return code; \
  } while (0)

bool wait_ready(CUlogicalEndpointId id, unsigned n) {
  bool ready = false;
  return le_wait_ready(id, n, ready) == CUDA_SUCCESS && ready;
}

bool bytes_are(const std::vector<unsigned char>& v, unsigned char b) { return all_bytes(v, b); }

}  // namespace

// One NCCL-style rank: device = rank. Protocol: recv rank, n; send base, handle; recv n handles;
// send 0 after the fabric puts; recv go; send the verdict of its own memory; send teardown code.
MP_CHILD(le_nccl_rank) {
  const int rank = static_cast<int>(ch.recv_int());
  const unsigned n = static_cast<unsigned>(ch.recv_int());
  child_primary_ctx(rank);
  STEP(le().ok && le().Access, 10);
  CUlogicalEndpointProp prop = le_unicast(rank, 4 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  cuuint64_t align = 0, maxSize = 0;
  STEP(le().GetLimits(&align, &maxSize, &prop) == CUDA_SUCCESS, 11);
  unsigned long long size = (prop.size + align - 1) / align * align;
  if (size > maxSize) size = maxSize;
  prop.size = size;
  CUlogicalEndpointId base = 0;
  STEP(le().IdReserve(&base, n) == CUDA_SUCCESS, 12);
  const CUlogicalEndpointId mine = base + rank;
  STEP(le().Create(mine, &prop) == CUDA_SUCCESS, 13);
  STEP(wait_ready(mine, 1), 14);
  LeVmm mem(rank, size, true);
  STEP(mem.status == CUDA_SUCCESS, 15);
  STEP(cuMemsetD8(mem.va, static_cast<unsigned char>(0x10 + rank), size) == CUDA_SUCCESS, 16);
  STEP(le().BindAddr(mine, rank, 0, mem.ptr(), size, 0) == CUDA_SUCCESS, 17);
  CUlogicalEndpointFabricHandle h;
  STEP(le().Export(&h, mine, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 18);
  ch.send_int(base);
  ch.send_pod(h);
  std::vector<CUlogicalEndpointFabricHandle> all(n);
  for (auto& x : all) x = ch.recv_pod<CUlogicalEndpointFabricHandle>();
  for (unsigned p = 0; p < n; ++p)
    if (static_cast<int>(p) != rank)
      STEP(le().Import(base + p, &all[p], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 19);
  STEP(wait_ready(base, n), 20);
  // Fabric gets: every peer's endpoint reaches that peer's memory. Then a put into each peer's
  // memory, at this rank's slot.
  std::vector<unsigned char> buf(8192);
  for (unsigned p = 0; p < n; ++p) {
    STEP(le().Access(base + p, -1, size - buf.size(), buf.data(), buf.size(), 0) == CUDA_SUCCESS, 21);
    STEP(bytes_are(buf, static_cast<unsigned char>(0x10 + p)), 22);
    if (static_cast<int>(p) == rank) continue;
    std::vector<unsigned char> w(4096, static_cast<unsigned char>(0xa0 + rank));
    STEP(le().Access(base + p, -1, rank * 4096ull, w.data(), w.size(), 1) == CUDA_SUCCESS, 23);
  }
  // An imported unicast endpoint binds nothing.
  if (n > 1) {
    unsigned peer = (rank + 1) % n;
    STEP(le().BindAddr(base + peer, peer, 0, mem.ptr(), size, 0) == CUDA_ERROR_INVALID_VALUE, 24);
  }
  ch.send_int(0);
  (void)ch.recv_int();  // every rank has put
  bool ok = true;
  for (unsigned p = 0; p < n; ++p) {
    std::vector<unsigned char> got(4096);
    if (cuMemcpyDtoH(got.data(), mem.va + p * 4096ull, got.size()) != CUDA_SUCCESS) ok = false;
    ok = ok && bytes_are(got, static_cast<unsigned char>(static_cast<int>(p) == rank ? 0x10 + rank : 0xa0 + p));
  }
  ch.send_int(ok ? 1 : 0);
  // Teardown in NCCL's order: peers' ids, then unbind and destroy our own, then the ids.
  for (unsigned p = 0; p < n; ++p)
    if (static_cast<int>(p) != rank) STEP(le().Destroy(base + p) == CUDA_SUCCESS, 30);
  STEP(le().Unbind(mine, rank, 0, size) == CUDA_SUCCESS, 31);
  STEP(le().Destroy(mine) == CUDA_SUCCESS, 32);
  STEP(le().IdRelease(base, n) == CUDA_SUCCESS, 33);
  ch.send_int(0);
  return 0;
}

TEST_CASE("NCCL-style flow: four ranks, four devices, unicast endpoints exchanged over the fabric",
          "[le][ipc][nccl]") {
  LE_REQUIRE_API();
  int ndev = 0;
  REQUIRE_CU(cuDeviceGetCount(&ndev), CUDA_SUCCESS);
  const unsigned n = std::min<unsigned>(kRanks, static_cast<unsigned>(ndev));
  std::vector<mp::Child> ranks;
  for (unsigned r = 0; r < n; ++r) {
    ranks.push_back(mp::spawn("le_nccl_rank"));
    ranks.back().ch.send_int(r);
    ranks.back().ch.send_int(n);
  }
  std::vector<CUlogicalEndpointFabricHandle> handles(n);
  for (unsigned r = 0; r < n; ++r) {
    INFO("rank " << r);
    int64_t base = ranks[r].ch.recv_int();
    REQUIRE(base != INT64_MIN);  // the rank got as far as exporting
    handles[r] = ranks[r].ch.recv_pod<CUlogicalEndpointFabricHandle>();
  }
  for (auto& c : ranks)
    for (auto& h : handles) c.ch.send_pod(h);
  for (unsigned r = 0; r < n; ++r) {
    INFO("rank " << r << " imports, polls and puts");
    CHECK(ranks[r].ch.recv_int() == 0);
  }
  for (auto& c : ranks) c.ch.send_int(1);
  for (unsigned r = 0; r < n; ++r) {
    INFO("rank " << r << ": its memory holds every peer's put");
    CHECK(ranks[r].ch.recv_int() == 1);
    CHECK(ranks[r].ch.recv_int() == 0);
    CHECK(ranks[r].wait() == 0);
  }
}

// NVSHMEM-style symmetric heap on one PE: three cuMemCreate chunks bound with BindMem at
// successive offsets. Protocol: recv pe; send handle; wait for the peer's verdict; send teardown.
MP_CHILD(le_nvshmem_pe) {
  const int pe = static_cast<int>(ch.recv_int());
  child_primary_ctx(pe);
  STEP(le().ok, 10);
  CUlogicalEndpointProp prop = le_unicast(pe, 16 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  CUlogicalEndpointId base = 0;
  STEP(le().IdReserve(&base, 2) == CUDA_SUCCESS, 11);
  STEP(le().Create(base + pe, &prop) == CUDA_SUCCESS, 12);
  STEP(wait_ready(base + pe, 1), 13);
  std::vector<std::unique_ptr<LeVmm>> chunks;
  unsigned long long heap = 0;
  for (int c = 0; c < 3; ++c) {
    chunks.push_back(std::make_unique<LeVmm>(pe, 4 * MiB, true));
    STEP(chunks.back()->status == CUDA_SUCCESS, 14);
    STEP(cuMemsetD8(chunks.back()->va, static_cast<unsigned char>(0x40 + 16 * pe + c), 4 * MiB) == CUDA_SUCCESS, 15);
    STEP(le().BindMem(base + pe, pe, heap, chunks.back()->h, 0, 4 * MiB, 0) == CUDA_SUCCESS, 16);
    heap += 4 * MiB;
  }
  CUlogicalEndpointFabricHandle h;
  STEP(le().Export(&h, base + pe, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 17);
  ch.send_pod(h);
  auto peer_h = ch.recv_pod<CUlogicalEndpointFabricHandle>();
  const int peer = 1 - pe;
  STEP(le().Import(base + peer, &peer_h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 18);
  STEP(wait_ready(base, 2), 19);
  // A get across the peer's chunk boundary sees both chunks' bytes.
  std::vector<unsigned char> buf(2 * 4096);
  STEP(le().Access(base + peer, -1, 4 * MiB - 4096, buf.data(), buf.size(), 0) == CUDA_SUCCESS, 20);
  STEP(buf[0] == 0x40 + 16 * peer && buf[4095] == 0x40 + 16 * peer, 21);
  STEP(buf[4096] == 0x41 + 16 * peer && buf.back() == 0x41 + 16 * peer, 22);
  // Beyond the heap's bound part: not reachable.
  STEP(le().Access(base + peer, -1, 12 * MiB, buf.data(), 16, 0) == CUDA_ERROR_INVALID_VALUE, 23);
  ch.send_int(0);
  (void)ch.recv_int();  // both have read
  STEP(le().Destroy(base + peer) == CUDA_SUCCESS, 30);
  STEP(le().Unbind(base + pe, pe, 0, heap - 2 * MiB) == CUDA_ERROR_INVALID_VALUE, 31);  // splits a chunk
  STEP(le().Unbind(base + pe, pe, 0, heap) == CUDA_SUCCESS, 32);  // the combined size of three binds
  STEP(le().Destroy(base + pe) == CUDA_SUCCESS, 33);
  STEP(le().IdRelease(base, 2) == CUDA_SUCCESS, 34);
  ch.send_int(0);
  return 0;
}

TEST_CASE("NVSHMEM-style flow: a symmetric heap of chunks bound with BindMem, read by the peer", "[le][ipc][nvshmem]") {
  LE_REQUIRE_API();
  LE_REQUIRE_DEVICES(2);
  mp::Child a = mp::spawn("le_nvshmem_pe"), b = mp::spawn("le_nvshmem_pe");
  a.ch.send_int(0);
  b.ch.send_int(1);
  auto ha = a.ch.recv_pod<CUlogicalEndpointFabricHandle>();
  auto hb = b.ch.recv_pod<CUlogicalEndpointFabricHandle>();
  a.ch.send_pod(hb);
  b.ch.send_pod(ha);
  CHECK(a.ch.recv_int() == 0);
  CHECK(b.ch.recv_int() == 0);
  a.ch.send_int(1);
  b.ch.send_int(1);
  CHECK(a.ch.recv_int() == 0);
  CHECK(b.ch.recv_int() == 0);
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
}

// One member of a multicast team spread over processes; member 0 creates and exports.
// Protocol: recv member, n; member 0 sends the handle, the others recv it; send 0 when ready
// and bound; member 0 then stores through the endpoint to every replica; recv go; send verdict.
MP_CHILD(le_multicast_member) {
  const int me = static_cast<int>(ch.recv_int());
  const unsigned n = static_cast<unsigned>(ch.recv_int());
  child_primary_ctx(me);
  STEP(le().ok && le().Access, 10);
  CUlogicalEndpointId id = 0;
  STEP(le().IdReserve(&id, 1) == CUDA_SUCCESS, 11);
  CUlogicalEndpointFabricHandle h;
  if (me == 0) {
    auto prop = le_multicast(n, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
    STEP(le().Create(id, &prop) == CUDA_SUCCESS, 12);
    STEP(le().Export(&h, id, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 13);
    ch.send_pod(h);
  } else {
    h = ch.recv_pod<CUlogicalEndpointFabricHandle>();
    STEP(le().Import(id, &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 14);
  }
  int st = -1;
  STEP(le().Query(id, 1, &st) == CUDA_SUCCESS && st == 0, 15);  // our device is not even in yet
  STEP(le().AddDevice(id, me) == CUDA_SUCCESS, 16);
  STEP(wait_ready(id, 1), 17);  // only once every member added its device
  LeVmm plain(me, 2 * MiB, false), fabric(me, 2 * MiB, true);
  STEP(plain.status == CUDA_SUCCESS && fabric.status == CUDA_SUCCESS, 18);
  // Exported (fabric) and imported multicast endpoints bind only externally shareable memory.
  STEP(le().BindAddr(id, me, 0, plain.ptr(), 2 * MiB, 0) == CUDA_ERROR_INVALID_VALUE, 19);
  STEP(le().BindAddr(id, me, 0, fabric.ptr(), 2 * MiB, 0) == CUDA_SUCCESS, 20);
  ch.send_int(0);
  if (me == 0) {
    (void)ch.recv_int();  // everybody bound
    std::vector<unsigned char> w(4096, 0x5c);
    STEP(le().Access(id, -1, 8192, w.data(), w.size(), 1) == CUDA_SUCCESS, 21);  // multimem store
    ch.send_int(0);
  }
  (void)ch.recv_int();  // go
  std::vector<unsigned char> got(4096);
  STEP(cuMemcpyDtoH(got.data(), fabric.va + 8192, got.size()) == CUDA_SUCCESS, 22);
  ch.send_int(bytes_are(got, 0x5c) ? 1 : 0);
  (void)ch.recv_int();  // all checked
  STEP(le().Destroy(id) == CUDA_SUCCESS, 23);
  STEP(le().IdRelease(id, 1) == CUDA_SUCCESS, 24);
  return 0;
}

TEST_CASE("a multicast team spread over processes: ready when full, a store reaches every replica",
          "[le][ipc][multicast]") {
  LE_REQUIRE_API();
  LE_REQUIRE_DEVICES(2);
  const unsigned n = std::min<unsigned>(3, static_cast<unsigned>(ndev));
  std::vector<mp::Child> m;
  for (unsigned i = 0; i < n; ++i) {
    m.push_back(mp::spawn("le_multicast_member"));
    m.back().ch.send_int(i);
    m.back().ch.send_int(n);
  }
  auto h = m[0].ch.recv_pod<CUlogicalEndpointFabricHandle>();
  for (unsigned i = 1; i < n; ++i) m[i].ch.send_pod(h);
  for (unsigned i = 0; i < n; ++i) {
    INFO("member " << i << " is ready and bound");
    CHECK(m[i].ch.recv_int() == 0);
  }
  m[0].ch.send_int(1);
  CHECK(m[0].ch.recv_int() == 0);  // stored
  for (auto& c : m) c.ch.send_int(1);
  for (unsigned i = 0; i < n; ++i) {
    INFO("member " << i << "'s replica holds the store");
    CHECK(m[i].ch.recv_int() == 1);
  }
  for (auto& c : m) c.ch.send_int(1);
  for (auto& c : m) CHECK(c.wait() == 0);
}

// Creates and exports an endpoint, sends the handle, then waits to be killed.
MP_CHILD(le_holder) {
  child_primary_ctx(0);
  CUlogicalEndpointId id = 0;
  auto prop = le_unicast(0, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  STEP(le().ok && le().IdReserve(&id, 1) == CUDA_SUCCESS && le().Create(id, &prop) == CUDA_SUCCESS, 10);
  CUlogicalEndpointFabricHandle h;
  STEP(le().Export(&h, id, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS, 11);
  ch.send_pod(h);
  (void)ch.recv_int();
  return 0;
}

TEST_CASE("an endpoint whose last holder was killed cannot be imported: NOT_SUPPORTED", "[le][ipc][kill]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  CUlogicalEndpointId ids = 0;
  REQUIRE_CU(le().IdReserve(&ids, 2), CUDA_SUCCESS);
  mp::Child c = mp::spawn("le_holder");
  auto h = c.ch.recv_pod<CUlogicalEndpointFabricHandle>();
  // While the holder lives the handle imports; our alias then keeps the endpoint alive.
  REQUIRE_CU(le().Import(ids, &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
  c.kill(SIGKILL);
  CHECK(c.wait() == 128 + SIGKILL);
  bool ready = false;
  CHECK_CU(le_wait_ready(ids, 1, ready), CUDA_SUCCESS);
  CHECK(ready);
  CHECK_CU(le().Destroy(ids), CUDA_SUCCESS);  // the last reference
  CHECK_CU(le().Import(ids + 1, &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);

  SECTION("killed while it was the only holder") {
    mp::Child d = mp::spawn("le_holder");
    auto h2 = d.ch.recv_pod<CUlogicalEndpointFabricHandle>();
    d.kill(SIGKILL);
    CHECK(d.wait() == 128 + SIGKILL);
    CHECK_CU(le().Import(ids, &h2, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
  CHECK_CU(le().IdRelease(ids, 2), CUDA_SUCCESS);
}
