// CUDA arrays and mipmapped arrays, as far as external memory needs them: a mipmapped array
// laid over imported memory (cuExternalMemoryGetMappedMipmappedArray), its levels
// (cuMipmappedArrayGetLevel), their descriptors, and copies to and from a level
// (cuMemcpy2D/3D with CU_MEMORYTYPE_ARRAY). A GPU stores arrays in an opaque tiled layout;
// the emulator stores each level row by row (pitch = width * element size), levels one after
// another at 512-byte boundaries, so the memory an array needs is computable and checked.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/errc.hpp"
#include "core/registry.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::mem {

struct MipmappedArray;

struct Array {
  CUDA_ARRAY3D_DESCRIPTOR desc{};  // Depth 0 for 1D/2D arrays, as the user described it
  size_t elem = 0;                 // bytes per element (all channels)
  size_t pitch = 0;                // bytes per row
  size_t rows = 0;                 // rows per slice (Height, or 1)
  size_t slices = 0;               // Depth, or 1
  size_t bytes = 0;                // the whole level
  char* host = nullptr;            // where its first byte lives (emulator view)
  RangePtr memory;                 // the (unregistered) range whose bytes these are; keeps them mapped
  std::weak_ptr<MipmappedArray> parent;
  unsigned level = 0;
};
using ArrayPtr = std::shared_ptr<Array>;

struct MipmappedArray {
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  unsigned levels = 0;
  std::vector<ArrayPtr> level;  // level arrays live as long as the mipmapped array
  std::string describe() const;
};
using MipmappedArrayPtr = std::shared_ptr<MipmappedArray>;

Registry<Array>& arrays();
Registry<MipmappedArray>& mipmapped_arrays();

// Bytes per element of `format` with `channels` channels; 0 when the format or channel count is
// not one a plain array holds (block-compressed and video formats are not emulated).
size_t element_size(CUarray_format format, unsigned channels) noexcept;
const char* format_name(CUarray_format format) noexcept;

// Validates a mipmapped array's descriptor and level count and computes its layout (offsets of
// each level from the first byte, and the total). `what` names the argument in explanations.
Errc plan_mipmap(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels, const char* api, const char* what,
                 std::vector<size_t>& offsets, size_t& total);

// Builds a mipmapped array over `bytes` of memory starting at memory->host + offset; the
// layout came from plan_mipmap.
MipmappedArrayPtr make_mipmap(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels, const std::vector<size_t>& offsets,
                              RangePtr memory, size_t offset);

// The live array named by h, or an explanation.
Errc array_arg(CUarray h, const char* api, const char* what, ArrayPtr& out);

}  // namespace cuda_shim::mem
