// Driver API: streams (ordering, host functions, default streams) and events.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {
// A host function that blocks its stream until the test opens the gate.
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> entered{false};
  static void CUDA_CB wait(void* p) {
    auto* g = static_cast<Gate*>(p);
    g->entered = true;
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
};
struct Log {
  std::vector<int> order;
  std::atomic<int> n{0};
};
struct Step {
  Log* log;
  int id;
  static void CUDA_CB run(void* p) {
    auto* s = static_cast<Step*>(p);
    s->log->order.push_back(s->id);
    s->log->n++;
  }
};
}  // namespace

TEST_CASE("host functions run in stream order, after the launching call returns", "[stream]") {
  conformance_primary_ctx();
  CUstream s;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Gate g;
  Log log;
  Step a{&log, 1}, b{&log, 2}, c{&log, 3};
  REQUIRE_CU(cuLaunchHostFunc(s, Gate::wait, &g), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s, Step::run, &a), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s, Step::run, &b), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s, Step::run, &c), CUDA_SUCCESS);
  CHECK_CU(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  CHECK(log.n == 0);
  g.open = true;
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(log.order == std::vector<int>{1, 2, 3});
  CHECK_CU(cuStreamQuery(s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cuStreamWaitEvent orders one stream after another", "[stream][event]") {
  conformance_primary_ctx();
  CUstream s1, s2;
  REQUIRE_CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent e;
  REQUIRE_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  Gate g;
  Log log;
  Step a{&log, 1}, b{&log, 2};
  REQUIRE_CU(cuLaunchHostFunc(s1, Gate::wait, &g), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s1, Step::run, &a), CUDA_SUCCESS);
  REQUIRE_CU(cuEventRecord(e, s1), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamWaitEvent(s2, e, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s2, Step::run, &b), CUDA_SUCCESS);
  CHECK_CU(cuEventQuery(e), CUDA_ERROR_NOT_READY);
  CHECK_CU(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
  g.open = true;
  REQUIRE_CU(cuStreamSynchronize(s2), CUDA_SUCCESS);
  CHECK(log.order == std::vector<int>{1, 2});
  CHECK_CU(cuEventQuery(e), CUDA_SUCCESS);
  REQUIRE_CU(cuEventDestroy(e), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamDestroy(s1), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamDestroy(s2), CUDA_SUCCESS);
}

TEST_CASE("the legacy default stream waits for blocking streams", "[stream]") {
  conformance_primary_ctx();
  CUstream s;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  Gate g;
  Log log;
  Step a{&log, 1}, b{&log, 2};
  REQUIRE_CU(cuLaunchHostFunc(s, Gate::wait, &g), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s, Step::run, &a), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(CU_STREAM_LEGACY, Step::run, &b), CUDA_SUCCESS);
  CHECK_CU(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
  g.open = true;
  REQUIRE_CU(cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
  CHECK(log.order == std::vector<int>{1, 2});
  REQUIRE_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("a non-blocking stream does not wait for the legacy default stream", "[stream]") {
  conformance_primary_ctx();
  CUstream s;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr buf = 0;
  REQUIRE_CU(cuMemAlloc(&buf, 256), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(buf, 0, 256), CUDA_SUCCESS);
  Gate g;
  REQUIRE_CU(cuLaunchHostFunc(CU_STREAM_LEGACY, Gate::wait, &g), CUDA_SUCCESS);
  // Copy-engine work, not a host function: the real driver runs every host function of a
  // context on one thread, so a second one would wait behind the gate whatever the streams.
  REQUIRE_CU(cuMemsetD8Async(buf, 7, 256, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);  // would never return if s waited for the gate
  CHECK_CU(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
  g.open = true;
  REQUIRE_CU(cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
  unsigned char back[256] = {};
  REQUIRE_CU(cuMemcpyDtoH(back, buf, 256), CUDA_SUCCESS);
  CHECK(back[0] == 7);
  CHECK(back[255] == 7);
  REQUIRE_CU(cuMemFree(buf), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("stream properties: flags, priority (clamped), context, device", "[stream]") {
  CUcontext ctx = conformance_primary_ctx();
  CUstream s;
  REQUIRE_CU(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -100), CUDA_SUCCESS);
  unsigned f = 99;
  int p = 99;
  REQUIRE_CU(cuStreamGetFlags(s, &f), CUDA_SUCCESS);
  CHECK(f == CU_STREAM_NON_BLOCKING);
  REQUIRE_CU(cuStreamGetPriority(s, &p), CUDA_SUCCESS);
  CHECK(p == -5);
  CUcontext c = nullptr;
  REQUIRE_CU(cuStreamGetCtx(s, &c), CUDA_SUCCESS);
  CHECK(c == ctx);
  CUdevice d = -1;
  REQUIRE_CU(cuStreamGetDevice(s, &d), CUDA_SUCCESS);
  CHECK(d == 0);
  unsigned long long id1 = 0, id2 = 0;
  CUstream s2;
  REQUIRE_CU(cuStreamCreate(&s2, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamGetId(s, &id1), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamGetId(s2, &id2), CUDA_SUCCESS);
  CHECK(id1 != id2);
  REQUIRE_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamDestroy(s2), CUDA_SUCCESS);
}

TEST_CASE("cuStreamCreate with unknown flags is CUDA_ERROR_INVALID_VALUE", "[stream]") {
  conformance_primary_ctx();
  CUstream s;
  CHECK_CU(cuStreamCreate(&s, 0xFF), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuStreamCreate with a null output is CUDA_ERROR_INVALID_VALUE", "[stream]") {
  conformance_primary_ctx();
  CHECK_CU(cuStreamCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuLaunchHostFunc with a null function is CUDA_ERROR_INVALID_VALUE", "[stream]") {
  conformance_primary_ctx();
  CHECK_CU(cuLaunchHostFunc(nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("events: never-recorded query succeeds; elapsed time between completed events", "[event]") {
  conformance_primary_ctx();
  CUevent a, b;
  REQUIRE_CU(cuEventCreate(&a, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  REQUIRE_CU(cuEventCreate(&b, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  CHECK_CU(cuEventQuery(a), CUDA_SUCCESS);
  float ms = -1;
  CHECK_CU(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
  REQUIRE_CU(cuEventRecord(a, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuEventRecord(b, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuEventSynchronize(b), CUDA_SUCCESS);
  REQUIRE_CU(cuEventElapsedTime(&ms, a, b), CUDA_SUCCESS);
  CHECK(ms >= 0.0f);
  CHECK(ms < 1000.0f);
  REQUIRE_CU(cuEventDestroy(a), CUDA_SUCCESS);
  REQUIRE_CU(cuEventDestroy(b), CUDA_SUCCESS);
}

TEST_CASE("cuEventElapsedTime on events without timing is CUDA_ERROR_INVALID_HANDLE", "[event]") {
  conformance_primary_ctx();
  CUevent a, b;
  REQUIRE_CU(cuEventCreate(&a, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  REQUIRE_CU(cuEventCreate(&b, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  REQUIRE_CU(cuEventRecord(a, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuEventRecord(b, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuEventSynchronize(b), CUDA_SUCCESS);
  float ms = 0;
  CHECK_CU(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
  REQUIRE_CU(cuEventDestroy(a), CUDA_SUCCESS);
  REQUIRE_CU(cuEventDestroy(b), CUDA_SUCCESS);
}

TEST_CASE("cuEventCreate with unknown flags is CUDA_ERROR_INVALID_VALUE", "[event]") {
  conformance_primary_ctx();
  CUevent e;
  CHECK_CU(cuEventCreate(&e, 0xF0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuEventCreate interprocess without disable-timing is CUDA_ERROR_INVALID_VALUE", "[event]") {
  conformance_primary_ctx();
  CUevent e;
  CHECK_CU(cuEventCreate(&e, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("host functions of the per-thread default stream run on cuStreamSynchronize(CU_STREAM_PER_THREAD)", "[stream]") {
  conformance_primary_ctx();
  Log log;
  Step a{&log, 7};
  REQUIRE_CU(cuLaunchHostFunc(CU_STREAM_PER_THREAD, Step::run, &a), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  CHECK(log.n == 1);
}

TEST_CASE("cuStreamIsCapturing: no stream captures unless cuStreamBeginCapture was called", "[stream]") {
  conformance_primary_ctx();
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (CUstream h : {s, static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    CUstreamCaptureStatus st = static_cast<CUstreamCaptureStatus>(77);
    CHECK_CU(cuStreamIsCapturing(h, &st), CUDA_SUCCESS);
    CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
  }
  CHECK_CU(cuStreamIsCapturing(s, nullptr), CUDA_ERROR_INVALID_VALUE);
  cudaStreamCaptureStatus rs = cudaStreamCaptureStatusInvalidated;
  CHECK_RT(cudaStreamIsCapturing(s, &rs), cudaSuccess);
  CHECK(rs == cudaStreamCaptureStatusNone);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}
