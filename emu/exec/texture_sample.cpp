#include "exec/texture_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/fp.hpp"

namespace cuda_shim::exec {
namespace {

// One mip level's texels: extents (d: a 3D texture's depth, or a layered one's layers) and
// where they live (an array's bytes, or device memory read through the kernel's view).
struct Level {
  int64_t w = 1, h = 1, d = 1;
  size_t pitch = 0, slice = 0;
  const uint8_t* host = nullptr;
  uint64_t dev = 0;
};

Level array_level(const mem::Array& a) {
  Level L;
  L.w = static_cast<int64_t>(a.desc.Width);
  L.h = static_cast<int64_t>(a.rows);
  L.d = static_cast<int64_t>(a.slices);
  L.pitch = a.pitch;
  L.slice = a.pitch * a.rows;
  L.host = reinterpret_cast<const uint8_t*>(a.host);
  return L;
}

Level level_of(const mem::TexObject& t, unsigned l) {
  if (t.mip) return array_level(*t.mip->level[std::min<unsigned>(l, t.mip->levels - 1)]);
  if (t.array) return array_level(*t.array);
  Level L;
  if (t.res.resType == CU_RESOURCE_TYPE_LINEAR) {
    L.w = static_cast<int64_t>(t.res.res.linear.sizeInBytes / t.elem);
    L.pitch = t.res.res.linear.sizeInBytes;
    L.dev = t.res.res.linear.devPtr;
  } else {
    L.w = static_cast<int64_t>(t.res.res.pitch2D.width);
    L.h = static_cast<int64_t>(t.res.res.pitch2D.height);
    L.pitch = t.res.res.pitch2D.pitchInBytes;
    L.dev = t.res.res.pitch2D.devPtr;
  }
  return L;
}

// How a format's channels are stored and what a read makes of them.
enum class Kind : uint8_t { uint_, sint_, half_, float_, unorm, snorm, rgb10a2 };
struct Fmt {
  Kind kind = Kind::float_;
  unsigned bytes = 4;  // per channel
};
Fmt fmt_of(CUarray_format f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: return {Kind::uint_, 1};
    case CU_AD_FORMAT_UNSIGNED_INT16: return {Kind::uint_, 2};
    case CU_AD_FORMAT_UNSIGNED_INT32: return {Kind::uint_, 4};
    case CU_AD_FORMAT_SIGNED_INT8: return {Kind::sint_, 1};
    case CU_AD_FORMAT_SIGNED_INT16: return {Kind::sint_, 2};
    case CU_AD_FORMAT_SIGNED_INT32: return {Kind::sint_, 4};
    case CU_AD_FORMAT_HALF: return {Kind::half_, 2};
    case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_UNORM_INT8X4:
      return {Kind::unorm, 1};
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_UNORM_INT16X4:
      return {Kind::unorm, 2};
    case CU_AD_FORMAT_SNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X4:
      return {Kind::snorm, 1};
    case CU_AD_FORMAT_SNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X4:
      return {Kind::snorm, 2};
    case CU_AD_FORMAT_UNORM_INT_101010_2: return {Kind::rgb10a2, 4};
    default: return {Kind::float_, 4};
  }
}

// A texel's four channels, as floats or as integers (missing channels read 0, measured).
struct Texel {
  float f[4] = {0, 0, 0, 0};
  int32_t i[4] = {0, 0, 0, 0};
  int32_t fx[4] = {0, 0, 0, 0};  // normalized formats: the 16-bit fixed-point value linear filtering sums
};

// Does the texture return floats? Integers of 32 bits always come back as integers; 8- and
// 16-bit ones as normalized floats unless CU_TRSF_READ_AS_INTEGER.
bool float_reads(const mem::TexObject& t, const Fmt& f) {
  if (f.kind != Kind::uint_ && f.kind != Kind::sint_) return true;
  return f.bytes < 4 && !(t.tex.flags & CU_TRSF_READ_AS_INTEGER);
}

// sRGB colour channels carry 8 significant bits (measured: their linear values, filtered or not,
// are bfloat16 values, rounded to nearest).
float bf16(float f) { return fp::half_to_f32(fp::Half::bf16, fp::f32_to_half(fp::Half::bf16, f)); }

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

Texel decode(const mem::TexObject& t, const Fmt& f, const uint8_t* p) {
  Texel x;
  const bool flt = float_reads(t, f);
  if (f.kind == Kind::rgb10a2) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    for (int k = 0; k < 3; ++k) x.f[k] = static_cast<float>((v >> (10 * k)) & 0x3ff) / 1023.0f;
    x.f[3] = static_cast<float>(v >> 30) / 3.0f;
    return x;
  }
  for (unsigned k = 0; k < t.channels && k < 4; ++k, p += f.bytes) {
    uint32_t u = 0;
    std::memcpy(&u, p, f.bytes);
    switch (f.kind) {
      case Kind::float_: std::memcpy(&x.f[k], &u, 4); break;
      case Kind::half_: x.f[k] = fp::half_to_f32(fp::Half::f16, static_cast<uint16_t>(u)); break;
      case Kind::uint_:
      case Kind::unorm:
        x.i[k] = static_cast<int32_t>(u);
        if (flt) x.f[k] = static_cast<float>(u) / static_cast<float>((1ull << (8 * f.bytes)) - 1);
        x.fx[k] = static_cast<int32_t>(f.bytes == 1 ? u * 257 : u);
        break;
      default: {  // signed
        const int s = 32 - 8 * static_cast<int>(f.bytes);
        const int32_t v = static_cast<int32_t>(u << s) >> s;
        x.i[k] = v;
        if (flt) x.f[k] = std::max(-1.0f, static_cast<float>(v) / static_cast<float>((1u << (8 * f.bytes - 1)) - 1));
        // Measured: snorm8 widens to floor(v * 32767 / 127), unclamped (-128 is -33026), so -128
        // pulls a filtered value below what -127 would.
        x.fx[k] = f.bytes == 1 ? static_cast<int32_t>(std::floor(v * 32767.0 / 127.0)) : v;
      }
    }
  }
  if ((t.tex.flags & CU_TRSF_SRGB) && flt && f.bytes == 1 && (f.kind == Kind::uint_ || f.kind == Kind::unorm))
    for (int k = 0; k < 3; ++k) x.f[k] = bf16(srgb_to_linear(x.f[k]));
  return x;
}

