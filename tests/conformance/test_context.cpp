// Driver API: primary contexts and the context stack.
#include <thread>

#include "common.hpp"

#include <cudaProfiler.h>

TEST_CASE("primary context: retain returns the same handle and activates it", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CUcontext a = nullptr, b = nullptr;
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&a, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&b, 0), CUDA_SUCCESS);
  CHECK(a == b);
  unsigned flags = 0;
  int active = 0;
  REQUIRE_CU(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  CHECK(active == 1);
  REQUIRE_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

TEST_CASE("cuDevicePrimaryCtxRetain with a null pointer is CUDA_ERROR_INVALID_VALUE", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CHECK_CU(cuDevicePrimaryCtxRetain(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuDevicePrimaryCtxRetain on a nonexistent device is CUDA_ERROR_INVALID_DEVICE", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CUcontext c;
  CHECK_CU(cuDevicePrimaryCtxRetain(&c, 9999), CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("context stack: create pushes, pop returns it, get current follows", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  while (true) {  // start from an empty stack
    CUcontext c = nullptr;
    REQUIRE_CU(cuCtxGetCurrent(&c), CUDA_SUCCESS);
    if (!c) break;
    REQUIRE_CU(cuCtxPopCurrent(&c), CUDA_SUCCESS);
  }
  CUcontext ctx = nullptr;
  REQUIRE_CU(cuCtxCreate(&ctx, nullptr, 0, 0), CUDA_SUCCESS);
  CUcontext cur = nullptr;
  REQUIRE_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  CHECK(cur == ctx);
  CUdevice dev = -1;
  REQUIRE_CU(cuCtxGetDevice(&dev), CUDA_SUCCESS);
  CHECK(dev == 0);
  unsigned long long id1 = 0, id2 = 0;
  REQUIRE_CU(cuCtxGetId(ctx, &id1), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  REQUIRE_CU(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  CHECK(popped == ctx);
  REQUIRE_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  CHECK(cur == nullptr);
  REQUIRE_CU(cuCtxPushCurrent(ctx), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxGetId(nullptr, &id2), CUDA_SUCCESS);
  CHECK(id1 == id2);
  REQUIRE_CU(cuCtxDestroy(ctx), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  CHECK(cur == nullptr);
}

TEST_CASE("cuCtxPopCurrent on an empty stack is CUDA_ERROR_INVALID_CONTEXT", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  std::thread([] {
    CUcontext c = nullptr;
    CHECK_CU(cuCtxPopCurrent(&c), CUDA_ERROR_INVALID_CONTEXT);
  }).join();
}

TEST_CASE("cuCtxGetDevice with no current context is CUDA_ERROR_INVALID_CONTEXT", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  std::thread([] {
    CUdevice d;
    CHECK_CU(cuCtxGetDevice(&d), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  }).join();
}

TEST_CASE("cuCtxGetCurrent on a fresh thread is NULL", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  std::thread([] {
    CUcontext c = reinterpret_cast<CUcontext>(1);
    CHECK_CU(cuCtxGetCurrent(&c), CUDA_SUCCESS);
    CHECK(c == nullptr);
  }).join();
}

TEST_CASE("cuCtxGetCurrent with a null pointer is CUDA_ERROR_INVALID_VALUE", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CHECK_CU(cuCtxGetCurrent(nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuCtxCreate with a null output is CUDA_ERROR_INVALID_VALUE", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CHECK_CU(cuCtxCreate(nullptr, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuCtxCreate on a nonexistent device is CUDA_ERROR_INVALID_DEVICE", "[ctx]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CUcontext c = nullptr;
  CHECK_CU(cuCtxCreate(&c, nullptr, 0, 9999), CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("stream priority range is [0, -5] on Hopper", "[ctx]") {
  conformance_primary_ctx();
  int least = 99, greatest = 99;
  REQUIRE_CU(cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
  CHECK(least == 0);
  CHECK(greatest == -5);
}

TEST_CASE("cuCtxGetLimit with a value that is no CUlimit is CUDA_ERROR_INVALID_VALUE", "[ctx]") {
  conformance_primary_ctx();
  size_t v = 0;
  CHECK_CU(cuCtxGetLimit(&v, static_cast<CUlimit>(0x7fff)), CUDA_ERROR_INVALID_VALUE);
  REQUIRE_CU(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  CHECK(v > 0);
}

// Measured on an H200 (driver 580), with no profiler attached: INVALID_CONTEXT on a thread
// without a current context (a retained primary context is not enough), then success however
// often started or stopped. numba-cuda's cuda.profiling() calls them.
TEST_CASE("cuProfilerStart and cuProfilerStop need a current context, then succeed", "[ctx][profiler]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
  CUresult start = CUDA_SUCCESS, stop = CUDA_SUCCESS;
  std::thread([&] {
    start = cuProfilerStart();
    stop = cuProfilerStop();
  }).join();
  CHECK_CU(start, CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(stop, CUDA_ERROR_INVALID_CONTEXT);
  REQUIRE_CU(cuCtxSetCurrent(c), CUDA_SUCCESS);
  CHECK_CU(cuProfilerStart(), CUDA_SUCCESS);
  CHECK_CU(cuProfilerStart(), CUDA_SUCCESS);
  CHECK_CU(cuProfilerStop(), CUDA_SUCCESS);
  CHECK_CU(cuProfilerStop(), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

// Measured on an H200: an ordinary context's streams (NULL, legacy, per-thread, created) belong
// to no green context: success and NULL. cuBLAS 13 asks in cublasCreate.
TEST_CASE("cuStreamGetGreenCtx of an ordinary stream is NULL", "[ctx][stream]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c), CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (CUstream h : {static_cast<CUstream>(nullptr), s, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    CUgreenCtx g = reinterpret_cast<CUgreenCtx>(0x1234);
    CHECK_CU(cuStreamGetGreenCtx(h, &g), CUDA_SUCCESS);
    CHECK(g == nullptr);
  }
  CHECK_CU(cuStreamGetGreenCtx(s, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}
