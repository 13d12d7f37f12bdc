// Legacy CUDA IPC: cudaIpcGetMemHandle / OpenMemHandle / CloseMemHandle across processes,
// which memory may be exported this way, and IPC events recorded in one process and
// waited on in another. The child is this binary re-run (multiprocess.hpp).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"
#include "real_answers.hpp"

// Child: opens the handle, reads the exporter's bytes, writes its own, closes.
// A child's first steps: receive a handle and a size, open the handle and report the result.
// Null when the open failed.
static void* open_received(mp::Channel& ch, cudaIpcMemHandle_t& h, size_t& n) {
  child_primary_ctx();
  h = ch.recv_pod<cudaIpcMemHandle_t>();
  n = static_cast<size_t>(ch.recv_int());
  void* p = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
  ch.send_int(e);
  return e == cudaSuccess ? p : nullptr;
}

MP_CHILD(ipc_mem_reader) {
  cudaIpcMemHandle_t h;
  size_t n = 0;
  void* p = open_received(ch, h, n);
  if (!p) return 1;
  void* again = nullptr;
  ch.send_int(cudaIpcOpenMemHandle(&again, h, cudaIpcMemLazyEnablePeerAccess));
  ch.send_int(again == p);
  std::vector<unsigned char> buf(n);
  ch.send_int(cudaMemcpy(buf.data(), p, n, cudaMemcpyDeviceToHost));
  ch.send_int(all_bytes(buf, 0x3c));
  ch.send_int(cudaMemset(p, 0xd2, n));
  ch.send_int(cudaDeviceSynchronize());
  ch.send_int(cudaFree(p));  // IPC memory is closed, not freed
  void* other = nullptr;
  cudaIpcMemHandle_t bad;
  std::memset(&bad, 0x5a, sizeof bad);
  ch.send_int(cudaIpcOpenMemHandle(&other, bad, cudaIpcMemLazyEnablePeerAccess));
  ch.send_int(cudaIpcOpenMemHandle(&other, h, 2));  // unknown flag
  ch.send_int(cudaIpcOpenMemHandle(&other, h, 0));  // the flag left out
  auto hi = ch.recv_pod<cudaIpcMemHandle_t>();      // taken from an interior pointer
  void* at = nullptr;
  ch.send_int(cudaIpcOpenMemHandle(&at, hi, cudaIpcMemLazyEnablePeerAccess));
  ch.send_int(reinterpret_cast<char*>(at) - reinterpret_cast<char*>(p) == 0);  // the same mapping, at its base
  unsigned capable = 7;
  ch.send_int(cuPointerGetAttribute(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                    reinterpret_cast<CUdeviceptr>(at)));
  ch.send_int(capable);
  cudaIpcCloseMemHandle(at);
  ch.send_int(cudaIpcCloseMemHandle(again));
  ch.send_int(cudaIpcCloseMemHandle(p));
  ch.send_int(cudaIpcCloseMemHandle(p));  // closed twice
  (void)ch.recv_int();
  return 0;
}

