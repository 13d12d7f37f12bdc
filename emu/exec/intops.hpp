// Integer arithmetic of PTX instructions, lane by lane, exactly as NVIDIA's PTX ISA reference
// defines it (add/sub/mul/mad/div/rem/abs/neg/min/max/sad, carry chains, 24-bit multiplies,
// setp comparisons, integer cvt). The bit-manipulation half (shifts, lop3, prmt, bfe, ...) is in
// intops_bits.hpp, included at the end.
//
// Conventions, chosen so the interpreter can call these per lane with no surprises:
// - Every function is a template over the C++ type that holds the PTX type: int32_t for .s32,
//   uint32_t for .u32 and .b32, int16_t for .s16 and so on. A PTX register is a bit pattern, so
//   the caller converts with static_cast (modular since C++20).
// - The host must never trap and never hit UB on any operand the GPU accepts: all arithmetic is
//   done on unsigned types (uint64_t, or unsigned __int128 for 64-bit high halves) and narrowed,
//   shifts never reach the operand width, and division special-cases x/0 and MIN/-1.
// - Where the ISA leaves a result undefined, the function returns what we believe the GPU
//   returns; each such place is marked "GPU-CONFIRM" and listed in /work/notes/intops.md.
// No dependency on the rest of the emulator: the JIT that may replace the interpreter can use
// the same definitions as its reference.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace cuda_shim::exec::iops {

__extension__ typedef unsigned __int128 u128;  // __extension__: quiet under -Wpedantic
__extension__ typedef __int128 s128;

// A PTX integer register type: 8/16/32/64-bit, signed or unsigned (bool is not one).
template <class T>
concept Int = std::is_integral_v<T> && !std::is_same_v<T, bool> &&
              (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

template <Int T> using U = std::make_unsigned_t<T>;
template <Int T> inline constexpr unsigned width_v = sizeof(T) * 8;

// The bit pattern of v, zero-extended to 64 bits.
template <Int T> constexpr uint64_t zx(T v) { return static_cast<uint64_t>(static_cast<U<T>>(v)); }
// v's value in 64 bits (sign-extended for signed T, zero-extended for unsigned T).
template <Int T> constexpr int64_t vx(T v) { return static_cast<int64_t>(v); }
// The low width_v<T> bits of v, as T (modular conversion: defined since C++20).
template <Int T> constexpr T narrow(uint64_t v) { return static_cast<T>(static_cast<U<T>>(v)); }
template <Int T> constexpr T all_ones() { return static_cast<T>(~U<T>{0}); }
template <Int T> constexpr T min_of() { return std::numeric_limits<T>::min(); }
template <Int T> constexpr T max_of() { return std::numeric_limits<T>::max(); }

// The type mul.wide and mad.wide produce: twice the width, same signedness (16->32, 32->64).
template <Int T> requires(sizeof(T) == 2 || sizeof(T) == 4)
using Wide = std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                                std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// Saturate a 64-bit signed value to s32 (the .sat of add/sub/mad.hi/mad24.hi on .s32).
constexpr int32_t sat_s32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : static_cast<int32_t>(v);
}

// ---- add, sub, neg ---------------------------------------------------------------------------
template <Int T> constexpr T add(T a, T b) { return narrow<T>(zx(a) + zx(b)); }
template <Int T> constexpr T sub(T a, T b) { return narrow<T>(zx(a) - zx(b)); }
// neg of the most negative value wraps to itself, as two's complement negation on the GPU does.
template <Int T> constexpr T neg(T a) { return narrow<T>(0 - zx(a)); }
// add.sat.s32 / sub.sat.s32: the ISA's .sat on integers exists only for .s32.
constexpr int32_t add_sat_s32(int32_t a, int32_t b) { return sat_s32(int64_t{a} + b); }
constexpr int32_t sub_sat_s32(int32_t a, int32_t b) { return sat_s32(int64_t{a} - b); }

// ---- carry chains: add.cc, addc{.cc}, sub.cc, subc{.cc}, mad.cc, madc -------------------------
// The value and CC.CF after the instruction. cf is 0 or 1. Types .u32/.s32/.u64/.s64: the chain
// is the same bits either way (signedness only names the operands).
template <Int T> struct WithCarry {
  T d;
  uint32_t cf;
  constexpr bool operator==(const WithCarry&) const = default;
};

