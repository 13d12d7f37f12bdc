// The same macros as our headers define them (this TU sees only ours).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#ifndef CUDA_SHIM_CUDA_H
#  error "abi_macros_shim.cpp must be built against include/cuda_shim"
#endif

#include "abi_macros.hpp"

const MacroValue shim_macros[] = {
#define CUDA_SHIM_MACRO(name) {#name, (long long)(name)},
#include "abi_macros.inc"
#undef CUDA_SHIM_MACRO
};
const std::size_t shim_macro_count = sizeof(shim_macros) / sizeof(shim_macros[0]);
