// Bit manipulation of PTX instructions, lane by lane, per NVIDIA's PTX ISA reference: shl/shr,
// logic and lop3, popc/clz/bfind/fns/brev, bfe/bfi, prmt, shf, dp4a/dp2a, bmsk, szext.
// Included by intops.hpp (its conventions apply: templates over the C++ type of the PTX type,
// unsigned arithmetic only, no host UB or trap for any operand).
#pragma once

#include "intops.hpp"

namespace cuda_shim::exec::iops {

// ---- shifts ----------------------------------------------------------------------------------
// The shift amount is an unsigned 32-bit operand whatever the data type. The ISA clamps amounts
// beyond the width: shl gives 0, shr.u gives 0, shr.s gives every bit the sign (0 or -1). C++
// leaves such shifts undefined, so they are handled before shifting.
template <Int T> constexpr T shl(T a, uint32_t n) {
  return n >= width_v<T> ? T{0} : narrow<T>(zx(a) << n);
}
template <Int T> constexpr T shr(T a, uint32_t n) {
  if constexpr (std::is_signed_v<T>) {
    if (n >= width_v<T>) return a < 0 ? T(-1) : T{0};
    return narrow<T>(static_cast<uint64_t>(vx(a) >> n));  // arithmetic since C++20
  } else {
    return n >= width_v<T> ? T{0} : narrow<T>(zx(a) >> n);
  }
}

// ---- logic -----------------------------------------------------------------------------------
template <Int T> constexpr T and_(T a, T b) { return narrow<T>(zx(a) & zx(b)); }
template <Int T> constexpr T or_(T a, T b) { return narrow<T>(zx(a) | zx(b)); }
template <Int T> constexpr T xor_(T a, T b) { return narrow<T>(zx(a) ^ zx(b)); }
template <Int T> constexpr T not_(T a) { return narrow<T>(~zx(a)); }
// cnot: C's logical not, 1 for a zero operand and 0 otherwise.
template <Int T> constexpr T cnot(T a) { return a == 0 ? T{1} : T{0}; }

// lop3.b32 d, a, b, c, immLut: bit i of d is immLut's bit (a_i<<2 | b_i<<1 | c_i), which is what
// the ISA's encoding (F(0xF0, 0xCC, 0xAA) = immLut) amounts to. One minterm per set LUT bit.
constexpr uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t d = 0;
  for (unsigned i = 0; i < 8; ++i)
    if ((lut >> i) & 1u)
      d |= ((i & 4u) ? a : ~a) & ((i & 2u) ? b : ~b) & ((i & 1u) ? c : ~c);
  return d;
}

// lop3.{or,and}.b32 d|p, a, b, c, immLut, q (PTX 8.2+): d as lop3, and p = (d != 0) or/and q.
struct Lop3Pred {
  uint32_t d;
  bool p;
};
constexpr Lop3Pred lop3_pred(uint32_t a, uint32_t b, uint32_t c, uint32_t lut, bool and_op, bool q) {
  const uint32_t d = lop3(a, b, c, lut);
  return {d, and_op ? (d != 0 && q) : (d != 0 || q)};
}

// ---- counting and searching ------------------------------------------------------------------
// popc.b32/.b64 and clz.b32/.b64 write a .u32 result; clz(0) is the width.
template <Int T> constexpr uint32_t popc(T a) { return static_cast<uint32_t>(std::popcount(static_cast<U<T>>(a))); }
template <Int T> constexpr uint32_t clz(T a) { return static_cast<uint32_t>(std::countl_zero(static_cast<U<T>>(a))); }

// bfind{.shiftamt}.{u32,u64,s32,s64}: the position of the most significant 1 bit (for a negative
// signed value, of the most significant 0 bit: the first non-sign bit). .shiftamt returns instead
// the left shift that brings that bit to the msb (width-1-pos). 0xffffffff when there is none.
template <Int T> constexpr uint32_t bfind(T a, bool shiftamt = false) {
  U<T> x = static_cast<U<T>>(a);
  if constexpr (std::is_signed_v<T>)
    if (a < 0) x = static_cast<U<T>>(~x);
  if (x == 0) return 0xffffffffu;
  const uint32_t pos = width_v<T> - 1 - static_cast<uint32_t>(std::countl_zero(x));
  return shiftamt ? width_v<T> - 1 - pos : pos;
}

// fns.b32 d, mask, base, offset: the offset-th set bit of mask counting from base (upwards for a
// positive offset, downwards for a negative one; offset 0 asks whether bit base itself is set).
// 0xffffffff when not found. base > 31 is undefined in the ISA; here it finds nothing (the walk
// starts outside the register), so the host never reads out of range. base is read as signed
// (it may be .s32); offset's magnitude is taken in 64 bits so INT_MIN is no overflow.
constexpr uint32_t fns(uint32_t mask, uint32_t base, int32_t offset) {
  const int64_t b = static_cast<int32_t>(base);
  if (b < 0 || b > 31) return 0xffffffffu;  // GPU-CONFIRM: undefined in the ISA
  if (offset == 0) return (mask >> b) & 1u ? static_cast<uint32_t>(b) : 0xffffffffu;
  int64_t count = (offset < 0 ? -int64_t{offset} : int64_t{offset}) - 1;
  const int64_t inc = offset > 0 ? 1 : -1;
  for (int64_t pos = b; pos >= 0 && pos < 32; pos += inc) {
    if ((mask >> pos) & 1u) {
      if (count == 0) return static_cast<uint32_t>(pos);
      --count;
    }
  }
  return 0xffffffffu;
}

