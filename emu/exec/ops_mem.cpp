// Memory instructions: ld/st (every state space, widths, vectors), atom/red, cvta, isspacep,
// special registers, fences and the asynchronous copies (performed at once: cp.async's waits
// then have nothing to wait for).
#include <time.h>

#include <atomic>
#include <chrono>

#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

uint64_t lane_addr(const Warp& w, const Insn& in, unsigned l) {
  uint64_t a = in.op[4] != kNone ? w.get(in.op[4], l) : 0;
  a += static_cast<uint64_t>(in.imm);
  if (in.mod2 & 1) a += w.local_base;  // a frame-relative symbol (.local, a function's .param)
  return a;
}

const char* space_name(Space s) {
  switch (s) {
    case Space::global: return "global";
    case Space::shared: return "shared";
    case Space::local: return "local";
    case Space::constant: return "constant";
    case Space::kparam: case Space::fparam: return "parameter";
    default: return "generic";
  }
}

// The host address of n bytes at a in space s for lane l, or null after raising the fault.
uint8_t* resolve(Warp& w, Space s, uint64_t a, unsigned n, bool write, unsigned l) {
  Block& b = *w.block;
  const Windows& win = windows();
  if (s == Space::generic) {
    if (a - win.shared < win.shared_size) s = Space::shared, a -= win.shared;
    else if (a - win.local < win.local_size) s = Space::local, a -= win.local;
    else s = Space::global;
  }
  if (n > 1 && (a & (n - 1)) && s != Space::kparam) {
    raise(w, l, Errc::misaligned_address, fmt::format("{}-byte {} access at {} address {:#x} is not aligned to {} bytes",
                                                      n, write ? "write" : "read", space_name(s), a, n));
    return nullptr;
  }
  switch (s) {
    case Space::shared:
      if (a >= b.shared_size || n > b.shared_size - a) break;
      return b.shared + a;
    case Space::local: case Space::fparam: {
      if (a >= b.local_stride || n > b.local_stride - a) break;
      return b.local + size_t{w.index * kLanes + l} * b.local_stride + a;
    }
    case Space::kparam: {
      Launch& L = *w.launch;
      if (a >= L.params.size() || n > L.params.size() - a) break;
      if (write) break;
      return L.params.data() + a;
    }
    default: {
      std::string why;
      uint8_t* p = b.mem->global(a, n, write, why);
      if (!p) raise(w, l, Errc::illegal_address, fmt::format("{}-byte {} of global address {:#x}: {}", n,
                                                             write ? "write" : "read", a, why));
      return p;
    }
  }
  raise(w, l, Errc::illegal_address, fmt::format("{}-byte {} at {} address {:#x} is out of bounds (the block has {} "
                                                 "bytes there)", n, write ? "write" : "read", space_name(s), a,
                                                 s == Space::shared ? b.shared_size : s == Space::kparam ? w.launch->params.size()
                                                                                                        : b.local_stride));
  return nullptr;
}

uint64_t load_bits(const uint8_t* p, unsigned n, bool sign) {
  switch (n) {
    case 1: { int8_t s; uint8_t u; std::memcpy(&u, p, 1); s = static_cast<int8_t>(u); return sign ? static_cast<uint64_t>(int64_t{s}) : u; }
    case 2: { uint16_t u; std::memcpy(&u, p, 2); return sign ? static_cast<uint64_t>(int64_t{static_cast<int16_t>(u)}) : u; }
    case 4: { uint32_t u; std::memcpy(&u, p, 4); return sign ? static_cast<uint64_t>(int64_t{static_cast<int32_t>(u)}) : u; }
    default: { uint64_t u; std::memcpy(&u, p, 8); return u; }
  }
}

