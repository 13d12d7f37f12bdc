// Texture and surface objects: what cuTexObjectCreate and cuSurfObjectCreate were given, kept
// under the 64-bit handles kernels pass to tex/tld4/txq and suld/sust (the kernel engine reads
// them through find_texture / find_surface). A texture's resource is an array, a mipmapped
// array, or device memory (linear or pitched 2D); the object keeps its arrays alive, and reads
// device memory through the address space when it fetches, as a load would.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>

#include "core/errc.hpp"
#include "memory/array.hpp"

namespace cuda_shim::mem {

struct TexObject {
  CUDA_RESOURCE_DESC res{};
  CUDA_TEXTURE_DESC tex{};
  CUDA_RESOURCE_VIEW_DESC view{};
  bool has_view = false;
  ArrayPtr array;          // CU_RESOURCE_TYPE_ARRAY
  MipmappedArrayPtr mip;   // CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
  CUarray_format format = CU_AD_FORMAT_FLOAT;
  unsigned channels = 1;
  size_t elem = 4;         // bytes per texel
};
using TexPtr = std::shared_ptr<const TexObject>;

struct SurfObject {
  CUDA_RESOURCE_DESC res{};
  ArrayPtr array;
};
using SurfPtr = std::shared_ptr<const SurfObject>;

// The rules of cuTexObjectCreate (measured on an H200: tests/probe/cases/texture.cases) and a
// new object; `out` is its handle.
Errc create_texture(const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* tex, const CUDA_RESOURCE_VIEW_DESC* view,
                    int ordinal, const char* api, uint64_t& out);
Errc create_surface(const CUDA_RESOURCE_DESC* res, const char* api, uint64_t& out);
// Destroying succeeds whatever the handle (measured); false when it named no object.
bool destroy_texture(uint64_t h) noexcept;
bool destroy_surface(uint64_t h) noexcept;
// The live object, or null.
TexPtr find_texture(uint64_t h) noexcept;
SurfPtr find_surface(uint64_t h) noexcept;
size_t texture_count() noexcept;

}  // namespace cuda_shim::mem