// brev.b32/.b64: bit i goes to bit width-1-i.
template <Int T> constexpr T brev(T a) {
  const uint64_t x = zx(a);
  uint64_t r = 0;
  for (unsigned i = 0; i < width_v<T>; ++i) r |= ((x >> i) & 1u) << (width_v<T> - 1 - i);
  return narrow<T>(r);
}

// ---- bit fields ------------------------------------------------------------------------------
// bfe.{u32,u64,s32,s64} d, a, b, c: the len-bit field at pos, zero- or sign-extended. pos = b &
// 0xff and len = c & 0xff (the ISA restricts both to 0..255). Bits past the msb are not read:
// the field is cut at the msb and the rest filled with the sign bit, which for a signed type is
// a[min(pos+len-1, msb)] and 0 when len is 0 (so bfe with len 0 gives 0).
template <Int T> requires(sizeof(T) >= 4)
constexpr T bfe(T a, uint32_t b, uint32_t c) {
  constexpr unsigned msb = width_v<T> - 1;
  const unsigned pos = b & 0xffu, len = c & 0xffu;
  const uint64_t x = zx(a);
  uint64_t sbit = 0;
  if (std::is_signed_v<T> && len != 0) {
    const unsigned top = pos + len - 1 < msb ? pos + len - 1 : msb;
    sbit = (x >> top) & 1u;
  }
  // Field bits actually inside the register: n = min(len, width - pos), 0 when pos > msb.
  const unsigned n = pos > msb ? 0 : (len < width_v<T> - pos ? len : width_v<T> - pos);
  const uint64_t field = n == 0 ? 0 : (x >> pos) & (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
  const uint64_t fill = (sbit && n < 64) ? ~uint64_t{0} << n : 0;
  return narrow<T>(field | fill);
}

// bfi.{b32,b64} f, a, b, c, d: b with a's low len bits inserted at pos (pos = c & 0xff, len =
// d & 0xff); bits that would land past the msb are dropped, so pos > msb or len 0 give b.
template <Int T> requires(sizeof(T) >= 4)
constexpr T bfi(T a, T b, uint32_t c, uint32_t d) {
  const unsigned pos = c & 0xffu, len = d & 0xffu;
  if (pos >= width_v<T> || len == 0) return b;
  const unsigned n = len < width_v<T> - pos ? len : width_v<T> - pos;
  const uint64_t m = (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1) << pos;
  return narrow<T>((zx(b) & ~m) | ((zx(a) << pos) & m));
}

// ---- prmt ------------------------------------------------------------------------------------
// prmt.b32{.mode} d, a, b, c: picks bytes of the 8-byte value {b, a} (bytes 0-3 from a, 4-7 from
// b). Default mode: selector nibble i of c gives d's byte i: its low 3 bits pick the byte, its bit
// 3 asks for the picked byte's sign (msb) replicated over the byte instead. The other modes use
// only c's low 2 bits and pick per the ISA's tables:
//   f4e  d.byte i = byte (c+i) mod 8          (forward 4 extract)
//   b4e  d.byte i = byte (c-i) mod 8          (backward 4 extract)
//   rc8  every byte = byte c                  (replicate 8)
//   ecl  d.byte i = byte max(i, c)            (edge clamp left)
//   ecr  d.byte i = byte min(i, c)            (edge clamp right)
//   rc16 both halves = 16-bit half (c & 1)    (replicate 16)
enum class PrmtMode : uint8_t { none, f4e, b4e, rc8, ecl, ecr, rc16 };

constexpr uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, PrmtMode mode = PrmtMode::none) {
  const uint64_t src = (uint64_t{b} << 32) | a;
  const auto byte = [src](unsigned k) { return static_cast<uint32_t>((src >> (8 * (k & 7u))) & 0xffu); };
  const unsigned s = c & 3u;
  uint32_t d = 0;
  for (unsigned i = 0; i < 4; ++i) {
    uint32_t v = 0;
    switch (mode) {
      case PrmtMode::none: {
        const unsigned sel = (c >> (4 * i)) & 0xfu;
        v = byte(sel);
        if (sel & 8u) v = (v & 0x80u) ? 0xffu : 0u;
        break;
      }
      case PrmtMode::f4e: v = byte(s + i); break;
      case PrmtMode::b4e: v = byte(s + 8 - i); break;
      case PrmtMode::rc8: v = byte(s); break;
      case PrmtMode::ecl: v = byte(i > s ? i : s); break;
      case PrmtMode::ecr: v = byte(i < s ? i : s); break;
      case PrmtMode::rc16: v = byte(2 * (s & 1u) + (i & 1u)); break;
    }
    d |= v << (8 * i);
  }
  return d;
}

