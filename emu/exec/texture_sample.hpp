// Texture sampling as the GPU's texture units do it (the CUDA programming guide's "Texture
// Fetching" appendix, and fetches recorded on an H200: tests/nvcc/textures.cu): coordinates
// normalized or not, the four address modes, point and linear filtering with weights in 1/256
// steps, element and normalized-float reads of every array format, sRGB, gathers, layers,
// mipmap levels. Texels come from the texture's array, or from device memory through the
// kernel's view of it (so freed memory faults as a load would).
#pragma once
#include <cstdint>
#include <string>

#include "exec/memory.hpp"
#include "exec/ops_tex.hpp"
#include "memory/texture.hpp"

namespace cuda_shim::exec {

struct SampleArgs {
  TexGeom geom = TexGeom::g1d;
  float x = 0, y = 0, z = 0;   // float coordinates
  int32_t ix = 0, iy = 0, iz = 0;  // integer coordinates (tex.*.s32)
  bool int_coords = false;
  int32_t layer = 0;           // a1d / a2d
  float lod = 0;
  bool has_lod = false;
  int gather = -1;             // tld4: the component gathered, else -1
};

// The four words a fetch returns (floats, or integers where the texture reads integers).
// False with `why` set when a texel's memory is not there (the launch faults).
bool sample(const mem::TexObject& t, MemView& mem, const SampleArgs& a, uint32_t out[4], std::string& why);

// txq's answer for query q (the order ptx_lower_tex.cpp lists them).
uint32_t texture_query(const mem::TexObject& t, unsigned q);

}  // namespace cuda_shim::exec
