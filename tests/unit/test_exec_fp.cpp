// The PTX engine's floating-point semantics (emu/exec/fp*): every result checked against an
// independent computation — __float128 for exact values and the rounding modes, an enumeration of
// the small formats' values for f16/bf16/e4m3/e5m2 — or against the ISA's special-value rules.
#include <catch2/catch.hpp>

#include "exec/fp.hpp"

#include <cfenv>
#include <cmath>
#include <limits>
#include <random>

namespace fp = cuda_shim::exec::fp;
using fp::as_f32;
using fp::as_f64;
using fp::bits;
using fp::Rnd;
using q = __float128;

namespace {

constexpr Rnd kDirected[] = {Rnd::rz, Rnd::rm, Rnd::rp};
constexpr Rnd kAll[] = {Rnd::rn, Rnd::rz, Rnd::rm, Rnd::rp};
const float kInf = std::numeric_limits<float>::infinity();
const double kInfD = std::numeric_limits<double>::infinity();

// ---- oracles ---------------------------------------------------------------------------------
// x rounded to nearest by the compiler's conversion, then moved one step where the mode says.
template <class F> F round_to(q x, Rnd r) {
  F f = F(x);
  const F inf = std::numeric_limits<F>::infinity();
  bool above = q(f) > x, below = q(f) < x;
  if (x * 0 != 0) return f;                          // an infinite x is exact
  if (std::isinf(f)) above = f > 0, below = f < 0;  // inf compares as beyond every finite x
  if (r == Rnd::rm && above) f = std::nextafter(f, -inf);
  if (r == Rnd::rp && below) f = std::nextafter(f, inf);
  if (r == Rnd::rz && x > 0 && above) f = std::nextafter(f, -inf);
  if (r == Rnd::rz && x < 0 && below) f = std::nextafter(f, inf);
  return f;
}

// A small format's value by the textbook formula (exponent width eb, mantissa width mb).
double small_value(unsigned code, int eb, int mb, bool has_inf = true) {
  const unsigned e = code >> mb, m = code & ((1u << mb) - 1);
  const int bias = (1 << (eb - 1)) - 1;
  if (has_inf && e == (1u << eb) - 1) return HUGE_VAL;
  if (e == 0) return std::ldexp(double(m), 1 - bias - mb);
  return std::ldexp(double(m + (1u << mb)), int(e) - bias - mb);
}

// Rounds x to a small IEEE-like format by searching its ordered magnitudes.
unsigned round_small(q x, Rnd r, int eb, int mb) {
  const bool negative = x < 0 || (x == 0 && 1 / x < 0);  // -0 included
  const unsigned sign = negative ? 1u << (eb + mb) : 0, inf = ((1u << eb) - 1) << mb;
  const q ax = x < 0 ? -x : x;
  if (ax == 0) return sign;
  unsigned lo = 0, hi = inf;  // largest code whose value is <= ax
  while (lo < hi) {
    unsigned mid = (lo + hi + 1) / 2;
    if (q(small_value(mid, eb, mb)) <= ax) lo = mid; else hi = mid - 1;
  }
  if (q(small_value(lo, eb, mb)) == ax) return sign | lo;
  const unsigned down = lo, up = lo + 1;
  const bool neg = sign != 0;
  unsigned c = down;
  if (r == Rnd::rp) c = neg ? down : up;
  if (r == Rnd::rm) c = neg ? up : down;
  if (r == Rnd::rn) {
    const int bias = (1 << (eb - 1)) - 1;  // past the largest finite value, as if unbounded
    const q vu = up == inf ? q(std::ldexp(1.0, (1 << eb) - 1 - bias)) : q(small_value(up, eb, mb));
    const q dd = ax - q(small_value(down, eb, mb)), du = vu - ax;
    c = dd < du ? down : du < dd ? up : ((down & 1) ? up : down);
  }
  return sign | c;
}

std::mt19937_64& rng() {
  static std::mt19937_64 g(20261129);
  return g;
}
// A float of random sign and mantissa with its exponent in [emin, emax] (subnormal below -126).
float rand_f32(int emin, int emax) {
  std::uniform_int_distribution<int> e(emin, emax);
  const float m = 1.0f + float(rng()() & 0x7fffff) * 0x1p-23f;
  const float f = std::ldexp(m, e(rng()));
  return (rng()() & 1) ? -f : f;
}
double rand_f64(int emin, int emax) {
  std::uniform_int_distribution<int> e(emin, emax);
  const double m = 1.0 + double(rng()() & 0xfffffffffffffull) * 0x1p-52;
  const double d = std::ldexp(m, e(rng()));
  return (rng()() & 1) ? -d : d;
}

// Same bits, except that an exact zero may carry either sign (the oracle cannot tell).
bool same(float a, float b) { return bits(a) == bits(b) || (a == 0 && b == 0); }
bool same(double a, double b) { return bits(a) == bits(b) || (a == 0 && b == 0); }

}  // namespace

// ---- bits and helpers -----------------------------------------------------------------------------
TEST_CASE("bits and values convert both ways") {
  CHECK(bits(1.0f) == 0x3f800000u);
  CHECK(as_f32(0xbf800000u) == -1.0f);
  CHECK(bits(-2.0) == 0xc000000000000000ull);
  CHECK(as_f64(0x3ff0000000000000ull) == 1.0);
  CHECK(fp::is_nan(as_f32(0x7f800001u)));
  CHECK_FALSE(fp::is_nan(kInf));
  CHECK(bits(fp::flush(as_f32(0x80000001u))) == 0x80000000u);
  CHECK(fp::flush(1e-30f) == 1e-30f);
}

// ---- f32 / f64 arithmetic against __float128 ---------------------------------------------------
TEST_CASE("f32 add, mul, fma, div, sqrt round as IEEE in every mode") {
  for (int i = 0; i < 20000; ++i) {
    const float a = rand_f32(-140, 127), b = rand_f32(-140, 127), c = rand_f32(-140, 127);
    const float sa = std::ldexp(a, -std::ilogb(a) + std::ilogb(b) + int(rng()() % 20) - 10);
    for (Rnd r : kAll) {
      INFO("a=" << a << " b=" << b << " c=" << c << " rnd=" << int(r));
      CHECK(same(fp::add(sa, b, r), round_to<float>(q(sa) + q(b), r)));
      CHECK(same(fp::sub(sa, b, r), round_to<float>(q(sa) - q(b), r)));
      CHECK(same(fp::mul(a, b, r), round_to<float>(q(a) * q(b), r)));
      CHECK(same(fp::div(a, b, r), round_to<float>(q(a) / q(b), r)));  // never exact-tied at 113 bits
      const float p = std::fabs(a);
      const float s = fp::sqrt(p, r);  // s is the mode's root when s^2 and next(s)^2 bracket p
      const float lo = r == Rnd::rp ? std::nextafter(s, 0.0f) : s;
      const float hi = r == Rnd::rp ? s : std::nextafter(s, kInf);
      if (r != Rnd::rn) CHECK((q(lo) * q(lo) <= q(p) && q(hi) * q(hi) >= q(p)));
      // fma exact when the addend is near the product's scale
      const float cc = std::ldexp(c, std::ilogb(a) + std::ilogb(b) - std::ilogb(c) + int(rng()() % 30) - 15);
      if (std::isfinite(cc) && std::isfinite(a * b))
        CHECK(same(fp::fma(a, b, cc, r), round_to<float>(q(a) * q(b) + q(cc), r)));
    }
  }
}

