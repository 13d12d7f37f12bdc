// Floating-point instructions: f32 and f64 arithmetic, special functions, min/max, comparisons,
// testp and conversions, and the half-precision (f16, bf16 and their x2 pairs) arithmetic. The
// semantics, bit for bit as the GPU writes them (canonical NaNs, flush-to-zero, saturation,
// every rounding), are fp.hpp's; this file applies them lane by lane.
#include <limits>

#include "exec/cmp.hpp"
#include "exec/fp.hpp"
#include "exec/fp_cvt.hpp"
#include "exec/fp_half.hpp"
#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

// Insn::mod (kRn...) as fp's rounding; the default is round to nearest.
fp::Rnd rnd(uint8_t m) {
  switch (m) {
    case kRz: return fp::Rnd::rz;
    case kRm: return fp::Rnd::rm;
    case kRp: return fp::Rnd::rp;
    case kRna: return fp::Rnd::rna;
    default: return fp::Rnd::rn;
  }
}
fp::IRnd irnd(uint8_t m) {
  switch (m) {
    case kRni: return fp::IRnd::rni;
    case kRzi: return fp::IRnd::rzi;
    case kRmi: return fp::IRnd::rmi;
    case kRpi: return fp::IRnd::rpi;
    default: return fp::IRnd::none;
  }
}
// Our comparison numbering (cmp.hpp, shared with the integers) as fp's.
fp::Cmp fcmp(uint8_t c) {
  return static_cast<fp::Cmp>(c < static_cast<uint8_t>(Cmp::lo) ? c : c - 4);
}

enum Arith : uint8_t { kAdd, kSub, kMul };

template <class T> struct Arith3 {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const fp::Rnd r = rnd(in.mod);
    const bool ftz = in.flags & kFtz, sat = in.flags & kSat;
    const uint8_t op = in.mod2;
    if constexpr (std::is_same_v<T, float>) {
      // Round to nearest, no flush or saturation (what compilers emit): the host's own operation;
      // a NaN result is the canonical one, as fp::add and friends give it.
      if (r == fp::Rnd::rn && !ftz && !sat) {
        switch (op) {
          case kAdd: return binary<T, T, T>(w, in, m, [](T a, T b) { return fp::canon(a + b); });
          case kSub: return binary<T, T, T>(w, in, m, [](T a, T b) { return fp::canon(a - b); });
          default: return binary<T, T, T>(w, in, m, [](T a, T b) { return fp::canon(a * b); });
        }
      }
    }
    binary<T, T, T>(w, in, m, [=](T a, T b) -> T {
      if constexpr (std::is_same_v<T, float>) {
        return op == kAdd ? fp::add(a, b, r, ftz, sat) : op == kSub ? fp::sub(a, b, r, ftz, sat) : fp::mul(a, b, r, ftz, sat);
      } else {
        return op == kAdd ? fp::add(a, b, r) : op == kSub ? fp::sub(a, b, r) : fp::mul(a, b, r);
      }
    });
  }
};
template <class T> struct Fma {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const fp::Rnd r = rnd(in.mod);
    const bool ftz = in.flags & kFtz, sat = in.flags & kSat;
    ternary<T, T, T, T>(w, in, m, [=](T a, T b, T c) -> T {
      if constexpr (std::is_same_v<T, float>) return fp::fma(a, b, c, r, ftz, sat);
      else return fp::fma(a, b, c, r);
    });
  }
};
// div: mod2 1 = .full (f32), else .approx (flags) or IEEE with the rounding.
template <class T> struct Div {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const fp::Rnd r = rnd(in.mod);
    const bool ftz = in.flags & kFtz, approx = in.flags & kApprox, full = in.mod2 == 1;
    binary<T, T, T>(w, in, m, [=](T a, T b) -> T {
      if constexpr (std::is_same_v<T, float>) {
        if (full) return fp::div_full(a, b, ftz);
        if (approx) return fp::div_approx(a, b, ftz);
        return fp::div(a, b, r, ftz);
      } else {
        return fp::div(a, b, r);
      }
    });
  }
};
template <class T> struct MinMax {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool mx = in.mod2 == 1;
    fp::MinMax mm{};
    mm.ftz = in.flags & kFtz;
    mm.nan = in.flags & kNaN;
    mm.xorsign_abs = in.mod == 1;  // .xorsign.abs (lowering)
    binary<T, T, T>(w, in, m, [=](T a, T b) -> T {
      if constexpr (std::is_same_v<T, float>) return mx ? fp::max(a, b, mm) : fp::min(a, b, mm);
      else return mx ? fp::max(a, b) : fp::min(a, b);
    });
  }
};
// abs, neg, copysign: mod2 0 abs, 1 neg, 2 copysign.
template <class T> struct Sign {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool ftz = in.flags & kFtz;
    if (in.mod2 == 2) return binary<T, T, T>(w, in, m, [](T a, T b) { return fp::copysign(a, b); });
    const bool neg = in.mod2 == 1;
    unary<T, T>(w, in, m, [=](T a) -> T {
      if constexpr (std::is_same_v<T, float>) return neg ? fp::neg(a, ftz) : fp::abs(a, ftz);
      else return neg ? fp::neg(a) : fp::abs(a);
    });
  }
};