// ---- funnel shifts ---------------------------------------------------------------------------
// shf.l.{clamp,wrap}.b32 d, a, b, c: the upper 32 bits of {b, a} << n; shf.r: the lower 32 bits
// of {b, a} >> n. n = min(c, 32) for .clamp, c & 31 for .wrap.
constexpr uint32_t shf_amount(uint32_t c, bool wrap) { return wrap ? c & 31u : (c < 32u ? c : 32u); }
constexpr uint32_t shf_l(uint32_t a, uint32_t b, uint32_t c, bool wrap) {
  const uint64_t v = (uint64_t{b} << 32) | a;
  return static_cast<uint32_t>((v << shf_amount(c, wrap)) >> 32);
}
constexpr uint32_t shf_r(uint32_t a, uint32_t b, uint32_t c, bool wrap) {
  const uint64_t v = (uint64_t{b} << 32) | a;
  return static_cast<uint32_t>(v >> shf_amount(c, wrap));
}

// ---- dot products ----------------------------------------------------------------------------
// dp4a.atype.btype d, a, b, c: c plus the four byte products of a and b, each byte sign- or
// zero-extended per its operand's type; d is .s32 if either operand is signed, else .u32, and
// the sum wraps modulo 2^32 (the bits are the same either way).
namespace detail {
constexpr int64_t ext(uint32_t v, unsigned shift, unsigned bits, bool is_signed) {
  const uint64_t m = (uint64_t{1} << bits) - 1;
  const uint64_t x = (v >> shift) & m;
  return is_signed && (x >> (bits - 1)) ? static_cast<int64_t>(x) - static_cast<int64_t>(m + 1) : static_cast<int64_t>(x);
}
}  // namespace detail
constexpr uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c, bool a_signed, bool b_signed) {
  uint64_t acc = c;
  for (unsigned i = 0; i < 4; ++i)
    acc += static_cast<uint64_t>(detail::ext(a, 8 * i, 8, a_signed) * detail::ext(b, 8 * i, 8, b_signed));
  return static_cast<uint32_t>(acc);
}
// dp2a.{lo,hi}.atype.btype d, a, b, c: a's two 16-bit halves times two bytes of b (bytes 0,1 for
// .lo, 2,3 for .hi), plus c; same typing and wrapping as dp4a.
constexpr uint32_t dp2a(uint32_t a, uint32_t b, uint32_t c, bool a_signed, bool b_signed, bool hi) {
  const unsigned base = hi ? 16u : 0u;
  uint64_t acc = c;
  for (unsigned i = 0; i < 2; ++i)
    acc += static_cast<uint64_t>(detail::ext(a, 16 * i, 16, a_signed) *
                                 detail::ext(b, base + 8 * i, 8, b_signed));
  return static_cast<uint32_t>(acc);
}

// ---- bmsk, szext -----------------------------------------------------------------------------
// bmsk.{clamp,wrap}.b32 d, a, b: b ones starting at bit a. Per the ISA's pseudocode: the
// position and width are taken mod 32; the mask ends at the msb when position + width reaches 32;
// .clamp additionally gives 0 for a >= 32 and a mask to the msb for b >= 32.
constexpr uint32_t bmsk(uint32_t a, uint32_t b, bool wrap) {
  const uint32_t a1 = a & 31u, b1 = b & 31u, sum = a1 + b1;
  uint32_t mask0 = ~0u << a1;
  uint32_t mask1 = sum >= 32 ? 0u : ~0u << sum;  // sum >= 32: no upper cut
  bool overflow = sum >= 32;
  if (!wrap) {
    if (a >= 32) mask0 = 0;
    if (a >= 32 || b >= 32) overflow = true;
  }
  if (overflow) mask1 = 0;
  else if (b1 == 0) mask1 = ~0u;
  return mask0 & ~mask1;
}

// szext.{clamp,wrap}.{u32,s32} d, a, b: a's low N bits zero- or sign-extended to 32, N = b for
// .wrap taken mod 32, for .clamp b clamped to 32 (N >= 32 gives a unchanged). N = 0 gives 0.
constexpr uint32_t szext(uint32_t a, uint32_t b, bool wrap, bool is_signed) {
  const uint32_t b1 = b & 31u;
  const bool too_large = !wrap && b >= 32;
  if (too_large) return a;
  if (b1 == 0) return 0;  // includes .wrap with b = 32, 64, ...
  const uint32_t mask = ~0u << b1;  // the bits above the field
  const bool sign = is_signed && ((a >> (b1 - 1)) & 1u);
  return (a & ~mask) | (sign ? mask : 0u);
}

}  // namespace cuda_shim::exec::iops
