// Directed rounding, special functions and conversions for the floating handlers. This file is
// compiled with -frounding-math: every operation between fesetround calls happens at run time,
// in the mode set.
#include "exec/fp_bridge.hpp"

#include <cfenv>
#include <limits>

#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

int host_mode(uint8_t r) {
  switch (r) {
    case kRz: case kRzi: return FE_TOWARDZERO;
    case kRm: case kRmi: return FE_DOWNWARD;
    case kRp: case kRpi: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

// Runs f under rounding mode r and restores round-to-nearest.
template <class F>
auto under(uint8_t r, F f) {
  std::fesetround(host_mode(r));
  volatile auto v = f();
  std::fesetround(FE_TONEAREST);
  return v;
}

}  // namespace

float add_dir(float a, float b, uint8_t m) { return under(m, [&] { return a + b; }); }
double add_dir(double a, double b, uint8_t m) { return under(m, [&] { return a + b; }); }
float mul_dir(float a, float b, uint8_t m) { return under(m, [&] { return a * b; }); }
double mul_dir(double a, double b, uint8_t m) { return under(m, [&] { return a * b; }); }
float fma_dir(float a, float b, float c, uint8_t m) { return under(m, [&] { return std::fma(a, b, c); }); }
double fma_dir(double a, double b, double c, uint8_t m) { return under(m, [&] { return std::fma(a, b, c); }); }
float div_dir(float a, float b, uint8_t m) { return under(m, [&] { return a / b; }); }
double div_dir(double a, double b, uint8_t m) { return under(m, [&] { return a / b; }); }
float sqrt_dir(float a, uint8_t m) { return under(m, [&] { return std::sqrt(a); }); }
double sqrt_dir(double a, uint8_t m) { return under(m, [&] { return std::sqrt(a); }); }

template <class T>
T fp_special(uint8_t fn, T a, uint8_t r, bool approx) {
  const double x = a;
  switch (fn) {
    case 0:  // sqrt
      if (!approx) return directed(r) ? sqrt_dir(a, r) : std::sqrt(a);
      return static_cast<T>(std::sqrt(x));
    case 1:  // rcp
      if (!approx) return directed(r) ? div_dir(T{1}, a, r) : T{1} / a;
      return static_cast<T>(1.0 / x);
    case 2:  // rsqrt (approx only)
      if (a == T{0}) return std::copysign(std::numeric_limits<T>::infinity(), a);
      return static_cast<T>(1.0 / std::sqrt(x));
    case 3: return static_cast<T>(std::exp2(x));
    case 4:
      if (a == T{0}) return -std::numeric_limits<T>::infinity();
      return static_cast<T>(std::log2(x));
    case 5: return static_cast<T>(std::sin(x));
    case 6: return static_cast<T>(std::cos(x));
    default: return static_cast<T>(std::tanh(x));
  }
}
template float fp_special<float>(uint8_t, float, uint8_t, bool);
template double fp_special<double>(uint8_t, double, uint8_t, bool);

// IEEE binary16 from f32, rounded per mode (kRn, kRz, kRm, kRp).
uint16_t f32_to_f16(float f, uint8_t mode) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  if (std::isnan(f)) return 0x7fff;  // the GPU's canonical f16 NaN
  const bool neg = sign != 0;
  float a = std::fabs(f);
  // Scale into binary16's range, round to an integer count of the target's ulp, rebuild.
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int ulp_exp = std::max(e - 11, -24);  // 11 significant bits; subnormal ulp is 2^-24
  double scaled = std::ldexp(static_cast<double>(a), -ulp_exp);
  double q;
  switch (mode) {
    case kRz: q = std::trunc(scaled); break;
    case kRm: q = neg ? std::ceil(scaled) : std::floor(scaled); break;
    case kRp: q = neg ? std::floor(scaled) : std::ceil(scaled); break;
    default: q = std::nearbyint(scaled); break;  // ties to even (the default FP mode)
  }
  double v = std::ldexp(q, ulp_exp);
  if (v > 65504.0 || std::isinf(a)) {
    // Overflow: infinity, unless rounding toward zero (or away from this sign) keeps the maximum.
    bool to_max = !std::isinf(a) && (mode == kRz || (mode == kRm && !neg) || (mode == kRp && neg));
    return static_cast<uint16_t>(sign | (to_max ? 0x7bff : 0x7c00));
  }
  if (v == 0) return sign;
  int ve;
  double vm = std::frexp(v, &ve);  // v = vm * 2^ve
  int exp = ve - 1 + 15;            // biased exponent of 1.xxx form
  if (exp <= 0) return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(v, 24)));  // subnormal
  uint16_t man = static_cast<uint16_t>(std::ldexp(vm * 2 - 1, 10));
  return static_cast<uint16_t>(sign | (exp << 10) | man);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  else v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t f32_to_bf16(float f, uint8_t mode) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return 0x7fff;
  const bool neg = x >> 31;
  uint32_t low = x & 0xffff, up = x >> 16;
  bool inc = false;
  switch (mode) {
    case kRz: break;
    case kRm: inc = neg && low; break;
    case kRp: inc = !neg && low; break;
    default: inc = low > 0x8000 || (low == 0x8000 && (up & 1)); break;
  }
  return static_cast<uint16_t>(up + (inc ? 1 : 0));
}