// Special functions (mod2): sqrt rcp rsqrt ex2 lg2 sin cos tanh.
enum Fn : uint8_t { kSqrt, kRcp, kRsqrt, kEx2, kLg2, kSin, kCos, kTanh };
float special(uint8_t fn, float a, fp::Rnd r, bool approx, bool ftz) {
  switch (fn) {
    case kSqrt: return approx ? fp::sqrt_approx(a, ftz) : fp::sqrt(a, r, ftz);
    case kRcp: return approx ? fp::rcp_approx(a, ftz) : fp::rcp(a, r, ftz);
    case kRsqrt: return fp::rsqrt_approx(a, ftz);
    case kEx2: return fp::ex2_approx(a, ftz);
    case kLg2: return fp::lg2_approx(a, ftz);
    case kSin: return fp::sin_approx(a, ftz);
    case kCos: return fp::cos_approx(a, ftz);
    default: return fp::tanh_approx(a);
  }
}
double special(uint8_t fn, double a, fp::Rnd r, bool approx, bool ftz) {
  switch (fn) {
    case kSqrt: return fp::sqrt(a, r);
    case kRcp: return approx ? fp::rcp_approx_ftz(a) : fp::rcp(a, r);
    case kRsqrt: return fp::rsqrt_approx(a, ftz);
    default: return std::numeric_limits<double>::quiet_NaN();  // refused at lowering
  }
}
template <class T> struct Special {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const fp::Rnd r = rnd(in.mod);
    const bool ftz = in.flags & kFtz, approx = in.flags & kApprox;
    const uint8_t fn = in.mod2;
    unary<T, T>(w, in, m, [=](T a) { return special(fn, a, r, approx, ftz); });
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
    const fp::Cmp op = fcmp(in.mod);
    const bool ftz = in.flags & kFtz;
    for_lanes(m, [&](unsigned l) {
      bool t;
      if constexpr (std::is_same_v<T, float>) t = fp::compare(from_slot<T>(a[l * sa]), from_slot<T>(b[l * sb]), op, ftz);
      else t = fp::compare(from_slot<T>(a[l * sa]), from_slot<T>(b[l * sb]), op);
      const bool cv = c ? ((c[l * sc] & 1) != 0) != ((in.mod2 & kBoolNeg) != 0) : true;
      // p|q naming one register: p is what it holds after (an H200 writes p last).
      if (q) q[l] = bool_op(in.mod2, !t, cv);
      p[l] = bool_op(in.mod2, t, cv);
    });
  }
};
template <class T> struct Testp {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const auto t = static_cast<fp::TestP>(in.mod);
    unary<bool, T>(w, in, m, [=](T a) { return fp::testp(a, t); });
  }
};

