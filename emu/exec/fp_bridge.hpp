// The floating-point semantics the handlers call: arithmetic under PTX's rounding modifiers,
// special functions, and conversions. Round-to-nearest is the host's arithmetic inline; the
// directed roundings switch the host's rounding mode around one operation (fp_bridge.cpp,
// compiled with -frounding-math so the compiler keeps the operation inside the switch).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "exec/interp.hpp"

namespace cuda_shim::exec {

template <class T>
inline T canonical_nan() {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(uint32_t{0x7fffffff});
  else return std::bit_cast<double>(uint64_t{0x7fffffffffffffff});
}

// Directed-rounding forms (fp_bridge.cpp): mode is kRz, kRm or kRp.
float add_dir(float a, float b, uint8_t mode);
double add_dir(double a, double b, uint8_t mode);
float mul_dir(float a, float b, uint8_t mode);
double mul_dir(double a, double b, uint8_t mode);
float fma_dir(float a, float b, float c, uint8_t mode);
double fma_dir(double a, double b, double c, uint8_t mode);
float div_dir(float a, float b, uint8_t mode);
double div_dir(double a, double b, uint8_t mode);
float sqrt_dir(float a, uint8_t mode);
double sqrt_dir(double a, uint8_t mode);

inline bool directed(uint8_t r) { return r == kRz || r == kRm || r == kRp; }

template <class T>
inline T fp_add(T a, T b, uint8_t r) { return directed(r) ? add_dir(a, b, r) : a + b; }
template <class T>
inline T fp_mul(T a, T b, uint8_t r) { return directed(r) ? mul_dir(a, b, r) : a * b; }
template <class T>
inline T fp_fma(T a, T b, T c, uint8_t r) { return directed(r) ? fma_dir(a, b, c, r) : std::fma(a, b, c); }
template <class T>
inline T fp_div(T a, T b, uint8_t r) { return directed(r) ? div_dir(a, b, r) : a / b; }
// div.approx.f32: a * (1/b), where 1/b is rcp.approx; for |b| in (2^126, 2^128) the GPU gives 0.
inline float fp_div_approx(float a, float b) {
  float fb = std::fabs(b);
  if (fb > 0x1p126f && fb < INFINITY) return std::isfinite(a) ? std::copysign(0.0f, a) * std::copysign(1.0f, b) : a * b;
  return a * (1.0f / b);
}
inline double fp_div_approx(double a, double b) { return a / b; }

// sqrt, rcp, rsqrt, ex2, lg2, sin, cos, tanh (fn as in ops_float.cpp's Fn), rounded as `r` when
// not approximate. Approximate forms are computed in double and rounded once: within the ISA's
// error bounds, though not always the GPU's last bit.
template <class T>
T fp_special(uint8_t fn, T a, uint8_t r, bool approx);

// The handler for cvt where either type is a floating one (f16, bf16, f32, f64), or null.
Handler cvt_handler(const Insn& in);

// Half-precision conversions (bits), round to nearest even.
uint16_t f32_to_f16(float f, uint8_t mode = kRn);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f, uint8_t mode = kRn);
inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

}  // namespace cuda_shim::exec