TEST_CASE("cudaMalloc memory shared through cudaIpcGetMemHandle", "[ipc][legacy]") {
  conformance_primary_ctx();
  const size_t n = 1 << 16;
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, n), cudaSuccess);
  REQUIRE_RT(cudaMemset(d, 0x3c, n), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  cudaIpcMemHandle_t h, h2;
  REQUIRE_RT(cudaIpcGetMemHandle(&h, d), cudaSuccess);
  REQUIRE_RT(cudaIpcGetMemHandle(&h2, d), cudaSuccess);
  CHECK(std::memcmp(&h, &h2, sizeof h) == 0);  // one allocation, one handle

  void* self = nullptr;
  // What NVIDIA's driver answered (tests/probe/cases/ipc_conformance.cases).
  CHECK_RT(cudaIpcOpenMemHandle(&self, h, cudaIpcMemLazyEnablePeerAccess), REAL_RT("ipc.conf.legacy.open_own"));

  auto c = mp::spawn("ipc_mem_reader");
  c.ch.send_pod(h);
  c.ch.send_int(static_cast<int64_t>(n));
  REQUIRE(c.ch.recv_int() == cudaSuccess);       // open
  CHECK(c.ch.recv_int() == cudaSuccess);         // open again
  CHECK(c.ch.recv_int() == 1);                   // ... gives the same address
  CHECK(c.ch.recv_int() == cudaSuccess);         // read
  CHECK(c.ch.recv_int() == 1);                   // the exporter's bytes
  CHECK(c.ch.recv_int() == cudaSuccess);         // write
  CHECK(c.ch.recv_int() == cudaSuccess);
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.free_opened"));   // cudaFree of opened memory
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.open_garbage"));  // garbage handle
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.open_flags2"));   // flags 2
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.open_flags0"));   // flags 0
  cudaIpcMemHandle_t hi;
  REQUIRE_RT(cudaIpcGetMemHandle(&hi, static_cast<char*>(d) + 4096), cudaSuccess);
  CHECK(std::memcmp(&hi, &h, sizeof h) == 0);  // an interior pointer's handle is the allocation's
  c.ch.send_pod(hi);
  CHECK(c.ch.recv_int() == cudaSuccess);
  CHECK(c.ch.recv_int() == 1);
  CHECK(c.ch.recv_int() == CUDA_SUCCESS);
  CHECK(c.ch.recv_int() == 0);  // opened memory cannot be exported again
  CHECK(c.ch.recv_int() == cudaSuccess);         // close (second open)
  CHECK(c.ch.recv_int() == cudaSuccess);         // close (first open)
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.close_twice"));  // closed twice
  c.ch.send_int(0);
  CHECK(c.wait() == 0);
  std::vector<unsigned char> back(n);
  REQUIRE_RT(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_bytes(back, 0xd2));
  CHECK_RT(cudaFree(d), cudaSuccess);
}

// Opens the handle it is sent, checks the exporter's bytes, writes its own, then checks that
// the exporter's later write reaches it.
MP_CHILD(ipc_mem_neighbour) {
  cudaIpcMemHandle_t h;
  size_t n = 0;
  void* p = open_received(ch, h, n);
  if (!p) return 1;
  std::vector<unsigned char> buf(n);
  ch.send_int(cudaMemcpy(buf.data(), p, n, cudaMemcpyDeviceToHost) == cudaSuccess && all_bytes(buf, 0x22));
  ch.send_int(cudaMemset(p, 0x44, n) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
  (void)ch.recv_int();  // the exporter wrote 0x55
  ch.send_int(cudaMemcpy(buf.data(), p, n, cudaMemcpyDeviceToHost) == cudaSuccess && all_bytes(buf, 0x55));
  ch.send_int(cudaIpcCloseMemHandle(p));
  return 0;
}

MP_CHILD(ipc_open_freed) {
  child_primary_ctx();
  auto h = ch.recv_pod<cudaIpcMemHandle_t>();
  void* p = nullptr;
  ch.send_int(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
  ch.send_int(cudaIpcCloseMemHandle(p));
  return 0;
}

// Measured on the H200: a lone allocation's handle no longer opens once its exporter freed it.
// (The probe saw one open when the exporter had allocated again since: the driver's allocator
// had reused the block. The emulator never reuses a freed block's handle.)
TEST_CASE("cudaIpcOpenMemHandle: a handle whose memory the exporter freed", "[ipc][legacy]") {
  conformance_primary_ctx();
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 4096), cudaSuccess);
  cudaIpcMemHandle_t h;
  REQUIRE_RT(cudaIpcGetMemHandle(&h, d), cudaSuccess);
  REQUIRE_RT(cudaFree(d), cudaSuccess);
  auto c = mp::spawn("ipc_open_freed");
  c.ch.send_pod(h);
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.open_freed"));
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.close_after_failed_open"));  // nothing to close
  CHECK(c.wait() == 0);
}