TEST_CASE("f64 add, mul, fma, div round as IEEE in every mode") {
  for (int i = 0; i < 20000; ++i) {
    const double a = rand_f64(-1000, 1000), b = rand_f64(-1000, 1000);
    const double sa = std::ldexp(a, -std::ilogb(a) + std::ilogb(b) + int(rng()() % 40) - 20);
    const double c = std::ldexp(rand_f64(0, 0), std::ilogb(a) + std::ilogb(b) + int(rng()() % 40) - 20);
    for (Rnd r : kAll) {
      INFO("a=" << a << " b=" << b << " rnd=" << int(r));
      CHECK(same(fp::add(sa, b, r), round_to<double>(q(sa) + q(b), r)));
      CHECK(same(fp::sub(sa, b, r), round_to<double>(q(sa) - q(b), r)));
      CHECK(same(fp::mul(a, b, r), round_to<double>(q(a) * q(b), r)));
      CHECK(same(fp::div(a, b, r), round_to<double>(q(a) / q(b), r)));
      if (std::isfinite(c)) CHECK(same(fp::fma(a, b, c, r), round_to<double>(q(a) * q(b) + q(c), r)));
    }
  }
}

TEST_CASE("directed rounding restores the thread's round-to-nearest") {
  for (Rnd r : kDirected) {
    (void)fp::add(1.0f, 1e-10f, r);
    (void)fp::div(1.0, 3.0, r);
    CHECK(std::fegetround() == FE_TONEAREST);
  }
  CHECK(fp::add(1.0f, 0x1p-30f, Rnd::rp) == std::nextafter(1.0f, 2.0f));
  CHECK(fp::add(1.0f, 0x1p-30f) == 1.0f);  // and rn is rn again
}

TEST_CASE("exact zero sums take the sign the mode gives") {
  CHECK(bits(fp::add(1.0f, -1.0f, Rnd::rm)) == 0x80000000u);
  CHECK(bits(fp::add(1.0f, -1.0f, Rnd::rn)) == 0u);
  CHECK(bits(fp::add(1.0, -1.0, Rnd::rm)) == 1ull << 63);
}

TEST_CASE("overflow in each mode goes to infinity or the largest finite") {
  const float big = std::numeric_limits<float>::max();
  CHECK(fp::add(big, big, Rnd::rn) == kInf);
  CHECK(fp::add(big, big, Rnd::rz) == big);
  CHECK(fp::add(-big, -big, Rnd::rp) == -big);
  CHECK(fp::mul(-big, 2.0f, Rnd::rm) == -kInf);
}

// ---- NaN, ftz, sat ------------------------------------------------------------------------------
TEST_CASE("f32 NaN results are the canonical 0x7fffffff") {
  const float snan = as_f32(0xff800001u), qnan = as_f32(0x7fc00123u);
  CHECK(bits(fp::add(snan, 1.0f)) == fp::kNaN32);
  CHECK(bits(fp::mul(qnan, 2.0f, Rnd::rz)) == fp::kNaN32);
  CHECK(bits(fp::fma(kInf, 0.0f, 1.0f)) == fp::kNaN32);
  CHECK(bits(fp::sub(kInf, kInf)) == fp::kNaN32);
  CHECK(bits(fp::sqrt(-1.0f, Rnd::rn)) == fp::kNaN32);
  CHECK(bits(fp::div(0.0f, 0.0f, Rnd::rp)) == fp::kNaN32);
}

TEST_CASE("f64 NaN results keep a NaN operand's payload, quieted, b before a") {
  const double sa = as_f64(0x7ff0000000000123ull), qb = as_f64(0xfff8000000000456ull);
  CHECK(bits(fp::add(sa, qb)) == 0xfff8000000000456ull);
  CHECK(bits(fp::add(qb, sa)) == 0x7ff8000000000123ull);
  CHECK(bits(fp::add(sa, 1.0)) == 0x7ff8000000000123ull);
  CHECK(bits(fp::sub(1.0, qb)) == 0xfff8000000000456ull);  // sub does not flip a NaN's sign
  CHECK(bits(fp::fma(1.0, 2.0, sa, Rnd::rp)) == 0x7ff8000000000123ull);
  CHECK(bits(fp::mul(kInfD, 0.0)) == fp::kNaN64);
  CHECK(bits(fp::sqrt(-2.0, Rnd::rn)) == fp::kNaN64);
}

TEST_CASE("ftz flushes subnormal inputs and results to signed zero") {
  const float tiny = as_f32(0x00000010u), ntiny = as_f32(0x80000010u);
  CHECK(fp::add(tiny, 0.0f) == tiny);
  CHECK(bits(fp::add(tiny, 0.0f, Rnd::rn, true)) == 0u);
  CHECK(bits(fp::mul(ntiny, 1.0f, Rnd::rn, true)) == 0x80000000u);
  // normal inputs, subnormal result: flushed after rounding
  CHECK(bits(fp::mul(0x1p-70f, -0x1p-70f, Rnd::rn, true)) == 0x80000000u);
  CHECK(fp::mul(0x1p-70f, 0x1p-70f) == 0x1p-140f);
  // a subnormal input flushed before a directed rounding sees zero
  CHECK(fp::fma(tiny, 1.0f, 1.0f, Rnd::rp) == std::nextafter(1.0f, 2.0f));
  CHECK(fp::fma(tiny, 1.0f, 1.0f, Rnd::rp, true) == 1.0f);
  CHECK(fp::compare(tiny, 0.0f, fp::Cmp::eq, true));
  CHECK_FALSE(fp::compare(tiny, 0.0f, fp::Cmp::eq));
}

TEST_CASE("sat clamps to [0, 1] and maps NaN to +0") {
  CHECK(fp::add(0.75f, 0.5f, Rnd::rn, false, true) == 1.0f);
  CHECK(bits(fp::sub(0.25f, 0.5f, Rnd::rn, false, true)) == 0u);
  CHECK(bits(fp::add(kInf, -kInf, Rnd::rn, false, true)) == 0u);
  CHECK(bits(fp::mul(-0.0f, 1.0f, Rnd::rn, false, true)) == 0u);
  CHECK(fp::fma(0.5f, 0.5f, 0.25f, Rnd::rn, false, true) == 0.5f);
}

