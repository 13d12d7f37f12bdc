// Floating-point instructions on f32 and f64: arithmetic, special functions, comparisons and
// conversions. Round-to-nearest runs as the host's own arithmetic (IEEE, as the GPU); the other
// roundings, flush-to-zero, saturation and canonical NaNs follow the PTX ISA (fp.hpp).
#include <cfenv>
#include <cmath>
#include <limits>

#include "exec/cmp.hpp"
#include "exec/fp_bridge.hpp"
#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

template <class T>
inline T in_ftz(T v, bool ftz) {
  if constexpr (std::is_same_v<T, float>)
    if (ftz && std::fpclassify(v) == FP_SUBNORMAL) return std::copysign(0.0f, v);
  return v;
}
// Result post-processing: flush, saturate, canonical NaN (f32 results of arithmetic are the
// canonical 0x7fffffff on the GPU).
template <class T>
inline T out_fix(T v, uint8_t flags) {
  if (std::isnan(v)) {
    if (flags & kSat) return T{0};
    return canonical_nan<T>();
  }
  if constexpr (std::is_same_v<T, float>)
    if ((flags & kFtz) && std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(0.0f, v);
  if (flags & kSat) v = v < T{0} ? T{0} : v > T{1} ? T{1} : v;
  return v;
}

// Round-to-nearest arithmetic inline; the directed roundings through fp_bridge.
template <class T> struct Add {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod;
    const bool ftz = f & kFtz;
    binary<T, T, T>(w, in, m, [=](T a, T b) { return out_fix<T>(fp_add(in_ftz(a, ftz), in_ftz(b, ftz), r), f); });
  }
};
template <class T> struct Sub {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod;
    const bool ftz = f & kFtz;
    binary<T, T, T>(w, in, m, [=](T a, T b) { return out_fix<T>(fp_add(in_ftz(a, ftz), -in_ftz(b, ftz), r), f); });
  }
};
template <class T> struct Mul {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod;
    const bool ftz = f & kFtz;
    binary<T, T, T>(w, in, m, [=](T a, T b) { return out_fix<T>(fp_mul(in_ftz(a, ftz), in_ftz(b, ftz), r), f); });
  }
};
template <class T> struct Fma {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod;
    const bool ftz = f & kFtz;
    ternary<T, T, T, T>(w, in, m, [=](T a, T b, T c) {
      return out_fix<T>(fp_fma(in_ftz(a, ftz), in_ftz(b, ftz), in_ftz(c, ftz), r), f);
    });
  }
};
template <class T> struct Div {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod;
    const bool ftz = f & kFtz;
    if (f & kApprox)
      return binary<T, T, T>(w, in, m, [=](T a, T b) { return out_fix<T>(fp_div_approx(in_ftz(a, ftz), in_ftz(b, ftz)), f); });
    binary<T, T, T>(w, in, m, [=](T a, T b) { return out_fix<T>(fp_div(in_ftz(a, ftz), in_ftz(b, ftz), r), f); });
  }
};
// min/max: a NaN operand yields the other; both NaN: canonical NaN. .NaN: any NaN yields NaN.
// -0 orders below +0.
template <class T> struct MinMax {
  static T pick(T a, T b, bool mx, bool nan) {
    if (std::isnan(a) || std::isnan(b)) {
      if (nan || (std::isnan(a) && std::isnan(b))) return canonical_nan<T>();
      return std::isnan(a) ? b : a;
    }
    if (a == b) return (std::signbit(a) != mx) ? a : b;
    return (a < b) != mx ? a : b;
  }
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool mx = in.mod2 == 1, nan = in.flags & kNaN, ftz = in.flags & kFtz;
    binary<T, T, T>(w, in, m, [=](T a, T b) { return in_ftz(pick(in_ftz(a, ftz), in_ftz(b, ftz), mx, nan), ftz); });
  }
};
template <class T> struct Abs {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool ftz = in.flags & kFtz;
    unary<T, T>(w, in, m, [=](T a) { return in_ftz(std::fabs(a), ftz); });
  }
};
template <class T> struct Neg {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool ftz = in.flags & kFtz;
    unary<T, T>(w, in, m, [=](T a) { return in_ftz(-a, ftz); });
  }
};
template <class T> struct Copysign {  // copysign d, a, b: b's magnitude with a's sign
  static void run(Warp& w, const Insn& in, uint32_t m) {
    binary<T, T, T>(w, in, m, [](T a, T b) { return std::copysign(b, a); });
  }
};

