// Comparisons of setp/set and their boolean combination, shared by the integer and floating
// handlers.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace cuda_shim::exec {

enum class Cmp : uint8_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
// Insn::mod2 of setp/set: the boolean operation (0 none, 1 and, 2 or, 3 xor) and kBoolNeg when
// the boolean operand is written !c.
enum : uint8_t { kBoolNone = 0, kBoolAnd = 1, kBoolOr = 2, kBoolXor = 3, kBoolNeg = 4 };

inline bool bool_op(uint8_t mod2, bool t, bool c) {
  switch (mod2 & 3) {
    case kBoolAnd: return t && c;
    case kBoolOr: return t || c;
    case kBoolXor: return t != c;
    default: return t;
  }
}

// lo/ls/hi/hs compare unsigned whatever the type says; the others by the type.
template <class T>
inline bool cmp_int(Cmp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case Cmp::eq: return a == b;
    case Cmp::ne: return a != b;
    case Cmp::lt: return a < b;
    case Cmp::le: return a <= b;
    case Cmp::gt: return a > b;
    case Cmp::ge: return a >= b;
    case Cmp::lo: return static_cast<U>(a) < static_cast<U>(b);
    case Cmp::ls: return static_cast<U>(a) <= static_cast<U>(b);
    case Cmp::hi: return static_cast<U>(a) > static_cast<U>(b);
    case Cmp::hs: return static_cast<U>(a) >= static_cast<U>(b);
    default: return false;
  }
}

// Ordered comparisons are false when either operand is NaN; the ...u forms are true then.
template <class T>
inline bool cmp_float(Cmp op, T a, T b) {
  const bool un = std::isnan(a) || std::isnan(b);
  switch (op) {
    case Cmp::eq: return !un && a == b;
    case Cmp::ne: return !un && a != b;
    case Cmp::lt: return !un && a < b;
    case Cmp::le: return !un && a <= b;
    case Cmp::gt: return !un && a > b;
    case Cmp::ge: return !un && a >= b;
    case Cmp::equ: return un || a == b;
    case Cmp::neu: return un || a != b;
    case Cmp::ltu: return un || a < b;
    case Cmp::leu: return un || a <= b;
    case Cmp::gtu: return un || a > b;
    case Cmp::geu: return un || a >= b;
    case Cmp::num: return !un;
    case Cmp::nan: return un;
    default: return false;
  }
}

}  // namespace cuda_shim::exec
