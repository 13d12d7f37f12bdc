// cvt: conversions between every PTX integer and floating type (included by exec/fp.hpp).
//
// Narrowing float conversions and int->float are done in software from the exact value (one
// rounding, every mode, no floating-point environment); widening ones are exact.
// PTX rules applied:
// - float -> int rounds with .irnd (rni rzi rmi rpi; the ISA requires one), clamps to the
//   destination's range (so .sat is redundant). NaN: the ISA says 0; an H200 writes 0 for f32/f16/
//   bf16 sources into 8..32-bit integers but 0x80..0 (of the width) for 64-bit destinations and for
//   any f64 source; cvt() follows the H200, to_sint/to_uint the ISA.
// - NaN into a float (H200): f32 -> f32/f16/bf16 and f16 -> f32 give the canonical NaN; f64 -> f32/
//   f16/bf16 keep the sign and the top payload bits, quieted; widening to f64 keeps the payload,
//   quieted; bf16 -> f32 is a plain shift; cvt.rna.tf32.f32 clears the low 13 bits without quieting
//   (an sNaN with a low payload becomes infinity) while .rn/.rz to tf32 give 0x7fffe000.
// - .ftz flushes f32 subnormal inputs and f32 subnormal results; other formats are not flushed.
// - .sat on a float destination clamps to [0, 1] (NaN -> +0).
// - .relu (f16, bf16, tf32, e4m3, e5m2 destinations) clamps negative results to +0 and turns NaN
//   into the destination's canonical NaN; .satfinite clamps +-inf and overflow to +-max finite
//   (NaN stays NaN). e4m3 has no infinity: its conversions are always .satfinite in PTX.
// - Packed: cvt.*.f16x2.f32 d, a, b puts a in the upper half, b in the lower (likewise bf16x2 and
//   the 8-bit pairs).
#pragma once

#include <cstdint>

namespace cuda_shim::exec::fp {

enum class Ty : uint8_t { u8, u16, u32, u64, s8, s16, s32, s64, f16, bf16, tf32, f32, f64, e4m3, e5m2 };

struct CvtMods {
  Rnd rnd = Rnd::rn;         // .rn .rz .rm .rp (.rna for tf32): float or int -> narrower float
  IRnd irnd = IRnd::none;    // .rni .rzi .rmi .rpi: float -> int, or float -> same float integral
  bool ftz = false;
  bool sat = false;
  bool relu = false;
  bool satfinite = false;
};

// The general entry: `a` holds the source's bits in its low bits (integers need not be extended);
// the result is the destination's bits, integers sign- or zero-extended to 64 bits.
uint64_t cvt(Ty dst, Ty src, uint64_t a, CvtMods m = {});

// Bits of the rounded value of (-1)^neg * mag * 2^exp2 in a small format: the shared rounding step.
// ebits/mbits: exponent and stored mantissa widths. Exposed for the tests.
uint64_t round_to_format(bool neg, uint64_t mag, int exp2, int ebits, int mbits, bool has_inf,
                         Rnd r, bool satfinite);

// ---- typed helpers (the common cases, without the Ty dispatch) ----------------------------------
float f16_to_f32(uint16_t h);  // exact; NaN -> 0x7fffffff (H200)
inline float bf16_to_f32(uint16_t h) { return as_f32(uint32_t(h) << 16); }  // exact, a shift
uint16_t f32_to_f16(float f, Rnd r = Rnd::rn, bool relu = false, bool satfinite = false);
uint16_t f32_to_bf16(float f, Rnd r = Rnd::rn, bool relu = false, bool satfinite = false);
uint16_t f64_to_f16(double d, Rnd r = Rnd::rn);
uint16_t f64_to_bf16(double d, Rnd r = Rnd::rn);
uint32_t f32_to_tf32(float f, Rnd r = Rnd::rna, bool relu = false, bool satfinite = false);
uint8_t f32_to_e4m3(float f, bool relu = false);  // .rn.satfinite
uint8_t f32_to_e5m2(float f, bool relu = false);  // .rn.satfinite
uint16_t e4m3_to_f16(uint8_t v);                  // exact
uint16_t e5m2_to_f16(uint8_t v);                  // exact
float f64_to_f32(double d, Rnd r = Rnd::rn, bool ftz = false, bool sat = false);
double f32_to_f64(float f, bool ftz = false);     // exact; NaN payload kept and quieted
// cvt.irnd.f32.f32 / .f64.f64: round to an integral value, result stays floating.
float round_integral(float f, IRnd r, bool ftz = false);
double round_integral(double d, IRnd r);
// float -> integer of `width` bits (8, 16, 32, 64): rounded, clamped, NaN -> 0 (the ISA's rule).
int64_t to_sint(double x, IRnd r, int width);
uint64_t to_uint(double x, IRnd r, int width);
// integer -> float with rounding.
float sint_to_f32(int64_t v, Rnd r = Rnd::rn);
float uint_to_f32(uint64_t v, Rnd r = Rnd::rn);
double sint_to_f64(int64_t v, Rnd r = Rnd::rn);
double uint_to_f64(uint64_t v, Rnd r = Rnd::rn);

// ---- packed conversions -------------------------------------------------------------------------
uint32_t cvt_f16x2_f32(float a, float b, Rnd r = Rnd::rn, bool relu = false, bool satfinite = false);
uint32_t cvt_bf16x2_f32(float a, float b, Rnd r = Rnd::rn, bool relu = false, bool satfinite = false);
uint16_t cvt_e4m3x2_f32(float a, float b, bool relu = false);
uint16_t cvt_e5m2x2_f32(float a, float b, bool relu = false);
uint16_t cvt_e4m3x2_f16x2(uint32_t a, bool relu = false);
uint16_t cvt_e5m2x2_f16x2(uint32_t a, bool relu = false);
uint32_t cvt_f16x2_e4m3x2(uint16_t a, bool relu = false);
uint32_t cvt_f16x2_e5m2x2(uint16_t a, bool relu = false);

}  // namespace cuda_shim::exec::fp
