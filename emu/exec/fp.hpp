// Floating-point semantics of PTX instructions, as pure functions over values and raw bits.
//
// The interpreter calls these for every floating-point instruction, so the common case (.rn, no
// modifier) is an inline native operation; directed rounding (.rz/.rm/.rp), the .approx functions,
// conversions and half precision live out of line in fp.cpp, fp_cvt.cpp and fp_half.cpp.
//
// Rules followed (PTX ISA, "Floating-Point Instructions" and each instruction's notes):
// - .ftz (f32 only; f16 where PTX allows it) flushes subnormal inputs and results to
//   sign-preserving zero. A result is subnormal when the exact value rounded to 24 bits with an
//   unbounded exponent is below 2^-126 (measured on an H200: 2^-126 - 2^-150 rounded up to 2^-126
//   is flushed, 2^-126 - 2^-152 is not).
// - .sat clamps the result to [0.0, 1.0]; NaN becomes +0.0 (and -0.0 becomes +0.0: see notes).
// - An f32 arithmetic result that is NaN is the canonical NaN 0x7fffffff; an f16/bf16 one 0x7fff.
// - f64 keeps NaN payloads (the ISA: "NaN payloads are supported for double-precision"): one NaN
//   operand, quieted, chosen as an H200 chooses (add/sub/mul: b then a; fma: b, c, a; div: a, b);
//   a NaN made from numbers (inf-inf, 0/0, sqrt(-1)) is kNaN64 = 0xfff8000000000000 (H200).
// - min/max return the non-NaN operand when only one is NaN, and order -0.0 below +0.0.
// Where the GPU's bits cannot be derived from the ISA (the .approx functions), the result is the
// correctly rounded value of the exact function (via double), which lies inside the documented
// error bound but may differ from a GPU in the last bits. /work/notes/fp.md lists what a GPU run
// must settle.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cuda_shim::exec::fp {