// ld: op[0..vec-1] destinations, op[4] address register; imm offset; in.imm2 via ty's size.
void ld(Warp& w, const Insn& in, uint32_t m) {
  const unsigned n = ty_bytes(in.ty), v = in.vec;
  const bool sign = ty_signed(in.ty);
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    uint8_t* p = resolve(w, in.space, lane_addr(w, in, l), n * v, false, l);
    if (!p) return;
    for (unsigned i = 0; i < v; ++i)
      if (in.op[i] != kNone) w.set(in.op[i], l, load_bits(p + i * n, n, sign));
  });
}
void st(Warp& w, const Insn& in, uint32_t m) {
  const unsigned n = ty_bytes(in.ty), v = in.vec;
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    uint8_t* p = resolve(w, in.space, lane_addr(w, in, l), n * v, true, l);
    if (!p) return;
    for (unsigned i = 0; i < v; ++i) {
      uint64_t x = w.get(in.op[i], l);
      std::memcpy(p + i * n, &x, n);
    }
  });
}
// Global f32 loads and stores with full warps are most of memory-bound kernels' time: no
// vector, no sign, and the translation cache right here.
void ld_global32(Warp& w, const Insn& in, uint32_t m) {
  uint64_t* d = w.dst(in.op[0]);
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    uint64_t a = lane_addr(w, in, l);
    std::string why;
    uint8_t* p = (a & 3) ? nullptr : w.block->mem->global(a, 4, false, why);
    if (!p) {
      resolve(w, in.space, a, 4, false, l);
      return;
    }
    uint32_t x;
    std::memcpy(&x, p, 4);
    d[l] = x;
  });
}
void st_global32(Warp& w, const Insn& in, uint32_t m) {
  unsigned ss;
  const uint64_t* s = w.src(in.op[0], ss);
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    uint64_t a = lane_addr(w, in, l);
    std::string why;
    uint8_t* p = (a & 3) ? nullptr : w.block->mem->global(a, 4, true, why);
    if (!p) {
      resolve(w, in.space, a, 4, true, l);
      return;
    }
    uint32_t x = static_cast<uint32_t>(s[l * ss]);
    std::memcpy(p, &x, 4);
  });
}

// Atomic operations (Insn::mod).
enum AtomOp : uint8_t { kAdd, kMin, kMax, kInc, kDec, kCas, kExch, kAnd, kOr, kXor };

template <class T>
T atomic_rmw(T* p, AtomOp op, T b, T c) {
  auto ref = std::atomic_ref<T>(*p);
  switch (op) {
    case kExch: return ref.exchange(b);
    case kCas: {
      T e = b;
      ref.compare_exchange_strong(e, c);
      return e;
    }
    default: break;
  }
  T old = ref.load(std::memory_order_relaxed);
  for (;;) {
    T nv;
    switch (op) {
      case kAdd: nv = static_cast<T>(old + b); break;
      case kMin: nv = b < old ? b : old; break;
      case kMax: nv = b > old ? b : old; break;
      case kInc: nv = old >= b ? T{0} : static_cast<T>(old + 1); break;
      case kDec: nv = (old == 0 || old > b) ? b : static_cast<T>(old - 1); break;
      case kAnd: nv = static_cast<T>(old & b); break;
      case kOr: nv = static_cast<T>(old | b); break;
      default: nv = static_cast<T>(old ^ b); break;
    }
    if (ref.compare_exchange_weak(old, nv)) return old;
  }
}
template <class F>
F atomic_float(F* p, AtomOp op, F b) {
  using B = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  auto ref = std::atomic_ref<B>(*reinterpret_cast<B*>(p));
  B old = ref.load(std::memory_order_relaxed);
  for (;;) {
    F o = std::bit_cast<F>(old), nv;
    if (op == kExch) nv = b;
    else if (op == kMin) nv = std::fmin(o, b);
    else if (op == kMax) nv = std::fmax(o, b);
    else nv = o + b;  // atom.add.f32 rounds to nearest; ftz does not apply to .f64
    if (ref.compare_exchange_weak(old, std::bit_cast<B>(nv))) return o;
  }
}

template <class T>
struct Atom {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool has_dst = in.op[0] != kNone;
    const auto op = static_cast<AtomOp>(in.mod);
    for_lanes(m, [&](unsigned l) {
      if (w.fault) return;
      uint8_t* p = resolve(w, in.space, lane_addr(w, in, l), sizeof(T), true, l);
      if (!p) return;
      T b = from_slot<T>(w.get(in.op[1], l));
      T r;
      if constexpr (std::is_floating_point_v<T>) {
        r = atomic_float<T>(reinterpret_cast<T*>(p), op, b);
      } else {
        T c = in.op[2] != kNone ? from_slot<T>(w.get(in.op[2], l)) : T{0};
        r = atomic_rmw<T>(reinterpret_cast<T*>(p), op, b, c);
      }
      if (has_dst) w.set(in.op[0], l, to_slot<T>(r));
    });
  }
};