// The border colour, in the channels the format has (measured: a 1-channel texture's border
// reads (r, 0, 0, 0)).
Texel border(const mem::TexObject& t) {
  Texel x;
  const unsigned n = t.format == CU_AD_FORMAT_UNORM_INT_101010_2 ? 4 : std::min(t.channels, 4u);
  const Fmt f = fmt_of(t.format);
  const bool sign = f.kind == Kind::sint_ || f.kind == Kind::snorm;
  for (unsigned k = 0; k < n; ++k) {
    x.f[k] = t.tex.borderColor[k];
    x.i[k] = static_cast<int32_t>(t.tex.borderColor[k]);
    const float c = std::clamp(x.f[k], sign ? -1.0f : 0.0f, 1.0f);
    x.fx[k] = static_cast<int32_t>(std::nearbyint(c * (sign ? 32767.0f : 65535.0f)));
  }
  return x;
}

// A coordinate's texel index, saturated (NaN reads as 0).
int64_t index_of(float v) {
  if (std::isnan(v)) return 0;
  const float fl = std::floor(v);
  if (fl >= 4.0e18f) return INT64_C(4000000000000000000);
  if (fl <= -4.0e18f) return -INT64_C(4000000000000000000);
  return static_cast<int64_t>(fl);
}

// Index i along a dimension of n texels under address mode m: a texel index, or -1 for the
// border. Wrap and mirror apply to normalized coordinates only; otherwise the edge clamps.
int64_t address(int64_t i, int64_t n, CUaddress_mode m, bool norm) {
  if (n <= 0) return -1;
  if (m == CU_TR_ADDRESS_MODE_BORDER) return i < 0 || i >= n ? -1 : i;
  if (norm && m == CU_TR_ADDRESS_MODE_WRAP) return ((i % n) + n) % n;
  if (norm && m == CU_TR_ADDRESS_MODE_MIRROR) {
    const int64_t k = ((i % (2 * n)) + 2 * n) % (2 * n);
    return k < n ? k : 2 * n - 1 - k;
  }
  return std::clamp<int64_t>(i, 0, n - 1);
}

