// cvt: PTX conversions. Every narrowing goes through round_to_format, which rounds the exact value
// once, in integer arithmetic, so no mode of the floating-point environment is involved.
#include "exec/fp.hpp"

#include <bit>
#include <climits>

namespace cuda_shim::exec::fp {
namespace {

// A float format by its field widths; e4m3 has no infinity (and only 0x7f/0xff as NaN).
struct Fmt {
  int ebits, mbits;
  bool has_inf;
  uint64_t nan;  // canonical NaN bits (positive)
};
constexpr Fmt kF16{5, 10, true, kNaN16};
constexpr Fmt kBF16{8, 7, true, kNaN16};
constexpr Fmt kTF32{8, 10, true, 0x7fffe000u >> 13};  // stored in the top 19 bits of a b32
constexpr Fmt kF32{8, 23, true, kNaN32};
constexpr Fmt kF64{11, 52, true, kNaN64};
constexpr Fmt kE4M3{4, 3, false, 0x7f};
constexpr Fmt kE5M2{5, 2, true, 0x7f};

bool is_float(Ty t) { return t >= Ty::f16; }
bool is_signed(Ty t) { return t >= Ty::s8 && t <= Ty::s64; }
int int_width(Ty t) {
  switch (t) {
    case Ty::u8: case Ty::s8: return 8;
    case Ty::u16: case Ty::s16: return 16;
    case Ty::u32: case Ty::s32: return 32;
    default: return 64;
  }
}
Fmt fmt_of(Ty t) {
  switch (t) {
    case Ty::f16: return kF16;
    case Ty::bf16: return kBF16;
    case Ty::tf32: return kTF32;
    case Ty::f32: return kF32;
    case Ty::e4m3: return kE4M3;
    case Ty::e5m2: return kE5M2;
    default: return kF64;
  }
}
// tf32 lives in the top 19 bits of its 32-bit register.
int storage_shift(Ty t) { return t == Ty::tf32 ? 13 : 0; }

// An exact value: (-1)^neg * mag * 2^exp2, or a special. frac keeps a NaN's payload bits.
struct Val {
  enum Kind : uint8_t { zero, num, inf, nan } kind;
  bool neg;
  uint64_t mag;
  int exp2;
  uint64_t frac;  // NaN fraction, left-aligned to 63 bits, for payload-keeping widenings
};

Val unpack_float(uint64_t b, Fmt f) {
  const int w = f.ebits + f.mbits;
  const bool neg = (b >> w) & 1;
  const uint64_t e = (b >> f.mbits) & ((1ull << f.ebits) - 1), m = b & ((1ull << f.mbits) - 1);
  const uint64_t emax_field = (1ull << f.ebits) - 1;
  const int bias = (1 << (f.ebits - 1)) - 1;
  if (!f.has_inf && e == emax_field && m == (1ull << f.mbits) - 1) return {Val::nan, neg, 0, 0, 0};
  if (f.has_inf && e == emax_field)
    return m ? Val{Val::nan, neg, 0, 0, m << (63 - f.mbits)} : Val{Val::inf, neg, 0, 0, 0};
  if (e == 0 && m == 0) return {Val::zero, neg, 0, 0, 0};
  if (e == 0) return {Val::num, neg, m, 1 - bias - f.mbits, 0};
  return {Val::num, neg, m | (1ull << f.mbits), int(e) - bias - f.mbits, 0};
}

Val unpack_int(Ty t, uint64_t a) {
  const int w = int_width(t);
  if (w < 64) a &= (1ull << w) - 1;
  bool neg = false;
  if (is_signed(t) && w < 64 && (a >> (w - 1))) a |= ~0ull << w;  // sign-extend
  if (is_signed(t) && int64_t(a) < 0) neg = true, a = 0 - a;        // INT64_MIN's magnitude fits
  return a ? Val{Val::num, neg, a, 0, 0} : Val{Val::zero, false, 0, 0, 0};
}

// The value as a double: exact for every float source, monotonic for integers.
double to_double(const Val& v) {
  switch (v.kind) {
    case Val::zero: return v.neg ? -0.0 : 0.0;
    case Val::inf: return v.neg ? -HUGE_VAL : HUGE_VAL;
    case Val::nan: return as_f64(kNaN64);
    case Val::num: break;
  }
  double d = std::ldexp(double(v.mag), v.exp2);
  return v.neg ? -d : d;
}

Val from_double(double d) { return unpack_float(bits(d), kF64); }

// mag >> shift, rounded per r. Bits that fall off decide the increment.
uint64_t round_shift(uint64_t mag, int shift, bool neg, Rnd r) {
  uint64_t kept;
  int cmp;  // the dropped bits against one half of the last kept place
  if (shift >= 64) {
    kept = 0;
    cmp = shift > 64 ? -1 : (mag > (1ull << 63)) - (mag < (1ull << 63));
  } else {
    kept = mag >> shift;
    const uint64_t rem = mag & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    cmp = (rem > half) - (rem < half);
    if (rem == 0) cmp = -2;  // exact
  }
  const bool inexact = cmp != -2;
  bool up = false;
  switch (r) {
    case Rnd::rn: up = cmp > 0 || (cmp == 0 && (kept & 1)); break;
    case Rnd::rna: up = cmp >= 0; break;
    case Rnd::rz: break;
    case Rnd::rp: up = inexact && !neg; break;
    case Rnd::rm: up = inexact && neg; break;
  }
  return kept + up;
}

// Magnitude bits of an overflowed result: infinity or the largest finite value, by mode.
uint64_t overflow_bits(bool neg, int ebits, int mbits, bool has_inf, Rnd r, bool satfinite) {
  const uint64_t ones = (1ull << mbits) - 1, exp_all = ((1ull << ebits) - 1) << mbits;
  const uint64_t maxf = has_inf ? exp_all - 1 : (exp_all | ones) - 1;
  bool to_inf = r == Rnd::rn || r == Rnd::rna || (r == Rnd::rp && !neg) || (r == Rnd::rm && neg);
  if (!to_inf || satfinite) return maxf;
  return has_inf ? exp_all : (exp_all | ones);  // e4m3 without .satfinite: NaN
}

}  // namespace

uint64_t round_to_format(bool neg, uint64_t mag, int exp2, int ebits, int mbits, bool has_inf,
                         Rnd r, bool satfinite) {
  const uint64_t sign = uint64_t(neg) << (ebits + mbits);
  if (mag == 0) return sign;
  const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
  const int emax = (1 << ebits) - (has_inf ? 2 : 1) - bias;
  int e = exp2 + 63 - std::countl_zero(mag);  // exponent of the leading bit
  if (e < emin) e = emin;                      // subnormal: the last place is fixed
  const int shift = (e - mbits) - exp2;        // bits of mag below the result's last place
  uint64_t m = shift <= 0 ? mag << -shift : round_shift(mag, shift, neg, r);
  if (m >> (mbits + 1)) m >>= 1, ++e;          // rounding carried into the next binade
  const uint64_t full = (2ull << mbits) - 1;
  if (e > emax || (!has_inf && e == emax && m == full))
    return sign | overflow_bits(neg, ebits, mbits, has_inf, r, satfinite);
  if (m >> mbits) return sign | (uint64_t(e + bias) << mbits) | (m & ((1ull << mbits) - 1));
  return sign | m;  // subnormal, or rounded to zero
}

namespace {

uint64_t max_finite(Fmt f) { return overflow_bits(false, f.ebits, f.mbits, f.has_inf, Rnd::rz, true); }

// What a NaN becomes, per source and destination, as an H200 converts (GPU results in the notes):
// canonical NaN; sign and payload kept (cut to the destination's width, quieted); or kept raw
// (cut, not quieted: bf16 -> f32 is a shift, rna -> tf32 clears the low bits, so a low-payload sNaN
// becomes infinity).
enum class NanRule : uint8_t { canonical, keep, raw };
NanRule nan_rule(Ty dst, Ty src, const CvtMods& m) {
  if (m.relu || dst == Ty::e4m3 || dst == Ty::e5m2) return NanRule::canonical;
  if (dst == Ty::tf32) return m.rnd == Rnd::rna ? NanRule::raw : NanRule::canonical;
  if (dst == Ty::f32 && src == Ty::bf16) return NanRule::raw;
  if (dst == Ty::f64 && src != Ty::e4m3 && src != Ty::e5m2) return NanRule::keep;  // widening
  if (src == Ty::f64) return NanRule::keep;  // f64 -> f32/f16/bf16 keep the top payload bits
  return NanRule::canonical;                 // f32 -> f32/f16/bf16, f16 -> f32, half <-> half
}

uint64_t pack_nan(const Val& v, Fmt f, NanRule rule) {
  if (rule == NanRule::canonical || !f.has_inf) return f.nan;
  const uint64_t exp_all = ((1ull << f.ebits) - 1) << f.mbits;
  uint64_t frac = v.frac >> (63 - f.mbits);
  if (rule == NanRule::keep) frac |= 1ull << (f.mbits - 1);
  return (uint64_t(v.neg) << (f.ebits + f.mbits)) | exp_all | frac;
}

uint64_t pack_special(const Val& v, Fmt f, const CvtMods& m, NanRule rule) {
  const uint64_t sign = uint64_t(v.neg) << (f.ebits + f.mbits);
  if (v.kind == Val::nan) return pack_nan(v, f, rule);
  if (v.kind == Val::zero) return m.relu ? 0 : sign;
  // infinity
  if (m.relu && v.neg) return 0;
  if (m.satfinite || !f.has_inf) return sign | (m.satfinite ? max_finite(f) : f.nan);
  return sign | (((1ull << f.ebits) - 1) << f.mbits);
}

// A value into a float format with the cvt modifiers (sat already applied by the caller).
uint64_t pack_float(const Val& v, Fmt f, const CvtMods& m, NanRule rule) {
  if (v.kind != Val::num) return pack_special(v, f, m, rule);
  if (m.relu && v.neg) return 0;
  return round_to_format(v.neg, v.mag, v.exp2, f.ebits, f.mbits, f.has_inf, m.rnd, m.satfinite);
}

double round_double(double x, IRnd r) {
  switch (r) {
    case IRnd::rzi: case IRnd::none: return std::trunc(x);
    case IRnd::rmi: return std::floor(x);
    case IRnd::rpi: return std::ceil(x);
    case IRnd::rni: break;
  }
  // Ties to even without depending on the thread's rounding mode.
  double f = std::floor(x), diff = x - f;
  double r2 = diff > 0.5 || (diff == 0.5 && std::fmod(f, 2.0) != 0.0) ? f + 1.0 : f;
  return std::copysign(r2, x);  // -0.3 -> -0.0, as the hardware keeps the sign of a zero
}

// .sat on a float destination: NaN and negatives (and -0) to +0, above 1 to 1.
Val saturate_val(const Val& v) {
  if (v.kind == Val::nan || v.neg) return {Val::zero, false, 0, 0, 0};
  if (v.kind == Val::inf || to_double(v) > 1.0) return {Val::num, false, 1, 0, 0};
  return v;
}

// .ftz on an f32 result: subnormal, or +-2^-126 reached by rounding up from a value that is below
// 2^-126 even when rounded to 24 bits with an unbounded exponent (the H200's tininess rule).
uint64_t ftz_f32(uint64_t d, const Val& v, Rnd r) {
  if ((d & 0x7fffffffu) == 0x00800000u && v.kind == Val::num) {
    const uint64_t up = round_to_format(v.neg, v.mag, v.exp2 + 64, 8, 23, true, r, false);
    if ((up & 0x7fffffffu) < bits(0x1p-62f)) return d & 0x80000000u;
  }
  return bits(flush(as_f32(uint32_t(d))));
}

uint64_t cvt_to_float(Ty dst, Ty src, Val v, const CvtMods& m) {
  const Fmt f = fmt_of(dst);
  if (is_float(src) && m.irnd != IRnd::none && v.kind == Val::num)
    v = from_double(round_double(to_double(v), m.irnd));
  if (m.sat) v = saturate_val(v);
  uint64_t d = pack_float(v, f, m, nan_rule(dst, src, m));
  if (dst == Ty::f32 && m.ftz) d = ftz_f32(d, v, m.rnd);
  return d << storage_shift(dst);
}

// NaN into an integer: the ISA says 0, and an H200 gives 0 for f32/f16/bf16 sources into 8..32
// bits, but the bit pattern 0x80..0 of the width for 64-bit destinations and for every f64 source
// (cvt.rzi.u8.f64 of NaN writes 0x80, cvt.rzi.s8.f64 0xff80).
uint64_t nan_to_int(Ty dst, Ty src) {
  const int w = int_width(dst);
  if (src != Ty::f64 && w < 64) return 0;
  const uint64_t top = 1ull << (w - 1);
  return is_signed(dst) ? 0 - top : top;  // signed: sign-extended (modular negation)
}

uint64_t cvt_to_int(Ty dst, Ty src, const Val& v, IRnd r) {
  if (v.kind == Val::nan) return nan_to_int(dst, src);
  const double x = to_double(v);
  const int w = int_width(dst);
  if (is_signed(dst)) return uint64_t(to_sint(x, r, w));
  return to_uint(x, r, w);
}

}  // namespace

uint64_t cvt(Ty dst, Ty src, uint64_t a, CvtMods m) {
  Val v;
  if (is_float(src)) {
    if (src == Ty::f32 && m.ftz) a = bits(flush(as_f32(uint32_t(a))));
    v = unpack_float(a >> storage_shift(src), fmt_of(src));
  } else {
    v = unpack_int(src, a);
  }
  if (is_float(dst)) return cvt_to_float(dst, src, v, m);
  if (is_float(src)) return cvt_to_int(dst, src, v, m.irnd);
  return a;  // integer to integer is the interpreter's (no floating-point semantics)
}

// ---- typed helpers ------------------------------------------------------------------------------
// Hot in half-precision arithmetic, so decoded directly rather than through cvt.
float f16_to_f32(uint16_t h) {
  const uint32_t s = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return m ? as_f32(kNaN32) : as_f32(s | 0x7f800000u);  // NaN: canonical (H200)
  if (e == 0) return as_f32(bits(float(m) * 0x1p-24f) | s);  // subnormal: exact scaling
  return as_f32(s | (e + 112) << 23 | m << 13);
}

uint16_t f32_to_f16(float f, Rnd r, bool relu, bool satfinite) {
  return uint16_t(cvt(Ty::f16, Ty::f32, bits(f), {r, IRnd::none, false, false, relu, satfinite}));
}
uint16_t f32_to_bf16(float f, Rnd r, bool relu, bool satfinite) {
  return uint16_t(cvt(Ty::bf16, Ty::f32, bits(f), {r, IRnd::none, false, false, relu, satfinite}));
}
uint16_t f64_to_f16(double d, Rnd r) { return uint16_t(cvt(Ty::f16, Ty::f64, bits(d), {r})); }
uint16_t f64_to_bf16(double d, Rnd r) { return uint16_t(cvt(Ty::bf16, Ty::f64, bits(d), {r})); }
uint32_t f32_to_tf32(float f, Rnd r, bool relu, bool satfinite) {
  return uint32_t(cvt(Ty::tf32, Ty::f32, bits(f), {r, IRnd::none, false, false, relu, satfinite}));
}
uint8_t f32_to_e4m3(float f, bool relu) {
  return uint8_t(cvt(Ty::e4m3, Ty::f32, bits(f), {Rnd::rn, IRnd::none, false, false, relu, true}));
}
uint8_t f32_to_e5m2(float f, bool relu) {
  return uint8_t(cvt(Ty::e5m2, Ty::f32, bits(f), {Rnd::rn, IRnd::none, false, false, relu, true}));
}
uint16_t e4m3_to_f16(uint8_t v) { return uint16_t(cvt(Ty::f16, Ty::e4m3, v)); }
uint16_t e5m2_to_f16(uint8_t v) { return uint16_t(cvt(Ty::f16, Ty::e5m2, v)); }

float f64_to_f32(double d, Rnd r, bool ftz, bool sat) {
  if (r == Rnd::rn && !is_nan(d)) {  // the common case: one native rounding
    float f = float(d);
    if (ftz) f = flush(f);
    return sat ? saturate(f) : f;
  }
  return as_f32(uint32_t(cvt(Ty::f32, Ty::f64, bits(d), {r, IRnd::none, ftz, sat})));
}
double f32_to_f64(float f, bool ftz) { return as_f64(cvt(Ty::f64, Ty::f32, bits(f), {Rnd::rn, IRnd::none, ftz})); }

float round_integral(float f, IRnd r, bool ftz) {
  f = flush_if(f, ftz);
  if (is_nan(f)) return as_f32(kNaN32);
  return float(round_double(f, r));  // integral of an f32 is an f32: exact
}
double round_integral(double d, IRnd r) { return is_nan(d) ? quiet(d) : round_double(d, r); }

int64_t to_sint(double x, IRnd r, int width) {
  if (is_nan(x)) return 0;
  const double t = round_double(x, r), lim = std::ldexp(1.0, width - 1);
  if (t >= lim) return int64_t((1ull << (width - 1)) - 1);
  if (t < -lim) return -int64_t((1ull << (width - 1)) - 1) - 1;
  return int64_t(t);
}

uint64_t to_uint(double x, IRnd r, int width) {
  if (is_nan(x)) return 0;
  const double t = round_double(x, r);
  if (!(t > 0.0)) return 0;  // negatives, -0
  if (t >= std::ldexp(1.0, width)) return width == 64 ? ~0ull : (1ull << width) - 1;
  return uint64_t(t);
}

float sint_to_f32(int64_t v, Rnd r) {
  if (r == Rnd::rn) return float(v);  // native conversion rounds to nearest even
  return as_f32(uint32_t(cvt(Ty::f32, Ty::s64, uint64_t(v), {r})));
}
float uint_to_f32(uint64_t v, Rnd r) {
  if (r == Rnd::rn) return float(v);
  return as_f32(uint32_t(cvt(Ty::f32, Ty::u64, v, {r})));
}
double sint_to_f64(int64_t v, Rnd r) {
  if (r == Rnd::rn) return double(v);
  return as_f64(cvt(Ty::f64, Ty::s64, uint64_t(v), {r}));
}
double uint_to_f64(uint64_t v, Rnd r) {
  if (r == Rnd::rn) return double(v);
  return as_f64(cvt(Ty::f64, Ty::u64, v, {r}));
}

// ---- packed ---------------------------------------------------------------------------------------
uint32_t cvt_f16x2_f32(float a, float b, Rnd r, bool relu, bool satfinite) {
  return uint32_t(f32_to_f16(a, r, relu, satfinite)) << 16 | f32_to_f16(b, r, relu, satfinite);
}
uint32_t cvt_bf16x2_f32(float a, float b, Rnd r, bool relu, bool satfinite) {
  return uint32_t(f32_to_bf16(a, r, relu, satfinite)) << 16 | f32_to_bf16(b, r, relu, satfinite);
}
uint16_t cvt_e4m3x2_f32(float a, float b, bool relu) {
  return uint16_t(f32_to_e4m3(a, relu) << 8 | f32_to_e4m3(b, relu));
}
uint16_t cvt_e5m2x2_f32(float a, float b, bool relu) {
  return uint16_t(f32_to_e5m2(a, relu) << 8 | f32_to_e5m2(b, relu));
}

namespace {
uint8_t f16_to_f8(uint16_t h, Ty dst, bool relu) {
  return uint8_t(cvt(dst, Ty::f16, h, {Rnd::rn, IRnd::none, false, false, relu, true}));
}
uint16_t f8_to_f16(uint8_t v, Ty src, bool relu) {
  return uint16_t(cvt(Ty::f16, src, v, {Rnd::rn, IRnd::none, false, false, relu, false}));
}
}  // namespace

uint16_t cvt_e4m3x2_f16x2(uint32_t a, bool relu) {
  return uint16_t(f16_to_f8(uint16_t(a >> 16), Ty::e4m3, relu) << 8 | f16_to_f8(uint16_t(a), Ty::e4m3, relu));
}
uint16_t cvt_e5m2x2_f16x2(uint32_t a, bool relu) {
  return uint16_t(f16_to_f8(uint16_t(a >> 16), Ty::e5m2, relu) << 8 | f16_to_f8(uint16_t(a), Ty::e5m2, relu));
}
uint32_t cvt_f16x2_e4m3x2(uint16_t a, bool relu) {
  return uint32_t(f8_to_f16(uint8_t(a >> 8), Ty::e4m3, relu)) << 16 | f8_to_f16(uint8_t(a), Ty::e4m3, relu);
}
uint32_t cvt_f16x2_e5m2x2(uint16_t a, bool relu) {
  return uint32_t(f8_to_f16(uint8_t(a >> 8), Ty::e5m2, relu)) << 16 | f8_to_f16(uint8_t(a), Ty::e5m2, relu);
}

}  // namespace cuda_shim::exec::fp
