// Integer, bit and predicate instructions: add sub mul mad (lo/hi/wide, carries) div rem min
// max abs neg, logic and shifts, bit fields, setp/set/selp on integers, integer cvt, mov.
#include <climits>
#include <limits>

#include "exec/cmp.hpp"
#include "exec/intops.hpp"
#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

template <class T>
using U = std::make_unsigned_t<T>;

// The lane-by-lane semantics are intops.hpp's; these apply them to a warp.
template <class T> struct Add {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (std::is_same_v<T, int32_t>)
      if (in.flags & kSat) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::add_sat_s32(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::add<T>(a, b); });
  }
};
template <class T> struct Sub {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (std::is_same_v<T, int32_t>)
      if (in.flags & kSat) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::sub_sat_s32(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::sub<T>(a, b); });
  }
};

// Carry chains: add.cc/addc(.cc)/sub.cc/subc(.cc) on 32 and 64 bits; op[4] is the frame's carry
// slot (mod bit 1: reads the carry in; bit 2: writes the carry out; bit 4: subtract).
template <class T> struct AddCarry {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool cin = in.mod & 1, cout = in.mod & 2, sub = in.mod & 4;
    for_lanes(m, [&](unsigned l) {
      const T a = from_slot<T>(w.get(in.op[1], l)), b = from_slot<T>(w.get(in.op[2], l));
      const uint32_t c = cin ? static_cast<uint32_t>(w.get(in.op[4], l) & 1) : 0;
      const iops::WithCarry<T> r = sub ? iops::subc<T>(a, b, c) : iops::addc<T>(a, b, c);
      w.set(in.op[0], l, to_slot<T>(r.d));
      if (cout) w.set(in.op[4], l, r.cf);
    });
  }
};

template <class T> struct Mul {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
      using W = iops::Wide<T>;
      if (in.flags & kWide) return binary<W, T, T>(w, in, m, [](T a, T b) { return iops::mul_wide<T>(a, b); });
    }
    if (in.flags & kHi) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::mul_hi<T>(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::mul_lo<T>(a, b); });
  }
};
template <class T> struct Mad {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
      using W = iops::Wide<T>;
      if (in.flags & kWide)
        return ternary<W, T, T, W>(w, in, m, [](T a, T b, W c) { return iops::mad_wide<T>(a, b, c); });
    }
    if constexpr (std::is_same_v<T, int32_t>)
      if ((in.flags & kHi) && (in.flags & kSat))
        return ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad_hi_sat_s32(a, b, c); });
    if (in.flags & kHi) return ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad_hi<T>(a, b, c); });
    ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad_lo<T>(a, b, c); });
  }
};
// mul24/mad24 (.u32/.s32; mod 1: mad24).
template <class T> struct Mul24 {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool hi = in.flags & kHi;
    if (in.mod & 1) {
      if constexpr (std::is_same_v<T, int32_t>)
        if (hi && (in.flags & kSat))
          return ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad24_hi_sat_s32(a, b, c); });
      if (hi) return ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad24_hi<T>(a, b, c); });
      return ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::mad24_lo<T>(a, b, c); });
    }
    if (hi) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::mul24_hi<T>(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::mul24_lo<T>(a, b); });
  }
};

template <class T> struct Div {
  static void run(Warp& w, const Insn& in, uint32_t m) { binary<T, T, T>(w, in, m, [](T a, T b) { return iops::div<T>(a, b); }); }
};
template <class T> struct Rem {
  static void run(Warp& w, const Insn& in, uint32_t m) { binary<T, T, T>(w, in, m, [](T a, T b) { return iops::rem<T>(a, b); }); }
};
template <class T> struct Min {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (std::is_same_v<T, int32_t>)
      if (in.flags & kRelu) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::min_relu_s32(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::min<T>(a, b); });
  }
};
template <class T> struct Max {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (std::is_same_v<T, int32_t>)
      if (in.flags & kRelu) return binary<T, T, T>(w, in, m, [](T a, T b) { return iops::max_relu_s32(a, b); });
    binary<T, T, T>(w, in, m, [](T a, T b) { return iops::max<T>(a, b); });
  }
};
template <class T> struct Abs {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if constexpr (std::is_signed_v<T>) unary<T, T>(w, in, m, [](T a) { return iops::abs<T>(a); });
    else unary<T, T>(w, in, m, [](T a) { return a; });
  }
};
template <class T> struct Neg {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<T, T>(w, in, m, [](T a) { return iops::neg<T>(a); }); }
};