// Linear filtering's footprint along one dimension: the first texel and the weight of the second
// in 1/256 steps (the GPU keeps 8 fractional bits: 2.999 weighs 128/256, measured).
void footprint(float v, int64_t& i0, int& alpha) {
  const float b = std::isnan(v) ? -0.5f : v - 0.5f;
  if (!std::isfinite(b)) {
    i0 = index_of(b);
    alpha = 0;
    return;
  }
  const float fl = std::floor(b);
  i0 = index_of(fl);
  alpha = static_cast<int>(std::nearbyint((b - fl) * 256.0f));
}

// Normalized integer formats filter in 16-bit fixed point, as the H200 does: 8-bit unorm widens
// to u * 257 (0..65535), snorm to floor(v * 32767 / 127); the weighted sum rounds half up to 16 bits
// and only then becomes a float (v / 65535 or v / 32767): a quarter of 1/255 reads 64/65535.
struct Fixed {
  bool on = false;
  bool sign = false;
  float back(int64_t sum256) const {  // a sum of weights (in 256ths) times fixed values
    const int64_t v = (sum256 + 128) >> 8;
    return static_cast<float>(v) / (sign ? 32767.0f : 65535.0f);
  }
};

// Weights of the 2^dims corners of a 1D or 2D fetch (bit d of the index: the upper texel along
// axis d), in 256ths. Two axes: w11 = a * b / 256 rounded half up, w10 = a - w11, w01 = b - w11,
// w00 = 256 - a - b + w11 (measured).
void corner_weights(int dims, const int al[3], int64_t w[8]) {
  const int64_t a = al[0], b = al[1];
  w[0] = 256 - a, w[1] = a;
  if (dims == 1) return;
  const int64_t w11 = (a * b + 128) >> 8;
  w[3] = w11, w[1] = a - w11, w[2] = b - w11, w[0] = 256 - a - b + w11;
}