// ---- division, roots, approx ---------------------------------------------------------------------
TEST_CASE("div.approx with |b| above 2^126 gives zero, or NaN for an infinite a") {
  CHECK(bits(fp::div_approx(1.0f, 0x1.8p126f)) == 0u);
  CHECK(bits(fp::div_approx(1.0f, -0x1.8p126f)) == 0x80000000u);
  CHECK(bits(fp::div_approx(kInf, 0x1.8p126f)) == fp::kNaN32);
  CHECK(fp::div_approx(6.0f, 3.0f) == 2.0f);
  CHECK(fp::div_full(1.0f, 3.0f) == 1.0f / 3.0f);
}

TEST_CASE("reciprocals and roots of zeros, infinities and negatives") {
  CHECK(fp::rcp(-0.0f, Rnd::rn) == -kInf);
  CHECK(bits(fp::rcp_approx(kInf)) == 0u);
  CHECK(fp::rcp(4.0, Rnd::rz) == 0.25);
  CHECK(fp::rcp(3.0f, Rnd::rz) == std::nextafter(1.0f / 3.0f, 0.0f));  // rn rounded up
  CHECK(fp::rcp(3.0f, Rnd::rp) == 1.0f / 3.0f);
  CHECK(bits(fp::sqrt(-0.0f, Rnd::rn)) == 0x80000000u);
  CHECK(bits(fp::sqrt_approx(-4.0f)) == fp::kNaN32);
  CHECK(fp::rsqrt_approx(-0.0f) == -kInf);
  CHECK(fp::rsqrt_approx(0.0f) == kInf);
  CHECK(bits(fp::rsqrt_approx(kInf)) == 0u);
  CHECK(bits(fp::rsqrt_approx(-1.0f)) == fp::kNaN32);
  CHECK(fp::rsqrt_approx(4.0f) == 0.5f);
  CHECK(fp::rsqrt_approx(-0.0) == -kInfD);
  CHECK(fp::rsqrt_approx(0.25) == 2.0);
  CHECK(bits(fp::rsqrt_approx(as_f64(0x7ff8000000000001ull), true)) == 0x7fffffff00000000ull);
  CHECK(bits(fp::rsqrt_approx(as_f64(0x7ff0000000000001ull))) == 0x7ff8000000000001ull);
  CHECK(bits(fp::rcp_approx_ftz(as_f64(0xfff0000000000042ull))) == 1ull << 63);  // reads as -inf
  CHECK(fp::rcp_approx_ftz(as_f64(1)) == kInfD);  // a subnormal input is a zero
  CHECK(bits(fp::rcp_approx_ftz(0x1.8p1022)) == 0u);  // a subnormal result is a zero
  // subnormal f32 input without ftz: 1/tiny overflows; with ftz it is 1/0
  CHECK(fp::rcp_approx(as_f32(1)) == kInf);
  CHECK(fp::rcp_approx(as_f32(0x80000001u), true) == -kInf);
}

TEST_CASE("ex2, lg2, sin, cos, tanh special values as the ISA tables give them") {
  CHECK(bits(fp::ex2_approx(-kInf)) == 0u);
  CHECK(fp::ex2_approx(kInf) == kInf);
  CHECK(fp::ex2_approx(-0.0f) == 1.0f);
  CHECK(fp::ex2_approx(as_f32(0x80000001u), true) == 1.0f);
  CHECK(fp::ex2_approx(10.0f) == 1024.0f);
  CHECK(bits(fp::ex2_approx(-140.0f, true)) == 0u);    // subnormal result flushed
  CHECK(fp::ex2_approx(-140.0f) == 0x1p-140f);
  CHECK(fp::lg2_approx(0.0f) == -kInf);
  CHECK(fp::lg2_approx(-0.0f) == -kInf);
  CHECK(fp::lg2_approx(as_f32(1), true) == -kInf);
  CHECK(fp::lg2_approx(as_f32(1)) == -149.0f);
  CHECK(bits(fp::lg2_approx(-1.0f)) == fp::kNaN32);
  CHECK(bits(fp::lg2_approx(-kInf)) == fp::kNaN32);
  CHECK(fp::lg2_approx(kInf) == kInf);
  CHECK(fp::lg2_approx(8.0f) == 3.0f);
  CHECK(bits(fp::sin_approx(-0.0f)) == 0x80000000u);
  CHECK(bits(fp::sin_approx(kInf)) == fp::kNaN32);
  CHECK(bits(fp::cos_approx(-kInf)) == fp::kNaN32);
  CHECK(fp::cos_approx(-0.0f) == 1.0f);
  CHECK(fp::tanh_approx(kInf) == 1.0f);
  CHECK(fp::tanh_approx(-kInf) == -1.0f);
  CHECK(bits(fp::tanh_approx(-0.0f)) == 0x80000000u);
  CHECK(bits(fp::tanh_approx(as_f32(0x7fc00001u))) == fp::kNaN32);
}

TEST_CASE("approx functions stay within the ISA's error bounds") {
  for (int i = 0; i < 20000; ++i) {
    const float x = rand_f32(-10, 6);
    CHECK(std::fabs(double(fp::ex2_approx(x)) - std::exp2(double(x))) <= 2 * std::exp2(double(x)) * 0x1p-23);
    CHECK(std::fabs(double(fp::sin_approx(x)) - std::sin(double(x))) <= 0x1p-20);
    CHECK(std::fabs(double(fp::cos_approx(x)) - std::cos(double(x))) <= 0x1p-20);
    CHECK(std::fabs(double(fp::tanh_approx(x)) - std::tanh(double(x))) <= std::fabs(std::tanh(double(x))) * 0x1p-11);
    const float p = std::fabs(x);
    CHECK(std::fabs(double(fp::lg2_approx(p)) - std::log2(double(p))) <= 0x1p-22 * std::max(1.0, std::fabs(std::log2(double(p)))));
  }
}

