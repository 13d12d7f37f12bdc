// Under AddressSanitizer: what the emulator's objects own is visible to LeakSanitizer. Objects
// whose address is their handle (core/fresh_alloc.hpp) lived in mappings LSan never scans, so
// a live stream's queue, a pool's books or a module's tables were reported leaked, at exit of
// every sanitizer run and at each of the fuzzer's leak checks. Elsewhere the test passes as is.
#include <cuda.h>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(UNIT_LSAN)
#define UNIT_LSAN 1
#endif
#ifdef UNIT_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace {
const char kPtx[] =
    ".version 9.0\n.target sm_90\n.address_size 64\n.global .align 4 .b8 g[16];\n"
    ".visible .entry k(.param .u64 p)\n{\nret;\n}\n";
}  // namespace

TEST_CASE("live streams, events, pools and modules hold no leaked memory", "[leaks]") {
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  CUevent e = nullptr;
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(e, s) == CUDA_SUCCESS);
  CUmemPoolProps pp{};
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, pool, s) == CUDA_SUCCESS);
  CUmodule m = nullptr;
  REQUIRE(cuModuleLoadData(&m, kPtx) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
#ifdef UNIT_LSAN
  CHECK(__lsan_do_recoverable_leak_check() == 0);
#endif
  CHECK(cuMemFreeAsync(d, s) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(m) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_SUCCESS);
}