// addc: d = a + b + CF; carry out of the top bit.
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> addc(T a, T b, uint32_t cf_in) {
  const U<T> ua = static_cast<U<T>>(a), ub = static_cast<U<T>>(b);
  const U<T> s1 = static_cast<U<T>>(ua + ub);
  const U<T> s2 = static_cast<U<T>>(s1 + (cf_in & 1u));
  return {static_cast<T>(s2), static_cast<uint32_t>((s1 < ua) | (s2 < s1))};
}
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> add_cc(T a, T b) { return addc(a, b, 0); }

// subc: d = a - (b + CF), the ISA's "borrow-in"; CF out is the borrow (1 when a < b + CF as
// unsigned numbers). GPU-CONFIRM: the ISA defines CF after sub.cc as a borrow and CF after add.cc
// as a carry; a chain mixing them (add.cc then subc) is taken literally here.
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> subc(T a, T b, uint32_t cf_in) {
  const U<T> ua = static_cast<U<T>>(a), ub = static_cast<U<T>>(b);
  const U<T> d1 = static_cast<U<T>>(ua - ub);
  const U<T> d2 = static_cast<U<T>>(d1 - (cf_in & 1u));
  return {static_cast<T>(d2), static_cast<uint32_t>((ua < ub) | (d1 < (cf_in & 1u)))};
}
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> sub_cc(T a, T b) { return subc(a, b, 0); }

// ---- mul, mad --------------------------------------------------------------------------------
// mul.lo: the low half of the full product; the same bits for signed and unsigned.
template <Int T> constexpr T mul_lo(T a, T b) { return narrow<T>(zx(a) * zx(b)); }

// mul.hi: the high half of the 2n-bit product, signed or unsigned per T.
template <Int T> constexpr T mul_hi(T a, T b) {
  constexpr unsigned n = width_v<T>;
  if constexpr (n == 64) {
    if constexpr (std::is_signed_v<T>)
      return narrow<T>(static_cast<uint64_t>(static_cast<u128>(s128{a} * s128{b}) >> 64));
    else
      return narrow<T>(static_cast<uint64_t>((u128{a} * u128{b}) >> 64));
  } else if constexpr (std::is_signed_v<T>) {
    // |a*b| <= 2^62 for 32-bit operands: no overflow; >> of a negative value is arithmetic.
    return narrow<T>(static_cast<uint64_t>((vx(a) * vx(b)) >> n));
  } else {
    return narrow<T>((zx(a) * zx(b)) >> n);
  }
}

// mul.wide: the whole 2n-bit product (.u16/.s16 -> 32 bits, .u32/.s32 -> 64 bits).
template <Int T> requires(sizeof(T) == 2 || sizeof(T) == 4)
constexpr Wide<T> mul_wide(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    return narrow<Wide<T>>(static_cast<uint64_t>(vx(a)) * static_cast<uint64_t>(vx(b)));
  else
    return narrow<Wide<T>>(zx(a) * zx(b));
}

template <Int T> constexpr T mad_lo(T a, T b, T c) { return add(mul_lo(a, b), c); }
template <Int T> constexpr T mad_hi(T a, T b, T c) { return add(mul_hi(a, b), c); }
template <Int T> requires(sizeof(T) == 2 || sizeof(T) == 4)
constexpr Wide<T> mad_wide(T a, T b, Wide<T> c) { return add(mul_wide(a, b), c); }
// mad.hi.sat.s32: the ISA's semantics are d = t<63..32> + c, saturated to s32; the addend joins
// the high half only (no carry in from the low half). GPU-CONFIRM that hardware matches the text.
constexpr int32_t mad_hi_sat_s32(int32_t a, int32_t b, int32_t c) {
  return sat_s32(int64_t{mul_hi(a, b)} + c);
}
// mad.cc / madc: the lo or hi product plus c (plus CF), with carry out.
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> madc(bool hi, T a, T b, T c, uint32_t cf_in) {
  return addc(hi ? mul_hi(a, b) : mul_lo(a, b), c, cf_in);
}
template <Int T> requires(sizeof(T) >= 4)
constexpr WithCarry<T> mad_cc(bool hi, T a, T b, T c) { return madc(hi, a, b, c, 0); }