// ---- conversions ----
bool fp_ty(Ty t, fp::Ty& out) {
  switch (t) {
    case Ty::u8: out = fp::Ty::u8; return true;
    case Ty::u16: case Ty::b16: out = fp::Ty::u16; return true;
    case Ty::u32: case Ty::b32: out = fp::Ty::u32; return true;
    case Ty::u64: case Ty::b64: out = fp::Ty::u64; return true;
    case Ty::s8: out = fp::Ty::s8; return true;
    case Ty::s16: out = fp::Ty::s16; return true;
    case Ty::s32: out = fp::Ty::s32; return true;
    case Ty::s64: out = fp::Ty::s64; return true;
    case Ty::f16: out = fp::Ty::f16; return true;
    case Ty::bf16: out = fp::Ty::bf16; return true;
    case Ty::tf32: out = fp::Ty::tf32; return true;
    case Ty::f32: out = fp::Ty::f32; return true;
    case Ty::f64: out = fp::Ty::f64; return true;
    default: return false;
  }
}
fp::CvtMods cvt_mods(const Insn& in) {
  fp::CvtMods c;
  c.rnd = rnd(in.mod);
  c.irnd = irnd(in.mod);
  c.ftz = in.flags & kFtz;
  c.sat = in.flags & kSat;
  c.relu = in.flags & kRelu;
  c.satfinite = in.mod2 & 1;
  return c;
}
void cvt_any(Warp& w, const Insn& in, uint32_t m) {
  fp::Ty d, s;
  fp_ty(in.ty, d);
  fp_ty(in.ty2, s);
  const fp::CvtMods c = cvt_mods(in);
  unsigned sa;
  const uint64_t* a = w.src(in.op[1], sa);
  uint64_t* out = w.dst(in.op[0]);
  for_lanes(m, [&](unsigned l) { out[l] = fp::cvt(d, s, a[l * sa], c); });
}
// cvt.rn.f16x2.f32 d, a, b / cvt.rn.bf16x2.f32: a to the upper half.
void cvt_pair(Warp& w, const Insn& in, uint32_t m) {
  const fp::CvtMods c = cvt_mods(in);
  const bool bf = in.ty == Ty::bf16x2;
  for_lanes(m, [&](unsigned l) {
    const float a = from_slot<float>(w.get(in.op[1], l)), b = from_slot<float>(w.get(in.op[2], l));
    w.set(in.op[0], l, bf ? fp::cvt_bf16x2_f32(a, b, c.rnd, c.relu, c.satfinite)
                          : fp::cvt_f16x2_f32(a, b, c.rnd, c.relu, c.satfinite));
  });
}

// ---- half precision: f16, bf16 and their x2 pairs ----
// mod2: 0 add, 1 sub, 2 mul, 3 fma, 4 neg, 5 abs, 6 min, 7 max, 8 ex2, 9 tanh, 10 setp.
void half_op(Warp& w, const Insn& in, uint32_t m) {
  const bool pair = in.ty == Ty::f16x2 || in.ty == Ty::bf16x2;
  const fp::Half h = (in.ty == Ty::bf16 || in.ty == Ty::bf16x2) ? fp::Half::bf16 : fp::Half::f16;
  fp::HMods hm{};
  hm.ftz = in.flags & kFtz;
  hm.sat = in.flags & kSat;
  hm.relu = in.flags & kRelu;
  fp::MinMax mm{};
  mm.ftz = hm.ftz;
  mm.nan = in.flags & kNaN;
  const uint8_t op = in.mod2;
  for_lanes(m, [&](unsigned l) {
    const uint32_t a = static_cast<uint32_t>(w.get(in.op[1], l));
    const uint32_t b = in.op[2] != kNone ? static_cast<uint32_t>(w.get(in.op[2], l)) : 0;
    const uint32_t c = in.op[3] != kNone ? static_cast<uint32_t>(w.get(in.op[3], l)) : 0;
    uint32_t r = 0;
    if (pair) {
      switch (op) {
        case 0: r = fp::add2(h, a, b, hm); break;
        case 1: r = fp::sub2(h, a, b, hm); break;
        case 2: r = fp::mul2(h, a, b, hm); break;
        case 3: r = fp::fma2(h, a, b, c, hm); break;
        case 4: r = fp::neg2(h, a, hm.ftz); break;
        case 5: r = fp::abs2(h, a, hm.ftz); break;
        case 6: r = fp::min2(h, a, b, mm); break;
        default: r = fp::max2(h, a, b, mm); break;
      }
    } else {
      const auto x = static_cast<uint16_t>(a), y = static_cast<uint16_t>(b), z = static_cast<uint16_t>(c);
      switch (op) {
        case 0: r = fp::add(h, x, y, hm); break;
        case 1: r = fp::sub(h, x, y, hm); break;
        case 2: r = fp::mul(h, x, y, hm); break;
        case 3: r = fp::fma(h, x, y, z, hm); break;
        case 4: r = fp::neg(h, x, hm.ftz); break;
        case 5: r = fp::abs(h, x, hm.ftz); break;
        case 6: r = fp::min(h, x, y, mm); break;
        case 7: r = fp::max(h, x, y, mm); break;
        case 8: r = fp::ex2_approx(h, x); break;
        default: r = fp::tanh_approx(h, x); break;
      }
    }
    w.set(in.op[0], l, r);
  });
}
void half_setp(Warp& w, const Insn& in, uint32_t m) {
  const fp::Half h = in.ty == Ty::bf16 ? fp::Half::bf16 : fp::Half::f16;
  const fp::Cmp op = fcmp(in.mod);
  const bool ftz = in.flags & kFtz;
  for_lanes(m, [&](unsigned l) {
    const bool t = fp::compare(h, static_cast<uint16_t>(w.get(in.op[1], l)), static_cast<uint16_t>(w.get(in.op[2], l)), op, ftz);
    const bool cv = in.op[3] != kNone ? ((w.get(in.op[3], l) & 1) != 0) != ((in.mod2 & kBoolNeg) != 0) : true;
    if (in.op[4] != kNone) w.set(in.op[4], l, bool_op(in.mod2, !t, cv));
    w.set(in.op[0], l, bool_op(in.mod2, t, cv));
  });
}

