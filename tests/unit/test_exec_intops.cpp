// PTX integer and bit-manipulation semantics (emu/exec/intops.hpp): boundary tables, exhaustive
// sweeps where they are cheap, and random operands against independent references (bit loops,
// 128-bit arithmetic, the ISA's own tables written out), so a mistake in one formulation does not
// hide in the other. Values the ISA calls undefined are pinned to what the library documents, so a
// GPU measurement that disagrees changes one line here and one there.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "exec/intops.hpp"

namespace iops = cuda_shim::exec::iops;
using iops::s128;
using iops::u128;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(0x5eed1234abcdULL);  // fixed: failures reproduce
  return r;
}
uint64_t r64() { return rng()(); }
uint32_t r32() { return static_cast<uint32_t>(rng()()); }

// Interesting 64-bit patterns; narrower types take their low bits (so each width sees its own 0,
// 1, -1, MIN, MAX, and neighbours).
const std::vector<uint64_t>& edges64() {
  static const std::vector<uint64_t> v = [] {
    std::vector<uint64_t> e = {0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
                               0x7fffff, 0x800000, 0xffffff, 0x7fffffff, 0x80000000, 0xffffffff,
                               0x100000000, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff,
                               0xfffffffffffffffe, 0x8000000000000001, 0xfffffffe, 0x80000001,
                               0xfffe, 0x8001, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x123456789abcdef0};
    for (int i = 0; i < 24; ++i) e.push_back(r64());
    return e;
  }();
  return v;
}
template <class T> std::vector<T> edges() {
  std::vector<T> out;
  for (uint64_t e : edges64()) out.push_back(iops::narrow<T>(e));
  return out;
}

// Value of a T as a 128-bit integer (the reference side computes in exact arithmetic).
template <class T> s128 val(T v) { return static_cast<s128>(v); }
// The low width bits of an exact result, as T.
template <class T> T wrapv(s128 v) { return iops::narrow<T>(static_cast<uint64_t>(static_cast<u128>(v))); }

// Sweeps count mismatches and report the first, instead of thousands of CHECKs.
struct Mismatch {
  uint64_t n = 0;
  std::string first;
  void add(const std::string& what) {
    if (n++ == 0) first = what;
  }
};
#define EXPECT_NO_MISMATCH(m) \
  do {                        \
    INFO((m).first);          \
    CHECK((m).n == 0);        \
  } while (0)