// ---- bits <-> values -------------------------------------------------------------------------
inline uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline uint64_t bits(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
inline float as_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline double as_f64(uint64_t u) { double d; std::memcpy(&d, &u, 8); return d; }

inline constexpr uint32_t kNaN32 = 0x7fffffffu;  // what the GPU writes for any f32 NaN result
// f64 NaN created from non-NaN operands (0/0, inf-inf, sqrt(-1)), as an H200 writes it.
inline constexpr uint64_t kNaN64 = 0xfff8000000000000ull;
inline constexpr uint16_t kNaN16 = 0x7fff;  // f16 and bf16 canonical NaN

enum class Rnd : uint8_t { rn, rz, rm, rp, rna };  // rna only where PTX has it (cvt to tf32)
enum class IRnd : uint8_t { rni, rzi, rmi, rpi, none };

// Tests without floating-point compares so that -ffast-math elsewhere cannot remove them.
inline bool is_nan(float f) { return (bits(f) & 0x7fffffffu) > 0x7f800000u; }
inline bool is_nan(double d) { return (bits(d) & ~(1ull << 63)) > 0x7ff0000000000000ull; }
inline bool is_subnormal(float f) { uint32_t u = bits(f); return (u & 0x7f800000u) == 0 && (u & 0x7fffffu); }
inline bool is_subnormal(double d) {
  uint64_t u = bits(d);
  return (u & 0x7ff0000000000000ull) == 0 && (u & 0xfffffffffffffull);
}

// Sign-preserving flush of a subnormal (exponent field zero keeps only the sign).
inline float flush(float f) {
  uint32_t u = bits(f);
  return (u & 0x7f800000u) ? f : as_f32(u & 0x80000000u);
}
inline float flush_if(float f, bool ftz) { return ftz ? flush(f) : f; }
inline float canon(float f) { return is_nan(f) ? as_f32(kNaN32) : f; }
inline double quiet(double d) { return as_f64(bits(d) | (1ull << 51)); }

// .sat: [0, 1], NaN -> +0. The compares are false for NaN, so NaN falls to +0.
inline float saturate(float f) { return f > 0.0f ? (f < 1.0f ? f : 1.0f) : 0.0f; }
inline double saturate(double d) { return d > 0.0 ? (d < 1.0 ? d : 1.0) : 0.0; }

// Canonical NaN, then .ftz on the result, then .sat: the order the ISA describes.
inline float finish(float d, bool ftz, bool sat) {
  d = canon(d);
  if (ftz) d = flush(d);
  return sat ? saturate(d) : d;
}

// f64 NaN result: the NaN operands in the order of preference given, quieted, else kNaN64. (Native
// x86 picks by register order, which the compiler may commute, so the choice is made here.)
inline double nan_result(double p, double q, double r = 0.0) {
  if (is_nan(p)) return quiet(p);
  if (is_nan(q)) return quiet(q);
  if (is_nan(r)) return quiet(r);
  return as_f64(kNaN64);
}

// ---- out-of-line directed rounding (fp.cpp, compiled so the rounding mode is honoured) ----------
namespace detail {
float add_dir(float a, float b, Rnd r);
float mul_dir(float a, float b, Rnd r);
float fma_dir(float a, float b, float c, Rnd r);
float div_dir(float a, float b, Rnd r);
float sqrt_dir(float a, Rnd r);
// .ftz on a result of exactly +-2^-126: was the exact value, rounded to 24 bits with an unbounded
// exponent, below 2^-126? Then it is flushed too. (Rare, so out of line.)
bool tiny_add(float a, float b, Rnd r);
bool tiny_mul(float a, float b, Rnd r);
bool tiny_fma(float a, float b, float c, Rnd r);
bool tiny_div(float a, float b, Rnd r);
inline bool at_min_normal(float d) { return (bits(d) & 0x7fffffffu) == 0x00800000u; }
inline float zero_like(float d) { return as_f32(bits(d) & 0x80000000u); }
double add_dir(double a, double b, Rnd r);
double mul_dir(double a, double b, Rnd r);
double fma_dir(double a, double b, double c, Rnd r);
double div_dir(double a, double b, Rnd r);
double sqrt_dir(double a, Rnd r);
}  // namespace detail

// ---- f32 / f64 basic arithmetic: add sub mul fma (mad.rnd = fma) --------------------------------
inline float add(float a, float b, Rnd r = Rnd::rn, bool ftz = false, bool sat = false) {
  a = flush_if(a, ftz), b = flush_if(b, ftz);
  float d = r == Rnd::rn ? a + b : detail::add_dir(a, b, r);
  if (ftz && detail::at_min_normal(d) && detail::tiny_add(a, b, r)) d = detail::zero_like(d);
  return finish(d, ftz, sat);
}
inline float sub(float a, float b, Rnd r = Rnd::rn, bool ftz = false, bool sat = false) {
  return add(a, -b, r, ftz, sat);  // the NaN that -b may carry is canonicalized anyway
}
inline float mul(float a, float b, Rnd r = Rnd::rn, bool ftz = false, bool sat = false) {
  a = flush_if(a, ftz), b = flush_if(b, ftz);
  float d = r == Rnd::rn ? a * b : detail::mul_dir(a, b, r);
  if (ftz && detail::at_min_normal(d) && detail::tiny_mul(a, b, r)) d = detail::zero_like(d);
  return finish(d, ftz, sat);
}
inline float fma(float a, float b, float c, Rnd r = Rnd::rn, bool ftz = false, bool sat = false) {
  a = flush_if(a, ftz), b = flush_if(b, ftz), c = flush_if(c, ftz);
  float d = r == Rnd::rn ? std::fma(a, b, c) : detail::fma_dir(a, b, c, r);
  if (ftz && detail::at_min_normal(d) && detail::tiny_fma(a, b, c, r)) d = detail::zero_like(d);
  return finish(d, ftz, sat);
}

inline double fix_nan(double d, double p, double q, double r = 0.0) {
  return is_nan(d) ? nan_result(p, q, r) : d;
}
inline double add(double a, double b, Rnd r = Rnd::rn) {
  return fix_nan(r == Rnd::rn ? a + b : detail::add_dir(a, b, r), b, a);
}
// sub negates b only for the arithmetic: a NaN b keeps its own sign in the result (H200).
inline double sub(double a, double b, Rnd r = Rnd::rn) {
  return fix_nan(r == Rnd::rn ? a - b : detail::add_dir(a, -b, r), b, a);
}
inline double mul(double a, double b, Rnd r = Rnd::rn) {
  return fix_nan(r == Rnd::rn ? a * b : detail::mul_dir(a, b, r), b, a);
}
inline double fma(double a, double b, double c, Rnd r = Rnd::rn) {
  return fix_nan(r == Rnd::rn ? std::fma(a, b, c) : detail::fma_dir(a, b, c, r), b, c, a);
}

// ---- division, reciprocal, square root (fp.cpp) --------------------------------------------------
float div(float a, float b, Rnd r, bool ftz = false);       // div.rnd{.ftz}.f32: IEEE
float div_full(float a, float b, bool ftz = false);         // div.full{.ftz}.f32: <= 2 ulp
float div_approx(float a, float b, bool ftz = false);       // div.approx{.ftz}.f32
double div(double a, double b, Rnd r);                      // div.rnd.f64
float rcp(float a, Rnd r, bool ftz = false);                // rcp.rnd{.ftz}.f32
float rcp_approx(float a, bool ftz = false);                // rcp.approx{.ftz}.f32
double rcp(double a, Rnd r);                                // rcp.rnd.f64
double rcp_approx_ftz(double a);                            // rcp.approx.ftz.f64: high word only
float sqrt(float a, Rnd r, bool ftz = false);               // sqrt.rnd{.ftz}.f32
float sqrt_approx(float a, bool ftz = false);               // sqrt.approx{.ftz}.f32
double sqrt(double a, Rnd r);                               // sqrt.rnd.f64
float rsqrt_approx(float a, bool ftz = false);              // rsqrt.approx{.ftz}.f32
double rsqrt_approx(double a, bool ftz = false);            // rsqrt.approx{.ftz}.f64 (.ftz: high word)

// ---- .approx transcendental functions, f32 (fp.cpp) ---------------------------------------------
// Correctly rounded from double; the GPU's MUFU results can differ in the last bits (ISA bounds:
// ex2 2 ulp, lg2 / sin / cos absolute 2^-22 / 2^-20.9 class, tanh relative 2^-11). Seen on an
// H200: rsqrt(2^-127) and lg2(2^-127) one ulp below the correctly rounded value, tanh.f16(0.5) too.
// sin.approx gives +-0 for inputs whose product with 1/(2 pi) is below 2^-126, .ftz or not (H200).
float ex2_approx(float a, bool ftz = false);
float lg2_approx(float a, bool ftz = false);
float sin_approx(float a, bool ftz = false);
float cos_approx(float a, bool ftz = false);
float tanh_approx(float a);

// ---- min / max / abs / neg / copysign ------------------------------------------------------------
struct MinMax {
  bool ftz = false;
  bool nan = false;           // .NaN: any NaN operand gives the canonical NaN
  bool xorsign_abs = false;   // .xorsign.abs: compare |a|, |b|; sign = sign(a) ^ sign(b)
};
namespace detail {
// -0 < +0 for both; NaN handling per the flags. `want_max` picks the direction.
inline float minmax_f32(float a, float b, MinMax m, bool want_max) {
  a = flush_if(a, m.ftz), b = flush_if(b, m.ftz);
  uint32_t sign = (bits(a) ^ bits(b)) & 0x80000000u;
  if (m.xorsign_abs) a = std::fabs(a), b = std::fabs(b);
  bool na = is_nan(a), nb = is_nan(b);
  if (na || nb) {
    if (m.nan || (na && nb)) return as_f32(kNaN32);
    float d = na ? b : a;
    return m.xorsign_abs ? as_f32(bits(d) | sign) : d;
  }
  bool a_first;  // a is the answer
  if (a == b) a_first = want_max ? !std::signbit(a) : std::signbit(a);
  else a_first = want_max ? a > b : a < b;
  float d = a_first ? a : b;
  return m.xorsign_abs ? as_f32(bits(d) | sign) : d;
}
inline double minmax_f64(double a, double b, bool want_max) {
  bool na = is_nan(a), nb = is_nan(b);
  if (na && nb) return quiet(b);  // as an H200 answers
  if (na) return b;
  if (nb) return a;
  if (a == b) return (want_max ? !std::signbit(a) : std::signbit(a)) ? a : b;
  return (want_max ? a > b : a < b) ? a : b;
}
}  // namespace detail
inline float min(float a, float b, MinMax m = {}) { return detail::minmax_f32(a, b, m, false); }
inline float max(float a, float b, MinMax m = {}) { return detail::minmax_f32(a, b, m, true); }
inline double min(double a, double b) { return detail::minmax_f64(a, b, false); }  // both NaN: b
inline double max(double a, double b) { return detail::minmax_f64(a, b, true); }
// Three-operand min/max{.ftz}{.NaN}{.abs}.f32 (sm_100): .abs takes |x| of each input.
inline float min3(float a, float b, float c, MinMax m = {}, bool abs = false) {
  if (abs) a = std::fabs(a), b = std::fabs(b), c = std::fabs(c);
  m.xorsign_abs = false;
  return min(min(a, b, m), c, m);
}
inline float max3(float a, float b, float c, MinMax m = {}, bool abs = false) {
  if (abs) a = std::fabs(a), b = std::fabs(b), c = std::fabs(c);
  m.xorsign_abs = false;
  return max(max(a, b, m), c, m);
}

// abs/neg.f32: a NaN input gives the canonical NaN (CUDA guide: f32 ops on NaN write 0x7fffffff;
// H200 agrees); abs/neg.f64 return a NaN quieted with its sign unchanged (H200; the CUDA guide says
// "passed through unchanged").
inline float abs(float a, bool ftz = false) { return canon(std::fabs(flush_if(a, ftz))); }
inline float neg(float a, bool ftz = false) { return canon(-flush_if(a, ftz)); }
inline double abs(double a) { return is_nan(a) ? quiet(a) : std::fabs(a); }
inline double neg(double a) { return is_nan(a) ? quiet(a) : -a; }
// copysign d, a, b: the sign of a on the value of b (operand order as in the ISA). Bit operation.
inline float copysign(float a, float b) { return as_f32((bits(b) & 0x7fffffffu) | (bits(a) & 0x80000000u)); }
inline double copysign(double a, double b) {
  return as_f64((bits(b) & ~(1ull << 63)) | (bits(a) & (1ull << 63)));
}

// ---- testp, setp / set comparisons ---------------------------------------------------------------
enum class TestP : uint8_t { finite, infinite, number, notanumber, normal, subnormal };
template <class T> inline bool testp(T a, TestP t) {
  switch (t) {
    case TestP::finite: return std::isfinite(a);
    case TestP::infinite: return std::isinf(a);
    case TestP::number: return !is_nan(a);
    case TestP::notanumber: return is_nan(a);
    case TestP::normal: return std::isnormal(a);
    case TestP::subnormal: return is_subnormal(a);
  }
  return false;
}

// Float compare operators of setp/set. The integer-only lo/ls/hi/hs are not here.
enum class Cmp : uint8_t { eq, ne, lt, le, gt, ge, equ, neu, ltu, leu, gtu, geu, num, nan };
template <class T> inline bool compare_values(T a, T b, Cmp c) {
  bool u = is_nan(a) || is_nan(b);  // unordered
  switch (c) {
    case Cmp::eq: return !u && a == b;
    case Cmp::ne: return !u && a != b;  // ordered: false when either is NaN
    case Cmp::lt: return !u && a < b;
    case Cmp::le: return !u && a <= b;
    case Cmp::gt: return !u && a > b;
    case Cmp::ge: return !u && a >= b;
    case Cmp::equ: return u || a == b;
    case Cmp::neu: return u || a != b;
    case Cmp::ltu: return u || a < b;
    case Cmp::leu: return u || a <= b;
    case Cmp::gtu: return u || a > b;
    case Cmp::geu: return u || a >= b;
    case Cmp::num: return !u;
    case Cmp::nan: return u;
  }
  return false;
}
inline bool compare(float a, float b, Cmp c, bool ftz = false) {
  return compare_values(flush_if(a, ftz), flush_if(b, ftz), c);
}
inline bool compare(double a, double b, Cmp c) { return compare_values(a, b, c); }
// set.dtype with a float destination writes 1.0f / 0.0f; integer destinations 0xffffffff / 0.
inline float set_f32(bool p) { return p ? 1.0f : 0.0f; }

}  // namespace cuda_shim::exec::fp

#include "exec/fp_cvt.hpp"
#include "exec/fp_half.hpp"