// ---- min / max / abs / neg / copysign / testp / setp ------------------------------------------
TEST_CASE("min and max: NaN operands, signed zeros, .NaN, .xorsign.abs") {
  const float qn = as_f32(0x7fc00001u);
  CHECK(fp::min(qn, 2.0f) == 2.0f);
  CHECK(fp::max(3.0f, qn) == 3.0f);
  CHECK(bits(fp::min(qn, qn)) == fp::kNaN32);
  CHECK(bits(fp::min(qn, 2.0f, {false, true, false})) == fp::kNaN32);
  CHECK(bits(fp::min(0.0f, -0.0f)) == 0x80000000u);
  CHECK(bits(fp::max(-0.0f, 0.0f)) == 0u);
  CHECK(bits(fp::min(-0.0f, 0.0f)) == 0x80000000u);
  // xorsign.abs: |result| = min(|a|, |b|), sign = sign(a) ^ sign(b)
  CHECK(fp::min(-3.0f, 2.0f, {false, false, true}) == -2.0f);
  CHECK(fp::max(-3.0f, -2.0f, {false, false, true}) == 3.0f);
  CHECK(fp::max(as_f32(0x00000005u), 1e-39f, {true}) == 0.0f);  // both flushed
  CHECK(fp::min(1.0, as_f64(0x7ff8000000000000ull)) == 1.0);
  CHECK(bits(fp::max(-0.0, 0.0)) == 0u);
  CHECK(fp::max3(1.0f, -5.0f, 3.0f, {}, true) == 5.0f);
  CHECK(fp::min3(4.0f, qn, 3.0f) == 3.0f);
}

TEST_CASE("abs, neg, copysign") {
  CHECK(bits(fp::abs(-0.0f)) == 0u);
  CHECK(bits(fp::neg(0.0f)) == 0x80000000u);
  CHECK(bits(fp::abs(as_f32(0x80000003u), true)) == 0u);
  CHECK(bits(fp::abs(as_f32(0xffc00001u))) == fp::kNaN32);
  CHECK(bits(fp::neg(as_f64(0xfff8000000000007ull))) == 0xfff8000000000007ull);  // passed through
  CHECK(fp::neg(2.0) == -2.0);
  CHECK(fp::copysign(-1.0f, 2.0f) == -2.0f);  // sign of a onto b
  CHECK(fp::copysign(1.0f, -2.0f) == 2.0f);
  CHECK(fp::copysign(-0.0, 5.0) == -5.0);
}

TEST_CASE("testp classes") {
  using fp::TestP;
  const float vals[] = {0.0f, -0.0f, as_f32(1), 1.0f, kInf, -kInf, as_f32(0x7fc00000u), as_f32(0x7f800001u)};
  //                     finite infinite number nan   normal subnormal
  const bool want[][6] = {{1, 0, 1, 0, 0, 0}, {1, 0, 1, 0, 0, 0}, {1, 0, 1, 0, 0, 1}, {1, 0, 1, 0, 1, 0},
                          {0, 1, 1, 0, 0, 0}, {0, 1, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, 0, 0, 1, 0, 0}};
  for (int i = 0; i < 8; ++i)
    for (int t = 0; t < 6; ++t) {
      INFO("value " << i << " test " << t);
      CHECK(fp::testp(vals[i], TestP(t)) == want[i][t]);
      if (i != 2) CHECK(fp::testp(double(vals[i]), TestP(t)) == want[i][t]);  // f32 subnormals are f64 normals
    }
  CHECK(fp::testp(as_f64(1), TestP::subnormal));
  CHECK_FALSE(fp::testp(as_f64(1), TestP::normal));
}

TEST_CASE("setp compare operators, ordered and unordered") {
  using fp::Cmp;
  const float nan = as_f32(0x7fc00000u);
  const float vals[] = {-1.0f, 0.0f, -0.0f, 1.0f, kInf, nan};
  for (float a : vals)
    for (float b : vals) {
      const bool u = std::isnan(a) || std::isnan(b);
      INFO(a << " vs " << b);
      CHECK(fp::compare(a, b, Cmp::eq) == (!u && a == b));
      CHECK(fp::compare(a, b, Cmp::ne) == (!u && a != b));
      CHECK(fp::compare(a, b, Cmp::lt) == (!u && a < b));
      CHECK(fp::compare(a, b, Cmp::le) == (!u && a <= b));
      CHECK(fp::compare(a, b, Cmp::gt) == (!u && a > b));
      CHECK(fp::compare(a, b, Cmp::ge) == (!u && a >= b));
      CHECK(fp::compare(a, b, Cmp::equ) == (u || a == b));
      CHECK(fp::compare(a, b, Cmp::neu) == (u || a != b));
      CHECK(fp::compare(a, b, Cmp::ltu) == (u || a < b));
      CHECK(fp::compare(a, b, Cmp::leu) == (u || a <= b));
      CHECK(fp::compare(a, b, Cmp::gtu) == (u || a > b));
      CHECK(fp::compare(a, b, Cmp::geu) == (u || a >= b));
      CHECK(fp::compare(a, b, Cmp::num) == !u);
      CHECK(fp::compare(a, b, Cmp::nan) == u);
      CHECK(fp::compare(double(a), double(b), Cmp::ltu) == (u || a < b));
    }
}

// ---- conversions ---------------------------------------------------------------------------------
TEST_CASE("every f16 and bf16 value widens exactly and narrows back to itself") {
  for (unsigned h = 0; h < 0x10000; ++h) {
    const unsigned mag = h & 0x7fff;
    const float f = fp::f16_to_f32(uint16_t(h)), g = fp::bf16_to_f32(uint16_t(h));
    if (mag > 0x7c00) {
      CHECK(std::isnan(f));
      CHECK(fp::f32_to_f16(f) == fp::kNaN16);
    } else {
      const double v = small_value(mag, 5, 10) * ((h & 0x8000) ? -1 : 1);
      CHECK(double(f) == v);
      CHECK(std::signbit(f) == bool(h & 0x8000));
      for (Rnd r : kAll) CHECK(fp::f32_to_f16(f, r) == h);
      CHECK(fp::f64_to_f16(double(f)) == h);
    }
    if (mag > 0x7f80) {
      CHECK(fp::f32_to_bf16(g) == fp::kNaN16);
    } else {
      CHECK(double(g) == small_value(mag, 8, 7) * ((h & 0x8000) ? -1 : 1));
      for (Rnd r : kAll) CHECK(fp::f32_to_bf16(g, r) == h);
    }
  }
}

TEST_CASE("f32 and f64 to f16 and bf16 round as the value enumeration says, every mode") {
  for (int i = 0; i < 100000; ++i) {
    const float f = rand_f32(-30, 18), g = rand_f32(-136, 128);
    const double d = rand_f64(-30, 18);
    for (Rnd r : kAll) {
      INFO("f=" << f << " g=" << g << " rnd=" << int(r));
      CHECK(fp::f32_to_f16(f, r) == round_small(q(f), r, 5, 10));
      CHECK(fp::f32_to_bf16(g, r) == round_small(q(g), r, 8, 7));
      CHECK(fp::f64_to_f16(d, r) == round_small(q(d), r, 5, 10));
    }
  }
}

