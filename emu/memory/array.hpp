// CUDA arrays and mipmapped arrays: made with memory of their own (cuArrayCreate,
// cuArray3DCreate, cuMipmappedArrayCreate: array_create.cpp) or laid over imported memory
// (cuExternalMemoryGetMappedMipmappedArray), their levels (cuMipmappedArrayGetLevel), their
// descriptors, and copies to and from them (cuMemcpy2D/3D with CU_MEMORYTYPE_ARRAY and the 1D
// cuMemcpy*A* copies). A GPU stores arrays in an opaque tiled layout;
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

namespace cuda_shim {
class Context;
}

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
  bool own = false;                // made by cuArrayCreate/cuArray3DCreate (not a mipmap level)
  int ordinal = -1;                // the device charged for `charged` bytes (arrays with memory of their own)
  size_t charged = 0;
  ~Array();                        // gives the charged bytes back
};
using ArrayPtr = std::shared_ptr<Array>;

struct MipmappedArray {
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  unsigned levels = 0;
  std::vector<ArrayPtr> level;  // level arrays live as long as the mipmapped array
  int ordinal = -1;               // as Array's: memory of its own, charged to the device
  size_t charged = 0;
  std::string describe() const;
  ~MipmappedArray();
};
using MipmappedArrayPtr = std::shared_ptr<MipmappedArray>;

Registry<Array>& arrays();
Registry<MipmappedArray>& mipmapped_arrays();

// Bytes per element of `format` with `channels` channels; 0 when the format or channel count is
// not one a plain array holds (block-compressed and video formats are not emulated).
size_t element_size(CUarray_format format, unsigned channels) noexcept;
const char* format_name(CUarray_format format) noexcept;
// Block-compressed and video formats: valid on a GPU, not laid out by the emulator.
bool is_opaque_format(CUarray_format format) noexcept;
// The mipmap levels an extent has, down to 1x1x1 (a layered or cubemap array's Depth counts layers).
unsigned max_levels(const CUDA_ARRAY3D_DESCRIPTOR& d) noexcept;

// The descriptor rules of cuArray3DCreate on device `ordinal` (its limits from the profile);
// elem is the element size.
Errc check_array_desc(const CUDA_ARRAY3D_DESCRIPTOR& d, int ordinal, const char* api, const char* what, size_t& elem);
// An array, or a mipmapped array, with device memory of its own in ctx's device.
Errc create_array(const std::shared_ptr<Context>& ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, const char* api,
                  const char* what, ArrayPtr& out);
Errc create_mipmap(const std::shared_ptr<Context>& ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels,
                   const char* api, const char* what, MipmappedArrayPtr& out);
// Byte-addressed copies (cuMemcpyHtoA and friends) reach an array's first row: where `bytes` at
// `offset` start, or an explanation.
Errc linear_range(const ArrayPtr& a, size_t offset, size_t bytes, const char* api, const char* what, char*& out);

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
