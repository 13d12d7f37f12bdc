// Helpers shared by the emulator-only unit tests.
#pragma once
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <string>

#include <catch2/catch.hpp>

// Why the last failing call on this thread failed (cuda_shim_ext.h).
inline std::string last_why() {
  char buf[1024];
  cuShimGetLastExplanation(buf, sizeof buf);
  return buf;
}

// cuInit(0) and device 0's primary context made current.
inline void primary() {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext c;
  REQUIRE(cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(c) == CUDA_SUCCESS);
}