TEST_CASE("f16 ties, overflow, relu and satfinite") {
  CHECK(fp::f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);              // tie to even
  CHECK(fp::f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02);
  CHECK(fp::f32_to_f16(65520.0f) == 0x7c00);                     // ties up to infinity
  CHECK(fp::f32_to_f16(65519.0f) == 0x7bff);
  CHECK(fp::f32_to_f16(1e6f, Rnd::rz) == 0x7bff);
  CHECK(fp::f32_to_f16(1e6f, Rnd::rn, false, true) == 0x7bff);
  CHECK(fp::f32_to_f16(-kInf, Rnd::rn, false, true) == 0xfbff);
  CHECK(fp::f32_to_f16(-2.0f, Rnd::rn, true) == 0);
  CHECK(fp::f32_to_f16(as_f32(0xffc00000u), Rnd::rn, true) == fp::kNaN16);
  CHECK(fp::f32_to_f16(0x1p-25f) == 0);                          // half the smallest: tie to 0
  CHECK(fp::f32_to_f16(0x1.8p-25f) == 1);
  CHECK(fp::f32_to_f16(0x1p-30f, Rnd::rp) == 1);
  CHECK(fp::f32_to_f16(-0x1p-30f, Rnd::rm) == 0x8001);
}

TEST_CASE("packed f16x2 and bf16x2 put a in the upper half") {
  CHECK(fp::cvt_f16x2_f32(1.0f, 2.0f) == 0x3c004000u);
  CHECK(fp::cvt_bf16x2_f32(1.0f, -2.0f) == 0x3f80c000u);
  CHECK(fp::cvt_e4m3x2_f32(1.0f, 2.0f) == 0x3840);
  CHECK(fp::cvt_f16x2_e4m3x2(0x3840) == 0x3c004000u);
  CHECK(fp::cvt_e5m2x2_f16x2(0x3c004000u) == 0x3c40);
}

TEST_CASE("tf32 rounds to 10 mantissa bits, rna ties away") {
  CHECK(fp::f32_to_tf32(as_f32(0x3f801000u)) == 0x3f802000u);            // tie away
  CHECK(fp::f32_to_tf32(as_f32(0x3f801000u), Rnd::rn) == 0x3f800000u);   // tie to even
  CHECK(fp::f32_to_tf32(as_f32(0x3f800fffu)) == 0x3f800000u);
  CHECK(fp::f32_to_tf32(as_f32(0x7f7fffffu)) == 0x7f800000u);            // rna overflows
  CHECK(fp::f32_to_tf32(as_f32(0x7f7fffffu), Rnd::rna, false, true) == 0x7f7fe000u);
  CHECK(fp::f32_to_tf32(as_f32(0x7fc00001u)) == 0x7fc00000u);  // rna: low bits cleared
  CHECK(fp::f32_to_tf32(as_f32(0x7fc00001u), Rnd::rn) == 0x7fffe000u);
  CHECK(fp::f32_to_tf32(as_f32(0x00001fffu)) == 0x00002000u);            // subnormals kept
}

TEST_CASE("every e4m3 and e5m2 value converts to f16 and back") {
  for (unsigned v = 0; v < 256; ++v) {
    const uint16_t h4 = fp::e4m3_to_f16(uint8_t(v)), h5 = fp::e5m2_to_f16(uint8_t(v));
    if ((v & 0x7f) == 0x7f) {
      CHECK(h4 == fp::kNaN16);
    } else {
      CHECK(double(fp::f16_to_f32(h4)) == small_value(v & 0x7f, 4, 3, false) * ((v & 0x80) ? -1 : 1));
      CHECK(fp::f32_to_e4m3(fp::f16_to_f32(h4)) == v);
    }
    if ((v & 0x7f) > 0x7c) continue;
    if ((v & 0x7f) == 0x7c) { CHECK(std::isinf(fp::f16_to_f32(h5))); continue; }
    CHECK(double(fp::f16_to_f32(h5)) == small_value(v & 0x7f, 5, 2) * ((v & 0x80) ? -1 : 1));
    CHECK(fp::f32_to_e5m2(fp::f16_to_f32(h5)) == v);
  }
}

TEST_CASE("infinity, overflow and NaN into e4m3 and e5m2 saturate") {
  CHECK(fp::f32_to_e4m3(kInf) == 0x7e);
  CHECK(fp::f32_to_e4m3(-500.0f) == 0xfe);
  CHECK(fp::f32_to_e4m3(464.0f) == 0x7e);   // the tie above 448 would be the NaN code
  CHECK(fp::f32_to_e4m3(as_f32(0x7fc00000u)) == 0x7f);
  CHECK(fp::f32_to_e4m3(-1.0f, true) == 0);
  CHECK(fp::f32_to_e5m2(kInf) == 0x7b);
  CHECK(fp::f32_to_e5m2(1e9f) == 0x7b);
  CHECK(fp::f32_to_e5m2(as_f32(0x7fc00000u)) == 0x7f);
  CHECK(fp::f32_to_e4m3(0x1p-10f) == 0);   // below half the smallest subnormal (2^-9)
  CHECK(fp::f32_to_e4m3(0x1.1p-10f) == 1);
}

TEST_CASE("NaN input to float-to-int cvt gives 0, out of range saturates") {
  using fp::IRnd;
  const double nan = as_f64(0x7ff8000000000000ull);
  CHECK(fp::to_sint(nan, IRnd::rzi, 32) == 0);
  CHECK(fp::to_uint(nan, IRnd::rni, 64) == 0);
  CHECK(fp::to_sint(1e10, IRnd::rzi, 32) == 2147483647);
  CHECK(fp::to_sint(-1e10, IRnd::rzi, 32) == -2147483647 - 1);
  CHECK(fp::to_sint(kInfD, IRnd::rmi, 64) == std::numeric_limits<int64_t>::max());
  CHECK(fp::to_sint(-kInfD, IRnd::rpi, 64) == std::numeric_limits<int64_t>::min());
  CHECK(fp::to_sint(127.5, IRnd::rni, 8) == 127);
  CHECK(fp::to_sint(-128.5, IRnd::rni, 8) == -128);
  CHECK(fp::to_sint(-129.0, IRnd::rzi, 8) == -128);
  CHECK(fp::to_uint(-1.0, IRnd::rzi, 32) == 0);
  CHECK(fp::to_uint(-0.7, IRnd::rzi, 16) == 0);
  CHECK(fp::to_uint(70000.0, IRnd::rzi, 16) == 65535);
  CHECK(fp::to_uint(0x1p64, IRnd::rzi, 64) == ~0ull);
  CHECK(fp::to_uint(0x1.fffffffffffffp63, IRnd::rzi, 64) == 0xfffffffffffff800ull);
  CHECK(fp::to_sint(2.5, IRnd::rni, 32) == 2);
  CHECK(fp::to_sint(-2.5, IRnd::rni, 32) == -2);
  CHECK(fp::to_sint(3.5, IRnd::rni, 32) == 4);
  CHECK(fp::to_sint(-0.5, IRnd::rmi, 32) == -1);
  CHECK(fp::to_sint(0.25, IRnd::rpi, 32) == 1);
  // .ftz on an f32 source: a subnormal is zero before rounding up
  CHECK(fp::cvt(fp::Ty::s32, fp::Ty::f32, 1, {Rnd::rn, IRnd::rpi}) == 1);
  CHECK(fp::cvt(fp::Ty::s32, fp::Ty::f32, 1, {Rnd::rn, IRnd::rpi, true}) == 0);
  CHECK(fp::cvt(fp::Ty::s16, fp::Ty::f16, 0xfc00, {Rnd::rn, IRnd::rzi}) == uint64_t(int64_t(-32768)));
  CHECK(fp::cvt(fp::Ty::u8, fp::Ty::bf16, 0x4380, {Rnd::rn, IRnd::rzi}) == 255);  // 256 -> 255
}

