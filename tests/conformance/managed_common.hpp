// Helpers shared by the managed-memory conformance tests (NVIDIA's API only, so they also run
// on the real driver).
#pragma once
#include <cstdint>

#include "common.hpp"

// A cuMemAllocManaged allocation, freed with cuMemFree when it goes.
struct Managed {
  CUdeviceptr p = 0;
  explicit Managed(size_t n, unsigned flags = CU_MEM_ATTACH_GLOBAL) {
    REQUIRE_CU(cuMemAllocManaged(&p, n, flags), CUDA_SUCCESS);
  }
  Managed(const Managed&) = delete;
  Managed& operator=(const Managed&) = delete;
  ~Managed() { reset(); }
  void reset() {
    if (p) cuMemFree(p);
    p = 0;
  }
  operator CUdeviceptr() const { return p; }
  // Host code uses the same pointer.
  unsigned char* host() const { return reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(p)); }
};
