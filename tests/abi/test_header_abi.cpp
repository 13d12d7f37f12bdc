// One translation unit sees NVIDIA's CUDA 13.0 headers (global namespace) and
// ours (namespace shim); every enumerator, layout, typedef and function
// signature that NVIDIA's headers declare must match ours, or this fails to compile.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <catch2/catch.hpp>

#include <cstdint>

#include "abi_map.hpp"

// Our declarations get C++ linkage here so they can coexist with NVIDIA's C ones.
#define CUDA_SHIM_ABI_CXX_LINKAGE
namespace shim {
#include "cuda_shim/cuda.h"
#include "cuda_shim/cudaTypedefs.h"
#include "cuda_shim/cuda_runtime_api.h"
#include "cuda_shim/library_types.h"
}  // namespace shim

// Deprecated vector types (long4, double4, ...) are facts too; check them quietly.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "abi_checks.inc"
#pragma GCC diagnostic pop

TEST_CASE("header ABI: versions and special handles", "[abi]") {
    CHECK(CUDA_VERSION == 13000);
    CHECK(CUDART_VERSION == 13000);
    CHECK(CUDA_SHIM_CUDA_VERSION_MAX == 13030);
    // Both headers spell these macros identically, so compare the values they produce.
    CHECK(reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD) == 0x2);
    CHECK(reinterpret_cast<std::uintptr_t>(CU_STREAM_LEGACY) == 0x1);
    CHECK(reinterpret_cast<std::uintptr_t>(cudaStreamPerThread) == 0x2);
    CHECK(reinterpret_cast<std::uintptr_t>(cudaStreamLegacy) == 0x1);
    CHECK(sizeof(shim::CUipcMemHandle) == 64);
    CHECK(sizeof(shim::cudaDeviceProp) == sizeof(::cudaDeviceProp));
    CHECK(static_cast<int>(shim::CU_DEVICE_ATTRIBUTE_MAX) == static_cast<int>(::CU_DEVICE_ATTRIBUTE_MAX));
}

#include "abi_macros.hpp"
#include <string>

// #define constants (CU_MEMHOSTALLOC_*, cudaStream*, CU_STREAM_PER_THREAD, ...): each
// value is taken once from a TU built only against NVIDIA's headers and once from
// a TU built only against ours.
TEST_CASE("header ABI: every numeric #define matches NVIDIA's", "[abi]") {
    REQUIRE(nvidia_macro_count == shim_macro_count);
    REQUIRE(nvidia_macro_count > 150);
    for (std::size_t i = 0; i < nvidia_macro_count; ++i) {
        INFO(nvidia_macros[i].name);
        CHECK(std::string(nvidia_macros[i].name) == shim_macros[i].name);
        CHECK(nvidia_macros[i].value == shim_macros[i].value);
    }
}
