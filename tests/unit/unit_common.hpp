// Helpers shared by the emulator-only unit tests.
#pragma once
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <unistd.h>

#include <cstdio>
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

// Runs this test binary again, with `env` (VAR=value ...) prepended, on the Catch2 test spec
// `spec` (a hidden child case such as "[.faults_child]"); its stdout and stderr go to `out`.
// Returns pclose's status (WEXITSTATUS / WTERMSIG apply).
inline int run_self(const std::string& env, const std::string& spec, std::string& out) {
  char self[4096];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(k > 0);
  self[k] = '\0';
  std::string cmd = env + " '" + self + "' '" + spec + "' 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f);
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  return pclose(f);
}
