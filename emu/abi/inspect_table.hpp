// The private table through which `cuda-shim smi` (tools/smi.cpp) reads the shared registry
// inside libcuda.so.1: cuGetExportTable(&t, &kInspectTableId). Like NVML's table it needs no
// cuInit, makes no context and takes no process slot, so the inspector never lists itself.
#pragma once
#include <cuda.h>

#include <cstddef>

namespace cuda_shim::inspect_bridge {

// Random, fixed: {5b1d7e02-c4a9-4f63-8e1b-93d2a0f6c57e}
inline constexpr CUuuid kInspectTableId = {{0x5b, 0x1d, 0x7e, 0x02, static_cast<char>(0xc4), static_cast<char>(0xa9),
                                            0x4f, 0x63, static_cast<char>(0x8e), 0x1b, static_cast<char>(0x93),
                                            static_cast<char>(0xd2), static_cast<char>(0xa0), static_cast<char>(0xf6),
                                            static_cast<char>(0xc5), 0x7e}};
inline constexpr unsigned kInspectTableVersion = 1;

struct InspectTable {
  size_t size;
  unsigned version;
  // The registry's lines (ipc/registry_inspect.hpp); with reap != 0, what was reaped instead.
  // A malloc'd string the caller frees; "error why=...\n" when no registry can be read.
  char* (*registry)(int reap) noexcept;
};

}  // namespace cuda_shim::inspect_bridge