// ---- mul24, mad24 (.u32/.s32) ----------------------------------------------------------------
// The operands' low 24 bits (sign-extended from bit 23 for .s32) give a 48-bit product; .lo is
// bits 31..0, .hi bits 47..16.
template <Int T> requires(sizeof(T) == 4)
constexpr int64_t mul24_full(T a, T b) {
  const auto x24 = [](T v) -> int64_t {
    const uint64_t lo = zx(v) & 0xffffffu;
    if constexpr (std::is_signed_v<T>) return static_cast<int64_t>((lo ^ 0x800000u)) - 0x800000;
    else return static_cast<int64_t>(lo);
  };
  return x24(a) * x24(b);  // |product| < 2^47: no overflow
}
template <Int T> requires(sizeof(T) == 4)
constexpr T mul24_lo(T a, T b) { return narrow<T>(static_cast<uint64_t>(mul24_full(a, b))); }
template <Int T> requires(sizeof(T) == 4)
constexpr T mul24_hi(T a, T b) { return narrow<T>(static_cast<uint64_t>(mul24_full(a, b)) >> 16); }
template <Int T> requires(sizeof(T) == 4)
constexpr T mad24_lo(T a, T b, T c) { return add(mul24_lo(a, b), c); }
template <Int T> requires(sizeof(T) == 4)
constexpr T mad24_hi(T a, T b, T c) { return add(mul24_hi(a, b), c); }
// mad24.hi.sat.s32: bits 47..16 of the product (as s32) plus c, saturated. GPU-CONFIRM as for
// mad.hi.sat.
constexpr int32_t mad24_hi_sat_s32(int32_t a, int32_t b, int32_t c) {
  return sat_s32(int64_t{mul24_hi(a, b)} + c);
}

// ---- sad, div, rem, abs, min, max ------------------------------------------------------------
// sad: c + |a - b|, comparing in T's signedness; the difference wraps (INT_MAX - INT_MIN is
// 0xffffffff as bits) and so does the sum.
template <Int T> constexpr T sad(T a, T b, T c) { return add(c, a < b ? sub(b, a) : sub(a, b)); }

// div, rem. The ISA leaves x/0 and MIN/-1 undefined. GPU-CONFIRM, what we believe hardware gives
// (nvcc's division sequences end with a fix-up that returns all ones for a zero divisor):
//   x / 0 = all ones (0xffff.. ; -1 for signed), for every x and every width;
//   x % 0 = all ones as well (same fix-up; NVIDIA's engineers describe it on the forums);
//   MIN / -1 = MIN (the quotient wraps), MIN % -1 = 0.
template <Int T> constexpr T div(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>)
    if (a == min_of<T>() && b == T(-1)) return a;
  return static_cast<T>(a / b);  // promoted for 8/16-bit types: no overflow left
}
template <Int T> constexpr T rem(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return 0;  // also MIN % -1, which would trap on x86
  return static_cast<T>(a % b);  // C++ truncates toward zero, as PTX does: sign follows a
}

// abs.s16/.s32/.s64: abs(MIN) is MIN (two's complement; the ISA does not saturate).
// GPU-CONFIRM (IABS of 0x80000000 is believed to give 0x80000000).
template <Int T> requires std::is_signed_v<T>
constexpr T abs(T a) { return a < 0 ? neg(a) : a; }

template <Int T> constexpr T min(T a, T b) { return b < a ? b : a; }
template <Int T> constexpr T max(T a, T b) { return a < b ? b : a; }
// min.relu.s32 / max.relu.s32: the result clamped below at 0.
constexpr int32_t min_relu_s32(int32_t a, int32_t b) { return max(min(a, b), 0); }
constexpr int32_t max_relu_s32(int32_t a, int32_t b) { return max(max(a, b), 0); }

// SIMD min/max on two 16-bit halves of a 32-bit register (.u16x2, .s16x2 with optional .relu).
namespace detail {
template <class H, class F> constexpr uint32_t per_half(uint32_t a, uint32_t b, F f) {
  uint32_t d = 0;
  for (unsigned s = 0; s < 32; s += 16) {
    const H x = narrow<H>(a >> s), y = narrow<H>(b >> s);
    d |= static_cast<uint32_t>(zx(f(x, y))) << s;
  }
  return d;
}
}  // namespace detail
constexpr uint32_t min_u16x2(uint32_t a, uint32_t b) {
  return detail::per_half<uint16_t>(a, b, [](uint16_t x, uint16_t y) { return min(x, y); });
}
constexpr uint32_t max_u16x2(uint32_t a, uint32_t b) {
  return detail::per_half<uint16_t>(a, b, [](uint16_t x, uint16_t y) { return max(x, y); });
}
constexpr uint32_t min_s16x2(uint32_t a, uint32_t b, bool relu = false) {
  return detail::per_half<int16_t>(a, b, [relu](int16_t x, int16_t y) {
    const int16_t m = min(x, y);
    return relu && m < 0 ? int16_t{0} : m;
  });
}
constexpr uint32_t max_s16x2(uint32_t a, uint32_t b, bool relu = false) {
  return detail::per_half<int16_t>(a, b, [relu](int16_t x, int16_t y) {
    const int16_t m = max(x, y);
    return relu && m < 0 ? int16_t{0} : m;
  });
}