template <class T> struct And {
  static void run(Warp& w, const Insn& in, uint32_t m) { binary<T, T, T>(w, in, m, [](T a, T b) { return iops::and_<T>(a, b); }); }
};
template <class T> struct Or {
  static void run(Warp& w, const Insn& in, uint32_t m) { binary<T, T, T>(w, in, m, [](T a, T b) { return iops::or_<T>(a, b); }); }
};
template <class T> struct Xor {
  static void run(Warp& w, const Insn& in, uint32_t m) { binary<T, T, T>(w, in, m, [](T a, T b) { return iops::xor_<T>(a, b); }); }
};
template <class T> struct Not {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<T, T>(w, in, m, [](T a) { return iops::not_<T>(a); }); }
};
template <class T> struct Cnot {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<T, T>(w, in, m, [](T a) { return iops::cnot<T>(a); }); }
};
void not_pred(Warp& w, const Insn& in, uint32_t m) { unary<uint8_t, uint8_t>(w, in, m, [](uint8_t a) { return uint8_t(!(a & 1)); }); }

// Shifts: the amount is an unsigned 32-bit value; amounts past the width clamp.
template <class T> struct Shl {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    binary<T, T, uint32_t>(w, in, m, [](T a, uint32_t s) { return iops::shl<T>(a, s); });
  }
};
template <class T> struct Shr {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    binary<T, T, uint32_t>(w, in, m, [](T a, uint32_t s) { return iops::shr<T>(a, s); });
  }
};
template <class T> struct Popc {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<uint32_t, T>(w, in, m, [](T a) { return iops::popc<T>(a); }); }
};
template <class T> struct Clz {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<uint32_t, T>(w, in, m, [](T a) { return iops::clz<T>(a); }); }
};
template <class T> struct Brev {
  static void run(Warp& w, const Insn& in, uint32_t m) { unary<T, T>(w, in, m, [](T a) { return iops::brev<T>(a); }); }
};

// setp/set on integers: op[0] p, op[1] a, op[2] b, op[3] c (boolean operand or kNone),
// op[4] q (p|q: the complement) — combined with mod2's boolean operation. The plain form (no c,
// no q: what compilers emit) runs one comparison per lane with the operator chosen outside the
// loop.
template <class T> struct Setp {
  template <class F>
  static void plain(Warp& w, const Insn& in, uint32_t m, F f) {
    binary<bool, T, T>(w, in, m, f);
  }
  static void run(Warp& w, const Insn& in, uint32_t m) {
    if (in.op[3] == kNone && in.op[4] == kNone) {
      using U = std::make_unsigned_t<T>;
      switch (static_cast<Cmp>(in.mod)) {
        case Cmp::eq: return plain(w, in, m, [](T a, T b) { return a == b; });
        case Cmp::ne: return plain(w, in, m, [](T a, T b) { return a != b; });
        case Cmp::lt: return plain(w, in, m, [](T a, T b) { return a < b; });
        case Cmp::le: return plain(w, in, m, [](T a, T b) { return a <= b; });
        case Cmp::gt: return plain(w, in, m, [](T a, T b) { return a > b; });
        case Cmp::ge: return plain(w, in, m, [](T a, T b) { return a >= b; });
        case Cmp::lo: return plain(w, in, m, [](T a, T b) { return static_cast<U>(a) < static_cast<U>(b); });
        case Cmp::ls: return plain(w, in, m, [](T a, T b) { return static_cast<U>(a) <= static_cast<U>(b); });
        case Cmp::hi: return plain(w, in, m, [](T a, T b) { return static_cast<U>(a) > static_cast<U>(b); });
        case Cmp::hs: return plain(w, in, m, [](T a, T b) { return static_cast<U>(a) >= static_cast<U>(b); });
        default: break;
      }
    }
    unsigned sa, sb, sc = 0;
    const uint64_t* a = w.src(in.op[1], sa);
    const uint64_t* b = w.src(in.op[2], sb);
    const uint64_t* c = in.op[3] != kNone ? w.src(in.op[3], sc) : nullptr;
    uint64_t* p = w.dst(in.op[0]);
    uint64_t* q = in.op[4] != kNone ? w.dst(in.op[4]) : nullptr;
    const Cmp op = static_cast<Cmp>(in.mod);
    for_lanes(m, [&](unsigned l) {
      bool t = cmp_int<T>(op, from_slot<T>(a[l * sa]), from_slot<T>(b[l * sb]));
      bool cv = c ? ((c[l * sc] & 1) != 0) != ((in.mod2 & kBoolNeg) != 0) : true;
      // p|q naming one register: p is what it holds after (an H200 writes p last).
      if (q) q[l] = bool_op(in.mod2, !t, cv);
      p[l] = bool_op(in.mod2, t, cv);
    });
  }
};

