// Memory instructions: ld/st (every state space, widths, vectors), atom/red, cvta, isspacep,
// special registers, fences and the asynchronous copies (performed at once: cp.async's waits
// then have nothing to wait for).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "exec/ops.hpp"
#include "exec/racecheck.hpp"

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
uint8_t* resolve(Warp& w, Space s, uint64_t a, unsigned n, bool write, unsigned l, bool atomic = false) {
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
      if (b.race && !atomic) [[unlikely]] b.race->access(w, l, a, n, write);
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


// ld: op[0..vec-1] destinations, op[4] address register; imm offset; in.imm2 via ty's size.
void ld(Warp& w, const Insn& in, uint32_t m) {
  const unsigned n = ty_bytes(in.ty), v = in.vec;
  const bool sign = ty_signed(in.ty);
  if (in.op[4] == kNone && in.space == Space::kparam) {  // a kernel parameter: the same for every lane
    const unsigned l0 = static_cast<unsigned>(__builtin_ctz(m));
    uint8_t* p = resolve(w, in.space, lane_addr(w, in, l0), n * v, false, l0);
    if (!p) return;
    for (unsigned i = 0; i < v; ++i) {
      if (in.op[i] == kNone) continue;
      const uint64_t x = load_bits(p + i * n, n, sign);
      uint64_t* d = w.dst(in.op[i]);
      for_lanes(m, [&](unsigned l) { d[l] = x; });
    }
    return;
  }
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
    for (unsigned i = 0; i < v; ++i) store_bits(p + i * n, w.get(in.op[i], l), n);
  });
}
// Global and generic loads and stores of one element per lane: most of a memory-bound
// kernel's time. A warp's accesses usually fall in one allocation (coalesced, as on a GPU):
// their span is translated once and each lane reads through the same offset. Anything else
// (lanes in several allocations, shared or local generic addresses, faults) takes the general
// path lane by lane.
template <unsigned N, bool Store>
void global_access(Warp& w, const Insn& in, uint32_t m) {
  unsigned sb;
  const uint64_t* base = w.src(in.op[4], sb);
  const uint64_t off = static_cast<uint64_t>(in.imm);
  uint64_t lo = ~uint64_t{0}, hi = 0, misaligned = 0;
  for_lanes(m, [&](unsigned l) {
    const uint64_t a = base[l * sb] + off;
    lo = a < lo ? a : lo;
    hi = a > hi ? a : hi;
    misaligned |= a & (N - 1);
  });
  std::string why;
  uint8_t* p0 = misaligned ? nullptr : w.block->mem->global(lo, static_cast<unsigned>(std::min<uint64_t>(hi - lo + N, 1u << 30)), Store, why);
  if (!p0 || hi - lo >= (1u << 30)) {
    if (Store) st(w, in, m);
    else ld(w, in, m);
    return;
  }
  const intptr_t delta = reinterpret_cast<intptr_t>(p0) - static_cast<intptr_t>(lo);
  // Each element is a relaxed atomic access: device memory's plain loads and stores may race
  // between blocks (other host threads) and processes, with the GPU's word-sized atomicity and no
  // UB on the host; on x86 these are the same moves as memcpy.
  using T = std::conditional_t<N == 1, uint8_t, std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;
  if constexpr (Store) {
    unsigned sv;
    const uint64_t* v = w.src(in.op[0], sv);
    for_lanes(m, [&](unsigned l) {
      const T x = static_cast<T>(v[l * sv]);
      std::atomic_ref<T>(*reinterpret_cast<T*>(base[l * sb] + off + delta)).store(x, std::memory_order_relaxed);
    });
  } else {
    uint64_t* d = w.dst(in.op[0]);
    const bool sign = ty_signed(in.ty);
    for_lanes(m, [&](unsigned l) {
      const T x = std::atomic_ref<T>(*reinterpret_cast<T*>(base[l * sb] + off + delta)).load(std::memory_order_relaxed);
      d[l] = sign ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<std::make_signed_t<T>>(x))) : x;
    });
  }
}