TEST_CASE("cudaIpcGetMemHandle: memory legacy IPC cannot share", "[ipc][legacy]") {
  conformance_primary_ctx();
  cudaIpcMemHandle_t h;
  SECTION("pinned host memory") {
    void* p = nullptr;
    REQUIRE_RT(cudaMallocHost(&p, 4096), cudaSuccess);
    CHECK_RT(cudaIpcGetMemHandle(&h, p), REAL_RT("ipc.conf.legacy.get_host_pinned"));
    cudaFreeHost(p);
  }
  SECTION("stream-ordered (pool) memory") {
    void* p = nullptr;
    REQUIRE_RT(cudaMallocAsync(&p, 4096, nullptr), cudaSuccess);
    CHECK_RT(cudaIpcGetMemHandle(&h, p), REAL_RT("ipc.conf.legacy.get_pool_memory"));
    cudaFreeAsync(p, nullptr);
    cudaDeviceSynchronize();
  }
  SECTION("an address the driver never allocated") {
    int x = 0;
    CHECK_RT(cudaIpcGetMemHandle(&h, &x), REAL_RT("ipc.conf.legacy.get_unallocated"));
  }
  SECTION("a NULL devPtr") { CHECK_RT(cudaIpcGetMemHandle(&h, nullptr), REAL_RT("ipc.conf.legacy.get_null")); }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("a NULL handle (driver 580 crashes; the emulator answers)") {
    void* p = nullptr;
    REQUIRE_RT(cudaMalloc(&p, 4096), cudaSuccess);
    CHECK_RT(cudaIpcGetMemHandle(nullptr, p), cudaErrorInvalidValue);
    cudaFree(p);
  }
#endif
}

// Child: opens the event, reports it not ready, waits for it, reports ready.
MP_CHILD(ipc_event_waiter) {
  child_primary_ctx();
  auto h = ch.recv_pod<cudaIpcEventHandle_t>();
  cudaEvent_t ev = nullptr;
  ch.send_int(cudaIpcOpenEventHandle(&ev, h));
  (void)ch.recv_int();  // the parent recorded it behind a blocked stream
  ch.send_int(cudaEventQuery(ev));
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ch.send_int(cudaStreamWaitEvent(s, ev, 0));
  ch.send_int(cudaStreamQuery(s));  // waits for the other process
  ch.send_int(0);                   // let the parent release its stream
  ch.send_int(cudaEventSynchronize(ev));
  ch.send_int(cudaEventQuery(ev));
  ch.send_int(cudaStreamSynchronize(s));
  float ms = 0;
  ch.send_int(cudaEventElapsedTime(&ms, ev, ev));
  cudaStreamDestroy(s);
  ch.send_int(cudaEventDestroy(ev));
  return 0;
}

TEST_CASE("an IPC event recorded in one process is waited on in another", "[ipc][legacy][event]") {
  conformance_primary_ctx();
  cudaEvent_t ev = nullptr;
  REQUIRE_RT(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  cudaIpcEventHandle_t h;
  REQUIRE_RT(cudaIpcGetEventHandle(&h, ev), cudaSuccess);
  auto c = mp::spawn("ipc_event_waiter");
  c.ch.send_pod(h);
  REQUIRE(c.ch.recv_int() == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  static std::atomic<int> go{0};
  go = 0;
  REQUIRE_RT(cudaLaunchHostFunc(s, [](void*) { while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1)); }, nullptr), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(ev, s), cudaSuccess);
  c.ch.send_int(0);
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.event_query_pending"));  // query in the other process
  CHECK(c.ch.recv_int() == cudaSuccess);                                     // its stream waits on it
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.event_wait_busy"));      // ... and is busy
  (void)c.ch.recv_int();
  go = 1;
  CHECK(c.ch.recv_int() == cudaSuccess);  // synchronize returns once we completed it
  CHECK(c.ch.recv_int() == cudaSuccess);  // then it is ready
  CHECK(c.ch.recv_int() == cudaSuccess);  // and the waiting stream drains
  CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.event_elapsed"));  // no timing on IPC events
  CHECK(c.ch.recv_int() == cudaSuccess);
  CHECK(c.wait() == 0);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
  CHECK_RT(cudaEventDestroy(ev), cudaSuccess);
}