// cvta: mod 1 = to generic from in.space, 0 = from generic to in.space.
void cvta(Warp& w, const Insn& in, uint32_t m) {
  const Windows& win = windows();
  uintptr_t base = in.space == Space::shared ? win.shared : in.space == Space::local ? win.local : 0;
  const bool to_generic = in.mod == 1;
  const bool is32 = in.ty == Ty::u32 || in.ty == Ty::b32;
  unary<uint64_t, uint64_t>(w, in, m, [=](uint64_t a) {
    if (is32) a &= 0xffffffffu;
    uint64_t r = to_generic ? a + base : a - base;
    return is32 ? (r & 0xffffffffu) : r;
  });
}
void isspacep(Warp& w, const Insn& in, uint32_t m) {
  const Windows& win = windows();
  const Space s = in.space;
  unary<bool, uint64_t>(w, in, m, [&](uint64_t a) {
    bool sh = a - win.shared < win.shared_size, lo = a - win.local < win.local_size;
    if (s == Space::shared) return sh;
    if (s == Space::local) return lo;
    if (s == Space::global) return !sh && !lo;
    return false;
  });
}

// mov d, %sreg: mod is the Sreg.
void sreg(Warp& w, const Insn& in, uint32_t m) {
  const Launch& L = *w.launch;
  const Block& b = *w.block;
  const auto r = static_cast<Sreg>(in.mod);
  uint64_t* d = w.dst(in.op[0]);
  auto now_ns = [] {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
  };
  auto mono = [] {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
  };
  for_lanes(m, [&](unsigned l) {
    uint64_t v = 0;
    switch (r) {
      case Sreg::tid_x: v = w.tid[0][l]; break;
      case Sreg::tid_y: v = w.tid[1][l]; break;
      case Sreg::tid_z: v = w.tid[2][l]; break;
      case Sreg::ntid_x: v = L.block[0]; break;
      case Sreg::ntid_y: v = L.block[1]; break;
      case Sreg::ntid_z: v = L.block[2]; break;
      case Sreg::ctaid_x: v = b.ctaid[0]; break;
      case Sreg::ctaid_y: v = b.ctaid[1]; break;
      case Sreg::ctaid_z: v = b.ctaid[2]; break;
      case Sreg::nctaid_x: v = L.grid[0]; break;
      case Sreg::nctaid_y: v = L.grid[1]; break;
      case Sreg::nctaid_z: v = L.grid[2]; break;
      case Sreg::laneid: v = l; break;
      case Sreg::warpid: v = w.index; break;
      case Sreg::nwarpid: v = 64; break;
      case Sreg::smid: v = b.linear % 132; break;
      case Sreg::nsmid: v = 132; break;
      case Sreg::clock: v = static_cast<uint32_t>(mono()); break;
      case Sreg::clock_hi: v = static_cast<uint32_t>(mono() >> 32); break;
      case Sreg::clock64: v = mono(); break;
      case Sreg::globaltimer: v = now_ns(); break;
      case Sreg::globaltimer_lo: v = static_cast<uint32_t>(now_ns()); break;
      case Sreg::globaltimer_hi: v = static_cast<uint32_t>(now_ns() >> 32); break;
      case Sreg::lanemask_eq: v = 1u << l; break;
      case Sreg::lanemask_le: v = l == 31 ? 0xffffffffu : (2u << l) - 1; break;
      case Sreg::lanemask_lt: v = (1u << l) - 1; break;
      case Sreg::lanemask_ge: v = ~((1u << l) - 1) & 0xffffffffu; break;
      case Sreg::lanemask_gt: v = l == 31 ? 0 : ~((2u << l) - 1) & 0xffffffffu; break;
      case Sreg::dynamic_smem_size: v = L.dyn_shared; break;
      case Sreg::total_smem_size: case Sreg::aggr_smem_size: v = L.shared_total; break;
      case Sreg::cluster_nctarank: case Sreg::cluster_nctaid_x: case Sreg::cluster_nctaid_y:
      case Sreg::cluster_nctaid_z: case Sreg::nclusterid_x: case Sreg::nclusterid_y: case Sreg::nclusterid_z:
        v = 1;
        if (r == Sreg::nclusterid_x) v = L.grid[0];
        if (r == Sreg::nclusterid_y) v = L.grid[1];
        if (r == Sreg::nclusterid_z) v = L.grid[2];
        break;
      case Sreg::clusterid_x: v = b.ctaid[0]; break;
      case Sreg::clusterid_y: v = b.ctaid[1]; break;
      case Sreg::clusterid_z: v = b.ctaid[2]; break;
      default: v = 0; break;
    }
    d[l] = v;
  });
}
// d = the current frame's local stack base + imm (mov d, __local_depot / a function's .param).
void local_addr(Warp& w, const Insn& in, uint32_t m) {
  uint64_t* d = w.dst(in.op[0]);
  const uint64_t v = w.local_base + static_cast<uint64_t>(in.imm);
  for_lanes(m, [&](unsigned l) { d[l] = v; });
}
void nop(Warp&, const Insn&, uint32_t) {}
void fence(Warp&, const Insn&, uint32_t) { std::atomic_thread_fence(std::memory_order_seq_cst); }
void nanosleep_op(Warp&, const Insn&, uint32_t) { std::atomic_signal_fence(std::memory_order_seq_cst); }

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: op[4] + imm the shared
// destination, op[5] + op[6] the global source, mod2 the bytes copied, op[1] the source size
// (the rest is zero-filled) or kNone.
void cp_async(Warp& w, const Insn& in, uint32_t m) {
  const unsigned n = in.mod2;
  for_lanes(m, [&](unsigned l) {
    if (w.fault) return;
    uint64_t da = w.get(in.op[4], l) + static_cast<uint64_t>(in.imm);
    uint64_t sa = w.get(in.op[5], l) + (in.op[6] != kNone ? w.get(in.op[6], l) : 0);
    unsigned src_n = in.op[1] != kNone ? static_cast<unsigned>(w.get(in.op[1], l)) : n;
    uint8_t* d = resolve(w, Space::shared, da, n, true, l);
    if (!d) return;
    if (src_n > n) src_n = n;
    if (src_n) {
      const uint8_t* s = resolve(w, Space::global, sa, src_n, false, l);
      if (!s) return;
      std::memcpy(d, s, src_n);
    }
    std::memset(d + src_n, 0, n - src_n);
  });
}

}  // namespace