std::string hx(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST_CASE("add, sub, neg wrap; add.sat/sub.sat.s32 clamp", "[exec][intops]") {
  CHECK(iops::add<int32_t>(INT32_MAX, 1) == INT32_MIN);
  CHECK(iops::sub<int32_t>(INT32_MIN, 1) == INT32_MAX);
  CHECK(iops::add<uint16_t>(0xffff, 1) == 0);
  CHECK(iops::add<int16_t>(0x7fff, 1) == -0x8000);
  CHECK(iops::sub<uint64_t>(0, 1) == ~uint64_t{0});
  CHECK(iops::neg<int32_t>(INT32_MIN) == INT32_MIN);
  CHECK(iops::neg<int64_t>(INT64_MIN) == INT64_MIN);
  CHECK(iops::neg<int16_t>(1) == -1);
  CHECK(iops::add_sat_s32(INT32_MAX, 1) == INT32_MAX);
  CHECK(iops::add_sat_s32(INT32_MIN, -1) == INT32_MIN);
  CHECK(iops::add_sat_s32(INT32_MAX, INT32_MIN) == -1);
  CHECK(iops::sub_sat_s32(INT32_MIN, 1) == INT32_MIN);
  CHECK(iops::sub_sat_s32(0, INT32_MIN) == INT32_MAX);
  CHECK(iops::sub_sat_s32(-1, INT32_MIN) == INT32_MAX);
  CHECK(iops::sub_sat_s32(5, 7) == -2);
  Mismatch m;
  for (int32_t a : edges<int32_t>())
    for (int32_t b : edges<int32_t>()) {
      const s128 s = val(a) + b, d = val(a) - b;
      const auto clamp = [](s128 v) { return static_cast<int32_t>(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); };
      if (iops::add_sat_s32(a, b) != clamp(s) || iops::sub_sat_s32(a, b) != clamp(d) ||
          iops::add(a, b) != wrapv<int32_t>(s) || iops::sub(a, b) != wrapv<int32_t>(d))
        m.add(hx(uint32_t(a)) + " " + hx(uint32_t(b)));
    }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("carry chains: add.cc/addc and sub.cc/subc build 128-bit arithmetic", "[exec][intops]") {
  CHECK(iops::add_cc<uint32_t>(0xffffffff, 1) == iops::WithCarry<uint32_t>{0, 1});
  CHECK(iops::add_cc<uint32_t>(0xfffffffe, 1) == iops::WithCarry<uint32_t>{0xffffffff, 0});
  CHECK(iops::addc<uint32_t>(0xffffffff, 0, 1) == iops::WithCarry<uint32_t>{0, 1});
  CHECK(iops::addc<uint32_t>(0xffffffff, 0xffffffff, 1) == iops::WithCarry<uint32_t>{0xffffffff, 1});
  CHECK(iops::add_cc<int32_t>(-1, 1) == iops::WithCarry<int32_t>{0, 1});  // carry, not overflow
  CHECK(iops::add_cc<int32_t>(INT32_MAX, 1) == iops::WithCarry<int32_t>{INT32_MIN, 0});
  CHECK(iops::sub_cc<uint32_t>(0, 1) == iops::WithCarry<uint32_t>{0xffffffff, 1});
  CHECK(iops::sub_cc<uint32_t>(1, 1) == iops::WithCarry<uint32_t>{0, 0});
  CHECK(iops::subc<uint32_t>(0, 0, 1) == iops::WithCarry<uint32_t>{0xffffffff, 1});
  CHECK(iops::subc<uint32_t>(1, 0, 1) == iops::WithCarry<uint32_t>{0, 0});
  CHECK(iops::subc<uint32_t>(0, 0xffffffff, 1) == iops::WithCarry<uint32_t>{0, 1});
  CHECK(iops::add_cc<uint64_t>(~uint64_t{0}, 1) == iops::WithCarry<uint64_t>{0, 1});
  CHECK(iops::subc<uint64_t>(0, ~uint64_t{0}, 1) == iops::WithCarry<uint64_t>{0, 1});
  Mismatch m;
  for (int it = 0; it < 20000; ++it) {
    u128 x = (u128{r64()} << 64) | r64(), y = (u128{r64()} << 64) | r64();
    if (it < 64) {  // edges: all-ones words propagate carries and borrows through the chain
      x = it & 1 ? ~u128{0} : x;
      y = it & 2 ? u128{1} : it & 4 ? ~u128{0} : y;
    }
    // Four 32-bit words, add.cc then addc.cc then addc.cc then addc.
    u128 sum = 0, dif = 0;
    uint32_t cf = 0, bf = 0;
    for (int w = 0; w < 4; ++w) {
      const uint32_t xa = static_cast<uint32_t>(x >> (32 * w)), ya = static_cast<uint32_t>(y >> (32 * w));
      const auto s = w == 0 ? iops::add_cc(xa, ya) : iops::addc(xa, ya, cf);
      const auto d = w == 0 ? iops::sub_cc(xa, ya) : iops::subc(xa, ya, bf);
      sum |= u128{s.d} << (32 * w);
      dif |= u128{d.d} << (32 * w);
      cf = s.cf;
      bf = d.cf;
    }
    const bool carry = x + y < x, borrow = x < y;
    // Two 64-bit words.
    const auto s0 = iops::add_cc(static_cast<uint64_t>(x), static_cast<uint64_t>(y));
    const auto s1 = iops::addc(static_cast<uint64_t>(x >> 64), static_cast<uint64_t>(y >> 64), s0.cf);
    const auto d0 = iops::sub_cc(static_cast<uint64_t>(x), static_cast<uint64_t>(y));
    const auto d1 = iops::subc(static_cast<uint64_t>(x >> 64), static_cast<uint64_t>(y >> 64), d0.cf);
    if (sum != x + y || dif != x - y || cf != carry || bf != borrow || s0.d != static_cast<uint64_t>(x + y) ||
        s1.d != static_cast<uint64_t>((x + y) >> 64) || s1.cf != carry || d1.d != static_cast<uint64_t>((x - y) >> 64) ||
        d1.cf != borrow)
      m.add("iteration " + std::to_string(it));
  }
  EXPECT_NO_MISMATCH(m);
  // mad.lo.cc / madc.hi: a 32x64-bit multiply-accumulate chain equals the 128-bit result.
  Mismatch mm;
  for (int it = 0; it < 5000; ++it) {
    const uint32_t a = it < 4 ? 0xffffffff : r32();
    const uint64_t b = it < 2 ? ~uint64_t{0} : r64(), c = it == 0 ? ~uint64_t{0} : r64();
    const uint32_t b0 = static_cast<uint32_t>(b), b1 = static_cast<uint32_t>(b >> 32);
    const uint32_t c0 = static_cast<uint32_t>(c), c1 = static_cast<uint32_t>(c >> 32);
    // r = a*b + c over 96 bits: lo(a*b0)+c0 ; hi(a*b0)+lo(a*b1)+c1 ; hi(a*b1)+carries
    const auto w0 = iops::mad_cc(false, a, b0, c0);
    const auto t1 = iops::madc(true, a, b0, c1, w0.cf);           // hi(a*b0) + c1 + cf
    const auto w1 = iops::mad_cc(false, a, b1, t1.d);              // + lo(a*b1)
    const auto w2 = iops::madc(true, a, b1, t1.cf + w1.cf, 0);     // hi(a*b1) + both carries
    const u128 got = u128{w0.d} | (u128{w1.d} << 32) | (u128{w2.d} << 64);
    if (got != u128{a} * b + c) mm.add(hx(a) + " " + hx(b) + " " + hx(c));
  }
  EXPECT_NO_MISMATCH(mm);
}

namespace {
template <class T> void check_mul_family(Mismatch& m) {
  constexpr unsigned n = iops::width_v<T>;
  for (T a : edges<T>())
    for (T b : edges<T>()) {
      const T c = iops::narrow<T>(r64());
      const s128 p = n == 64 ? 0 : val(a) * val(b);  // exact for <= 32-bit (64-bit: see below)
      T hi, lo = wrapv<T>(p);
      if constexpr (n == 64) {
        // 64x64 exact product needs 128 bits of magnitude: split into unsigned parts and fix sign.
        const u128 up = u128{static_cast<uint64_t>(a)} * static_cast<uint64_t>(b);
        u128 hi_u = up >> 64;
        if constexpr (std::is_signed_v<T>) {
          if (a < 0) hi_u -= static_cast<uint64_t>(b);
          if (b < 0) hi_u -= static_cast<uint64_t>(a);
        }
        hi = iops::narrow<T>(static_cast<uint64_t>(hi_u));
        lo = iops::narrow<T>(static_cast<uint64_t>(up));
      } else {
        hi = wrapv<T>(p >> n);
      }
      bool ok = iops::mul_lo(a, b) == lo && iops::mul_hi(a, b) == hi &&
                iops::mad_lo(a, b, c) == wrapv<T>(val(lo) + val(c)) && iops::mad_hi(a, b, c) == wrapv<T>(val(hi) + val(c));
      if constexpr (n <= 32) {
        using W = iops::Wide<T>;
        const W cw = iops::narrow<W>(r64());
        ok = ok && iops::mul_wide(a, b) == wrapv<W>(p) && iops::mad_wide(a, b, cw) == wrapv<W>(p + val(cw));
      }
      if (!ok) m.add(std::to_string(n) + (std::is_signed_v<T> ? "s " : "u ") + hx(uint64_t(iops::zx(a))) + " " + hx(iops::zx(b)));
    }
}
}  // namespace

TEST_CASE("mul/mad .lo .hi .wide on every width and signedness", "[exec][intops]") {
  CHECK(iops::mul_hi<int32_t>(-1, -1) == 0);
  CHECK(iops::mul_hi<int32_t>(-1, 1) == -1);
  CHECK(iops::mul_hi<uint32_t>(0xffffffff, 0xffffffff) == 0xfffffffe);
  CHECK(iops::mul_hi<int32_t>(INT32_MIN, INT32_MIN) == 0x40000000);
  CHECK(iops::mul_hi<uint64_t>(~uint64_t{0}, ~uint64_t{0}) == ~uint64_t{1});
  CHECK(iops::mul_hi<int64_t>(INT64_MIN, INT64_MIN) == int64_t{1} << 62);
  CHECK(iops::mul_hi<int64_t>(INT64_MIN, -1) == 0);
  CHECK(iops::mul_hi<int64_t>(-1, 1) == -1);
  CHECK(iops::mul_hi<uint16_t>(0xffff, 0xffff) == 0xfffe);
  CHECK(iops::mul_hi<int16_t>(-32768, -32768) == 0x4000);
  CHECK(iops::mul_wide<int16_t>(-32768, -32768) == 0x40000000);
  CHECK(iops::mul_wide<uint32_t>(0xffffffff, 0xffffffff) == 0xfffffffe00000001ULL);
  CHECK(iops::mul_wide<int32_t>(INT32_MIN, -1) == 0x80000000LL);
  CHECK(iops::mul_lo<int32_t>(INT32_MIN, -1) == INT32_MIN);
  CHECK(iops::mul_lo<uint16_t>(0xffff, 0xffff) == 1);  // would be int overflow if promoted naively
  Mismatch m;
  check_mul_family<int16_t>(m);
  check_mul_family<uint16_t>(m);
  check_mul_family<int32_t>(m);
  check_mul_family<uint32_t>(m);
  check_mul_family<int64_t>(m);
  check_mul_family<uint64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("mad.hi.sat.s32 saturates hi(a*b) + c", "[exec][intops]") {
  CHECK(iops::mad_hi_sat_s32(INT32_MIN, INT32_MIN, INT32_MAX) == INT32_MAX);  // 0x40000000 + MAX
  CHECK(iops::mad_hi_sat_s32(INT32_MIN, INT32_MAX, INT32_MIN) == INT32_MIN);  // -0x3fffffff.. + MIN
  CHECK(iops::mad_hi_sat_s32(-1, 1, 5) == 4);
  CHECK(iops::mad_hi_sat_s32(0x10000, 0x10000, 7) == 8);
  Mismatch m;
  for (int32_t a : edges<int32_t>())
    for (int32_t b : edges<int32_t>())
      for (int32_t c : edges<int32_t>()) {
        const s128 hi = (val(a) * b) >> 32, s = hi + c;
        const int32_t want = static_cast<int32_t>(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s);
        if (iops::mad_hi_sat_s32(a, b, c) != want) m.add(hx(uint32_t(a)) + " " + hx(uint32_t(b)) + " " + hx(uint32_t(c)));
      }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("mul24/mad24 .lo .hi use the low 24 bits, sign from bit 23", "[exec][intops]") {
  CHECK(iops::mul24_lo<uint32_t>(0xff000002, 3) == 6);                  // high byte ignored
  CHECK(iops::mul24_lo<int32_t>(0x00ffffff, 2) == -2);                  // 0xffffff is -1 as s24
  CHECK(iops::mul24_hi<uint32_t>(0xffffff, 0xffffff) == 0xfffffe00u);   // (2^24-1)^2 >> 16
  CHECK(iops::mul24_hi<int32_t>(0x800000, 0x800000) == 0x40000000);     // (-2^23)^2 = 2^46, >> 16
  CHECK(iops::mul24_hi<int32_t>(0x800000, 1) == static_cast<int32_t>(0xffffff80u));
  CHECK(iops::mad24_hi_sat_s32(0x800000, 0x800000, INT32_MAX) == INT32_MAX);
  CHECK(iops::mad24_hi_sat_s32(0x7fffff, 0x800000, INT32_MIN) == INT32_MIN);
  Mismatch m;
  for (int it = 0; it < 40000; ++it) {
    const uint32_t a = it < 1000 ? static_cast<uint32_t>(edges64()[it % edges64().size()]) : r32();
    const uint32_t b = r32(), c = r32();
    // Independent reference: shift the 24-bit field to the top of an int32 and back.
    const int64_t sa = static_cast<int32_t>(a << 8) >> 8, sb = static_cast<int32_t>(b << 8) >> 8;
    const uint64_t ua = a & 0xffffff, ub = b & 0xffffff;
    const uint64_t ps = static_cast<uint64_t>(sa * sb), pu = ua * ub;
    const int32_t ai = static_cast<int32_t>(a), bi = static_cast<int32_t>(b), ci = static_cast<int32_t>(c);
    const int64_t hs = static_cast<int32_t>(static_cast<uint32_t>(ps >> 16));
    const int64_t sat = hs + ci;
    const bool ok = iops::mul24_lo(a, b) == static_cast<uint32_t>(pu) && iops::mul24_hi(a, b) == static_cast<uint32_t>(pu >> 16) &&
                    iops::mul24_lo(ai, bi) == static_cast<int32_t>(static_cast<uint32_t>(ps)) &&
                    iops::mul24_hi(ai, bi) == static_cast<int32_t>(static_cast<uint32_t>(ps >> 16)) &&
                    iops::mad24_lo(a, b, c) == static_cast<uint32_t>(pu + c) &&
                    iops::mad24_hi(ai, bi, ci) == static_cast<int32_t>(static_cast<uint32_t>((ps >> 16) + c)) &&
                    iops::mad24_hi_sat_s32(ai, bi, ci) == (sat > INT32_MAX ? INT32_MAX : sat < INT32_MIN ? INT32_MIN : sat);
    if (!ok) m.add(hx(a) + " " + hx(b) + " " + hx(c));
  }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("sad, abs, min, max, relu and the 16x2 forms", "[exec][intops]") {
  CHECK(iops::sad<int32_t>(INT32_MAX, INT32_MIN, 0) == -1);  // |diff| = 2^32-1 wraps
  CHECK(iops::sad<uint32_t>(3, 10, 100) == 107);
  CHECK(iops::sad<int16_t>(-5, 5, 1) == 11);
  CHECK(iops::sad<uint64_t>(0, ~uint64_t{0}, 1) == 0);
  CHECK(iops::abs<int32_t>(INT32_MIN) == INT32_MIN);
  CHECK(iops::abs<int16_t>(-32768) == -32768);
  CHECK(iops::abs<int64_t>(-7) == 7);
  CHECK(iops::min<int32_t>(-1, 0) == -1);
  CHECK(iops::min<uint32_t>(0xffffffff, 0) == 0);
  CHECK(iops::max<int64_t>(INT64_MIN, INT64_MAX) == INT64_MAX);
  CHECK(iops::min_relu_s32(-3, 5) == 0);
  CHECK(iops::max_relu_s32(-3, -5) == 0);
  CHECK(iops::max_relu_s32(-3, 5) == 5);
  CHECK(iops::min_s16x2(0x8000'0001, 0x0001'8000) == 0x8000'8000);
  CHECK(iops::min_s16x2(0x8000'0001, 0x0001'8000, true) == 0);
  CHECK(iops::max_s16x2(0xffff'0005, 0xfffe'0007, true) == 0x0000'0007);
  CHECK(iops::min_u16x2(0x8000'0001, 0x0001'8000) == 0x0001'0001);
  CHECK(iops::max_u16x2(0x8000'0001, 0x0001'8000) == 0x8000'8000);
  Mismatch m;
  for (int it = 0; it < 20000; ++it) {
    const uint32_t a = r32() ^ (it & 1 ? 0x80008000u : 0), b = it & 2 ? a : r32();
    uint32_t smin = 0, smax = 0, umin = 0, umax = 0, rmin = 0, rmax = 0;
    for (int h = 0; h < 2; ++h) {
      const int x = static_cast<int16_t>(a >> (16 * h)), y = static_cast<int16_t>(b >> (16 * h));
      const unsigned ux = (a >> (16 * h)) & 0xffff, uy = (b >> (16 * h)) & 0xffff;
      const int mn = x < y ? x : y, mx = x < y ? y : x;
      smin |= (static_cast<uint32_t>(mn) & 0xffff) << (16 * h);
      smax |= (static_cast<uint32_t>(mx) & 0xffff) << (16 * h);
      rmin |= (static_cast<uint32_t>(mn < 0 ? 0 : mn) & 0xffff) << (16 * h);
      rmax |= (static_cast<uint32_t>(mx < 0 ? 0 : mx) & 0xffff) << (16 * h);
      umin |= (ux < uy ? ux : uy) << (16 * h);
      umax |= (ux < uy ? uy : ux) << (16 * h);
    }
    if (iops::min_s16x2(a, b) != smin || iops::max_s16x2(a, b) != smax || iops::min_s16x2(a, b, true) != rmin ||
        iops::max_s16x2(a, b, true) != rmax || iops::min_u16x2(a, b) != umin || iops::max_u16x2(a, b) != umax)
      m.add(hx(a) + " " + hx(b));
  }
  EXPECT_NO_MISMATCH(m);
}

namespace {
template <class T> void check_divrem(Mismatch& m) {
  for (T a : edges<T>())
    for (T b : edges<T>()) {
      T q, r;
      if (b == 0) {
        q = r = iops::all_ones<T>();
      } else {
        const s128 A = val(a), B = val(b), Q = A / B;  // 128-bit: MIN/-1 is exact here
        q = wrapv<T>(Q);
        r = wrapv<T>(A - Q * B);
      }
      if (iops::div(a, b) != q || iops::rem(a, b) != r) m.add(std::to_string(sizeof(T)) + " " + hx(iops::zx(a)) + " " + hx(iops::zx(b)));
    }
}
}  // namespace

TEST_CASE("div and rem: truncation, x/0 and MIN/-1 without a host trap", "[exec][intops]") {
  CHECK(iops::div<int32_t>(-7, 2) == -3);
  CHECK(iops::rem<int32_t>(-7, 2) == -1);
  CHECK(iops::rem<int32_t>(7, -2) == 1);
  CHECK(iops::div<int32_t>(INT32_MIN, -1) == INT32_MIN);
  CHECK(iops::rem<int32_t>(INT32_MIN, -1) == 0);
  CHECK(iops::div<int64_t>(INT64_MIN, -1) == INT64_MIN);
  CHECK(iops::rem<int64_t>(INT64_MIN, -1) == 0);
  CHECK(iops::div<int16_t>(-32768, -1) == -32768);
  // Division by zero: all ones (GPU-CONFIRM, see intops.hpp).
  CHECK(iops::div<uint32_t>(5, 0) == 0xffffffffu);
  CHECK(iops::div<int32_t>(5, 0) == -1);
  CHECK(iops::div<int32_t>(-5, 0) == -1);
  CHECK(iops::rem<uint32_t>(5, 0) == 0xffffffffu);
  CHECK(iops::div<uint64_t>(5, 0) == ~uint64_t{0});
  CHECK(iops::div<uint16_t>(0, 0) == 0xffff);
  Mismatch m;
  check_divrem<int16_t>(m);
  check_divrem<uint16_t>(m);
  check_divrem<int32_t>(m);
  check_divrem<uint32_t>(m);
  check_divrem<int64_t>(m);
  check_divrem<uint64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

namespace {
template <class T> void check_shifts(Mismatch& m) {
  constexpr unsigned n = iops::width_v<T>;
  std::vector<uint32_t> amounts;
  for (uint32_t s = 0; s < 300; ++s) amounts.push_back(s);
  for (uint32_t s : {0x7fffffffu, 0x80000000u, 0xffffffffu, 0x100u, 0x101u, 0x120u}) amounts.push_back(s);
  for (T a : edges<T>())
    for (uint32_t s : amounts) {
      // Reference: move bit by bit.
      const uint64_t x = iops::zx(a);
      const bool sign = (x >> (n - 1)) & 1u;
      uint64_t l = 0, ru = 0, rs = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (uint64_t{i} >= s && ((x >> (i - s)) & 1u)) l |= uint64_t{1} << i;
        const uint64_t src = uint64_t{i} + s;
        if (src < n && ((x >> src) & 1u)) ru |= uint64_t{1} << i;
        if (src < n ? ((x >> src) & 1u) : sign) rs |= uint64_t{1} << i;
      }
      using S = std::make_signed_t<T>;
      using Un = std::make_unsigned_t<T>;
      const bool ok = iops::zx(iops::shl(a, s)) == l && iops::zx(iops::shr(static_cast<Un>(a), s)) == ru &&
                      iops::zx(iops::shr(static_cast<S>(a), s)) == rs;
      if (!ok) m.add(std::to_string(n) + " " + hx(x) + " << " + std::to_string(s));
    }
}
}  // namespace

TEST_CASE("shl/shr: amounts past the width clamp (0, or the sign for shr.s)", "[exec][intops]") {
  CHECK(iops::shl<uint32_t>(1, 31) == 0x80000000u);
  CHECK(iops::shl<uint32_t>(1, 32) == 0);
  CHECK(iops::shl<uint32_t>(1, 33) == 0);
  CHECK(iops::shl<uint32_t>(1, 255) == 0);
  CHECK(iops::shr<int32_t>(INT32_MIN, 31) == -1);
  CHECK(iops::shr<int32_t>(INT32_MIN, 32) == -1);
  CHECK(iops::shr<int32_t>(INT32_MAX, 33) == 0);
  CHECK(iops::shr<uint32_t>(0x80000000u, 32) == 0);
  CHECK(iops::shr<int16_t>(-2, 16) == -1);
  CHECK(iops::shl<uint16_t>(0xffff, 16) == 0);
  CHECK(iops::shr<int64_t>(INT64_MIN, 0xffffffffu) == -1);
  CHECK(iops::shl<uint64_t>(1, 63) == uint64_t{1} << 63);
  Mismatch m;
  check_shifts<uint16_t>(m);
  check_shifts<uint32_t>(m);
  check_shifts<uint64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("and/or/xor/not/cnot and lop3 over all 256 LUTs", "[exec][intops]") {
  CHECK(iops::cnot<uint32_t>(0) == 1);
  CHECK(iops::cnot<uint32_t>(0x80000000u) == 0);
  CHECK(iops::cnot<uint16_t>(7) == 0);
  CHECK(iops::not_<uint16_t>(0x00ff) == 0xff00);
  CHECK(iops::and_<uint64_t>(0xf0f0, 0xff00) == 0xf000);
  CHECK(iops::or_<uint32_t>(0xf0, 0x0f) == 0xff);
  CHECK(iops::xor_<uint32_t>(0xff, 0x0f) == 0xf0);
  // The ISA's construction: immLut = F(0xF0, 0xCC, 0xAA).
  CHECK(iops::lop3(0xF0, 0xCC, 0xAA, 0x80) == (0xF0u & 0xCCu & 0xAAu));
  CHECK(iops::lop3(0xF0, 0xCC, 0xAA, 0xFE) == (0xF0u | 0xCCu | 0xAAu));
  CHECK(iops::lop3(0xF0, 0xCC, 0xAA, 0x96) == (0xF0u ^ 0xCCu ^ 0xAAu));
  CHECK(iops::lop3_pred(1, 1, 1, 0x80, false, false).p);        // d != 0
  CHECK_FALSE(iops::lop3_pred(1, 0, 1, 0x80, false, false).p);  // d == 0, or q=false
  CHECK(iops::lop3_pred(1, 0, 1, 0x80, false, true).p);
  CHECK_FALSE(iops::lop3_pred(1, 1, 1, 0x80, true, false).p);   // and q=false
  Mismatch m;
  for (uint32_t lut = 0; lut < 256; ++lut) {
    if ((iops::lop3(0xF0, 0xCC, 0xAA, lut) & 0xffu) != lut) m.add("identity lut " + std::to_string(lut));
    for (int it = 0; it < 64; ++it) {
      const uint32_t a = r32(), b = r32(), c = r32();
      uint32_t want = 0;
      for (unsigned i = 0; i < 32; ++i) {
        const unsigned idx = (((a >> i) & 1u) << 2) | (((b >> i) & 1u) << 1) | ((c >> i) & 1u);
        want |= ((lut >> idx) & 1u) << i;
      }
      if (iops::lop3(a, b, c, lut) != want) m.add("lut " + std::to_string(lut));
    }
  }
  EXPECT_NO_MISMATCH(m);
}

namespace {
template <class T> void check_counts(Mismatch& m) {
  constexpr unsigned n = iops::width_v<T>;
  std::vector<T> vals = edges<T>();
  for (unsigned i = 0; i < n; ++i) {
    vals.push_back(iops::narrow<T>(uint64_t{1} << i));
    vals.push_back(iops::narrow<T>(~(uint64_t{1} << i)));
    vals.push_back(iops::narrow<T>(~uint64_t{0} << i));
  }
  for (T a : vals) {
    const uint64_t x = iops::zx(a);
    uint32_t pc = 0, lz = n;
    uint64_t rev = 0;
    int top = -1, topns = -1;
    const bool neg = (x >> (n - 1)) & 1u;
    for (unsigned i = 0; i < n; ++i) {
      const bool bit = (x >> i) & 1u;
      pc += bit;
      if (bit) {
        top = static_cast<int>(i);
        lz = n - 1 - i;
      }
      if (bit != neg) topns = static_cast<int>(i);
      if (bit) rev |= uint64_t{1} << (n - 1 - i);
    }
    using S = std::make_signed_t<T>;
    const uint32_t bu = top < 0 ? 0xffffffffu : static_cast<uint32_t>(top);
    const uint32_t bs = topns < 0 ? 0xffffffffu : static_cast<uint32_t>(topns);
    const auto shamt = [](uint32_t p) { return p == 0xffffffffu ? p : n - 1 - p; };
    const bool ok = iops::popc(a) == pc && iops::clz(a) == lz && iops::zx(iops::brev(a)) == rev && iops::bfind(a) == bu &&
                    iops::bfind(a, true) == shamt(bu) && iops::bfind(static_cast<S>(a)) == bs &&
                    iops::bfind(static_cast<S>(a), true) == shamt(bs);
    if (!ok) m.add(std::to_string(n) + " " + hx(x));
  }
}
}  // namespace

TEST_CASE("popc, clz, bfind{.shiftamt}, brev", "[exec][intops]") {
  CHECK(iops::clz<uint32_t>(0) == 32);
  CHECK(iops::clz<uint64_t>(0) == 64);
  CHECK(iops::clz<uint32_t>(1) == 31);
  CHECK(iops::popc<uint64_t>(~uint64_t{0}) == 64);
  CHECK(iops::bfind<uint32_t>(0) == 0xffffffffu);
  CHECK(iops::bfind<uint32_t>(0, true) == 0xffffffffu);
  CHECK(iops::bfind<int32_t>(-1) == 0xffffffffu);     // no non-sign bit
  CHECK(iops::bfind<int32_t>(INT32_MIN) == 30);        // 0x80000000: first 0 below the sign
  CHECK(iops::bfind<int32_t>(INT32_MIN, true) == 1);
  CHECK(iops::bfind<uint32_t>(0x80000000u) == 31);
  CHECK(iops::bfind<uint32_t>(0x80000000u, true) == 0);
  CHECK(iops::bfind<int64_t>(1) == 0);
  CHECK(iops::bfind<int64_t>(1, true) == 63);
  CHECK(iops::brev<uint32_t>(1) == 0x80000000u);
  CHECK(iops::brev<uint64_t>(0x1) == uint64_t{1} << 63);
  CHECK(iops::brev<uint32_t>(0x12345678) == 0x1e6a2c48u);
  Mismatch m;
  check_counts<uint32_t>(m);
  check_counts<uint64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("fns: the ISA's examples and every base/offset against a set-bit list", "[exec][intops]") {
  CHECK(iops::fns(0xaaaaaaaa, 3, 1) == 3);
  CHECK(iops::fns(0xaaaaaaaa, 3, -1) == 3);
  CHECK(iops::fns(0xaaaaaaaa, 2, 1) == 3);
  CHECK(iops::fns(0xaaaaaaaa, 2, -1) == 1);
  CHECK(iops::fns(0xaaaaaaaa, 2, 0) == 0xffffffffu);
  CHECK(iops::fns(0xaaaaaaaa, 3, 0) == 3);
  CHECK(iops::fns(0, 0, 1) == 0xffffffffu);
  CHECK(iops::fns(0xffffffff, 0, 32) == 31);
  CHECK(iops::fns(0xffffffff, 0, 33) == 0xffffffffu);
  CHECK(iops::fns(0xffffffff, 31, -32) == 0);
  CHECK(iops::fns(0xffffffff, 31, INT32_MIN) == 0xffffffffu);
  CHECK(iops::fns(0xffffffff, 31, INT32_MAX) == 0xffffffffu);
  CHECK(iops::fns(0xffffffff, 32, 1) == 0xffffffffu);  // base > 31: undefined, nothing found here
  Mismatch m;
  std::vector<uint32_t> masks = {0, 1, 0x80000000u, 0xffffffffu, 0xaaaaaaaau, 0x55555555u};
  for (int i = 0; i < 200; ++i) masks.push_back(r32() & r32());
  for (uint32_t mask : masks)
    for (uint32_t base = 0; base < 32; ++base)
      for (int32_t off = -34; off <= 34; ++off) {
        // Reference: the set bits at or above base in ascending order, at or below in descending.
        std::vector<uint32_t> up, down;
        for (uint32_t p = base; p < 32; ++p) if ((mask >> p) & 1u) up.push_back(p);
        for (int p = static_cast<int>(base); p >= 0; --p) if ((mask >> p) & 1u) down.push_back(static_cast<uint32_t>(p));
        uint32_t want = 0xffffffffu;
        if (off == 0) want = (mask >> base) & 1u ? base : 0xffffffffu;
        else if (off > 0 && static_cast<size_t>(off) <= up.size()) want = up[static_cast<size_t>(off) - 1];
        else if (off < 0 && static_cast<size_t>(-off) <= down.size()) want = down[static_cast<size_t>(-off) - 1];
        if (iops::fns(mask, base, off) != want) m.add(hx(mask) + " base " + std::to_string(base) + " off " + std::to_string(off));
      }
  EXPECT_NO_MISMATCH(m);
}

namespace {
// The ISA's bfe/bfi pseudocode, bit by bit.
template <class T> T bfe_ref(T a, uint32_t b, uint32_t c) {
  constexpr unsigned msb = iops::width_v<T> - 1;
  const unsigned pos = b & 0xff, len = c & 0xff;
  const uint64_t x = iops::zx(a);
  unsigned sbit = 0;
  if (std::is_signed_v<T> && len != 0) sbit = (x >> std::min(pos + len - 1, msb)) & 1u;
  uint64_t d = 0;
  for (unsigned i = 0; i <= msb; ++i) {
    const unsigned bit = (i < len && pos + i <= msb) ? (x >> (pos + i)) & 1u : sbit;
    d |= uint64_t{bit} << i;
  }
  return iops::narrow<T>(d);
}
template <class T> T bfi_ref(T a, T b, uint32_t c, uint32_t d) {
  constexpr unsigned msb = iops::width_v<T> - 1;
  const unsigned pos = c & 0xff, len = d & 0xff;
  uint64_t f = iops::zx(b);
  for (unsigned i = 0; i < len && pos + i <= msb; ++i) {
    f &= ~(uint64_t{1} << (pos + i));
    f |= ((iops::zx(a) >> i) & 1u) << (pos + i);
  }
  return iops::narrow<T>(f);
}
template <class T> void check_bf(Mismatch& m) {
  std::vector<T> vals = {T(0), T(-1), iops::narrow<T>(0x8000000080000000ULL), iops::narrow<T>(0x123456789abcdef0ULL)};
  for (int i = 0; i < 4; ++i) vals.push_back(iops::narrow<T>(r64()));
  for (T a : vals)
    for (uint32_t pos = 0; pos < 256; ++pos)
      for (uint32_t len = 0; len < 256; len += (len < 70 ? 1 : 7)) {
        // High bits of b and c are ignored: pass garbage above bit 7 sometimes.
        const uint32_t junk = (pos + len) % 3 == 0 ? 0xabcd0000u | ((pos & 1) << 8) : 0;
        const T b = iops::narrow<T>(r64());
        if (iops::bfe(a, pos | junk, len | junk) != bfe_ref(a, pos, len) || iops::bfi(a, b, pos | junk, len | junk) != bfi_ref(a, b, pos, len))
          m.add(std::to_string(sizeof(T)) + " " + hx(iops::zx(a)) + " pos " + std::to_string(pos) + " len " + std::to_string(len));
      }
}
}  // namespace

TEST_CASE("bfe and bfi: position and length clamping, sign replication", "[exec][intops]") {
  CHECK(iops::bfe<uint32_t>(0xabcd1234, 4, 8) == 0x23);
  CHECK(iops::bfe<int32_t>(static_cast<int32_t>(0xabcd1284u), 4, 4) == -8);   // 0x8: sign set
  CHECK(iops::bfe<int32_t>(static_cast<int32_t>(0x80000000u), 31, 1) == -1);
  CHECK(iops::bfe<int32_t>(static_cast<int32_t>(0x80000000u), 31, 200) == -1);  // cut at msb, msb is the sign
  CHECK(iops::bfe<int32_t>(static_cast<int32_t>(0x80000000u), 32, 1) == -1);    // pos past msb: sign of a[msb]
  CHECK(iops::bfe<uint32_t>(0xffffffffu, 32, 1) == 0);
  CHECK(iops::bfe<int32_t>(-1, 0, 0) == 0);                                   // len 0 gives 0
  CHECK(iops::bfe<uint32_t>(0xffffffffu, 0x100, 0x104) == 0xf);               // only bits 7..0 count
  CHECK(iops::bfe<int64_t>(INT64_MIN, 60, 10) == -8);
  CHECK(iops::bfi<uint32_t>(0xff, 0, 28, 8) == 0xf0000000u);
  CHECK(iops::bfi<uint32_t>(0xff, 0x12345678, 32, 8) == 0x12345678u);
  CHECK(iops::bfi<uint32_t>(0xff, 0x12345678, 0, 0) == 0x12345678u);
  CHECK(iops::bfi<uint64_t>(~uint64_t{0}, 0, 0, 64) == ~uint64_t{0});
  Mismatch m;
  check_bf<uint32_t>(m);
  check_bf<int32_t>(m);
  check_bf<uint64_t>(m);
  check_bf<int64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("prmt: default mode over every 16-bit selector; modes against the ISA's tables", "[exec][intops]") {
  CHECK(iops::prmt(0x33221100, 0x77665544, 0x3210) == 0x33221100u);
  CHECK(iops::prmt(0x33221100, 0x77665544, 0x7654) == 0x77665544u);
  CHECK(iops::prmt(0x33221100, 0x77665544, 0x0123) == 0x00112233u);
  CHECK(iops::prmt(0x00000080, 0, 0x8888) == 0xffffffffu);  // sign of byte 0 replicated
  CHECK(iops::prmt(0x00000080, 0, 0x9999) == 0u);
  Mismatch m;
  for (int round = 0; round < 4; ++round) {
    const uint32_t a = round == 0 ? 0x33221100u : r32(), b = round == 0 ? 0x77665544u : r32();
    const uint8_t bytes[8] = {uint8_t(a), uint8_t(a >> 8), uint8_t(a >> 16), uint8_t(a >> 24),
                              uint8_t(b), uint8_t(b >> 8), uint8_t(b >> 16), uint8_t(b >> 24)};
    for (uint32_t sel = 0; sel < 0x10000; ++sel) {
      uint32_t want = 0;
      for (int i = 0; i < 4; ++i) {
        const unsigned s = (sel >> (4 * i)) & 0xf;
        uint8_t v = bytes[s & 7];
        if (s & 8) v = static_cast<int8_t>(v) < 0 ? 0xff : 0x00;
        want |= uint32_t{v} << (8 * i);
      }
      // c's upper 16 bits are unused in the default mode.
      if (iops::prmt(a, b, sel | (round << 20)) != want) m.add(hx(sel));
    }
  }
  // The ISA's tables for the other modes, d.b3 d.b2 d.b1 d.b0 per c[1:0] = 0..3.
  struct Row { iops::PrmtMode mode; const char* t[4]; };
  const Row rows[] = {
      {iops::PrmtMode::f4e, {"3210", "4321", "5432", "6543"}},
      {iops::PrmtMode::b4e, {"5670", "6701", "7012", "0123"}},
      {iops::PrmtMode::rc8, {"0000", "1111", "2222", "3333"}},
      {iops::PrmtMode::ecl, {"3210", "3211", "3222", "3333"}},
      {iops::PrmtMode::ecr, {"0000", "1110", "2210", "3210"}},
      {iops::PrmtMode::rc16, {"1010", "3232", "1010", "3232"}},
  };
  const uint32_t a = 0x33221100, b = 0x77665544;  // byte k holds 0xkk
  for (const Row& row : rows)
    for (uint32_t s = 0; s < 4; ++s) {
      uint32_t want = 0;
      for (int i = 0; i < 4; ++i) want |= static_cast<uint32_t>((row.t[s][3 - i] - '0') * 0x11) << (8 * i);
      for (uint32_t hi : {0u, 0xfff8u, 0x12345670u})  // only c[1:0] counts in these modes
        if (iops::prmt(a, b, s | hi, row.mode) != want)
          m.add(std::string("mode ") + std::to_string(int(row.mode)) + " c " + hx(s | hi));
    }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("shf.l/shf.r with .clamp and .wrap", "[exec][intops]") {
  CHECK(iops::shf_l(0x80000000u, 0x1, 1, false) == 0x3u);
  CHECK(iops::shf_r(0x1, 0x3, 1, false) == 0x80000000u);  // {3,1} >> 1: b's bit 0 enters at 31
  CHECK(iops::shf_l(0xaaaaaaaa, 0x12345678, 32, false) == 0xaaaaaaaau);  // clamp: all of a
  CHECK(iops::shf_l(0xaaaaaaaa, 0x12345678, 32, true) == 0x12345678u);   // wrap: 32 -> 0
  CHECK(iops::shf_r(0xaaaaaaaa, 0x12345678, 255, false) == 0x12345678u);
  CHECK(iops::shf_r(0xaaaaaaaa, 0x12345678, 33, true) == 0x55555555u);
  Mismatch m;
  for (int it = 0; it < 200; ++it) {
    const uint32_t a = r32(), b = r32();
    for (uint32_t c : {0u, 1u, 15u, 31u, 32u, 33u, 63u, 64u, 255u, 0x80000000u, 0xffffffffu, r32()}) {
      for (bool wrap : {false, true}) {
        const uint32_t n = wrap ? c % 32 : std::min<uint32_t>(c, 32);
        uint32_t l = 0, r = 0;
        for (unsigned i = 0; i < 32; ++i) {
          // Bit j of {b,a}: j < 32 from a, else from b.
          const auto bit = [&](int j) -> uint32_t { return j < 0 || j > 63 ? 0 : j < 32 ? (a >> j) & 1u : (b >> (j - 32)) & 1u; };
          l |= bit(static_cast<int>(32 + i) - static_cast<int>(n)) << i;
          r |= bit(static_cast<int>(i + n)) << i;
        }
        if (iops::shf_l(a, b, c, wrap) != l || iops::shf_r(a, b, c, wrap) != r) m.add(hx(a) + " " + hx(b) + " " + hx(c));
      }
    }
  }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("dp4a and dp2a in every signedness combination", "[exec][intops]") {
  CHECK(iops::dp4a(0xffffffff, 0xffffffff, 0, true, true) == 4);            // (-1)*(-1) * 4
  CHECK(iops::dp4a(0xffffffff, 0xffffffff, 0, false, false) == 4 * 255 * 255);
  CHECK(iops::dp4a(0xffffffff, 0x01010101, 0, true, false) == static_cast<uint32_t>(-4));
  CHECK(iops::dp4a(0x80808080, 0x80808080, 0x7fffffff, true, true) == 0x7fffffffu + 4 * 16384u);  // wraps
  CHECK(iops::dp2a(0xffff0001, 0x04030201, 10, true, true, false) == static_cast<uint32_t>(10 + 1 * 1 + (-1) * 2));
  CHECK(iops::dp2a(0xffff0001, 0x04030201, 10, true, true, true) == static_cast<uint32_t>(10 + 1 * 3 + (-1) * 4));
  CHECK(iops::dp2a(0xffff0001, 0xff000000, 0, false, false, true) == 0xffffu * 0xffu);
  Mismatch m;
  for (int it = 0; it < 20000; ++it) {
    const uint32_t a = r32(), b = r32(), c = r32();
    for (int combo = 0; combo < 4; ++combo) {
      const bool as = combo & 1, bs = combo & 2;
      int64_t s4 = static_cast<int32_t>(c), s2lo = s4, s2hi = s4;
      for (int i = 0; i < 4; ++i) {
        const int64_t x = as ? int64_t{static_cast<int8_t>(a >> (8 * i))} : int64_t{static_cast<uint8_t>(a >> (8 * i))};
        const int64_t y = bs ? int64_t{static_cast<int8_t>(b >> (8 * i))} : int64_t{static_cast<uint8_t>(b >> (8 * i))};
        s4 += x * y;
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t x = as ? int64_t{static_cast<int16_t>(a >> (16 * i))} : int64_t{static_cast<uint16_t>(a >> (16 * i))};
        const auto by = [&](int k) { return bs ? int64_t{static_cast<int8_t>(b >> (8 * k))} : int64_t{static_cast<uint8_t>(b >> (8 * k))}; };
        s2lo += x * by(i);
        s2hi += x * by(2 + i);
      }
      if (iops::dp4a(a, b, c, as, bs) != static_cast<uint32_t>(s4) || iops::dp2a(a, b, c, as, bs, false) != static_cast<uint32_t>(s2lo) ||
          iops::dp2a(a, b, c, as, bs, true) != static_cast<uint32_t>(s2hi))
        m.add(hx(a) + " " + hx(b) + " " + hx(c) + " combo " + std::to_string(combo));
    }
  }
  EXPECT_NO_MISMATCH(m);
}

TEST_CASE("bmsk and szext with .clamp and .wrap", "[exec][intops]") {
  CHECK(iops::bmsk(1, 2, true) == 0x6u);  // the ISA's example
  CHECK(iops::bmsk(0, 32, false) == 0xffffffffu);
  CHECK(iops::bmsk(0, 32, true) == 0u);
  CHECK(iops::bmsk(32, 1, false) == 0u);
  CHECK(iops::bmsk(32, 1, true) == 1u);
  CHECK(iops::bmsk(31, 5, false) == 0x80000000u);
  CHECK(iops::szext(0xffffffff, 0, true, false) == 0u);  // the ISA's example
  CHECK(iops::szext(0x80, 8, false, true) == 0xffffff80u);
  CHECK(iops::szext(0x80, 8, false, false) == 0x80u);
  CHECK(iops::szext(0x12345678, 32, false, true) == 0x12345678u);
  CHECK(iops::szext(0x12345678, 32, true, true) == 0u);
  CHECK(iops::szext(0x12345678, 33, true, false) == 0u);
  CHECK(iops::szext(0xfff, 36, true, true) == 0xffffffffu);  // wrap: 36 -> 4 bits of 1s
  Mismatch m;
  std::vector<uint32_t> amounts;
  for (uint32_t v = 0; v < 70; ++v) amounts.push_back(v);
  for (uint32_t v : {0xffu, 0x100u, 0x7fffffffu, 0x80000000u, 0xffffffffu}) amounts.push_back(v);
  for (uint32_t x : amounts)
    for (uint32_t y : amounts)
      for (bool wrap : {false, true}) {
        // bmsk reference: the bits [pos, pos+width) inside the register.
        const uint64_t pos = wrap ? x % 32 : std::min<uint32_t>(x, 32), w = wrap ? y % 32 : std::min<uint32_t>(y, 32);
        uint32_t want = 0;
        for (uint64_t i = pos; i < pos + w && i < 32; ++i) want |= 1u << i;
        if (iops::bmsk(x, y, wrap) != want) m.add("bmsk " + hx(x) + " " + hx(y) + (wrap ? " wrap" : " clamp"));
        // szext reference, with random a: the low N bits, extended.
        const uint32_t a = r32();
        const uint64_t n = wrap ? y % 32 : std::min<uint32_t>(y, 32);
        for (bool sgn : {false, true}) {
          uint32_t ref;
          if (n == 0) ref = 0;
          else if (n == 32) ref = a;
          else {
            const uint32_t low = a & ((1u << n) - 1);
            ref = sgn && ((a >> (n - 1)) & 1u) ? low | ~((1u << n) - 1) : low;
          }
          if (iops::szext(a, y, wrap, sgn) != ref) m.add("szext " + hx(a) + " " + hx(y));
        }
      }
  EXPECT_NO_MISMATCH(m);
}

namespace {
template <class T> void check_compare(Mismatch& m) {
  using iops::Cmp;
  for (T a : edges<T>())
    for (T b : edges<T>()) {
      const s128 A = val(a), B = val(b);
      const u128 UA = iops::zx(a), UB = iops::zx(b);
      const std::array<std::pair<Cmp, bool>, 10> want = {{{Cmp::eq, A == B}, {Cmp::ne, A != B}, {Cmp::lt, A < B},
                                                           {Cmp::le, A <= B}, {Cmp::gt, A > B}, {Cmp::ge, A >= B},
                                                           {Cmp::lo, UA < UB}, {Cmp::ls, UA <= UB}, {Cmp::hi, UA > UB},
                                                           {Cmp::hs, UA >= UB}}};
      for (auto [op, w] : want)
        if (iops::compare(op, a, b) != w) m.add(std::to_string(int(op)) + " " + hx(iops::zx(a)) + " " + hx(iops::zx(b)));
    }
}
}  // namespace

TEST_CASE("setp comparisons on signed, unsigned and bit types of 16/32/64 bits", "[exec][intops]") {
  CHECK(iops::compare<int32_t>(iops::Cmp::lt, -1, 0));
  CHECK_FALSE(iops::compare<int32_t>(iops::Cmp::lo, -1, 0));  // lo reads the bits as unsigned
  CHECK(iops::compare<uint32_t>(iops::Cmp::gt, 0xffffffffu, 0));
  CHECK(iops::compare<int16_t>(iops::Cmp::hs, -1, 1));
  Mismatch m;
  check_compare<int16_t>(m);
  check_compare<uint16_t>(m);
  check_compare<int32_t>(m);
  check_compare<uint32_t>(m);
  check_compare<int64_t>(m);
  check_compare<uint64_t>(m);
  EXPECT_NO_MISMATCH(m);
}

namespace {
// Reference cvt through C++ types: exact value, clamp, truncate by casting to the destination type.
template <class D> uint64_t cvt_ref_to(s128 v, bool sat) {
  if (sat) {
    const s128 lo = std::numeric_limits<D>::min(), hi = std::numeric_limits<D>::max();
    v = v < lo ? lo : v > hi ? hi : v;
  }
  const D d = static_cast<D>(static_cast<std::make_unsigned_t<D>>(static_cast<u128>(v)));
  return static_cast<uint64_t>(static_cast<int64_t>(d));  // extended per D's signedness
}
uint64_t cvt_ref(uint64_t bits, iops::IntType at, iops::IntType dt, bool sat) {
  using iops::IntType;
  s128 v = 0;
  switch (at) {
    case IntType::u8: v = static_cast<uint8_t>(bits); break;
    case IntType::u16: v = static_cast<uint16_t>(bits); break;
    case IntType::u32: v = static_cast<uint32_t>(bits); break;
    case IntType::u64: v = static_cast<uint64_t>(bits); break;
    case IntType::s8: v = static_cast<int8_t>(bits); break;
    case IntType::s16: v = static_cast<int16_t>(bits); break;
    case IntType::s32: v = static_cast<int32_t>(bits); break;
    case IntType::s64: v = static_cast<int64_t>(bits); break;
  }
  switch (dt) {
    case IntType::u8: return cvt_ref_to<uint8_t>(v, sat);
    case IntType::u16: return cvt_ref_to<uint16_t>(v, sat);
    case IntType::u32: return cvt_ref_to<uint32_t>(v, sat);
    case IntType::u64: return cvt_ref_to<uint64_t>(v, sat);
    case IntType::s8: return cvt_ref_to<int8_t>(v, sat);
    case IntType::s16: return cvt_ref_to<int16_t>(v, sat);
    case IntType::s32: return cvt_ref_to<int32_t>(v, sat);
    case IntType::s64: return cvt_ref_to<int64_t>(v, sat);
  }
  return 0;
}
}  // namespace

TEST_CASE("cvt between integer types: truncation, extension, .sat", "[exec][intops]") {
  using iops::IntType;
  CHECK(iops::cvt_int(0xffffff80u, IntType::s32, IntType::s8, false) == 0xffffffffffffff80ULL);
  CHECK(iops::cvt_int(0x180u, IntType::u32, IntType::s8, false) == 0xffffffffffffff80ULL);
  CHECK(iops::cvt_int(0x180u, IntType::u32, IntType::s8, true) == 0x7fu);
  CHECK(iops::cvt_int(static_cast<uint32_t>(-5), IntType::s32, IntType::u32, true) == 0u);
  CHECK(iops::cvt_int(0xffffffffu, IntType::u32, IntType::s32, true) == 0x7fffffffu);
  CHECK(iops::cvt_int(0xffffffffu, IntType::s32, IntType::u64, false) == ~uint64_t{0});
  CHECK(iops::cvt_int(0xffffffffu, IntType::u32, IntType::s64, false) == 0xffffffffu);
  CHECK(iops::cvt_int(~uint64_t{0}, IntType::u64, IntType::s64, true) == 0x7fffffffffffffffULL);
  CHECK(iops::cvt_int(1ULL << 63, IntType::s64, IntType::u64, true) == 0u);
  CHECK(iops::cvt_int(1ULL << 63, IntType::s64, IntType::s16, true) == 0xffffffffffff8000ULL);
  CHECK(iops::cvt_int(0x12345ULL, IntType::u16, IntType::u32, false) == 0x2345u);  // reads only 16 bits
  CHECK(iops::cvt_pack_sat_16(70000, -70000, true) == 0x7fff8000u);
  CHECK(iops::cvt_pack_sat_16(70000, -70000, false) == 0xffff0000u);
  Mismatch m;
  const IntType all[] = {IntType::u8, IntType::u16, IntType::u32, IntType::u64,
                         IntType::s8, IntType::s16, IntType::s32, IntType::s64};
  for (IntType at : all)
    for (IntType dt : all)
      for (uint64_t v : edges64())
        for (bool sat : {false, true})
          if (iops::cvt_int(v, at, dt, sat) != cvt_ref(v, at, dt, sat))
            m.add(std::to_string(int(at)) + "->" + std::to_string(int(dt)) + (sat ? " sat " : " ") + hx(v));
  EXPECT_NO_MISMATCH(m);
}

// Usable in constant expressions (a JIT or a constant folder can evaluate them at build time).
static_assert(iops::prmt(0x33221100, 0x77665544, 0x4567) == 0x44556677u);
static_assert(iops::bfe<int32_t>(0x80, 4, 4) == -8);
static_assert(iops::div<int32_t>(INT32_MIN, -1) == INT32_MIN);
static_assert(iops::mul_hi<uint64_t>(~uint64_t{0}, 2) == 1);
static_assert((iops::lop3(0xF0, 0xCC, 0xAA, 0xE8) & 0xff) == 0xE8);