TEST_CASE("cudaIpcGetEventHandle: events that cannot be shared", "[ipc][legacy][event]") {
  conformance_primary_ctx();
  cudaIpcEventHandle_t h;
  cudaEvent_t ev = nullptr;
  SECTION("an event without cudaEventInterprocess") {
    REQUIRE_RT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
    CHECK_RT(cudaIpcGetEventHandle(&h, ev), REAL_RT("ipc.conf.legacy.ievent_get_not_ipc"));
  }
  SECTION("opening it in the process that exported it") {
    REQUIRE_RT(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
    REQUIRE_RT(cudaIpcGetEventHandle(&h, ev), cudaSuccess);
    cudaEvent_t again = nullptr;
    CHECK_RT(cudaIpcOpenEventHandle(&again, h), REAL_RT("ipc.conf.legacy.ievent_open_own"));
  }
  SECTION("cudaEventInterprocess without cudaEventDisableTiming") {
    CHECK_RT(cudaEventCreateWithFlags(&ev, cudaEventInterprocess), REAL_RT("ipc.conf.legacy.event_create_ipc_timing"));
    ev = nullptr;
  }
  if (ev) cudaEventDestroy(ev);
}

// ---- unforgeable handles --------------------------------------------------------------------
namespace {

// Random bytes from the kernel (std::random_device is getrandom on Linux).
template <class T>
T random_pod() {
  T v;
  std::random_device rd;
  auto* b = reinterpret_cast<unsigned char*>(&v);
  for (size_t i = 0; i < sizeof v; ++i) b[i] = static_cast<unsigned char>(rd());
  return v;
}

// Sends handles to an ipc_open_each child and returns what opening each answered.
std::vector<int64_t> open_each(const std::vector<cudaIpcMemHandle_t>& hs) {
  auto c = mp::spawn("ipc_open_each");
  c.ch.send_int(static_cast<int64_t>(hs.size()));
  for (auto& h : hs) c.ch.send_pod(h);
  std::vector<int64_t> codes;
  for (size_t i = 0; i < hs.size(); ++i) codes.push_back(c.ch.recv_int());
  CHECK(c.wait() == 0);
  return codes;
}

}  // namespace

// Child: opens every handle it is sent (closing what opens) and reports each code.
MP_CHILD(ipc_open_each) {
  child_primary_ctx();
  const int64_t n = ch.recv_int();
  std::vector<cudaIpcMemHandle_t> hs;
  for (int64_t i = 0; i < n; ++i) hs.push_back(ch.recv_pod<cudaIpcMemHandle_t>());
  for (auto& h : hs) {
    void* p = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    ch.send_int(e);
    if (e == cudaSuccess) cudaIpcCloseMemHandle(p);
  }
  return 0;
}

TEST_CASE("cudaIpcOpenMemHandle: random 64-byte handles open nothing", "[ipc][legacy][forgery]") {
  conformance_primary_ctx();
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 4096), cudaSuccess);
  cudaIpcMemHandle_t real;
  REQUIRE_RT(cudaIpcGetMemHandle(&real, d), cudaSuccess);  // a live export exists meanwhile
  std::vector<cudaIpcMemHandle_t> hs;
  for (int i = 0; i < 64; ++i) hs.push_back(random_pod<cudaIpcMemHandle_t>());
  hs.push_back(real);  // the control: the genuine handle opens in the same child
  auto codes = open_each(hs);
  REQUIRE(codes.size() == hs.size());
  for (size_t i = 0; i + 1 < codes.size(); ++i) {
    INFO("random handle " << i);
    CHECK(codes[i] == REAL_RT("ipc.conf.legacy.open_random"));
  }
  CHECK(codes.back() == cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

// Exports a fresh allocation filled with 0x4e, sends its handle, then exits (1: waits to be
// killed instead).
MP_CHILD(ipc_export_then_die) {
  child_primary_ctx();
  void* d = nullptr;
  cudaIpcMemHandle_t h;
  bool ok = cudaMalloc(&d, 1 << 16) == cudaSuccess && cudaMemset(d, 0x4e, 1 << 16) == cudaSuccess &&
            cudaDeviceSynchronize() == cudaSuccess && cudaIpcGetMemHandle(&h, d) == cudaSuccess;
  ch.send_int(ok ? 0 : 1);
  ch.send_pod(h);
  if (ch.recv_int() == 1) pause();
  return 0;
}

TEST_CASE("cudaIpcOpenMemHandle: a handle replayed after its exporter exited", "[ipc][legacy][forgery]") {
  conformance_primary_ctx();
  const bool killed = GENERATE(false, true);
  CAPTURE(killed);
  auto c = mp::spawn("ipc_export_then_die");
  REQUIRE(c.ch.recv_int() == 0);
  auto h = c.ch.recv_pod<cudaIpcMemHandle_t>();
  {  // while the exporter lives, the handle opens here (this process did not export it)
    void* p = nullptr;
    REQUIRE_RT(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), cudaSuccess);
    unsigned char b = 0;
    CHECK_RT(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(b == 0x4e);
    CHECK_RT(cudaIpcCloseMemHandle(p), cudaSuccess);
  }
  c.ch.send_int(killed ? 1 : 0);
  if (killed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.kill(SIGKILL);
    CHECK(c.wait() == 128 + SIGKILL);
  } else {
    CHECK(c.wait() == 0);
  }
  void* p = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
  // A live exporter's freed memory is another answer (ipc.conf.legacy.open_freed).
  CHECK_RT(e, REAL_RT(killed ? "ipc.conf.legacy.open_exporter_killed" : "ipc.conf.legacy.open_exporter_exited"));
  if (e == cudaSuccess) cudaIpcCloseMemHandle(p);
}

#if !CUDA_SHIM_REAL_BACKEND
// The emulator's handle sits at the end of the 64 bytes, where NVIDIA's driver reads its own (it
// ignores a flipped byte 0 or 8 and refuses a flipped byte 32): magic and version (bytes 16-23),
// then the registry record's 128-bit random token (bytes 24-39). Flipping any one of those bits
// must open nothing.
TEST_CASE("(emulator) a legacy IPC handle with any bit of its token flipped opens nothing", "[ipc][legacy][forgery]") {
  conformance_primary_ctx();
  constexpr int kFirst = 16 * 8, kEnd = 40 * 8;
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 4096), cudaSuccess);
  cudaIpcMemHandle_t real;
  REQUIRE_RT(cudaIpcGetMemHandle(&real, d), cudaSuccess);
  std::vector<cudaIpcMemHandle_t> hs;
  for (int bit = kFirst; bit < kEnd; ++bit) {
    cudaIpcMemHandle_t f = real;
    reinterpret_cast<unsigned char*>(&f)[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    hs.push_back(f);
  }
  hs.push_back(real);
  auto codes = open_each(hs);
  REQUIRE(codes.size() == hs.size());
  int refused = 0;
  const cudaError_t forged = REAL_RT("ipc.conf.legacy.open_random");  // as bytes no driver wrote
  for (int bit = kFirst; bit < kEnd; ++bit) {
    INFO("bit " << bit);
    CHECK(codes[bit - kFirst] == forged);
    refused += codes[bit - kFirst] == forged;
  }
  CHECK(refused == kEnd - kFirst);
  CHECK(codes.back() == cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

// The event handle's token too: magic, version, 128 random bits (bytes 0-23).
MP_CHILD(ipc_event_open_each) {
  child_primary_ctx();
  const int64_t n = ch.recv_int();
  std::vector<cudaIpcEventHandle_t> hs;
  for (int64_t i = 0; i < n; ++i) hs.push_back(ch.recv_pod<cudaIpcEventHandle_t>());
  for (auto& h : hs) {
    cudaEvent_t ev = nullptr;
    cudaError_t e = cudaIpcOpenEventHandle(&ev, h);
    ch.send_int(e);
    if (e == cudaSuccess) cudaEventDestroy(ev);
  }
  return 0;
}

TEST_CASE("(emulator) IPC event handles: flipped bits and random bytes open nothing", "[ipc][legacy][event][forgery]") {
  conformance_primary_ctx();
  cudaEvent_t ev = nullptr;
  REQUIRE_RT(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  cudaIpcEventHandle_t real;
  REQUIRE_RT(cudaIpcGetEventHandle(&real, ev), cudaSuccess);
  std::vector<cudaIpcEventHandle_t> hs;
  for (int bit = 0; bit < 24 * 8; ++bit) {
    cudaIpcEventHandle_t f = real;
    reinterpret_cast<unsigned char*>(&f)[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    hs.push_back(f);
  }
  for (int i = 0; i < 16; ++i) hs.push_back(random_pod<cudaIpcEventHandle_t>());
  hs.push_back(real);
  auto c = mp::spawn("ipc_event_open_each");
  c.ch.send_int(static_cast<int64_t>(hs.size()));
  for (auto& h : hs) c.ch.send_pod(h);
  for (size_t i = 0; i + 1 < hs.size(); ++i) {
    INFO("forged event handle " << i);
    CHECK(c.ch.recv_int() == REAL_RT("ipc.conf.legacy.ievent_open_random"));  // as bytes no driver wrote
  }
  CHECK(c.ch.recv_int() == cudaSuccess);
  CHECK(c.wait() == 0);
  CHECK_RT(cudaEventDestroy(ev), cudaSuccess);
}
#endif

// Issue 22, item 3: allocations share a few arenas, and an exported one moves to memory of its
// own at its first export. What was written before the export, and by either side after it,
// must be seen by both; the allocations beside it must be untouched by the importer's writes.
TEST_CASE("a cudaMalloc allocation shared with another process keeps its bytes, and its neighbours stay its "
          "exporter's", "[ipc][legacy]") {
  conformance_primary_ctx();
  const size_t n = 3 * 4096 + 100;
  void *before = nullptr, *d = nullptr, *after = nullptr;
  REQUIRE_RT(cudaMalloc(&before, n), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&d, n), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&after, n), cudaSuccess);
  REQUIRE_RT(cudaMemset(before, 0x11, n), cudaSuccess);
  REQUIRE_RT(cudaMemset(d, 0x22, n), cudaSuccess);
  REQUIRE_RT(cudaMemset(after, 0x33, n), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  cudaIpcMemHandle_t h;
  REQUIRE_RT(cudaIpcGetMemHandle(&h, d), cudaSuccess);
  std::vector<unsigned char> back(n);
  REQUIRE_RT(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_bytes(back, 0x22));  // the export changed nothing here

  auto c = mp::spawn("ipc_mem_neighbour");
  c.ch.send_pod(h);
  c.ch.send_int(static_cast<int64_t>(n));
  REQUIRE(c.ch.recv_int() == cudaSuccess);
  CHECK(c.ch.recv_int() == 1);  // it read what was written before the export
  CHECK(c.ch.recv_int() == 1);  // and wrote its own bytes
  REQUIRE_RT(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_bytes(back, 0x44));
  REQUIRE_RT(cudaMemcpy(back.data(), before, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_bytes(back, 0x11));
  REQUIRE_RT(cudaMemcpy(back.data(), after, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(all_bytes(back, 0x33));
  REQUIRE_RT(cudaMemset(d, 0x55, n), cudaSuccess);
  REQUIRE_RT(cudaDeviceSynchronize(), cudaSuccess);
  c.ch.send_int(0);
  CHECK(c.ch.recv_int() == 1);  // the exporter's write after the export reached it
  CHECK(c.ch.recv_int() == cudaSuccess);
  CHECK(c.wait() == 0);
  CHECK_RT(cudaFree(before), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
  CHECK_RT(cudaFree(after), cudaSuccess);
}
