// Half-precision arithmetic on raw bits (included by exec/fp.hpp): f16 and bf16, scalar (uint16_t)
// and packed x2 (uint32_t, the two halves computed independently, lane 0 in the low half).
//
// Every operation rounds once to the half format with .rn (the only mode PTX gives them): the
// exact result is formed in double (products of halves are exact there; sums are rounded to odd,
// which makes the second rounding to 11 or 8 bits exact). NaN results are the canonical 0x7fff.
// .ftz (f16 only) flushes f16 subnormal inputs and results; .sat clamps to [0, 1] with NaN -> +0;
// .relu (fma) clamps negatives to +0 and keeps NaN as the canonical NaN.
#pragma once

#include <cstdint>

namespace cuda_shim::exec::fp {

enum class Half : uint8_t { f16, bf16 };

struct HMods {
  bool ftz = false;
  bool sat = false;
  bool relu = false;
};

// Conversions between the half formats and f32, on bits (exact widening, .rn narrowing).
float half_to_f32(Half t, uint16_t h);
uint16_t f32_to_half(Half t, float f);

uint16_t add(Half t, uint16_t a, uint16_t b, HMods m = {});
uint16_t sub(Half t, uint16_t a, uint16_t b, HMods m = {});
uint16_t mul(Half t, uint16_t a, uint16_t b, HMods m = {});
uint16_t fma(Half t, uint16_t a, uint16_t b, uint16_t c, HMods m = {});
uint16_t neg(Half t, uint16_t a, bool ftz = false);
uint16_t abs(Half t, uint16_t a, bool ftz = false);
uint16_t min(Half t, uint16_t a, uint16_t b, MinMax m = {});
uint16_t max(Half t, uint16_t a, uint16_t b, MinMax m = {});
uint16_t ex2_approx(Half t, uint16_t a);   // ex2.approx.f16 / ex2.approx.ftz.bf16 (bf16 flushes)
uint16_t tanh_approx(Half t, uint16_t a);  // tanh.approx.f16 / .bf16
bool compare(Half t, uint16_t a, uint16_t b, Cmp c, bool ftz = false);  // setp.f16 / setp.bf16

// Packed forms: d.lo = op(a.lo, b.lo), d.hi = op(a.hi, b.hi).
uint32_t add2(Half t, uint32_t a, uint32_t b, HMods m = {});
uint32_t sub2(Half t, uint32_t a, uint32_t b, HMods m = {});
uint32_t mul2(Half t, uint32_t a, uint32_t b, HMods m = {});
uint32_t fma2(Half t, uint32_t a, uint32_t b, uint32_t c, HMods m = {});
uint32_t neg2(Half t, uint32_t a, bool ftz = false);
uint32_t abs2(Half t, uint32_t a, bool ftz = false);
uint32_t min2(Half t, uint32_t a, uint32_t b, MinMax m = {});
uint32_t max2(Half t, uint32_t a, uint32_t b, MinMax m = {});
uint32_t ex2_approx2(Half t, uint32_t a);
uint32_t tanh_approx2(Half t, uint32_t a);
// setp.f16x2 / bf16x2 write two predicates: bit 0 for the low half, bit 1 for the high half.
unsigned compare2(Half t, uint32_t a, uint32_t b, Cmp c, bool ftz = false);

}  // namespace cuda_shim::exec::fp