TEST_CASE("integer to float rounds in every mode") {
  for (int i = 0; i < 50000; ++i) {
    const uint64_t u = rng()() >> (rng()() % 64);
    const int64_t s = int64_t(rng()()) >> (rng()() % 64);
    for (Rnd r : kAll) {
      INFO("u=" << u << " s=" << s << " rnd=" << int(r));
      CHECK(same(fp::uint_to_f32(u, r), round_to<float>(q(u), r)));
      CHECK(same(fp::sint_to_f32(s, r), round_to<float>(q(s), r)));
      CHECK(same(fp::uint_to_f64(u, r), round_to<double>(q(u), r)));
      CHECK(same(fp::sint_to_f64(s, r), round_to<double>(q(s), r)));
      CHECK(fp::cvt(fp::Ty::f16, fp::Ty::s32, uint64_t(s), {r}) == round_small(q(int32_t(s)), r, 5, 10));
      CHECK(fp::cvt(fp::Ty::bf16, fp::Ty::u64, u, {r}) == round_small(q(u), r, 8, 7));
    }
  }
  CHECK(fp::sint_to_f32((1 << 24) + 1, Rnd::rp) == 16777218.0f);
  CHECK(fp::cvt(fp::Ty::f32, fp::Ty::s8, 0xff, {}) == bits(-1.0f));   // source sign-extended
  CHECK(fp::cvt(fp::Ty::f32, fp::Ty::u8, 0x1ff, {}) == bits(255.0f));  // high bits ignored
  CHECK(fp::cvt(fp::Ty::f32, fp::Ty::s32, 7, {Rnd::rn, fp::IRnd::none, false, true}) == bits(1.0f));
}

TEST_CASE("f64 to f32 rounds in every mode, with ftz and sat") {
  for (int i = 0; i < 50000; ++i) {
    const double d = rand_f64(-160, 130);
    for (Rnd r : kAll) CHECK(same(fp::f64_to_f32(d, r), round_to<float>(q(d), r)));
  }
  CHECK(bits(fp::f64_to_f32(-1e-40, Rnd::rn, true)) == 0x80000000u);
  CHECK(fp::f64_to_f32(1e-40, Rnd::rn) != 0.0f);
  CHECK(fp::f64_to_f32(1.5, Rnd::rn, false, true) == 1.0f);
  CHECK(bits(fp::f64_to_f32(as_f64(0x7ff0000000000001ull))) == 0x7fc00000u);  // top payload bits, quieted
  CHECK(bits(fp::f32_to_f64(as_f32(0x7f800001u))) == 0x7ff8000020000000ull);  // payload kept, quieted
  CHECK(fp::f32_to_f64(as_f32(1)) == 0x1p-149);
  CHECK(fp::f32_to_f64(as_f32(1), true) == 0.0);
}

TEST_CASE("cvt.irnd.f32.f32 rounds to integral values") {
  using fp::IRnd;
  CHECK(fp::round_integral(2.5f, IRnd::rni) == 2.0f);
  CHECK(fp::round_integral(-2.5f, IRnd::rni) == -2.0f);
  CHECK(bits(fp::round_integral(-0.3f, IRnd::rni)) == 0x80000000u);
  CHECK(fp::round_integral(-0.3f, IRnd::rmi) == -1.0f);
  CHECK(fp::round_integral(0.3f, IRnd::rpi) == 1.0f);
  CHECK(fp::round_integral(1.7f, IRnd::rzi) == 1.0f);
  CHECK(fp::round_integral(as_f32(1), IRnd::rpi) == 1.0f);
  CHECK(bits(fp::round_integral(as_f32(1), IRnd::rpi, true)) == 0u);
  CHECK(bits(fp::round_integral(as_f32(0x7f800001u), IRnd::rni)) == fp::kNaN32);
  CHECK(fp::round_integral(0x1p60, IRnd::rni) == 0x1p60);
  CHECK(fp::cvt(fp::Ty::bf16, fp::Ty::bf16, 0x3fc0, {Rnd::rn, IRnd::rpi}) == 0x4000);  // 1.5 -> 2
}

// ---- half-precision arithmetic ---------------------------------------------------------------------
TEST_CASE("f16 add, mul, fma match the exact result rounded once") {
  using fp::Half;
  auto val = [](uint16_t h) { return q(fp::f16_to_f32(h)); };
  for (int i = 0; i < 200000; ++i) {
    uint16_t a = uint16_t(rng()()), b = uint16_t(rng()()), c = uint16_t(rng()());
    if (((a | b | c) & 0x7c00) == 0x7c00 || (a & 0x7c00) == 0x7c00 || (b & 0x7c00) == 0x7c00 || (c & 0x7c00) == 0x7c00) continue;
    INFO(std::hex << a << " " << b << " " << c);
    CHECK(fp::add(Half::f16, a, b) == round_small(val(a) + val(b), Rnd::rn, 5, 10));
    CHECK(fp::sub(Half::f16, a, b) == round_small(val(a) - val(b), Rnd::rn, 5, 10));
    CHECK(fp::mul(Half::f16, a, b) == round_small(val(a) * val(b), Rnd::rn, 5, 10));
    CHECK(fp::fma(Half::f16, a, b, c) == round_small(val(a) * val(b) + val(c), Rnd::rn, 5, 10));
  }
}

TEST_CASE("bf16 add and fma match the exact result rounded once") {
  using fp::Half;
  auto val = [](uint16_t h) { return q(fp::bf16_to_f32(h)); };
  for (int i = 0; i < 100000; ++i) {
    // exponents within 2^+-20 of each other so the __float128 sum is exact
    const uint16_t a = fp::f32_to_bf16(rand_f32(-10, 10)), b = fp::f32_to_bf16(rand_f32(-30, 30));
    const uint16_t c = fp::f32_to_bf16(rand_f32(-30, 30));
    INFO(std::hex << a << " " << b << " " << c);
    CHECK(fp::add(Half::bf16, a, b) == round_small(val(a) + val(b), Rnd::rn, 8, 7));
    CHECK(fp::mul(Half::bf16, a, b) == round_small(val(a) * val(b), Rnd::rn, 8, 7));
    CHECK(fp::fma(Half::bf16, a, b, c) == round_small(val(a) * val(b) + val(c), Rnd::rn, 8, 7));
  }
}

