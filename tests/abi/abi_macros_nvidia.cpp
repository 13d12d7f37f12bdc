// Macro values as NVIDIA's headers define them (this TU sees only NVIDIA's).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include "abi_macros.hpp"

const MacroValue nvidia_macros[] = {
#define CUDA_SHIM_MACRO(name) {#name, (long long)(name)},
#include "abi_macros.inc"
#undef CUDA_SHIM_MACRO
};
const std::size_t nvidia_macro_count = sizeof(nvidia_macros) / sizeof(nvidia_macros[0]);