class Sampler {
 public:
  Sampler(const mem::TexObject& t, MemView& mem, std::string& why)
      : t_(t), mem_(mem), why_(why), fmt_(fmt_of(t.format)), flt_(float_reads(t, fmt_)),
        norm_((t.tex.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0), border_(border(t)) {
    fixed_.on = flt_ && fmt_.kind != Kind::float_ && fmt_.kind != Kind::half_;
    fixed_.sign = fmt_.kind == Kind::sint_ || fmt_.kind == Kind::snorm;
    srgb_ = (t.tex.flags & CU_TRSF_SRGB) && flt_ && fmt_.bytes == 1 && !fixed_.sign;
  }

  bool reads_float() const { return flt_; }

  // The texel at integer (x, y, s) of level L (s: depth or layer), addressed by the texture's
  // modes, or the border; false on a fault.
  bool texel(const Level& L, int64_t x, int64_t y, int64_t s, bool layered, Texel& out) {
    x = address(x, L.w, t_.tex.addressMode[0], norm_);
    y = address(y, L.h, t_.tex.addressMode[1], norm_);
    // A layer is an unsigned index clamped to the last layer (measured: layer -1 reads the last).
    s = layered ? std::min<int64_t>(static_cast<uint32_t>(s), L.d - 1) : address(s, L.d, t_.tex.addressMode[2], norm_);
    if (x < 0 || y < 0 || s < 0) {
      out = border_;
      return true;
    }
    const size_t off = static_cast<size_t>(s) * L.slice + static_cast<size_t>(y) * L.pitch +
                       static_cast<size_t>(x) * t_.elem;
    const uint8_t* p = L.host ? L.host + off : mem_.global(L.dev + off, static_cast<unsigned>(t_.elem), false, why_);
    if (!p) return false;
    out = decode(t_, fmt_, p);
    return true;
  }

  // A filtered (or point) fetch at texel-space coordinates (u, v, w) of level L; dims: 1, 2 or 3.
  // Linear filtering weighs the 2, 4 or 8 texels around the point; each corner's weight is the
  // product of the axes' weights rounded to 1/256 (ties to even), as measured: a bilinear fetch
  // at (0.9, 0.9) weighs (93, 61, 61, 41)/256.
  bool fetch(const Level& L, float u, float v, float w, int dims, int64_t layer, bool layered, Texel& out) {
    const bool linear = t_.tex.filterMode == CU_TR_FILTER_MODE_LINEAR && flt_;
    if (!linear) {
      const int64_t s = layered ? layer : index_of(w);
      return texel(L, index_of(u), dims > 1 ? index_of(v) : 0, dims > 2 || layered ? s : 0, layered, out);
    }
    int64_t i0[3] = {0, 0, 0};
    int al[3] = {0, 0, 0};
    const float c[3] = {u, v, w};
    for (int d = 0; d < dims; ++d) footprint(c[d], i0[d], al[d]);
    if (layered) i0[2] = layer;
    // Corner weights in 256ths: the far corner's is the product rounded half up, the others what
    // keeps each axis's own weights (measured: at (1.25, 0.9) the weights are 39, 115, 25, 77).
    if (dims == 3) return trilinear(L, i0, al, out);
    int64_t wts[8];
    corner_weights(dims, al, wts);
    float acc[4] = {0, 0, 0, 0};
    int64_t fix[4] = {0, 0, 0, 0};
    for (int k = 0; k < (1 << dims); ++k) {
      if (wts[k] == 0) continue;
      int64_t at[3] = {i0[0], i0[1], i0[2]};
      for (int d = 0; d < dims; ++d) at[d] += (k >> d) & 1;
      Texel t;
      if (!texel(L, at[0], at[1], at[2], layered, t)) return false;
      for (int ch = 0; ch < 4; ++ch) {
        if (fixed_.on && !(srgb_ && ch < 3)) fix[ch] += wts[k] * t.fx[ch];
        else acc[ch] += static_cast<float>(wts[k]) * (1.0f / 256.0f) * t.f[ch];
      }
    }
    for (int ch = 0; ch < 4; ++ch)
      out.f[ch] = srgb_ && ch < 3 ? bf16(acc[ch]) : fixed_.on ? fixed_.back(fix[ch]) : acc[ch];
    return true;
  }

  // 3D: a bilinear plane at each z (the 2D weights), blended by z's weight (matches 33 of 36
  // recorded fetches; tests/nvcc/textures.cu lists the rest as known).
  bool trilinear(const Level& L, const int64_t i0[3], const int al[3], Texel& out) {
    int64_t wxy[8];
    corner_weights(2, al, wxy);
    float acc[4] = {0, 0, 0, 0};
    for (int zi = 0; zi < 2; ++zi) {
      const int64_t wz = zi ? al[2] : 256 - al[2];
      for (int k = 0; k < 4; ++k) {
        const int64_t wt = wxy[k] * wz;
        if (wt == 0) continue;
        Texel t;
        if (!texel(L, i0[0] + (k & 1), i0[1] + (k >> 1), i0[2] + zi, false, t)) return false;
        for (int ch = 0; ch < 4; ++ch) acc[ch] += static_cast<float>(wt) * (1.0f / 65536.0f) * t.f[ch];
      }
    }
    std::memcpy(out.f, acc, sizeof acc);
    return true;
  }

 private:
  const mem::TexObject& t_;
  MemView& mem_;
  std::string& why_;
  Fmt fmt_;
  bool flt_, norm_;
  Texel border_;
  Fixed fixed_;
  bool srgb_ = false;  // sRGB colour channels filter as floats (bfloat16 values)
};

int dims_of(TexGeom g) {
  switch (g) {
    case TexGeom::g1d: case TexGeom::a1d: return 1;
    case TexGeom::g3d: return 3;
    default: return 2;
  }
}

void words(const Texel& x, bool flt, uint32_t out[4]) {
  for (int k = 0; k < 4; ++k) {
    if (flt) std::memcpy(&out[k], &x.f[k], 4);
    else out[k] = static_cast<uint32_t>(x.i[k]);
  }
}

}  // namespace