// selp: d = c ? a : b (any type: the slot's bits).
void selp(Warp& w, const Insn& in, uint32_t m) {
  unsigned sa, sb, sc;
  const uint64_t* a = w.src(in.op[1], sa);
  const uint64_t* b = w.src(in.op[2], sb);
  const uint64_t* c = w.src(in.op[3], sc);
  uint64_t* d = w.dst(in.op[0]);
  for_lanes(m, [&](unsigned l) { d[l] = (c[l * sc] & 1) ? a[l * sa] : b[l * sb]; });
}

// mov: the bits; a 64-bit slot copy serves every type (readers take their low bits).
void mov(Warp& w, const Insn& in, uint32_t m) {
  unsigned sa;
  const uint64_t* a = w.src(in.op[1], sa);
  uint64_t* d = w.dst(in.op[0]);
  if (sa == 1 && m == 0xffffffffu) {
    std::memcpy(d, a, kLanes * sizeof(uint64_t));
    return;
  }
  for_lanes(m, [&](unsigned l) { d[l] = a[l * sa]; });
}
// mov.b64 d, {a, b} / mov.b32 d, {a, b} (16-bit halves) ...: pack op[1..n] of `imm` bits each.
void pack(Warp& w, const Insn& in, uint32_t m) {
  const unsigned bits = static_cast<unsigned>(in.imm), n = in.vec;
  uint64_t* d = w.dst(in.op[0]);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for_lanes(m, [&](unsigned l) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i)
      if (in.op[1 + i] != kNone) v |= (w.get(in.op[1 + i], l) & mask) << (i * bits);
    d[l] = v;
  });
}
// mov.b64 {a, b}, d: unpack op[n] into op[0..n-1].
void unpack(Warp& w, const Insn& in, uint32_t m) {
  const unsigned bits = static_cast<unsigned>(in.imm), n = in.vec;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for_lanes(m, [&](unsigned l) {
    uint64_t v = w.get(in.op[n], l);
    for (unsigned i = 0; i < n; ++i)
      if (in.op[i] != kNone) w.set(in.op[i], l, (v >> (i * bits)) & mask);
  });
}

// cvt between integer types: truncate or extend by the source's signedness; .sat clamps to the
// destination's range.
template <class D, class S>
uint64_t cvt_int(uint64_t v, bool sat) {
  S s = from_slot<S>(v);
  if (sat) {
    __int128 x = s;
    const __int128 lo = std::numeric_limits<D>::min(), hi = std::numeric_limits<D>::max();
    return to_slot<D>(static_cast<D>(x < lo ? lo : x > hi ? hi : x));
  }
  return to_slot<D>(static_cast<D>(s));
}