// ---- setp comparisons ------------------------------------------------------------------------
// eq ne lt le gt ge compare in T's signedness (for unsigned T, lt..ge are the same as lo..hs, as
// the ISA allows); lo ls hi hs always compare the bits as unsigned. Bit types (.b16/.b32/.b64)
// use an unsigned T with eq/ne, the only operators the ISA gives them.
enum class Cmp : uint8_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs };

template <Int T> constexpr bool compare(Cmp op, T a, T b) {
  const U<T> ua = static_cast<U<T>>(a), ub = static_cast<U<T>>(b);
  switch (op) {
    case Cmp::eq: return a == b;
    case Cmp::ne: return a != b;
    case Cmp::lt: return a < b;
    case Cmp::le: return a <= b;
    case Cmp::gt: return a > b;
    case Cmp::ge: return a >= b;
    case Cmp::lo: return ua < ub;
    case Cmp::ls: return ua <= ub;
    case Cmp::hi: return ua > ub;
    case Cmp::hs: return ua >= ub;
  }
  return false;  // not reached for a valid Cmp
}

// ---- cvt between integer types ----------------------------------------------------------------
// The interpreter carries types as data, so this one takes them at run time. .b types convert as
// the .u type of their width.
enum class IntType : uint8_t { u8, u16, u32, u64, s8, s16, s32, s64 };

constexpr unsigned width(IntType t) { return 8u << (static_cast<unsigned>(t) & 3u); }
constexpr bool is_signed(IntType t) { return static_cast<unsigned>(t) >= 4; }

// cvt{.sat}.dtype.atype d, a (integer to integer). a_bits holds the source register (its low
// width(atype) bits are read). Without .sat the value is truncated to dtype's width; with .sat it
// is clamped to dtype's range first (so .sat.u32.s32 of -5 is 0, .sat.s8.u32 of 300 is 127).
// The result is dtype's value sign-extended (signed dtype) or zero-extended (unsigned dtype) to
// 64 bits: the ISA says an 8/16-bit dtype written to a wider register is extended per dtype, and
// the caller keeps the register's own width.
constexpr uint64_t cvt_int(uint64_t a_bits, IntType atype, IntType dtype, bool sat) {
  const unsigned aw = width(atype), dw = width(dtype);
  const uint64_t amask = aw == 64 ? ~uint64_t{0} : (uint64_t{1} << aw) - 1;
  uint64_t av = a_bits & amask;
  s128 v = static_cast<s128>(av);
  if (is_signed(atype) && aw < 64 && (av >> (aw - 1)) & 1u) v -= static_cast<s128>(uint64_t{1} << aw);
  if (is_signed(atype) && aw == 64) v = static_cast<int64_t>(av);
  if (sat) {
    const s128 lo = is_signed(dtype) ? -(s128{1} << (dw - 1)) : 0;
    const s128 hi = is_signed(dtype) ? (s128{1} << (dw - 1)) - 1 : (s128{1} << dw) - 1;
    v = v < lo ? lo : v > hi ? hi : v;
  }
  uint64_t d = static_cast<uint64_t>(static_cast<u128>(v));  // two's complement low 64 bits
  if (dw < 64) {
    const uint64_t dmask = (uint64_t{1} << dw) - 1;
    d &= dmask;
    if (is_signed(dtype) && (d >> (dw - 1)) & 1u) d |= ~dmask;
  }
  return d;
}

// cvt.pack.sat.{u16,s16}.s32 d, a, b: a and b saturated to the 16-bit type, a in the upper half.
constexpr uint32_t cvt_pack_sat_16(int32_t a, int32_t b, bool to_signed) {
  const IntType t = to_signed ? IntType::s16 : IntType::u16;
  const auto h = [t](int32_t v) {
    return static_cast<uint32_t>(cvt_int(static_cast<uint32_t>(v), IntType::s32, t, true) & 0xffffu);
  };
  return (h(a) << 16) | h(b);
}

}  // namespace cuda_shim::exec::iops

#include "intops_bits.hpp"
