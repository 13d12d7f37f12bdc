// Texture and surface instructions: tex, tld4 and txq read a texture object through the
// sampler (texture_sample.cpp); suld and sust read and write a surface's array bytes, x counted
// in bytes as PTX's .b forms count it. Handles come from the lanes' registers, looked up once
// per instruction and warp while the lanes agree (they nearly always do).
#include <fmt/format.h>

#include <cstring>

#include "exec/ops.hpp"
#include "exec/ops_tex.hpp"
#include "exec/texture_sample.hpp"

namespace cuda_shim::exec {
namespace {

// The live object a lane's handle names, reusing the previous lane's lookup.
template <class P, P (*Find)(uint64_t)>
struct Lookup {
  uint64_t h = 0;
  P obj;
  const P& get(uint64_t handle) {
    if (!obj || handle != h) h = handle, obj = Find(handle);
    return obj;
  }
};
using TexLookup = Lookup<mem::TexPtr, &mem::find_texture>;
using SurfLookup = Lookup<mem::SurfPtr, &mem::find_surface>;

float f32(const Warp& w, uint32_t slot, unsigned l) { return from_slot<float>(w.get(slot, l)); }
int32_t s32(const Warp& w, uint32_t slot, unsigned l) { return static_cast<int32_t>(w.get(slot, l)); }

// A handle that names no live object. Measured on an H200: handles 0 and 12345 read zeros
// (they index the GPU's descriptor table), 0xffffffff faults with ILLEGAL_ADDRESS. Loads write
// zeros here below 2^20 handles and fault above.
constexpr uint64_t kHandleTable = 1u << 20;
void no_object(Warp& w, const Insn& in, unsigned l, const char* what, uint64_t h, bool store) {
  if (h >= kHandleTable)
    return raise(w, l, Errc::illegal_address,
                 fmt::format("{} handle {:#x} names no live {} object (beyond the GPU's descriptor table)", what, h,
                             what));
  if (store) return;
  for (unsigned k = 0; k < 4; ++k)  // every destination the instruction has (unused slots are kNone)
    if (in.op[k] != kNone) w.set(in.op[k], l, 0);
}

// The coordinates of lane l: op[5..7] as the geometry lays them out (a layer first).
SampleArgs args_of(const Warp& w, const Insn& in, unsigned l, bool is_tex) {
  SampleArgs a;
  a.geom = static_cast<TexGeom>(in.mod);
  a.int_coords = in.ty2 == Ty::s32;
  const bool layered = a.geom == TexGeom::a1d || a.geom == TexGeom::a2d;
  const uint32_t* c = in.op + 5;
  if (layered) a.layer = s32(w, c[0], l), ++c;
  const unsigned n = a.geom == TexGeom::g3d ? 3 : (a.geom == TexGeom::g1d || a.geom == TexGeom::a1d) ? 1 : 2;
  float* fs[3] = {&a.x, &a.y, &a.z};
  int32_t* is[3] = {&a.ix, &a.iy, &a.iz};
  for (unsigned k = 0; k < n; ++k) {
    if (a.int_coords) *is[k] = s32(w, c[k], l);
    else *fs[k] = f32(w, c[k], l);
  }
  if (is_tex && in.mod2 == kTexLevel) a.has_lod = true, a.lod = f32(w, c[n], l);  // tld4's mod2 is its component
  return a;
}

void fetch(Warp& w, const Insn& in, uint32_t m, int gather) {
  TexLookup tl;
  std::string why;
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    const uint64_t h = w.get(in.op[4], l);
    const mem::TexPtr& t = tl.get(h);
    if (!t) return no_object(w, in, l, "texture", h, false);
    SampleArgs a = args_of(w, in, l, gather < 0);
    a.gather = gather;
    uint32_t out[4];
    if (!sample(*t, *w.block->mem, a, out, why))
      return raise(w, l, Errc::illegal_address, "a texture fetch reads device memory that is not there: " + why);
    for (int k = 0; k < 4; ++k)
      if (in.op[k] != kNone) w.set(in.op[k], l, out[k]);
  });
}

void tex(Warp& w, const Insn& in, uint32_t m) { fetch(w, in, m, -1); }
void tld4(Warp& w, const Insn& in, uint32_t m) { fetch(w, in, m, in.mod2); }

