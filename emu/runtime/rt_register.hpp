// What nvcc's generated code registered with the runtime: fat binaries, and the host-side
// stand-ins of their kernels (the stub functions) and variables (the shadow objects).
// Registration runs in static constructors, before main and before cuInit, so it only
// records; each fat binary becomes a library (cuLibraryLoadData) when first needed.
#pragma once
#include <cuda.h>

#include <string>

#include "core/errc.hpp"

namespace cuda_shim::rt {

struct Symbol {
  CUdeviceptr addr = 0;  // in the current context
  size_t size = 0;
  std::string name;
};

// The kernel a host function pointer (a __global__ function's stub) names, as a CUkernel of its
// fat binary's library. Errc::rt_invalid_device_function when nothing registered it.
Errc kernel_of(const void* hostFun, const char* api, CUkernel& out);
// Whether hostFun is a registered kernel stub.
bool is_kernel_stub(const void* hostFun) noexcept;
// The variable a host address names: a __device__/__constant__ variable's shadow object, or a
// __managed__ variable's own address. Errc::rt_invalid_symbol when it names none.
Errc symbol_of(const void* symbol, const char* api, Symbol& out);

}  // namespace cuda_shim::rt