Handler half_handler(std::string_view op, Insn& in) {
  static constexpr std::string_view kOps[] = {"add", "sub", "mul", "fma", "neg", "abs", "min", "max", "ex2", "tanh"};
  if (op == "setp") return (in.ty == Ty::f16 || in.ty == Ty::bf16) ? &half_setp : nullptr;
  const bool pair = in.ty == Ty::f16x2 || in.ty == Ty::bf16x2;
  for (uint8_t k = 0; k < 10; ++k)
    if (kOps[k] == op || (k == 3 && op == "mad")) {
      if (pair && k >= 8) return nullptr;
      in.mod2 = k;
      return &half_op;
    }
  return nullptr;
}

}  // namespace

Handler float_handler(std::string_view op, Insn& in) {
  const Ty t = in.ty;
  if (op == "cvt") {
    if (t == Ty::f16x2 || t == Ty::bf16x2) return in.ty2 == Ty::f32 ? &cvt_pair : nullptr;
    fp::Ty a, b;
    return fp_ty(in.ty, a) && fp_ty(in.ty2, b) ? &cvt_any : nullptr;
  }
  if (t == Ty::f16 || t == Ty::bf16 || t == Ty::f16x2 || t == Ty::bf16x2) return half_handler(op, in);
  if (op == "add" || op == "sub" || op == "mul") {
    in.mod2 = op == "add" ? kAdd : op == "sub" ? kSub : kMul;
    return by_float<Arith3>(t);
  }
  if (op == "fma" || op == "mad") return by_float<Fma>(t);
  if (op == "div") return by_float<Div>(t);
  if (op == "min" || op == "max") {
    in.mod2 = op == "max";
    return by_float<MinMax>(t);
  }
  if (op == "abs" || op == "neg" || op == "copysign") {
    in.mod2 = op == "abs" ? 0 : op == "neg" ? 1 : 2;
    return by_float<Sign>(t);
  }
  if (op == "setp") return by_float<Setp>(t);
  if (op == "testp") return by_float<Testp>(t);
  static constexpr std::string_view kFns[] = {"sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"};
  for (uint8_t i = 0; i < 8; ++i)
    if (kFns[i] == op) {
      if (t == Ty::f64 && i > kRsqrt) return nullptr;  // the ISA has no f64 form
      in.mod2 = i;
      return by_float<Special>(t);
    }
  return nullptr;
}

}  // namespace cuda_shim::exec
