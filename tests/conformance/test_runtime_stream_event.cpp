// Runtime API: streams and events: creation, properties, ordering, host functions,
// queries, timing, and their failure codes (measured on a real H200, .probe/out).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<int> ran{0};
};
void CUDART_CB wait_gate(void* g) {
  auto* gate = static_cast<Gate*>(g);
  while (!gate->open.load()) std::this_thread::yield();
  gate->ran++;
}
struct Log {
  std::vector<int> order;
  std::atomic<int> n{0};
};
struct Step {
  Log* log;
  int id;
};
void CUDART_CB record_step(void* p) {
  auto* s = static_cast<Step*>(p);
  s->log->order.push_back(s->id);  // stream order: never two at once
  s->log->n++;
}
void CUDART_CB callback(cudaStream_t, cudaError_t status, void* user) {
  *static_cast<int*>(user) = status == cudaSuccess ? 1 : 2;
}
}  // namespace

TEST_CASE("runtime streams: create, properties, destroy") {
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  REQUIRE(s != nullptr);
  unsigned f = 77;
  CHECK_RT(cudaStreamGetFlags(s, &f), cudaSuccess);
  CHECK(f == cudaStreamDefault);
  int prio = 77;
  CHECK_RT(cudaStreamGetPriority(s, &prio), cudaSuccess);
  CHECK(prio == 0);
  int dev = -7;
  CHECK_RT(cudaStreamGetDevice(s, &dev), cudaSuccess);
  CHECK(dev == 0);
  unsigned long long id1 = 0, id2 = 0;
  CHECK_RT(cudaStreamGetId(s, &id1), cudaSuccess);
  cudaStream_t t = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), cudaSuccess);
  CHECK_RT(cudaStreamGetFlags(t, &f), cudaSuccess);
  CHECK(f == cudaStreamNonBlocking);
  CHECK_RT(cudaStreamGetId(t, &id2), cudaSuccess);
  CHECK(id1 != id2);
  CHECK_RT(cudaStreamDestroy(t), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
}

TEST_CASE("runtime streams: priorities") {
  int least = 0, greatest = 0;
  REQUIRE_RT(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  cudaStream_t hi = nullptr, clamped = nullptr;
  REQUIRE_RT(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest), cudaSuccess);
  int p = 77;
  CHECK_RT(cudaStreamGetPriority(hi, &p), cudaSuccess);
  CHECK(p == greatest);
  // Out-of-range priorities are clamped into the range.
  REQUIRE_RT(cudaStreamCreateWithPriority(&clamped, 0, greatest - 100), cudaSuccess);
  CHECK_RT(cudaStreamGetPriority(clamped, &p), cudaSuccess);
  CHECK(p == greatest);
  CHECK_RT(cudaStreamDestroy(hi), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(clamped), cudaSuccess);
}