template <class D>
struct CvtInt {
  template <class S>
  struct From {
    static void run(Warp& w, const Insn& in, uint32_t m) {
      const bool sat = in.flags & kSat;
      unsigned sa;
      const uint64_t* a = w.src(in.op[1], sa);
      uint64_t* d = w.dst(in.op[0]);
      for_lanes(m, [&](unsigned l) { d[l] = cvt_int<D, S>(a[l * sa], sat); });
    }
  };
};
template <class D>
struct CvtIntTo {
  static Handler pick(Ty src) { return by_int<CvtInt<D>::template From>(src); }
};

Handler cvt_int_handler(const Insn& in) {
  switch (in.ty) {
    case Ty::u8: return CvtIntTo<uint8_t>::pick(in.ty2);
    case Ty::s8: return CvtIntTo<int8_t>::pick(in.ty2);
    case Ty::u16: case Ty::b16: return CvtIntTo<uint16_t>::pick(in.ty2);
    case Ty::s16: return CvtIntTo<int16_t>::pick(in.ty2);
    case Ty::u32: case Ty::b32: return CvtIntTo<uint32_t>::pick(in.ty2);
    case Ty::s32: return CvtIntTo<int32_t>::pick(in.ty2);
    case Ty::u64: case Ty::b64: return CvtIntTo<uint64_t>::pick(in.ty2);
    case Ty::s64: return CvtIntTo<int64_t>::pick(in.ty2);
    default: return nullptr;
  }
}

bool is_int(Ty t) { return t >= Ty::b8 && t <= Ty::s64 && t != Ty::b128; }

}  // namespace

Handler int_handler(std::string_view op, Insn& in) {
  const Ty t = in.ty;
  if (op == "mov") return in.vec > 1 ? nullptr : &mov;
  if (op == "selp") return &selp;
  if (op == "pack") return &pack;
  if (op == "unpack") return &unpack;
  if (t == Ty::pred) {
    if (op == "and") return &And<uint8_t>::run;
    if (op == "or") return &Or<uint8_t>::run;
    if (op == "xor") return &Xor<uint8_t>::run;
    if (op == "not") return &not_pred;
    return nullptr;
  }
  if (op == "cvt" && is_int(in.ty) && is_int(in.ty2)) return cvt_int_handler(in);
  if (!is_int(t)) return nullptr;
  if (op == "add" && (in.mod & 7)) return (t == Ty::u32 || t == Ty::s32 || t == Ty::b32) ? &AddCarry<uint32_t>::run : &AddCarry<uint64_t>::run;
  if (op == "add") return by_int<Add>(t);
  if (op == "sub") return by_int<Sub>(t);
  if (op == "mul") return by_int<Mul>(t);
  if (op == "mad") return by_int<Mad>(t);
  if (op == "mul24" || op == "mad24") return t == Ty::s32 ? &Mul24<int32_t>::run : &Mul24<uint32_t>::run;
  if (op == "div") return by_int<Div>(t);
  if (op == "rem") return by_int<Rem>(t);
  if (op == "min") return by_int<Min>(t);
  if (op == "max") return by_int<Max>(t);
  if (op == "abs") return by_int<Abs>(t);
  if (op == "neg") return by_int<Neg>(t);
  if (op == "and") return by_int<And>(t);
  if (op == "or") return by_int<Or>(t);
  if (op == "xor") return by_int<Xor>(t);
  if (op == "not") return by_int<Not>(t);
  if (op == "cnot") return by_int<Cnot>(t);
  if (op == "shl") return by_int<Shl>(t);
  if (op == "shr") return by_int<Shr>(t);
  if (op == "popc") return by_int<Popc>(t);
  if (op == "clz") return by_int<Clz>(t);
  if (op == "brev") return by_int<Brev>(t);
  if (op == "setp") return by_int<Setp>(t);
  return nullptr;
}

}  // namespace cuda_shim::exec