bool sample(const mem::TexObject& t, MemView& mem, const SampleArgs& a, uint32_t out[4], std::string& why) {
  Sampler s(t, mem, why);
  const bool layered = a.geom == TexGeom::a1d || a.geom == TexGeom::a2d;
  const int dims = dims_of(a.geom);
  // The level: tex.level's lod, rounded to the nearest level (linear mipmap filtering blends
  // the two nearest), from mipmapLevelBias and clamped to the texture's level clamps.
  unsigned lvl = 0;
  if (t.mip && a.has_lod) {
    const float lod = std::clamp(a.lod + t.tex.mipmapLevelBias, t.tex.minMipmapLevelClamp,
                                 std::max(t.tex.minMipmapLevelClamp, t.tex.maxMipmapLevelClamp));
    lvl = static_cast<unsigned>(std::clamp<int64_t>(index_of(lod + 0.5f), 0, t.mip->levels - 1));
  }
  const Level L = level_of(t, lvl);
  Texel x;
  if (a.int_coords) {  // tex.*.s32 (tex1Dfetch): texel indices, no filtering; out of range reads 0
    const int64_t i = a.ix, j = dims > 1 ? a.iy : 0, k = dims > 2 ? a.iz : 0;
    if (i < 0 || i >= L.w || j < 0 || j >= L.h || k < 0 || k >= L.d) {
      words(Texel{}, s.reads_float(), out);
      return true;
    }
    const bool ok = s.texel(L, i, j, layered ? a.layer : k, layered, x);
    if (ok) words(x, s.reads_float(), out);
    return ok;
  }
  const bool norm = (t.tex.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  // Normalized coordinates in wrap mode wrap before they scale (measured: 1e9 and infinity read
  // as 0, between the last texel and the first).
  auto scale = [&](float c, int axis, int64_t n) {
    if (!norm) return c;
    if (t.tex.addressMode[axis] == CU_TR_ADDRESS_MODE_WRAP) c = std::isfinite(c) ? c - std::floor(c) : 0.0f;
    return c * static_cast<float>(n);
  };
  const float u = scale(a.x, 0, L.w), v = scale(a.y, 1, L.h), w = dims > 2 ? scale(a.z, 2, L.d) : a.z;
  if (a.gather >= 0) {  // tld4: one component of the bilinear footprint's four texels
    int64_t x0 = 0, y0 = 0;
    int al = 0, be = 0;
    footprint(u, x0, al);
    footprint(v, y0, be);
    const int64_t at[4][2] = {{x0, y0 + 1}, {x0 + 1, y0 + 1}, {x0 + 1, y0}, {x0, y0}};
    const bool flt = s.reads_float();
    for (int k = 0; k < 4; ++k) {
      Texel g;
      if (!s.texel(L, at[k][0], at[k][1], 0, false, g)) return false;
      if (flt) std::memcpy(&out[k], &g.f[a.gather], 4);
      else out[k] = static_cast<uint32_t>(g.i[a.gather]);
    }
    return true;
  }
  // A 1D array is a 2D one of one row, fetched at y = 0: in border mode linear filtering blends
  // the border row in half (measured: every such fetch averages with the border colour); in the
  // other modes the row is the array's own.
  const bool border_row = dims == 1 && (t.array || t.mip) && t.tex.addressMode[1] == CU_TR_ADDRESS_MODE_BORDER;
  const int fdims = border_row ? 2 : dims;
  if (!s.fetch(L, u, dims == 1 ? 0.0f : v, w, fdims, a.layer, layered, x)) return false;
  words(x, s.reads_float(), out);
  return true;
}

uint32_t texture_query(const mem::TexObject& t, unsigned q) {
  const Level L = level_of(t, 0);
  const bool layered = t.array && (t.array->desc.Flags & CUDA_ARRAY3D_LAYERED);
  switch (q) {
    case 0: return static_cast<uint32_t>(L.w);
    case 1: return static_cast<uint32_t>(L.h);
    case 2: return layered ? 1u : static_cast<uint32_t>(L.d);
    case 5: return (t.tex.flags & CU_TRSF_NORMALIZED_COORDINATES) ? 1u : 0u;
    case 6: return static_cast<uint32_t>(t.tex.filterMode);
    case 7: case 8: case 9: return static_cast<uint32_t>(t.tex.addressMode[q - 7]);
    case 10: return layered ? static_cast<uint32_t>(L.d) : 0u;
    case 11: return t.mip ? t.mip->levels : 1u;
    case 12: return 1u;
    default: return 0u;  // channel data type and order: codes only the hardware defines
  }
}

}  // namespace cuda_shim::exec