namespace {

// A value of any scalar type as a long double (exact for every type but u64/s64 beyond 2^64
// precision, which long double's 64-bit significand holds exactly).
long double read(Ty t, uint64_t v) {
  switch (t) {
    case Ty::u8: return static_cast<uint8_t>(v);
    case Ty::s8: return static_cast<int8_t>(v);
    case Ty::u16: case Ty::b16: return static_cast<uint16_t>(v);
    case Ty::s16: return static_cast<int16_t>(v);
    case Ty::u32: case Ty::b32: return static_cast<uint32_t>(v);
    case Ty::s32: return static_cast<int32_t>(v);
    case Ty::u64: case Ty::b64: return static_cast<uint64_t>(v);
    case Ty::s64: return static_cast<int64_t>(v);
    case Ty::f16: return f16_to_f32(static_cast<uint16_t>(v));
    case Ty::bf16: return bf16_to_f32(static_cast<uint16_t>(v));
    case Ty::f32: return std::bit_cast<float>(static_cast<uint32_t>(v));
    case Ty::f64: return std::bit_cast<double>(v);
    default: return 0;
  }
}

template <class I>
uint64_t to_int(long double x, uint8_t r) {
  if (std::isnan(x)) return 0;
  long double y = r == kRzi || r == kRz ? truncl(x) : r == kRmi || r == kRm ? floorl(x) : r == kRpi || r == kRp ? ceill(x) : nearbyintl(x);
  const long double lo = static_cast<long double>(std::numeric_limits<I>::min());
  const long double hi = static_cast<long double>(std::numeric_limits<I>::max());
  I v = y <= lo ? std::numeric_limits<I>::min() : y >= hi ? std::numeric_limits<I>::max() : static_cast<I>(y);
  return static_cast<std::make_unsigned_t<I>>(v);
}

template <class F>
F round_int(F v, uint8_t r) {  // cvt.rni.f32.f32 and friends
  switch (r) {
    case kRzi: return std::trunc(v);
    case kRmi: return std::floor(v);
    case kRpi: return std::ceil(v);
    case kRni: return std::nearbyint(v);
    default: return v;
  }
}

uint64_t cvt_value(Ty d, Ty s, uint64_t v, uint8_t r, uint8_t flags) {
  const bool ftz = flags & kFtz, sat = flags & kSat;
  auto flush32 = [&](float f) { return ftz && std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f; };
  if (s == Ty::f32) v = std::bit_cast<uint32_t>(flush32(std::bit_cast<float>(static_cast<uint32_t>(v))));
  switch (d) {
    case Ty::f32: {
      float f;
      if (s == Ty::f32) f = round_int(std::bit_cast<float>(static_cast<uint32_t>(v)), r);
      else if (s == Ty::f64) {
        double x = round_int(std::bit_cast<double>(v), r);
        f = directed(r) ? [&] { std::fesetround(r == kRz ? FE_TOWARDZERO : r == kRm ? FE_DOWNWARD : FE_UPWARD);
                                volatile float y = static_cast<float>(x); std::fesetround(FE_TONEAREST); return y; }()
                        : static_cast<float>(x);
      } else if (s == Ty::f16 || s == Ty::bf16) f = static_cast<float>(read(s, v));
      else {
        long double x = read(s, v);
        if (directed(r)) {
          std::fesetround(r == kRz ? FE_TOWARDZERO : r == kRm ? FE_DOWNWARD : FE_UPWARD);
          volatile float y = static_cast<float>(x);
          std::fesetround(FE_TONEAREST);
          f = y;
        } else {
          f = static_cast<float>(x);  // long double holds every integer exactly: one rounding
        }
      }
      if (std::isnan(f)) f = canonical_nan<float>();
      f = flush32(f);
      if (sat) f = std::isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f;
      return std::bit_cast<uint32_t>(f);
    }
    case Ty::f64: {
      double x;
      if (s == Ty::f64) x = round_int(std::bit_cast<double>(v), r);
      else if (s == Ty::s64 || s == Ty::u64) {
        long double lx = read(s, v);
        if (directed(r)) {
          std::fesetround(r == kRz ? FE_TOWARDZERO : r == kRm ? FE_DOWNWARD : FE_UPWARD);
          volatile double y = static_cast<double>(lx);
          std::fesetround(FE_TONEAREST);
          x = y;
        } else {
          x = static_cast<double>(lx);
        }
      } else x = static_cast<double>(read(s, v));
      if (sat) x = std::isnan(x) ? 0.0 : x < 0 ? 0.0 : x > 1 ? 1.0 : x;
      return std::bit_cast<uint64_t>(x);
    }
    case Ty::f16: {
      float f = static_cast<float>(read(s, v));
      if (s == Ty::f64) {  // one rounding from double: via float only when exact
        double x = std::bit_cast<double>(v);
        f = static_cast<float>(x);
        if (static_cast<double>(f) != x) {  // keep the sticky bit for the second rounding
          uint32_t b = std::bit_cast<uint32_t>(f);
          if ((b & 1) == 0) f = std::bit_cast<float>(b | 1);
        }
      }
      if (sat) f = std::isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f;
      uint16_t h = f32_to_f16(f, r == kRndDefault ? static_cast<uint8_t>(kRn) : r);
      if ((flags & kRelu) && ((h & 0x8000) || (h & 0x7fff) > 0x7c00)) h = 0;
      return h;
    }
    case Ty::bf16: {
      float f = static_cast<float>(read(s, v));
      if (sat) f = std::isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f;
      uint16_t h = f32_to_bf16(f, r == kRndDefault ? static_cast<uint8_t>(kRn) : r);
      if ((flags & kRelu) && ((h & 0x8000) || (h & 0x7fff) > 0x7f80)) h = 0;
      return h;
    }
    case Ty::u8: return to_int<uint8_t>(read(s, v), r);
    case Ty::s8: return to_int<int8_t>(read(s, v), r);
    case Ty::u16: case Ty::b16: return to_int<uint16_t>(read(s, v), r);
    case Ty::s16: return to_int<int16_t>(read(s, v), r);
    case Ty::u32: case Ty::b32: return to_int<uint32_t>(read(s, v), r);
    case Ty::s32: return to_int<int32_t>(read(s, v), r);
    case Ty::u64: case Ty::b64: return to_int<uint64_t>(read(s, v), r);
    case Ty::s64: return to_int<int64_t>(read(s, v), r);
    default: return 0;
  }
}

void cvt_any(Warp& w, const Insn& in, uint32_t m) {
  unsigned sa;
  const uint64_t* a = w.src(in.op[1], sa);
  uint64_t* d = w.dst(in.op[0]);
  const Ty dt = in.ty, st = in.ty2;
  const uint8_t r = in.mod, f = in.flags;
  for_lanes(m, [&](unsigned l) { d[l] = cvt_value(dt, st, a[l * sa], r, f); });
}

// cvt.rn.f16x2.f32 d, a, b / cvt.rn.bf16x2.f32: a to the upper half, b to the lower.
void cvt_pair(Warp& w, const Insn& in, uint32_t m) {
  const Ty half = in.ty == Ty::f16x2 ? Ty::f16 : Ty::bf16;
  const uint8_t r = in.mod, f = in.flags;
  for_lanes(m, [&](unsigned l) {
    uint64_t hi = cvt_value(half, Ty::f32, w.get(in.op[1], l), r, f);
    uint64_t lo = cvt_value(half, Ty::f32, w.get(in.op[2], l), r, f);
    w.set(in.op[0], l, (hi << 16) | lo);
  });
}

}  // namespace

Handler cvt_handler(const Insn& in) {
  if (in.ty == Ty::f16x2 || in.ty == Ty::bf16x2) return in.ty2 == Ty::f32 ? &cvt_pair : nullptr;
  auto ok = [](Ty t) { return (t >= Ty::b8 && t <= Ty::s64 && t != Ty::b128) || t == Ty::f16 || t == Ty::bf16 || t == Ty::f32 || t == Ty::f64; };
  return ok(in.ty) && ok(in.ty2) ? &cvt_any : nullptr;
}

}  // namespace cuda_shim::exec
