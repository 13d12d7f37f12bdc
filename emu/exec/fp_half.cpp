// Half-precision arithmetic: decode to double, compute with one rounding to odd, round to the
// half format with cvt's rounding (exec/fp_cvt.cpp), apply .ftz/.sat/.relu on the half result.
#include "exec/fp.hpp"

namespace cuda_shim::exec::fp {
namespace {

Ty ty(Half t) { return t == Half::f16 ? Ty::f16 : Ty::bf16; }

bool is_nan_h(Half t, uint16_t h) {
  const uint16_t inf = t == Half::f16 ? 0x7c00 : 0x7f80;
  return (h & 0x7fffu) > inf;
}
// Sign-preserving flush of a half subnormal (exponent field zero).
uint16_t flush_h(Half t, uint16_t h) {
  const uint16_t exp = t == Half::f16 ? 0x7c00 : 0x7f80;
  return (h & exp) ? h : uint16_t(h & 0x8000u);
}

double to_d(Half t, uint16_t h) { return double(half_to_f32(t, h)); }

// The exact a*b + c rounded to odd in double: TwoSum gives the error of the rounded sum, and an
// inexact sum is moved toward zero with its last bit set. Products of halves are exact in double.
double fma_odd(double a, double b, double c) {
  const double p = a * b, s = p + c;
  if (!std::isfinite(s)) return s;
  const double bb = s - p, err = (p - (s - bb)) + (c - bb);
  if (err == 0.0) return s;
  uint64_t u = bits(s);
  if ((err < 0.0) != (s < 0.0)) u -= 1;  // s overshot the exact value: step toward zero
  return as_f64(u | 1);
}

uint16_t round_h(Half t, double d) { return uint16_t(cvt(ty(t), Ty::f64, bits(d), {Rnd::rn})); }

// .ftz then .relu then .sat, on the rounded half result.
uint16_t finish_h(Half t, uint16_t h, HMods m) {
  if (m.ftz) h = flush_h(t, h);
  const bool nan = is_nan_h(t, h);
  if (nan) h = kNaN16;
  if (m.relu && !nan && (h & 0x8000u)) h = 0;
  if (m.sat) {
    const uint16_t one = t == Half::f16 ? 0x3c00 : 0x3f80;
    if (nan || (h & 0x8000u)) h = 0;
    else if (half_to_f32(t, h) > 1.0f) h = one;
  }
  return h;
}

template <class Op> uint16_t binary(Half t, uint16_t a, uint16_t b, HMods m, Op op) {
  if (m.ftz) a = flush_h(t, a), b = flush_h(t, b);
  return finish_h(t, round_h(t, op(to_d(t, a), to_d(t, b))), m);
}

uint32_t pack(uint16_t lo, uint16_t hi) { return uint32_t(hi) << 16 | lo; }
uint16_t lo(uint32_t v) { return uint16_t(v); }
uint16_t hi(uint32_t v) { return uint16_t(v >> 16); }

}  // namespace

float half_to_f32(Half t, uint16_t h) { return t == Half::f16 ? f16_to_f32(h) : bf16_to_f32(h); }
uint16_t f32_to_half(Half t, float f) { return t == Half::f16 ? f32_to_f16(f) : f32_to_bf16(f); }

uint16_t add(Half t, uint16_t a, uint16_t b, HMods m) {
  return binary(t, a, b, m, [](double x, double y) { return fma_odd(x, 1.0, y); });
}
uint16_t sub(Half t, uint16_t a, uint16_t b, HMods m) {
  return binary(t, a, b, m, [](double x, double y) { return fma_odd(x, 1.0, -y); });
}
uint16_t mul(Half t, uint16_t a, uint16_t b, HMods m) {
  return binary(t, a, b, m, [](double x, double y) { return x * y; });
}
uint16_t fma(Half t, uint16_t a, uint16_t b, uint16_t c, HMods m) {
  if (m.ftz) a = flush_h(t, a), b = flush_h(t, b), c = flush_h(t, c);
  return finish_h(t, round_h(t, fma_odd(to_d(t, a), to_d(t, b), to_d(t, c))), m);
}

// neg/abs: the sign bit changed; a NaN input gives the canonical NaN, as for f32 (GPU to confirm).
uint16_t neg(Half t, uint16_t a, bool ftz) {
  if (ftz) a = flush_h(t, a);
  return is_nan_h(t, a) ? kNaN16 : uint16_t(a ^ 0x8000u);
}
uint16_t abs(Half t, uint16_t a, bool ftz) {
  if (ftz) a = flush_h(t, a);
  return is_nan_h(t, a) ? kNaN16 : uint16_t(a & 0x7fffu);
}

// min/max through f32 (exact both ways: the result is an operand, or the canonical NaN).
uint16_t min(Half t, uint16_t a, uint16_t b, MinMax m) {
  if (m.ftz) a = flush_h(t, a), b = flush_h(t, b);
  m.ftz = false;
  float d = fp::min(half_to_f32(t, a), half_to_f32(t, b), m);
  return is_nan(d) ? kNaN16 : f32_to_half(t, d);
}
uint16_t max(Half t, uint16_t a, uint16_t b, MinMax m) {
  if (m.ftz) a = flush_h(t, a), b = flush_h(t, b);
  m.ftz = false;
  float d = fp::max(half_to_f32(t, a), half_to_f32(t, b), m);
  return is_nan(d) ? kNaN16 : f32_to_half(t, d);
}

// ex2.approx.f16 keeps subnormals; ex2.approx.ftz.bf16 flushes its input and result.
uint16_t ex2_approx(Half t, uint16_t a) {
  const HMods m{t == Half::bf16, false, false};
  if (m.ftz) a = flush_h(t, a);
  return finish_h(t, round_h(t, std::exp2(to_d(t, a))), m);
}
uint16_t tanh_approx(Half t, uint16_t a) { return finish_h(t, round_h(t, std::tanh(to_d(t, a))), {}); }

bool compare(Half t, uint16_t a, uint16_t b, Cmp c, bool ftz) {
  if (ftz) a = flush_h(t, a), b = flush_h(t, b);
  return compare_values(half_to_f32(t, a), half_to_f32(t, b), c);
}

uint32_t add2(Half t, uint32_t a, uint32_t b, HMods m) { return pack(add(t, lo(a), lo(b), m), add(t, hi(a), hi(b), m)); }
uint32_t sub2(Half t, uint32_t a, uint32_t b, HMods m) { return pack(sub(t, lo(a), lo(b), m), sub(t, hi(a), hi(b), m)); }
uint32_t mul2(Half t, uint32_t a, uint32_t b, HMods m) { return pack(mul(t, lo(a), lo(b), m), mul(t, hi(a), hi(b), m)); }
uint32_t fma2(Half t, uint32_t a, uint32_t b, uint32_t c, HMods m) {
  return pack(fma(t, lo(a), lo(b), lo(c), m), fma(t, hi(a), hi(b), hi(c), m));
}
uint32_t neg2(Half t, uint32_t a, bool ftz) { return pack(neg(t, lo(a), ftz), neg(t, hi(a), ftz)); }
uint32_t abs2(Half t, uint32_t a, bool ftz) { return pack(abs(t, lo(a), ftz), abs(t, hi(a), ftz)); }
uint32_t min2(Half t, uint32_t a, uint32_t b, MinMax m) { return pack(min(t, lo(a), lo(b), m), min(t, hi(a), hi(b), m)); }
uint32_t max2(Half t, uint32_t a, uint32_t b, MinMax m) { return pack(max(t, lo(a), lo(b), m), max(t, hi(a), hi(b), m)); }
uint32_t ex2_approx2(Half t, uint32_t a) { return pack(ex2_approx(t, lo(a)), ex2_approx(t, hi(a))); }
uint32_t tanh_approx2(Half t, uint32_t a) { return pack(tanh_approx(t, lo(a)), tanh_approx(t, hi(a))); }
unsigned compare2(Half t, uint32_t a, uint32_t b, Cmp c, bool ftz) {
  return unsigned(compare(t, lo(a), lo(b), c, ftz)) | unsigned(compare(t, hi(a), hi(b), c, ftz)) << 1;
}

}  // namespace cuda_shim::exec::fp