// Shared memory, one element per lane: the block's own bytes, bounds-checked per lane.
template <unsigned N, bool Store>
void shared_access(Warp& w, const Insn& in, uint32_t m) {
  using T = std::conditional_t<N == 1, uint8_t, std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;
  unsigned sb;
  const uint64_t* base = w.src(in.op[4], sb);
  const uint64_t off = static_cast<uint64_t>(in.imm);
  uint8_t* const sh = w.block->shared;
  const uint64_t size = w.block->shared_size;
  uint64_t bad = 0;
  for_lanes(m, [&](unsigned l) {
    const uint64_t a = base[l * sb] + off;
    bad |= (a & (N - 1)) | (a + N > size ? 1 : 0) | (a >= size ? 1 : 0);
  });
  if (bad || w.block->race) {  // the general path names the fault, and checks races
    if (Store) st(w, in, m);
    else ld(w, in, m);
    return;
  }
  if constexpr (Store) {
    unsigned sv;
    const uint64_t* v = w.src(in.op[0], sv);
    for_lanes(m, [&](unsigned l) {
      const T x = static_cast<T>(v[l * sv]);
      std::memcpy(sh + base[l * sb] + off, &x, N);
    });
  } else {
    uint64_t* d = w.dst(in.op[0]);
    const bool sign = ty_signed(in.ty);
    for_lanes(m, [&](unsigned l) {
      T x;
      std::memcpy(&x, sh + base[l * sb] + off, N);
      d[l] = sign ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<std::make_signed_t<T>>(x))) : x;
    });
  }
}

Handler shared_handler(unsigned n, bool store) {
  switch (n) {
    case 1: return store ? &shared_access<1, true> : &shared_access<1, false>;
    case 2: return store ? &shared_access<2, true> : &shared_access<2, false>;
    case 4: return store ? &shared_access<4, true> : &shared_access<4, false>;
    case 8: return store ? &shared_access<8, true> : &shared_access<8, false>;
    default: return nullptr;
  }
}

