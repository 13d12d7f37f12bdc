// Texture and surface instructions (ops_tex.cpp, lowered by ptx_lower_tex.cpp): the geometry
// and modifier codes the lowering stores in Insn::mod / mod2, and the handler table.
#pragma once
#include <string_view>

#include "exec/ir.hpp"

namespace cuda_shim::exec {

enum class TexGeom : uint8_t { g1d, g2d, g3d, a1d, a2d, cube, acube, ms2d, ams2d };
constexpr uint8_t kTexLevel = 1;                                // tex.level: an explicit lod
constexpr uint8_t kSurfTrap = 0, kSurfClamp = 1, kSurfZero = 2;  // suld/sust out-of-range modes

Handler tex_handler(std::string_view op, Insn& in);

}  // namespace cuda_shim::exec