TEST_CASE("runtime streams: cudaStreamCreateWithFlags with unknown flags") {
  cudaStream_t s = nullptr;
  CHECK_RT(cudaStreamCreateWithFlags(&s, 2), cudaErrorInvalidValue);     // measured
  CHECK_RT(cudaStreamCreateWithFlags(&s, 0xFF), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime streams: destroying the default stream") {
  CHECK_RT(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);  // measured
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

TEST_CASE("runtime streams: default-stream handles") {
  CHECK_RT(cudaStreamQuery(nullptr), cudaSuccess);  // measured
  CHECK_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  unsigned long long a = 0, b = 0;
  CHECK_RT(cudaStreamGetId(cudaStreamLegacy, &a), cudaSuccess);
  CHECK_RT(cudaStreamGetId(cudaStreamPerThread, &b), cudaSuccess);
  CHECK(a != b);
}

TEST_CASE("runtime streams: a host function blocks its stream; work runs in order") {
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  Gate gate;
  Log log;
  Step steps[3] = {{&log, 1}, {&log, 2}, {&log, 3}};
  REQUIRE_RT(cudaLaunchHostFunc(s, wait_gate, &gate), cudaSuccess);
  for (auto& st : steps) REQUIRE_RT(cudaLaunchHostFunc(s, record_step, &st), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(log.n.load() == 0);
  CHECK_RT(cudaStreamQuery(s), cudaErrorNotReady);
  gate.open = true;
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(gate.ran.load() == 1);
  CHECK(log.order == std::vector<int>{1, 2, 3});
  CHECK_RT(cudaStreamQuery(s), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
}

TEST_CASE("runtime streams: cudaStreamAddCallback") {
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  int seen = 0;
  REQUIRE_RT(cudaStreamAddCallback(s, callback, &seen, 0), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(seen == 1);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
}

TEST_CASE("runtime streams: cudaStreamAddCallback with nonzero flags") {
  int seen = 0;
  CHECK_RT(cudaStreamAddCallback(nullptr, callback, &seen, 1), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("runtime events: query NOT_READY until the stream passes the record") {
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  cudaEvent_t e = nullptr;
  REQUIRE_RT(cudaEventCreate(&e), cudaSuccess);
  CHECK_RT(cudaEventQuery(e), cudaSuccess);  // measured: never recorded
  Gate gate;
  REQUIRE_RT(cudaLaunchHostFunc(s, wait_gate, &gate), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(e, s), cudaSuccess);
  CHECK_RT(cudaEventQuery(e), cudaErrorNotReady);
  gate.open = true;
  CHECK_RT(cudaEventSynchronize(e), cudaSuccess);
  CHECK_RT(cudaEventQuery(e), cudaSuccess);
  CHECK_RT(cudaEventDestroy(e), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
}

TEST_CASE("runtime events: cudaStreamWaitEvent orders two streams") {
  cudaStream_t a = nullptr, b = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  REQUIRE_RT(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t e = nullptr;
  REQUIRE_RT(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  Gate gate;
  Log log;
  Step after{&log, 7};
  REQUIRE_RT(cudaLaunchHostFunc(a, wait_gate, &gate), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(e, a), cudaSuccess);
  REQUIRE_RT(cudaStreamWaitEvent(b, e, 0), cudaSuccess);
  REQUIRE_RT(cudaLaunchHostFunc(b, record_step, &after), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(log.n.load() == 0);
  CHECK_RT(cudaStreamQuery(b), cudaErrorNotReady);
  gate.open = true;
  CHECK_RT(cudaStreamSynchronize(b), cudaSuccess);
  CHECK(log.n.load() == 1);
  CHECK_RT(cudaEventDestroy(e), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(a), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(b), cudaSuccess);
}

TEST_CASE("runtime events: elapsed time") {
  cudaEvent_t a = nullptr, b = nullptr;
  REQUIRE_RT(cudaEventCreate(&a), cudaSuccess);
  REQUIRE_RT(cudaEventCreate(&b), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(a, nullptr), cudaSuccess);
  REQUIRE_RT(cudaEventRecordWithFlags(b, nullptr, cudaEventRecordDefault), cudaSuccess);
  REQUIRE_RT(cudaEventSynchronize(b), cudaSuccess);
  float ms = -1;
  CHECK_RT(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  CHECK(ms >= 0);
  CHECK_RT(cudaEventDestroy(a), cudaSuccess);
  CHECK_RT(cudaEventDestroy(b), cudaSuccess);
}

TEST_CASE("runtime events: elapsed time of never-recorded events") {
  cudaEvent_t a = nullptr, b = nullptr;
  REQUIRE_RT(cudaEventCreate(&a), cudaSuccess);
  REQUIRE_RT(cudaEventCreate(&b), cudaSuccess);
  float ms = -7;
  CHECK_RT(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);  // measured
  CHECK(ms == -7);
  CHECK_RT(cudaEventSynchronize(a), cudaSuccess);  // measured: nothing to wait for
  cudaGetLastError();
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

TEST_CASE("runtime events: elapsed time of DisableTiming events") {
  cudaEvent_t a = nullptr, b = nullptr;
  REQUIRE_RT(cudaEventCreateWithFlags(&a, cudaEventDisableTiming), cudaSuccess);
  REQUIRE_RT(cudaEventCreateWithFlags(&b, cudaEventDisableTiming), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(a, nullptr), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(b, nullptr), cudaSuccess);
  REQUIRE_RT(cudaEventSynchronize(b), cudaSuccess);
  float ms = -7;
  CHECK_RT(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);  // measured
  CHECK(ms == -7);
  cudaGetLastError();
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

TEST_CASE("runtime events: cudaEventCreateWithFlags with unknown flags") {
  cudaEvent_t e = nullptr;
  CHECK_RT(cudaEventCreateWithFlags(&e, 0xFF), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime streams: per-thread default stream is separate per thread") {
  unsigned long long mine = 0, other = 0;
  REQUIRE_RT(cudaStreamGetId(cudaStreamPerThread, &mine), cudaSuccess);
  std::thread([&] { cudaStreamGetId(cudaStreamPerThread, &other); }).join();
  CHECK(other != 0);
  CHECK(mine != other);
}

// The per-thread-default-stream entry points (what CUDA_API_PER_THREAD_DEFAULT_STREAM
// selects); both runtimes export them.
extern "C" cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t);
extern "C" cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t);
extern "C" cudaError_t CUDARTAPI cudaLaunchHostFunc_ptsz(cudaStream_t, cudaHostFn_t, void*);
extern "C" cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);

TEST_CASE("runtime streams: _ptsz entries treat stream 0 as the per-thread stream") {
  Gate gate;
  REQUIRE_RT(cudaLaunchHostFunc_ptsz(nullptr, wait_gate, &gate), cudaSuccess);
  cudaEvent_t e = nullptr;
  REQUIRE_RT(cudaEventCreate(&e), cudaSuccess);
  REQUIRE_RT(cudaEventRecord_ptsz(e, nullptr), cudaSuccess);
  CHECK_RT(cudaStreamQuery_ptsz(nullptr), cudaErrorNotReady);
  CHECK_RT(cudaStreamQuery(cudaStreamPerThread), cudaErrorNotReady);
  CHECK_RT(cudaEventQuery(e), cudaErrorNotReady);
  gate.open = true;
  CHECK_RT(cudaStreamSynchronize_ptsz(nullptr), cudaSuccess);
  CHECK(gate.ran.load() == 1);
  CHECK_RT(cudaEventQuery(e), cudaSuccess);
  CHECK_RT(cudaEventDestroy(e), cudaSuccess);
}