Handler global_handler(unsigned n, bool store) {
  switch (n) {
    case 1: return store ? &global_access<1, true> : &global_access<1, false>;
    case 2: return store ? &global_access<2, true> : &global_access<2, false>;
    case 4: return store ? &global_access<4, true> : &global_access<4, false>;
    case 8: return store ? &global_access<8, true> : &global_access<8, false>;
    default: return nullptr;
  }
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
  using U = std::make_unsigned_t<T>;  // wrapping arithmetic: signed overflow is the GPU's wrap, not UB
  T old = ref.load(std::memory_order_relaxed);
  for (;;) {
    T nv;
    switch (op) {
      case kAdd: nv = static_cast<T>(static_cast<U>(old) + static_cast<U>(b)); break;
      case kMin: nv = b < old ? b : old; break;
      case kMax: nv = b > old ? b : old; break;
      case kInc: nv = old >= b ? T{0} : static_cast<T>(static_cast<U>(old) + 1u); break;
      case kDec: nv = (old == 0 || old > b) ? b : static_cast<T>(static_cast<U>(old) - 1u); break;
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
      uint8_t* p = resolve(w, in.space, lane_addr(w, in, l), sizeof(T), true, l, /*atomic=*/true);
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

// The value of a special register that is the same for every lane of the warp.
uint64_t uniform_sreg(const Warp& w, Sreg r) {
  const Launch& L = *w.launch;
  const Block& b = *w.block;
  auto clock_ns = [](clockid_t id) {
    timespec t;
    clock_gettime(id, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
  };
  switch (r) {
    case Sreg::ntid_x: return L.block[0];
    case Sreg::ntid_y: return L.block[1];
    case Sreg::ntid_z: return L.block[2];
    case Sreg::ctaid_x: case Sreg::clusterid_x: return b.ctaid[0];
    case Sreg::ctaid_y: case Sreg::clusterid_y: return b.ctaid[1];
    case Sreg::ctaid_z: case Sreg::clusterid_z: return b.ctaid[2];
    case Sreg::nctaid_x: case Sreg::nclusterid_x: return L.grid[0];
    case Sreg::nctaid_y: case Sreg::nclusterid_y: return L.grid[1];
    case Sreg::nctaid_z: case Sreg::nclusterid_z: return L.grid[2];
    case Sreg::warpid: return w.index;
    case Sreg::nwarpid: return 64;
    case Sreg::smid: return b.linear % 132;
    case Sreg::nsmid: return 132;
    case Sreg::clock: return static_cast<uint32_t>(clock_ns(CLOCK_MONOTONIC));
    case Sreg::clock_hi: return static_cast<uint32_t>(clock_ns(CLOCK_MONOTONIC) >> 32);
    case Sreg::clock64: return clock_ns(CLOCK_MONOTONIC);
    case Sreg::globaltimer: return clock_ns(CLOCK_REALTIME);
    case Sreg::globaltimer_lo: return static_cast<uint32_t>(clock_ns(CLOCK_REALTIME));
    case Sreg::globaltimer_hi: return static_cast<uint32_t>(clock_ns(CLOCK_REALTIME) >> 32);
    case Sreg::dynamic_smem_size: return L.dyn_shared;
    case Sreg::total_smem_size: case Sreg::aggr_smem_size: return L.shared_total;
    case Sreg::cluster_nctarank: case Sreg::cluster_nctaid_x: case Sreg::cluster_nctaid_y:
    case Sreg::cluster_nctaid_z: case Sreg::is_explicit_cluster:
      return r == Sreg::is_explicit_cluster ? 0 : 1;
    // The grid workspace's address, high and low halves. NVIDIA's driver gives every launch one
    // (measured: a plain launch's grid.sync() runs when the grid fits on the device).
    case Sreg::envreg1: return windows().grid_ws >> 32;
    case Sreg::envreg2: return windows().grid_ws & 0xffffffffu;
    default: return 0;
  }
}

// mov d, %sreg: mod is the Sreg.
void sreg(Warp& w, const Insn& in, uint32_t m) {
  const auto r = static_cast<Sreg>(in.mod);
  uint64_t* d = w.dst(in.op[0]);
  switch (r) {
    case Sreg::tid_x: case Sreg::tid_y: case Sreg::tid_z: {
      const uint32_t* t = w.tid[static_cast<int>(r) - static_cast<int>(Sreg::tid_x)];
      for_lanes(m, [&](unsigned l) { d[l] = t[l]; });
      return;
    }
    case Sreg::laneid: for_lanes(m, [&](unsigned l) { d[l] = l; }); return;
    case Sreg::lanemask_eq: for_lanes(m, [&](unsigned l) { d[l] = 1u << l; }); return;
    case Sreg::lanemask_le: for_lanes(m, [&](unsigned l) { d[l] = l == 31 ? 0xffffffffu : (2u << l) - 1; }); return;
    case Sreg::lanemask_lt: for_lanes(m, [&](unsigned l) { d[l] = (1u << l) - 1; }); return;
    case Sreg::lanemask_ge: for_lanes(m, [&](unsigned l) { d[l] = ~((1u << l) - 1) & 0xffffffffu; }); return;
    case Sreg::lanemask_gt: for_lanes(m, [&](unsigned l) { d[l] = l == 31 ? 0 : ~((2u << l) - 1) & 0xffffffffu; }); return;
    default: {
      const uint64_t v = uniform_sreg(w, r);
      for_lanes(m, [&](unsigned l) { d[l] = v; });
    }
  }
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
    if ((in.space == Space::global || in.space == Space::generic) && in.vec == 1 && in.op[4] != kNone && !(in.mod2 & 1))
      if (Handler h = global_handler(n, false)) return h;
    if (in.space == Space::shared && in.vec == 1 && in.op[4] != kNone && !(in.mod2 & 1))
      if (Handler h = shared_handler(n, false)) return h;
    return n ? &ld : nullptr;
  }
  if (op == "st") {
    if ((in.space == Space::global || in.space == Space::generic) && in.vec == 1 && in.op[4] != kNone && !(in.mod2 & 1))
      if (Handler h = global_handler(n, true)) return h;
    if (in.space == Space::shared && in.vec == 1 && in.op[4] != kNone && !(in.mod2 & 1))
      if (Handler h = shared_handler(n, true)) return h;
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