// Unary special functions: Insn::mod2 names which.
enum Fn : uint8_t { kSqrt, kRcp, kRsqrt, kEx2, kLg2, kSin, kCos, kTanh };
template <class T> struct Special {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t f = in.flags, r = in.mod, fn = in.mod2;
    const bool ftz = f & kFtz, approx = f & kApprox;
    unary<T, T>(w, in, m, [=](T a) { return out_fix<T>(fp_special<T>(fn, in_ftz(a, ftz), r, approx), f); });
  }
};

template <class T> struct Setp {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    unsigned sa, sb, sc = 0;
    const uint64_t* a = w.src(in.op[1], sa);
    const uint64_t* b = w.src(in.op[2], sb);
    const uint64_t* c = in.op[3] != kNone ? w.src(in.op[3], sc) : nullptr;
    uint64_t* p = w.dst(in.op[0]);
    uint64_t* q = in.op[4] != kNone ? w.dst(in.op[4]) : nullptr;
    const Cmp op = static_cast<Cmp>(in.mod);
    const bool ftz = in.flags & kFtz;
    for_lanes(m, [&](unsigned l) {
      bool t = cmp_float<T>(op, in_ftz(from_slot<T>(a[l * sa]), ftz), in_ftz(from_slot<T>(b[l * sb]), ftz));
      bool cv = c ? ((c[l * sc] & 1) != 0) != ((in.mod2 & kBoolNeg) != 0) : true;
      p[l] = bool_op(in.mod2, t, cv);
      if (q) q[l] = bool_op(in.mod2, !t, cv);
    });
  }
};

// testp.op.type p, a: mod names the property.
enum Test : uint8_t { kFinite, kInfinite, kNumber, kNotANumber, kNormal, kSubnormal };
template <class T> struct Testp {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const uint8_t t = in.mod;
    unary<bool, T>(w, in, m, [=](T a) {
      switch (t) {
        case kFinite: return std::isfinite(a);
        case kInfinite: return std::isinf(a);
        case kNumber: return !std::isnan(a);
        case kNotANumber: return std::isnan(a);
        case kNormal: return std::isnormal(a);
        default: return std::fpclassify(a) == FP_SUBNORMAL;
      }
    });
  }
};

}  // namespace

Handler float_handler(std::string_view op, Insn& in) {
  const Ty t = in.ty;
  if (op == "cvt") return cvt_handler(in);
  if (op == "add") return by_float<Add>(t);
  if (op == "sub") return by_float<Sub>(t);
  if (op == "mul") return by_float<Mul>(t);
  if (op == "fma" || op == "mad") return by_float<Fma>(t);
  if (op == "div") return by_float<Div>(t);
  if (op == "min" || op == "max") {
    in.mod2 = op == "max";
    return by_float<MinMax>(t);
  }
  if (op == "abs") return by_float<Abs>(t);
  if (op == "neg") return by_float<Neg>(t);
  if (op == "copysign") return by_float<Copysign>(t);
  if (op == "setp") return by_float<Setp>(t);
  if (op == "testp") return by_float<Testp>(t);
  if (op == "sqrt" || op == "rcp" || op == "rsqrt" || op == "ex2" || op == "lg2" || op == "sin" || op == "cos" ||
      op == "tanh") {
    static constexpr std::string_view kFns[] = {"sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"};
    for (uint8_t i = 0; i < 8; ++i)
      if (kFns[i] == op) in.mod2 = i;
    return by_float<Special>(t);
  }
  return nullptr;
}

}  // namespace cuda_shim::exec