TEST_CASE("half NaN, ftz, sat, relu and packed lanes") {
  using fp::Half;
  CHECK(fp::add(Half::f16, 0x7c00, 0xfc00) == fp::kNaN16);
  CHECK(fp::mul(Half::bf16, 0x7fc1, 0x3f80) == fp::kNaN16);
  CHECK(fp::add(Half::f16, 0x0001, 0x0000) == 0x0001);
  CHECK(fp::add(Half::f16, 0x0001, 0x0000, {true}) == 0x0000);
  CHECK(fp::mul(Half::f16, 0x0400, 0x3800, {true}) == 0x0000);     // 2^-14 * 0.5 is subnormal
  CHECK(fp::add(Half::f16, 0x3c00, 0x3c00, {false, true}) == 0x3c00);
  CHECK(fp::add(Half::f16, 0x7c00, 0xfc00, {false, true}) == 0x0000);
  CHECK(fp::fma(Half::bf16, 0xbf80, 0x3f80, 0x0000, {false, false, true}) == 0x0000);
  CHECK(fp::fma(Half::f16, 0x7e00, 0x3c00, 0x0000, {false, false, true}) == fp::kNaN16);
  CHECK(fp::add2(Half::f16, 0x3c004000u, 0x3c003c00u) == 0x40004200u);
  CHECK(fp::neg2(Half::bf16, 0x3f80bf80u) == 0xbf803f80u);
  CHECK(fp::abs(Half::f16, 0x8001, true) == 0);
  CHECK(fp::min(Half::f16, 0x7e00, 0x3c00) == 0x3c00);
  CHECK(fp::max(Half::bf16, 0x7fc0, 0x7fc0) == fp::kNaN16);
  CHECK(fp::min(Half::f16, 0xbc00, 0x4000, {false, false, true}) == 0xbc00);  // -|1|
  CHECK(fp::max2(Half::f16, 0x00008000u, 0x80000000u) == 0x00000000u);
  CHECK(fp::ex2_approx(Half::f16, 0x4900) == 0x6400);              // 2^10
  CHECK(fp::ex2_approx(Half::f16, 0xfc00) == 0x0000);
  CHECK(fp::ex2_approx(Half::bf16, 0x0001) == 0x3f80);             // flushed input
  CHECK(fp::tanh_approx(Half::f16, 0xfc00) == 0xbc00);
  CHECK(fp::tanh_approx2(Half::bf16, 0x7f800000u) == 0x3f800000u);
  CHECK(fp::compare2(Half::f16, 0x3c004000u, 0x3c003c00u, fp::Cmp::gt) == 1u);
  CHECK(fp::compare(Half::f16, 0x7e00, 0x7e00, fp::Cmp::equ));
  CHECK(fp::compare(Half::f16, 0x0001, 0x8000, fp::Cmp::eq, true));
}

