// The private table through which libcudart.so.13 reaches the runtime implemented
// inside libcuda.so.1 (so a process has one driver state, as with NVIDIA's pair).
// libcudart obtains it with cuGetExportTable(&t, &kRuntimeTableId), as NVIDIA's
// runtime obtains its private tables from NVIDIA's driver.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace cuda_shim::rt_bridge {

// Random, fixed: {c5a1e4b2-7d3f-4e19-9b62-0f8d2c7a5e31}
inline constexpr CUuuid kRuntimeTableId = {{static_cast<char>(0xc5), static_cast<char>(0xa1), static_cast<char>(0xe4),
                                            static_cast<char>(0xb2), 0x7d, 0x3f, 0x4e, 0x19, static_cast<char>(0x9b), 0x62,
                                            0x0f, static_cast<char>(0x8d), 0x2c, 0x7a, 0x5e, 0x31}};
inline constexpr unsigned kRuntimeTableVersion = 2;

struct RuntimeTable {
  size_t size;
  unsigned version;
#define RT_ENTRY(name, params, args) cudaError_t (*name) params;
#include "abi/runtime_entries.def"
#undef RT_ENTRY
#define RT_HOST(ret, name, params, args) ret (*name) params;
#include "abi/runtime_hosting.def"
#undef RT_HOST
  // Entries that do not return cudaError_t or must not touch the last error.
  cudaError_t (*not_supported)(const char* api);
  const char* (*cudaGetErrorName)(cudaError_t);
  const char* (*cudaGetErrorString)(cudaError_t);
  cudaError_t (*cudaGetLastError)();
  cudaError_t (*cudaPeekAtLastError)();
};

}  // namespace cuda_shim::rt_bridge
