// Shared helpers for conformance tests. These tests run unchanged on the emulator
// and on NVIDIA's driver (-DCUDA_SHIM_BACKEND=real): include only NVIDIA's API.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <vector>

// Readable failures: CHECK_CU(call, CUDA_ERROR_X) prints both names.
const char* cu_name(CUresult r);
const char* rt_name(cudaError_t e);
#define CHECK_CU(call, expected) CHECK(std::string(cu_name(call)) == std::string(cu_name(expected)))
#define REQUIRE_CU(call, expected) REQUIRE(std::string(cu_name(call)) == std::string(cu_name(expected)))
#define CHECK_RT(call, expected) CHECK(std::string(rt_name(call)) == std::string(rt_name(expected)))
#define REQUIRE_RT(call, expected) REQUIRE(std::string(rt_name(call)) == std::string(rt_name(expected)))

// Whether every byte of v is b (what a peer process wrote).
inline bool all_bytes(const std::vector<unsigned char>& v, unsigned char b) {
  for (unsigned char c : v)
    if (c != b) return false;
  return true;
}

// How many descriptors this process has open.
size_t open_fds();

// cuInit(0) + retain and set the primary context of device 0; returns it.
CUcontext conformance_primary_ctx();
// The same for a multiprocess test's child (no Catch2 there): exits with 99 on failure.
CUcontext child_primary_ctx(int ordinal = 0);
// Multiprocess child "device_memory_holder" (common.cpp): mp::spawn it, send the byte count, read
// 0 once it holds that much device memory; send anything to let it free and exit.