// ---- what an H200 wrote (driver 580.159, sm_90; /work/notes/fp.md has the probe) -----------------
TEST_CASE("results recorded on an H200") {
  using fp::Ty;
  using fp::IRnd;
  using fp::Half;
  const double q1 = as_f64(0x7ff8000000000001ull), q2 = as_f64(0x7ff8000000000002ull);
  const double q3 = as_f64(0x7ff8000000000003ull), s2 = as_f64(0x7ff0000000000002ull);
  const double kInf64 = HUGE_VAL;
  CHECK(bits(fp::add(kInf64, -kInf64)) == 0xfff8000000000000ull);
  CHECK(bits(fp::add(kInf64, -kInf64, Rnd::rz)) == 0xfff8000000000000ull);
  CHECK(bits(fp::div(0.0, 0.0, Rnd::rn)) == 0xfff8000000000000ull);
  CHECK(bits(fp::fma(q1, q2, q3)) == 0x7ff8000000000002ull);
  CHECK(bits(fp::fma(q1, 1.0, q2)) == 0x7ff8000000000002ull);
  CHECK(bits(fp::fma(1.0, q1, q2)) == 0x7ff8000000000001ull);
  CHECK(bits(fp::mul(q1, q2)) == 0x7ff8000000000002ull);
  CHECK(bits(fp::div(q1, q2, Rnd::rn)) == 0x7ff8000000000001ull);
  CHECK(bits(fp::sub(q1, as_f64(0xfff8000000000002ull))) == 0xfff8000000000002ull);
  CHECK(bits(fp::min(q1, as_f64(0xfff8000000000002ull))) == 0xfff8000000000002ull);
  CHECK(bits(fp::min(q1, s2)) == 0x7ff8000000000002ull);
  CHECK(bits(fp::neg(as_f64(0x7ff0000000000007ull))) == 0x7ff8000000000007ull);
  CHECK(bits(fp::abs(as_f64(0xfff8000000000007ull))) == 0xfff8000000000007ull);
  CHECK(bits(fp::min(as_f32(0x7fc00001u), as_f32(0xffc00002u))) == 0x7fffffffu);
  CHECK(bits(fp::max(-0.0f, as_f32(0u), {false, false, true})) == 0x80000000u);
  CHECK(bits(fp::min(as_f32(0xffc00001u), 2.0f, {false, false, true})) == 0xc0000000u);
  CHECK(bits(fp::min(2.0f, as_f32(0xffc00001u), {false, false, true})) == 0xc0000000u);
  // ftz tininess: rounded to 24 bits with an unbounded exponent, then compared with 2^-126
  CHECK(bits(fp::mul(as_f32(0x3f7fffffu), as_f32(0x00800000u), Rnd::rn, true)) == 0u);
  CHECK(bits(fp::mul(as_f32(0x3f7fffffu), as_f32(0x00800000u))) == 0x00800000u);
  CHECK(bits(fp::mul(as_f32(0x20000400u), as_f32(0x1ffff800u), Rnd::rn, true)) == 0x00800000u);
  CHECK(bits(fp::mul(as_f32(0x3f800001u), as_f32(0x00800000u), Rnd::rz, true)) == 0x00800001u);
  CHECK(fp::cvt(Ty::f32, Ty::f64, bits(0x1p-126 * (1 - 0x1p-24)), {Rnd::rn, IRnd::none, true}) == 0u);
  CHECK(fp::cvt(Ty::f32, Ty::f64, bits(0x1p-126 * (1 - 0x1p-26)), {Rnd::rn, IRnd::none, true}) == 0x00800000u);
  // conversions
  CHECK(fp::cvt(Ty::f64, Ty::f32, 0xffc00123u) == 0xfff8002460000000ull);
  CHECK(fp::cvt(Ty::f32, Ty::f64, 0x7ff8000123400000ull) == 0x7fc00009u);
  CHECK(fp::cvt(Ty::f32, Ty::f16, 0x7d01) == 0x7fffffffu);
  CHECK(fp::cvt(Ty::f32, Ty::bf16, 0x7f81) == 0x7f810000u);
  CHECK(fp::cvt(Ty::f64, Ty::f16, 0xfe01) == 0xfff8040000000000ull);
  CHECK(fp::cvt(Ty::f16, Ty::f64, 0xfff8000123400000ull) == 0xfe00u);
  CHECK(fp::cvt(Ty::f16, Ty::f32, 0xffc00123u) == 0x7fffu);
  CHECK(fp::cvt(Ty::tf32, Ty::f32, 0x7f800001u, {Rnd::rna}) == 0x7f800000u);
  CHECK(fp::cvt(Ty::tf32, Ty::f32, 0x7f800001u, {Rnd::rn}) == 0x7fffe000u);
  CHECK(fp::cvt(Ty::f64, Ty::f64, 0x7ff0000000000123ull, {Rnd::rn, IRnd::rni}) == 0x7ff8000000000123ull);
  CHECK(fp::cvt(Ty::f32, Ty::f32, 0x7f800001u, {Rnd::rn, IRnd::none, true}) == 0x7fffffffu);
  CHECK(fp::cvt(Ty::f32, Ty::f16, 0x0001, {Rnd::rn, IRnd::none, true}) == 0x33800000u);  // f16 not flushed
  CHECK(fp::cvt(Ty::f16, Ty::f32, 0x7f800000u, {Rnd::rn, IRnd::none, false, false, false, true}) == 0x7bffu);
  CHECK(fp::cvt(Ty::f16, Ty::f32, 0x80000000u, {Rnd::rn, IRnd::none, false, false, true}) == 0u);
  // NaN into integers
  const uint64_t qn64 = 0xfff8000000000000ull;
  CHECK(fp::cvt(Ty::s32, Ty::f64, qn64, {Rnd::rn, IRnd::rzi}) == uint64_t(int64_t(INT32_MIN)));
  CHECK(fp::cvt(Ty::u32, Ty::f64, qn64, {Rnd::rn, IRnd::rzi}) == 0x80000000u);
  CHECK(fp::cvt(Ty::s64, Ty::f64, qn64, {Rnd::rn, IRnd::rzi}) == 0x8000000000000000ull);
  CHECK(fp::cvt(Ty::u64, Ty::f64, qn64, {Rnd::rn, IRnd::rzi}) == 0x8000000000000000ull);
  CHECK(uint16_t(fp::cvt(Ty::s16, Ty::f64, qn64, {Rnd::rn, IRnd::rzi})) == 0x8000u);
  CHECK(uint16_t(fp::cvt(Ty::s8, Ty::f64, qn64, {Rnd::rn, IRnd::rzi})) == 0xff80u);
  CHECK(fp::cvt(Ty::u8, Ty::f64, qn64, {Rnd::rn, IRnd::rzi}) == 0x80u);
  CHECK(fp::cvt(Ty::s64, Ty::f32, 0x7fc00000u, {Rnd::rn, IRnd::rzi}) == 0x8000000000000000ull);
  CHECK(fp::cvt(Ty::u64, Ty::f32, 0x7fc00000u, {Rnd::rn, IRnd::rzi}) == 0x8000000000000000ull);
  CHECK(fp::cvt(Ty::s16, Ty::f32, 0x7fc00000u, {Rnd::rn, IRnd::rzi}) == 0u);
  CHECK(fp::cvt(Ty::s32, Ty::f32, 0x7fc00000u, {Rnd::rn, IRnd::rzi}) == 0u);
  CHECK(fp::cvt(Ty::s32, Ty::f16, 0x7e00, {Rnd::rn, IRnd::rzi}) == 0u);
  // half precision
  CHECK(fp::add(Half::f16, 0x7d01, 0xfe02) == 0x7fff);
  CHECK(fp::neg(Half::bf16, 0x7fc1) == 0x7fff);
  CHECK(fp::min(Half::f16, 0x0000, 0x8000) == 0x8000);
  CHECK(fp::max(Half::bf16, 0x7f81, 0x3f80) == 0x3f80);
  CHECK(fp::fma(Half::f16, 0x8000, 0x3c00, 0x8000, {false, false, true}) == 0x0000);
  CHECK(fp::add(Half::f16, 0x8000, 0x8000, {false, true}) == 0x0000);
  CHECK(fp::ex2_approx(Half::f16, 0x3800) == 0x3da8);
  // approximations and divisions
  CHECK(bits(fp::rcp_approx_ftz(3.0)) == 0x3fd5555500000000ull);
  CHECK(bits(fp::rcp_approx_ftz(7.0)) == 0x3fc2492400000000ull);
  CHECK(bits(fp::rcp_approx_ftz(as_f64(0x3fffffffffffffffull))) == 0x3fe0000000000000ull);
  CHECK(bits(fp::rcp_approx_ftz(as_f64(0x7ff0000000000123ull))) == 0u);
  CHECK(bits(fp::rcp_approx_ftz(as_f64(0x7ff8000000000000ull))) == 0x7fffffff00000000ull);
  CHECK(bits(fp::rsqrt_approx(3.0, true)) == 0x3fe279a700000000ull);
  CHECK(bits(fp::rsqrt_approx(2.0)) == 0x3fe6a09e667f3bcdull);
  CHECK(bits(fp::rsqrt_approx(as_f64(0x7ff0000000000123ull))) == 0x7ff8000000000123ull);
  CHECK(bits(fp::sin_approx(as_f32(0x80000005u))) == 0x80000000u);
  CHECK(bits(fp::tanh_approx(as_f32(0x80000005u))) == 0x80000005u);
  CHECK(bits(fp::lg2_approx(as_f32(1))) == 0xc3150000u);
  CHECK(bits(fp::ex2_approx(-140.0f)) == 0x00000200u);
  CHECK(bits(fp::rcp_approx(as_f32(0x00400000u))) == 0x7f000000u);
  CHECK(bits(fp::sqrt_approx(as_f32(0x00400000u))) == 0x1fb504f3u);
  CHECK(bits(fp::div_full(1.0f, 3.0f)) == 0x3eaaaaabu);
  CHECK(bits(fp::copysign(1.0f, as_f32(0xff800001u))) == 0x7f800001u);
  CHECK(bits(fp::abs(as_f32(0x7f800001u))) == 0x7fffffffu);
}
