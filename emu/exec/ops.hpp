// Shared pieces of the instruction handlers (ops_*.cpp): typed reads and writes of register
// slots, and the loops that apply a per-lane function to every active lane.
#pragma once
#include <atomic>
#include <bit>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "exec/interp.hpp"

namespace cuda_shim::exec {

// A slot holds the value's bits, signed types sign-extended to 64 (cvt.s8.s16 into a 16-bit
// register leaves the sign in its upper byte, as the GPU does); readers take the low bits of
// their type.
template <class T>
inline T from_slot(uint64_t v) {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(static_cast<uint32_t>(v));
  else if constexpr (std::is_same_v<T, double>) return std::bit_cast<double>(v);
  else return static_cast<T>(v);
}
template <class T>
inline uint64_t to_slot(T v) {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<uint32_t>(v);
  else if constexpr (std::is_same_v<T, double>) return std::bit_cast<uint64_t>(v);
  else if constexpr (std::is_same_v<T, bool>) return v ? 1 : 0;
  else if constexpr (std::is_signed_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return static_cast<std::make_unsigned_t<T>>(v);
}

// d = f(a) / f(a, b) / f(a, b, c) over the lanes of mask, operands op[1..3], result op[0].
template <class D, class A, class F>
inline void unary(Warp& w, const Insn& in, uint32_t mask, F f) {
  unsigned sa;
  const uint64_t* a = w.src(in.op[1], sa);
  uint64_t* d = w.dst(in.op[0]);
  for_lanes(mask, [&](unsigned l) { d[l] = to_slot<D>(f(from_slot<A>(a[l * sa]))); });
}
template <class D, class A, class B, class F>
inline void binary(Warp& w, const Insn& in, uint32_t mask, F f) {
  unsigned sa, sb;
  const uint64_t* a = w.src(in.op[1], sa);
  const uint64_t* b = w.src(in.op[2], sb);
  uint64_t* d = w.dst(in.op[0]);
  for_lanes(mask, [&](unsigned l) { d[l] = to_slot<D>(f(from_slot<A>(a[l * sa]), from_slot<B>(b[l * sb]))); });
}
template <class D, class A, class B, class C, class F>
inline void ternary(Warp& w, const Insn& in, uint32_t mask, F f) {
  unsigned sa, sb, sc;
  const uint64_t* a = w.src(in.op[1], sa);
  const uint64_t* b = w.src(in.op[2], sb);
  const uint64_t* c = w.src(in.op[3], sc);
  uint64_t* d = w.dst(in.op[0]);
  for_lanes(mask, [&](unsigned l) {
    d[l] = to_slot<D>(f(from_slot<A>(a[l * sa]), from_slot<B>(b[l * sb]), from_slot<C>(c[l * sc])));
  });
}

// Calls F::template run<T> for the C++ type of an integer Ty; null for other types.
template <template <class> class H>
inline Handler by_int(Ty t) {
  switch (t) {
    case Ty::u8: case Ty::b8: return &H<uint8_t>::run;
    case Ty::s8: return &H<int8_t>::run;
    case Ty::u16: case Ty::b16: return &H<uint16_t>::run;
    case Ty::s16: return &H<int16_t>::run;
    case Ty::u32: case Ty::b32: return &H<uint32_t>::run;
    case Ty::s32: return &H<int32_t>::run;
    case Ty::u64: case Ty::b64: return &H<uint64_t>::run;
    case Ty::s64: return &H<int64_t>::run;
    default: return nullptr;
  }
}
template <template <class> class H>
inline Handler by_float(Ty t) {
  switch (t) {
    case Ty::f32: return &H<float>::run;
    case Ty::f64: return &H<double>::run;
    default: return nullptr;
  }
}

// One element, a relaxed atomic access where it is aligned (see global_access), else bytes (a
// kernel parameter's unaligned field).
template <class T>
inline T load_elem(const uint8_t* p) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(T) == 0)
    return std::atomic_ref<T>(*reinterpret_cast<T*>(const_cast<uint8_t*>(p))).load(std::memory_order_relaxed);
  T u;
  std::memcpy(&u, p, sizeof u);
  return u;
}
template <class T>
inline void store_elem(uint8_t* p, uint64_t v) {
  const T x = static_cast<T>(v);
  if (reinterpret_cast<uintptr_t>(p) % sizeof(T) == 0)
    std::atomic_ref<T>(*reinterpret_cast<T*>(p)).store(x, std::memory_order_relaxed);
  else
    std::memcpy(p, &x, sizeof x);
}
inline void store_bits(uint8_t* p, uint64_t v, unsigned n) {
  switch (n) {
    case 1: store_elem<uint8_t>(p, v); break;
    case 2: store_elem<uint16_t>(p, v); break;
    case 4: store_elem<uint32_t>(p, v); break;
    default: store_elem<uint64_t>(p, v); break;
  }
}

inline uint64_t load_bits(const uint8_t* p, unsigned n, bool sign) {
  switch (n) {
    case 1: { uint8_t u = load_elem<uint8_t>(p); return sign ? static_cast<uint64_t>(int64_t{static_cast<int8_t>(u)}) : u; }
    case 2: { uint16_t u = load_elem<uint16_t>(p); return sign ? static_cast<uint64_t>(int64_t{static_cast<int16_t>(u)}) : u; }
    case 4: { uint32_t u = load_elem<uint32_t>(p); return sign ? static_cast<uint64_t>(int64_t{static_cast<int32_t>(u)}) : u; }
    default: return load_elem<uint64_t>(p);
  }
}

// The handler tables of each family (ops_*.cpp): null when the family has no such instruction.
// They may set opcode-specific fields of `in` (which function, which operation).
Handler int_handler(std::string_view op, Insn& in);
Handler float_handler(std::string_view op, Insn& in);
Handler mem_handler(std::string_view op, Insn& in);
Handler warp_handler(std::string_view op, Insn& in);
Handler bits_handler(std::string_view op, Insn& in);

}  // namespace cuda_shim::exec
