// Warp-level instructions: shfl.sync, vote.sync, activemask, match.sync, redux.sync, elect.sync.
// The executor runs them only once every lane the member mask names has arrived (Flow::warpsync),
// so `mask` holds exactly the lanes that take part.
#include "exec/cmp.hpp"
#include "exec/ops.hpp"

namespace cuda_shim::exec {
namespace {

enum ShflMode : uint8_t { kUp, kDown, kBfly, kIdx };

// shfl.sync.mode.b32 d[|p], a, b, c, membermask: op[0] d, op[4] p, op[1] a, op[2] b, op[3] c.
void shfl(Warp& w, const Insn& in, uint32_t m) {
  uint32_t val[kLanes];
  for_lanes(m, [&](unsigned l) { val[l] = static_cast<uint32_t>(w.get(in.op[1], l)); });
  const auto mode = static_cast<ShflMode>(in.mod);
  uint32_t out[kLanes];
  bool ok[kLanes];
  for_lanes(m, [&](unsigned l) {
    const uint32_t b = static_cast<uint32_t>(w.get(in.op[2], l)) & 31;
    const uint32_t c = static_cast<uint32_t>(w.get(in.op[3], l));
    const int cval = static_cast<int>(c & 31), seg = static_cast<int>((c >> 8) & 31), lane = static_cast<int>(l);
    const int max_lane = (lane & seg) | (cval & ~seg), min_lane = lane & seg;
    int j;
    bool p;
    switch (mode) {
      case kUp: j = lane - static_cast<int>(b); p = j >= max_lane; break;
      case kDown: j = lane + static_cast<int>(b); p = j <= max_lane; break;
      case kBfly: j = lane ^ static_cast<int>(b); p = j <= max_lane; break;
      default: j = min_lane | (static_cast<int>(b) & ~seg); p = j <= max_lane; break;
    }
    if (!p || j < 0 || j > 31) j = lane;
    // A source lane outside the exchange: the GPU's value is undefined; ours is the lane's own.
    out[l] = (m >> j) & 1 ? val[j] : val[l];
    ok[l] = p;
  });
  for_lanes(m, [&](unsigned l) {
    w.set(in.op[0], l, out[l]);
    if (in.op[4] != kNone) w.set(in.op[4], l, ok[l]);
  });
}

enum VoteMode : uint8_t { kAll, kAny, kUni, kBallot };

// vote.sync.mode d, {!}a, membermask: op[0] d, op[1] a; mod2 kBoolNeg for !a.
void vote(Warp& w, const Insn& in, uint32_t m) {
  const bool neg = in.mod2 & kBoolNeg;
  uint32_t bits = 0;
  for_lanes(m, [&](unsigned l) {
    if (((w.get(in.op[1], l) & 1) != 0) != neg) bits |= 1u << l;
  });
  uint64_t r;
  switch (static_cast<VoteMode>(in.mod)) {
    case kAll: r = bits == m; break;
    case kAny: r = bits != 0; break;
    case kUni: r = bits == 0 || bits == m; break;
    default: r = bits; break;
  }
  for_lanes(m, [&](unsigned l) { w.set(in.op[0], l, r); });
}

void activemask(Warp& w, const Insn& in, uint32_t m) {
  for_lanes(m, [&](unsigned l) { w.set(in.op[0], l, m); });
}

// match.any.sync.b32/b64 d, a, membermask; match.all.sync d[|p], a, membermask (mod 1).
void match(Warp& w, const Insn& in, uint32_t m) {
  const bool all = in.mod == 1;
  const uint64_t vmask = ty_bytes(in.ty) == 8 ? ~uint64_t{0} : 0xffffffffu;
  uint64_t v[kLanes];
  for_lanes(m, [&](unsigned l) { v[l] = w.get(in.op[1], l) & vmask; });
  bool same = true;
  const unsigned first = m ? static_cast<unsigned>(__builtin_ctz(m)) : 0;
  for_lanes(m, [&](unsigned l) { same = same && v[l] == v[first]; });
  for_lanes(m, [&](unsigned l) {
    uint32_t r = 0;
    if (all) {
      r = same ? m : 0;
    } else {
      for_lanes(m, [&](unsigned k) { r |= (v[k] == v[l] ? 1u : 0u) << k; });
    }
    w.set(in.op[0], l, r);
    if (in.op[4] != kNone) w.set(in.op[4], l, same);
  });
}

enum ReduxOp : uint8_t { kRAdd, kRMin, kRMax, kRAnd, kROr, kRXor };

// redux.sync.op.type d, a, membermask.
void redux(Warp& w, const Insn& in, uint32_t m) {
  const bool sgn = ty_signed(in.ty);
  const auto op = static_cast<ReduxOp>(in.mod);
  uint32_t acc = 0;
  bool first = true;
  for_lanes(m, [&](unsigned l) {
    uint32_t v = static_cast<uint32_t>(w.get(in.op[1], l));
    if (first) {
      acc = v;
      first = false;
      return;
    }
    switch (op) {
      case kRAdd: acc += v; break;
      case kRMin: acc = sgn ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::min(acc, v); break;
      case kRMax: acc = sgn ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::max(acc, v); break;
      case kRAnd: acc &= v; break;
      case kROr: acc |= v; break;
      default: acc ^= v; break;
    }
  });
  for_lanes(m, [&](unsigned l) { w.set(in.op[0], l, acc); });
}

// elect.sync d|p, membermask: the lowest lane taking part leads.
void elect(Warp& w, const Insn& in, uint32_t m) {
  const unsigned leader = m ? static_cast<unsigned>(__builtin_ctz(m)) : 0;
  for_lanes(m, [&](unsigned l) {
    if (in.op[0] != kNone) w.set(in.op[0], l, leader);
    if (in.op[4] != kNone) w.set(in.op[4], l, l == leader);
  });
}

void nop(Warp&, const Insn&, uint32_t) {}

// After bar.red: the barrier's released reduction (mod: 0 popc, 1 and, 2 or).
void bar_red_result(Warp& w, const Insn& in, uint32_t m) {
  const Block& b = *w.block;
  const uint32_t id = static_cast<uint32_t>(w.get(in.op[1], static_cast<unsigned>(__builtin_ctz(m)))) & 15;
  const uint32_t v = in.mod == 0 ? b.res_popc[id] : in.mod == 1 ? b.res_all[id] : b.res_any[id];
  for_lanes(m, [&](unsigned l) { w.set(in.op[0], l, v); });
}

}  // namespace

Handler warp_handler(std::string_view op, Insn& in) {
  if (op == "shfl") return &shfl;
  if (op == "vote") return &vote;
  if (op == "activemask") return &activemask;
  if (op == "match") return &match;
  if (op == "redux") return &redux;
  if (op == "elect") return &elect;
  if (op == "bar_warp") return &nop;
  if (op == "bar_red_result") return &bar_red_result;
  return nullptr;
}

}  // namespace cuda_shim::exec
