// Slow paths of exec/fp.hpp: directed rounding, division, square roots, the .approx functions.
//
// Directed rounding switches the thread's rounding mode around one native operation. This file is
// built with -frounding-math (tests/unit/CMakeLists.txt and any library target), and the operands
// and result also pass through empty asm statements with a memory clobber, so that even without
// the flag the compiler can neither fold the operation nor move it across fesetround.
#include "exec/fp.hpp"

#include <cfenv>

namespace cuda_shim::exec::fp {
namespace {

int fe_mode(Rnd r) {
  switch (r) {
    case Rnd::rz: return FE_TOWARDZERO;
    case Rnd::rm: return FE_DOWNWARD;
    case Rnd::rp: return FE_UPWARD;
    default: return FE_TONEAREST;  // rn; rna has no native form and is never asked for here
  }
}

// Sets the mode for its scope and restores the caller's, so interpreter threads stay in .rn.
class ModeGuard {
 public:
  explicit ModeGuard(Rnd r) : old_(std::fegetround()) { std::fesetround(fe_mode(r)); }
  ~ModeGuard() { std::fesetround(old_); }
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;

 private:
  int old_;
};

// An optimization barrier: v is treated as read and rewritten in memory at this point.
template <class T> inline void opaque(T& v) { asm volatile("" : "+m"(v) : : "memory"); }

template <class T, class Op> T in_mode(Rnd r, T a, T b, T c, Op op) {
  ModeGuard g(r);
  opaque(a), opaque(b), opaque(c);
  T d = op(a, b, c);
  opaque(d);
  return d;
}

}  // namespace

namespace detail {
float add_dir(float a, float b, Rnd r) {
  return in_mode(r, a, b, 0.0f, [](float x, float y, float) { return x + y; });
}
float mul_dir(float a, float b, Rnd r) {
  return in_mode(r, a, b, 0.0f, [](float x, float y, float) { return x * y; });
}
float fma_dir(float a, float b, float c, Rnd r) {
  return in_mode(r, a, b, c, [](float x, float y, float z) { return std::fma(x, y, z); });
}
float div_dir(float a, float b, Rnd r) {
  return in_mode(r, a, b, 0.0f, [](float x, float y, float) { return x / y; });
}
float sqrt_dir(float a, Rnd r) {
  return in_mode(r, a, 0.0f, 0.0f, [](float x, float, float) { return std::sqrt(x); });
}
double add_dir(double a, double b, Rnd r) {
  return in_mode(r, a, b, 0.0, [](double x, double y, double) { return x + y; });
}
double mul_dir(double a, double b, Rnd r) {
  return in_mode(r, a, b, 0.0, [](double x, double y, double) { return x * y; });
}
double fma_dir(double a, double b, double c, Rnd r) {
  return in_mode(r, a, b, c, [](double x, double y, double z) { return std::fma(x, y, z); });
}
double div_dir(double a, double b, Rnd r) {
  return in_mode(r, a, b, 0.0, [](double x, double y, double) { return x / y; });
}
double sqrt_dir(double a, Rnd r) {
  return in_mode(r, a, 0.0, 0.0, [](double x, double, double) { return std::sqrt(x); });
}

// The exact value hi + lo (lo the exact error of hi, or any number of its sign) rounded to odd in
// double, which keeps the later rounding to 24 bits exact, then rounded in mode r with the exponent
// moved 64 binades up so that 2^-126 is a normal value of f32.
static bool tiny(double hi, double lo, Rnd r) {
  if (lo != 0.0) {
    uint64_t u = bits(hi);
    if ((lo < 0.0) != (hi < 0.0)) u -= 1;  // hi overshot: step toward zero
    hi = as_f64(u | 1);
  }
  return std::fabs(f64_to_f32(hi * 0x1p64, r)) < 0x1p-62f;
}
// TwoSum: the exact error of x + y rounded to nearest.
static double sum_err(double x, double y, double s) {
  const double bb = s - x;
  return (x - (s - bb)) + (y - bb);
}
bool tiny_add(float a, float b, Rnd r) {
  const double s = double(a) + double(b);
  return tiny(s, sum_err(a, b, s), r);
}
bool tiny_mul(float a, float b, Rnd r) { return tiny(double(a) * double(b), 0.0, r); }  // exact
bool tiny_fma(float a, float b, float c, Rnd r) {
  const double p = double(a) * double(b), s = p + c;
  return tiny(s, sum_err(p, c, s), r);
}
bool tiny_div(float a, float b, Rnd r) {
  const double q = double(a) / double(b), rem = std::fma(-q, double(b), double(a));  // rem is exact
  return tiny(q, rem == 0.0 ? 0.0 : std::copysign(1.0, rem) * std::copysign(1.0, b), r);
}
}  // namespace detail

// ---- division ---------------------------------------------------------------------------------
float div(float a, float b, Rnd r, bool ftz) {
  a = flush_if(a, ftz), b = flush_if(b, ftz);
  float d = r == Rnd::rn ? a / b : detail::div_dir(a, b, r);
  if (ftz && detail::at_min_normal(d) && detail::tiny_div(a, b, r)) d = detail::zero_like(d);
  return finish(d, ftz, false);
}

// div.full: the ISA bounds it at 2 ulp over the full range; the correctly rounded quotient is
// inside that bound.
float div_full(float a, float b, bool ftz) { return div(a, b, Rnd::rn, ftz); }

// div.approx computes a * (1/b). For 2^126 < |b| < 2^128 the reciprocal is below the normal range
// and the ISA says the result is 0 (NaN when a is infinite): that is a * (+-0).
float div_approx(float a, float b, bool ftz) {
  a = flush_if(a, ftz), b = flush_if(b, ftz);
  if (std::isfinite(b) && std::fabs(b) > 0x1p126f) return finish(a * std::copysign(0.0f, b), ftz, false);
  return finish(a / b, ftz, false);
}

double div(double a, double b, Rnd r) {
  return fix_nan(r == Rnd::rn ? a / b : detail::div_dir(a, b, r), a, b);
}

// ---- reciprocal ---------------------------------------------------------------------------------
float rcp(float a, Rnd r, bool ftz) { return div(1.0f, a, r, ftz); }
float rcp_approx(float a, bool ftz) { return div(1.0f, a, Rnd::rn, ftz); }  // ISA: <= 1 ulp
double rcp(double a, Rnd r) { return fix_nan(r == Rnd::rn ? 1.0 / a : detail::div_dir(1.0, a, r), a, a); }

namespace {
double flush64(double d) { return is_subnormal(d) ? std::copysign(0.0, d) : d; }
}  // namespace

// The .approx.ftz.f64 reciprocals work on the upper 32 bits alone (H200: rcp(3) = 0x3fd5555500000000,
// rcp(7) truncated, not rounded, to 0x3fc24924'00000000; an sNaN whose payload sits in the low word
// reads as infinity, giving 0; a NaN gives 0x7fffffff'00000000). Subnormals are flushed.
namespace {
double high_word(double d) { return as_f64(bits(d) & 0xffffffff00000000ull); }
constexpr uint64_t kNaNHigh = 0x7fffffff00000000ull;
}  // namespace
double rcp_approx_ftz(double a) {
  a = flush64(high_word(a));
  if (is_nan(a)) return as_f64(kNaNHigh);
  return high_word(flush64(1.0 / a));
}

// ---- square roots -------------------------------------------------------------------------------
float sqrt(float a, Rnd r, bool ftz) {
  a = flush_if(a, ftz);
  return finish(r == Rnd::rn ? std::sqrt(a) : detail::sqrt_dir(a, r), ftz, false);
}
float sqrt_approx(float a, bool ftz) { return sqrt(a, Rnd::rn, ftz); }
double sqrt(double a, Rnd r) {
  return fix_nan(r == Rnd::rn ? std::sqrt(a) : detail::sqrt_dir(a, r), a, a);
}

// rsqrt: computed in double and rounded once to f32. -0 -> -inf, +0 -> +inf, negatives -> NaN.
float rsqrt_approx(float a, bool ftz) {
  a = flush_if(a, ftz);
  return finish(float(1.0 / std::sqrt(double(a))), ftz, false);
}

// rsqrt.approx.f64 in long double, full precision (H200: rsqrt(2) correctly rounded), NaN payload
// kept; rsqrt.approx.ftz.f64 on the upper words like rcp.approx.ftz.f64 (H200: rsqrt(3) truncated).
double rsqrt_approx(double a, bool ftz) {
  if (ftz) a = flush64(high_word(a));
  if (is_nan(a)) return ftz ? as_f64(kNaNHigh) : quiet(a);
  if (a == 0.0) return std::copysign(HUGE_VAL, a);
  if (a < 0.0) return as_f64(ftz ? kNaNHigh : kNaN64);
  double d = double(1.0L / std::sqrt(static_cast<long double>(a)));
  return ftz ? high_word(flush64(d)) : d;
}

// ---- .approx transcendental functions -----------------------------------------------------------
// Each: flush the input under .ftz, evaluate in double (special values come out of libm exactly:
// ex2(-inf) = +0, lg2(+-0) = -inf, lg2(x<0) = NaN, sin(+-inf) = NaN, sin(-0) = -0, cos(+-0) = 1),
// round once to f32, canonicalize NaN, flush the result under .ftz.
float ex2_approx(float a, bool ftz) {
  a = flush_if(a, ftz);
  return finish(float(std::exp2(double(a))), ftz, false);
}
float lg2_approx(float a, bool ftz) {
  a = flush_if(a, ftz);
  return finish(float(std::log2(double(a))), ftz, false);
}
// sin/cos.approx: correctly rounded in the ISA's range, with two H200 behaviours outside it (raw
// values in /work/notes/fp.md). The hardware works in revolutions, t = |x| * (1/2pi):
// - tiny inputs: sin is +-0 once t is below 2^-25 (sin(2^-24) = 0, sin(2^-22) != 0);
// - |x| >= 2^22: t is the f32 product with 1/2pi as an f32 constant, so only its f32 fraction is
//   left (sin(2^24) = -1 from t = 2670176.75, sin(1e8) = 0, cos(1e8) = 1).
// Between about 100 and 2^22 the GPU's range reduction differs from both (up to ~1e-3 absolute),
// and small arguments differ by a few ulp: not modelled.
namespace {
constexpr float kInvTwoPi = 0.159154943f;
// sin(2 pi r) for r in [0, 1), exact at the quarter turns (std::sin(pi) is not 0).
double sin_turns(double r) {
  if (r == 0.0 || r == 0.5) return 0.0;
  if (r == 0.25) return 1.0;
  if (r == 0.75) return -1.0;
  return std::sin(2.0 * M_PI * r);
}
// The fraction of a revolution the hardware keeps for |x| >= 2^22.
double big_turns(float x) {
  const double t = double(std::fabs(x) * kInvTwoPi);
  return t - std::floor(t);
}
}  // namespace
float sin_approx(float a, bool ftz) {
  a = flush_if(a, ftz);
  const float ax = std::fabs(a);
  if (ax * kInvTwoPi < 0x1p-25f) return as_f32(bits(a) & 0x80000000u);
  if (!(ax >= 0x1p22f)) return finish(float(std::sin(double(a))), ftz, false);  // NaN here too
  if (std::isinf(a)) return as_f32(kNaN32);
  const float s = float(sin_turns(big_turns(a)));
  return finish(std::signbit(a) ? -s : s, ftz, false);
}
float cos_approx(float a, bool ftz) {
  a = flush_if(a, ftz);
  if (!(std::fabs(a) >= 0x1p22f)) return finish(float(std::cos(double(a))), ftz, false);
  if (std::isinf(a)) return as_f32(kNaN32);
  const double r = big_turns(a);
  return finish(float(sin_turns(r >= 0.75 ? r - 0.75 : r + 0.25)), ftz, false);
}
float tanh_approx(float a) { return finish(float(std::tanh(double(a))), false, false); }

}  // namespace cuda_shim::exec::fp