Handler mem_handler(std::string_view op, Insn& in) {
  const unsigned n = ty_bytes(in.ty);
  if (op == "ld" || op == "ldu") {
    if (in.space == Space::global && in.vec == 1 && n == 4 && in.op[4] != kNone && !(in.mod2 & 1)) return &ld_global32;
    return n ? &ld : nullptr;
  }
  if (op == "st") {
    if (in.space == Space::global && in.vec == 1 && n == 4 && in.op[4] != kNone && !(in.mod2 & 1)) return &st_global32;
    return n ? &st : nullptr;
  }
  if (op == "atom" || op == "red") {
    switch (in.ty) {
      case Ty::u32: case Ty::b32: return &Atom<uint32_t>::run;
      case Ty::s32: return &Atom<int32_t>::run;
      case Ty::u64: case Ty::b64: return &Atom<uint64_t>::run;
      case Ty::s64: return &Atom<int64_t>::run;
      case Ty::f32: return &Atom<float>::run;
      case Ty::f64: return &Atom<double>::run;
      default: return nullptr;
    }
  }
  if (op == "cvta") return &cvta;
  if (op == "isspacep") return &isspacep;
  if (op == "sreg") return &sreg;
  if (op == "local_addr") return &local_addr;
  if (op == "membar" || op == "fence") return &fence;
  if (op == "nanosleep") return &nanosleep_op;
  if (op == "cp_async") return &cp_async;
  if (op == "prefetch" || op == "prefetchu" || op == "pmevent" || op == "cp_async_wait" || op == "griddepcontrol" ||
      op == "discard" || op == "applypriority" || op == "createpolicy")
    return &nop;
  return nullptr;
}

}  // namespace cuda_shim::exec
