// Bit-manipulation and multi-operand integer instructions: bfe bfi prmt lop3 shf bfind fns
// dp4a dp2a sad bmsk szext, and mad with carry. Semantics are intops.hpp's, lane by lane.
#include "exec/intops.hpp"
#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

template <class T> struct Bfe {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    ternary<T, T, uint32_t, uint32_t>(w, in, m, [](T a, uint32_t b, uint32_t c) { return iops::bfe<T>(a, b, c); });
  }
};

template <class T>
void bfi(Warp& w, const Insn& in, uint32_t m) {
  for_lanes(m, [&](unsigned l) {
    T f = from_slot<T>(w.get(in.op[1], l)), b = from_slot<T>(w.get(in.op[2], l));
    uint32_t c = static_cast<uint32_t>(w.get(in.op[3], l)), d = static_cast<uint32_t>(w.get(in.op[4], l));
    w.set(in.op[0], l, to_slot<T>(iops::bfi<T>(f, b, c, d)));
  });
}

void prmt(Warp& w, const Insn& in, uint32_t m) {
  const auto mode = static_cast<iops::PrmtMode>(in.mod);
  ternary<uint32_t, uint32_t, uint32_t, uint32_t>(w, in, m, [=](uint32_t a, uint32_t b, uint32_t c) {
    return iops::prmt(a, b, c, mode);
  });
}

void lop3(Warp& w, const Insn& in, uint32_t m) {
  for_lanes(m, [&](unsigned l) {
    w.set(in.op[0], l, iops::lop3(static_cast<uint32_t>(w.get(in.op[1], l)), static_cast<uint32_t>(w.get(in.op[2], l)),
                                  static_cast<uint32_t>(w.get(in.op[3], l)), static_cast<uint32_t>(w.get(in.op[4], l))));
  });
}

// shf: mod bit 0 right (else left), bit 1 wrap (else clamp).
void shf(Warp& w, const Insn& in, uint32_t m) {
  const bool right = in.mod & 1, wrap = in.mod & 2;
  ternary<uint32_t, uint32_t, uint32_t, uint32_t>(w, in, m, [=](uint32_t a, uint32_t b, uint32_t c) {
    return right ? iops::shf_r(a, b, c, wrap) : iops::shf_l(a, b, c, wrap);
  });
}

template <class T> struct Bfind {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    const bool amt = in.mod & 1;
    unary<uint32_t, T>(w, in, m, [=](T a) { return iops::bfind<T>(a, amt); });
  }
};

void fns(Warp& w, const Insn& in, uint32_t m) {
  ternary<uint32_t, uint32_t, uint32_t, int32_t>(w, in, m, [](uint32_t a, uint32_t b, int32_t c) { return iops::fns(a, b, c); });
}

// dp4a/dp2a: flags kHi for dp2a.hi; mod bit 0 a signed, bit 1 b signed, bit 2 dp2a.
void dot(Warp& w, const Insn& in, uint32_t m) {
  const bool as = in.mod & 1, bs = in.mod & 2, two = in.mod & 4, hi = in.flags & kHi;
  ternary<uint32_t, uint32_t, uint32_t, uint32_t>(w, in, m, [=](uint32_t a, uint32_t b, uint32_t c) {
    return two ? iops::dp2a(a, b, c, as, bs, hi) : iops::dp4a(a, b, c, as, bs);
  });
}

template <class T> struct Sad {
  static void run(Warp& w, const Insn& in, uint32_t m) {
    ternary<T, T, T, T>(w, in, m, [](T a, T b, T c) { return iops::sad<T>(a, b, c); });
  }
};

// bmsk / szext: mod bit 0 wrap, bit 1 szext, bit 2 signed.
void mask_ext(Warp& w, const Insn& in, uint32_t m) {
  const bool wrap = in.mod & 1, ext = in.mod & 2, sgn = in.mod & 4;
  binary<uint32_t, uint32_t, uint32_t>(w, in, m, [=](uint32_t a, uint32_t b) {
    return ext ? iops::szext(a, b, wrap, sgn) : iops::bmsk(a, b, wrap);
  });
}

// mad.lo/hi.cc and madc.lo/hi{.cc}: op[4] the carry slot; mod bit 0 carry in, bit 1 carry out.
template <class T>
void madc(Warp& w, const Insn& in, uint32_t m) {
  const bool hi = in.flags & kHi, cin = in.mod & 1, cout = in.mod & 2;
  for_lanes(m, [&](unsigned l) {
    T a = from_slot<T>(w.get(in.op[1], l)), b = from_slot<T>(w.get(in.op[2], l)), c = from_slot<T>(w.get(in.op[3], l));
    uint32_t cf = cin ? static_cast<uint32_t>(w.get(in.op[4], l) & 1) : 0;
    iops::WithCarry<T> r = iops::madc<T>(hi, a, b, c, cf);
    w.set(in.op[0], l, to_slot<T>(r.d));
    if (cout) w.set(in.op[4], l, r.cf);
  });
}

}  // namespace

Handler bits_handler(std::string_view op, Insn& in) {
  const Ty t = in.ty;
  const bool wide = ty_bytes(t) == 8;
  if (op == "bfe") {
    switch (t) {
      case Ty::u32: case Ty::b32: return &Bfe<uint32_t>::run;
      case Ty::s32: return &Bfe<int32_t>::run;
      case Ty::u64: case Ty::b64: return &Bfe<uint64_t>::run;
      case Ty::s64: return &Bfe<int64_t>::run;
      default: return nullptr;
    }
  }
  if (op == "bfi") return wide ? &bfi<uint64_t> : ty_bytes(t) == 4 ? &bfi<uint32_t> : nullptr;
  if (op == "prmt") return &prmt;
  if (op == "lop3") return &lop3;
  if (op == "shf") return &shf;
  if (op == "bfind") {
    switch (t) {
      case Ty::u32: return &Bfind<uint32_t>::run;
      case Ty::s32: return &Bfind<int32_t>::run;
      case Ty::u64: return &Bfind<uint64_t>::run;
      case Ty::s64: return &Bfind<int64_t>::run;
      default: return nullptr;
    }
  }
  if (op == "fns") return &fns;
  if (op == "dp4a" || op == "dp2a") return &dot;
  if (op == "sad") {
    switch (t) {
      case Ty::u16: return &Sad<uint16_t>::run;
      case Ty::s16: return &Sad<int16_t>::run;
      case Ty::u32: return &Sad<uint32_t>::run;
      case Ty::s32: return &Sad<int32_t>::run;
      case Ty::u64: return &Sad<uint64_t>::run;
      case Ty::s64: return &Sad<int64_t>::run;
      default: return nullptr;
    }
  }
  if (op == "bmsk" || op == "szext") return &mask_ext;
  if (op == "madc") {
    switch (t) {
      case Ty::u32: case Ty::b32: return &madc<uint32_t>;
      case Ty::s32: return &madc<int32_t>;
      case Ty::u64: case Ty::b64: return &madc<uint64_t>;
      case Ty::s64: return &madc<int64_t>;
      default: return nullptr;
    }
  }
  return nullptr;
}

}  // namespace cuda_shim::exec
