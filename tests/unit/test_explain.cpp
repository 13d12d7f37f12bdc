// Emulator-only: refused calls explain themselves; garbage and stale handles are
// answered with the documented code instead of being dereferenced.
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <string>

#include <catch2/catch.hpp>

#include "core/config.hpp"
#include "unit_common.hpp"


TEST_CASE("a refused call records which rule it broke", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int v;
  CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 42) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(last_why().find("device ordinal 42 is out of range") != std::string::npos);
  CHECK(cuShimGetLastExplanationCode() == CUDA_ERROR_INVALID_DEVICE);
  CHECK(cuInit(7) == CUDA_ERROR_INVALID_VALUE);
  CHECK(last_why().find("cuInit") != std::string::npos);
}

TEST_CASE("the explanation survives later successful calls", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuCtxCreate(nullptr, nullptr, 0, 0) == CUDA_ERROR_INVALID_VALUE);
  int n;
  REQUIRE(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  CHECK(last_why().find("pctx is NULL") != std::string::npos);
}

TEST_CASE("cuShimGetLastExplanation truncates and reports the full length", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuDeviceGet(nullptr, 0) == CUDA_ERROR_INVALID_VALUE);
  char tiny[5];
  size_t n = cuShimGetLastExplanation(tiny, sizeof tiny);
  CHECK(n > 4);
  CHECK(std::string(tiny).size() == 4);
  CHECK(cuShimGetLastExplanation(nullptr, 0) == n);
}

TEST_CASE("garbage stream handle is CUDA_ERROR_INVALID_HANDLE, not a crash", "[handles]") {
  primary();
  auto garbage = reinterpret_cast<CUstream>(0x1234);
  CHECK(cuStreamQuery(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamSynchronize(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamDestroy(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(last_why().find("not a live stream") != std::string::npos);
}

TEST_CASE("stale stream and event handles after destroy are refused", "[handles]") {
  primary();
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamQuery(s) == CUDA_ERROR_INVALID_HANDLE);
  CUevent e;
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuEventQuery(e) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuEventRecord(e, nullptr) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("a destroyed context is refused everywhere", "[handles]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext c;
  REQUIRE(cuCtxCreate(&c, nullptr, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);
  CHECK(cuCtxDestroy(c) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxPushCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxSetCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("unimplemented entry points answer CUDA_ERROR_NOT_SUPPORTED and say so", "[stubs]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUmodule m = nullptr;
  CHECK(cuModuleLoad(&m, "nothing.cubin") == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(last_why().find("cuModuleLoad") != std::string::npos);
}

TEST_CASE("config file: keys, env override, and warnings for unknown keys", "[config]") {
  cuda_shim::Config c;
  c.apply_file_text("devices = 3\n# comment\ndriver_version = 13000\ndevice.1.name = Test GPU\nbogus = 1\n", "t");
  c.finalize();
  CHECK(c.devices == 3);
  CHECK(c.driver_version == 13000);
  REQUIRE(c.device.size() == 3);
  CHECK(c.device[1].name == "Test GPU");
  CHECK(c.device[0].name == "NVIDIA H200");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("bogus") != std::string::npos);
}