void txq(Warp& w, const Insn& in, uint32_t m) {
  TexLookup tl;
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    const uint64_t h = w.get(in.op[4], l);
    const mem::TexPtr& t = tl.get(h);
    if (!t) return no_object(w, in, l, "texture", h, false);
    w.set(in.op[0], l, texture_query(*t, in.mod2));
  });
}

// Where lane l's surface access lands: the byte offset in the array, or false when out of range
// (clamp mode moves the coordinates to the nearest texel instead).
bool surface_offset(const mem::Array& a, const Insn& in, const Warp& w, unsigned l, size_t bytes, size_t& off) {
  const TexGeom g = static_cast<TexGeom>(in.mod);
  const uint32_t* c = in.op + 5;
  int64_t layer = 0, x, y = 0, z = 0;
  if (g == TexGeom::a1d || g == TexGeom::a2d) layer = s32(w, c[0], l), ++c;
  x = s32(w, c[0], l);
  if (g == TexGeom::g2d || g == TexGeom::a2d || g == TexGeom::g3d) y = s32(w, c[1], l);
  if (g == TexGeom::g3d) z = s32(w, c[2], l);
  const int64_t row = static_cast<int64_t>(a.pitch), rows = static_cast<int64_t>(a.rows),
                slices = static_cast<int64_t>(a.slices);
  const int64_t s = g == TexGeom::g3d ? z : layer;
  const bool in_range = x >= 0 && x + static_cast<int64_t>(bytes) <= row && y >= 0 && y < rows && s >= 0 && s < slices;
  if (!in_range) {
    if (in.mod2 != kSurfClamp) return false;
    x = std::clamp<int64_t>(x, 0, row - static_cast<int64_t>(bytes));
    y = std::clamp<int64_t>(y, 0, rows - 1);
    z = std::clamp<int64_t>(s, 0, slices - 1);
    off = static_cast<size_t>(z * rows * row + y * row + x);
    return true;
  }
  off = static_cast<size_t>(s * rows * row + y * row + x);
  return true;
}

void surface(Warp& w, const Insn& in, uint32_t m, bool store) {
  SurfLookup sl;
  const size_t size = ty_bytes(in.ty), bytes = size * in.vec;
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    const uint64_t h = w.get(in.op[4], l);
    const mem::SurfPtr& s = sl.get(h);
    if (!s) return no_object(w, in, l, "surface", h, store);
    size_t off = 0;
    if (!surface_offset(*s->array, in, w, l, bytes, off)) {
      if (in.mod2 == kSurfTrap)
        return raise(w, l, Errc::illegal_address,
                     fmt::format("a surface {} outside the {}x{}x{} array (.trap)", store ? "store" : "load",
                                 s->array->desc.Width, s->array->rows, s->array->slices));
      if (!store)
        for (unsigned k = 0; k < in.vec; ++k)
          if (in.op[k] != kNone) w.set(in.op[k], l, 0);  // .zero: out-of-range loads read 0
      return;
    }
    char* p = s->array->host + off;
    for (unsigned k = 0; k < in.vec; ++k, p += size) {
      // Relaxed atomic element accesses, as global memory's (blocks on other host threads may
      // touch the same texels).
      if (store) store_bits(reinterpret_cast<uint8_t*>(p), w.get(in.op[k], l), static_cast<unsigned>(size));
      else if (in.op[k] != kNone) w.set(in.op[k], l, load_bits(reinterpret_cast<uint8_t*>(p), static_cast<unsigned>(size), false));
    }
  });
}

void suld(Warp& w, const Insn& in, uint32_t m) { surface(w, in, m, false); }
void sust(Warp& w, const Insn& in, uint32_t m) { surface(w, in, m, true); }

}  // namespace

Handler tex_handler(std::string_view op, Insn& in) {
  const TexGeom g = static_cast<TexGeom>(in.mod);
  if (g == TexGeom::cube || g == TexGeom::acube || g == TexGeom::ms2d || g == TexGeom::ams2d) return nullptr;
  if (op == "tex") return &tex;
  if (op == "tld4") return g == TexGeom::g2d ? &tld4 : nullptr;
  if (op == "txq") return &txq;
  if (op == "suld" || op == "sust") {
    const unsigned b = ty_bytes(in.ty);
    if (b == 0 || b > 8) return nullptr;
    return op == "suld" ? &suld : &sust;
  }
  return nullptr;
}

}  // namespace cuda_shim::exec
