// Lowering, instructions: modifiers decoded once into Insn fields, operands into slots, and the
// handler chosen. Opcodes are grouped by operand shape, not by meaning: most arithmetic is
// "d, a[, b[, c]]" and shares one path.
#include <algorithm>

#include "exec/cmp.hpp"
#include "exec/interp.hpp"
#include "exec/ops.hpp"
#include "exec/ptx_lower_ctx.hpp"

namespace cuda_shim::exec {
namespace {

bool one_of(std::string_view s, std::initializer_list<std::string_view> l) {
  return std::find(l.begin(), l.end(), s) != l.end();
}

Space space_of(std::string_view m, bool& ok) {
  ok = true;
  if (m.substr(0, 7) == ".global") return Space::global;
  if (m.substr(0, 7) == ".shared") return Space::shared;
  if (m == ".local") return Space::local;
  if (m == ".const") return Space::constant;
  if (m == ".param") return Space::kparam;
  ok = false;
  return Space::generic;
}

uint8_t rounding(std::string_view m) {
  static constexpr std::string_view kR[] = {".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi", ".rna"};
  for (uint8_t i = 0; i < 9; ++i)
    if (kR[i] == m) return static_cast<uint8_t>(i + 1);
  return 0;
}

int cmp_of(std::string_view m) {
  static constexpr std::string_view kC[] = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi",
                                            ".hs", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"};
  for (int i = 0; i < 18; ++i)
    if (kC[i] == m) return i;
  return -1;
}

// Modifiers that change nothing the emulator models: caching, ordering scopes, alignment
// promises, cache hints (memory on the host is coherent and every access is in order).
bool ignorable(std::string_view m) {
  return one_of(m, {".sync", ".aligned", ".uni", ".relaxed", ".acquire", ".release", ".acq_rel", ".sc", ".weak",
                    ".volatile", ".mmio", ".gpu", ".sys", ".cta", ".cluster", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb",
                    ".wt", ".nc", ".lo", ".noftz", ".gl", ".mask"}) ||
         m.substr(0, 4) == ".L1:" || m.substr(0, 4) == ".L2:" || m.substr(0, 5) == ".level";
}

}  // namespace

uint16_t Lowerer::opcode_id_for(std::string_view text) {
  auto [it, fresh] = opcode_ids_.emplace(std::string(text), 0);
  if (fresh) {
    it->second = static_cast<uint16_t>(p_.opcodes.size());
    p_.opcodes.emplace_back(text);
  }
  return it->second;
}

uint16_t Lowerer::opcode_id(const ast::Insn& in) {
  std::string t(in.opcode);
  for (auto m : in.mods) t += m;
  return opcode_id_for(t);
}

Handler Lowerer::handler_of(std::string_view op, Insn& i) {
  if (Handler h = mem_handler(op, i)) return h;
  if (Handler h = warp_handler(op, i)) return h;
  if (Handler h = bits_handler(op, i)) return h;
  const auto floaty = [](Ty t) { return ty_float(t) || t == Ty::f16x2 || t == Ty::bf16x2 || t == Ty::tf32; };
  if (floaty(i.ty) || (op == "cvt" && floaty(i.ty2)) || op == "testp" || op == "copysign") {
    if (Handler h = float_handler(op, i)) return h;
  }
  return int_handler(op, i);
}

void Lowerer::unsupported(const ast::Insn& in, const char* why) {
  if (!fn_->unsupported.empty()) return;
  std::string t(in.opcode);
  for (auto m : in.mods) t += m;
  fn_->unsupported = fmt::format("'{}' at PTX line {} ({})", t, in.line, why);
  Insn i;
  i.flow = Flow::trap;
  i.line = in.line;
  i.opcode = opcode_id(in);
  emit(i);
}

Errc Lowerer::decode(const ast::Insn& in, Mods& m, uint32_t line) {
  for (std::string_view d : in.mods) {
    bool sp;
    Ty t = type_of(d);
    if (t != Ty::none) {
      m.types.push_back(t);
    } else if (Space s = space_of(d, sp); sp) {
      m.space = s;
      m.has_space = true;
    } else if (d == ".v2" || d == ".v4" || d == ".v8") {
      m.vec = static_cast<uint8_t>(d[2] - '0');
    } else if (uint8_t r = rounding(d)) {
      m.rnd = r;
    } else if (d == ".ftz") {
      m.flags |= kFtz;
    } else if (d == ".sat") {
      m.flags |= kSat;
    } else if (d == ".approx") {
      m.flags |= kApprox;
    } else if (d == ".hi") {
      m.flags |= kHi;
      m.rest.push_back(d);  // also a comparison (setp.hi)
    } else if (d == ".wide") {
      m.flags |= kWide;
    } else if (d == ".NaN") {
      m.flags |= kNaN;
    } else if (d == ".relu") {
      m.flags |= kRelu;
    } else if (d == ".to") {
      m.to = true;
    } else if (d == ".cc") {
      m.cc = true;
    } else if (d == ".sync") {
      m.sync = true;
    } else if (d == ".lo") {
      m.rest.push_back(d);  // mul.lo (the default) or setp.lo
    } else if (ignorable(d)) {
    } else {
      m.rest.push_back(d);
    }
  }
  (void)line;
  return Errc::success;
}

// Lowering of one instruction: see the shapes below.
Errc Lowerer::insn(const ast::Insn& a) {
  Mods m;
  TRY(decode(a, m, a.line));
  Insn i;
  i.line = a.line;
  i.opcode = opcode_id(a);
  i.ty = m.types.empty() ? Ty::none : m.types[0];
  i.ty2 = m.types.size() > 1 ? m.types[1] : Ty::none;
  i.space = m.space;
  i.vec = m.vec;
  i.mod = m.rnd;
  i.flags = m.flags;
  if (!a.guard.empty()) {
    i.guard = reg(a.guard);
    i.guard_neg = a.guard_neg;
  }
  const std::string_view op = a.opcode;
  const auto& ops = a.ops;
  auto need = [&](size_t n) -> Errc {
    if (ops.size() < n) return bad(a.line, "'{}' needs {} operands, has {}", op, n, ops.size());
    return Errc::success;
  };
  auto dst = [&](const ast::Operand& o) -> uint32_t { return o.kind == ast::Operand::sink ? temp() : reg(o.name); };
  auto finish = [&](std::string_view family) -> Errc {
    i.fn = handler_of(family, i);
    if (!i.fn) {
      unsupported(a, "this type or modifier combination is not implemented");
      return Errc::success;
    }
    emit(i);
    return Errc::success;
  };

  // Control flow.
  if (op == "bra") {
    TRY(need(1));
    i.flow = Flow::bra;
    fixups_.emplace_back(static_cast<uint32_t>(p_.code.size()), ops[0].name);
    emit(i);
    return Errc::success;
  }
  if (op == "ret" || op == "exit") {
    i.flow = op == "ret" ? Flow::ret : Flow::exit;
    emit(i);
    return Errc::success;
  }
  if (op == "trap" || op == "brkpt") {
    i.flow = Flow::trap;
    emit(i);
    return Errc::success;
  }
  if (op == "call") return call(a, i);
  if (op == "bar" || op == "barrier") {
    const bool warp = std::find(a.mods.begin(), a.mods.end(), ".warp") != a.mods.end();
    if (warp) {  // bar.warp.sync membermask
      i.flow = Flow::warpsync;
      if (!ops.empty()) TRY(value(ops[0], Ty::b32, i.op[5], a.line));
      return finish("bar_warp");
    }
    if (std::find(a.mods.begin(), a.mods.end(), ".red") != a.mods.end()) return barrier_reduction(a, i, m);
    i.flow = Flow::bar;
    i.mod = std::find(a.mods.begin(), a.mods.end(), ".arrive") != a.mods.end() ? 1 : 0;
    if (!ops.empty()) TRY(value(ops[0], Ty::b32, i.op[1], a.line));
    if (ops.size() > 1) TRY(value(ops[1], Ty::b32, i.op[2], a.line));
    emit(i);
    return Errc::success;
  }

  // Memory.
  if (op == "ld" || op == "ldu" || op == "st") return memory(a, i, m);
  if (op == "atom" || op == "red") return atomic(a, i, m);
  if (op == "cp") return async_copy(a, i, m);
  if (op == "prefetch" || op == "prefetchu" || op == "pmevent" || op == "discard" || op == "applypriority" ||
      op == "griddepcontrol" || op == "createpolicy" || op == "membar" || op == "fence" || op == "nanosleep") {
    if (op == "createpolicy" && !ops.empty()) i.op[0] = dst(ops[0]);
    return finish(op == "membar" || op == "fence" ? "fence" : op == "nanosleep" ? "nanosleep" : "prefetch");
  }
  if (op == "cvta") {
    TRY(need(2));
    i.op[0] = dst(ops[0]);
    TRY(value(ops[1], Ty::u64, i.op[1], a.line));
    if (m.space == Space::global || m.space == Space::constant || m.space == Space::kparam) return finish("mov");
    i.mod = m.to ? 0 : 1;
    return finish("cvta");
  }
  if (op == "isspacep") {
    TRY(need(2));
    i.op[0] = dst(ops[0]);
    TRY(value(ops[1], Ty::u64, i.op[1], a.line));
    return finish("isspacep");
  }

  // Moves.
  if (op == "mov") return move(a, i);

  // Warp-level.
  if (op == "shfl" || op == "vote" || op == "match" || op == "redux" || op == "elect" || op == "activemask")
    return warp(a, i, m);

  // Comparisons.
  if (op == "slct") return select_sign(a, i, m);
  if (op == "setp" || op == "set") {
    TRY(need(3));
    for (auto r : m.rest) {
      int c = cmp_of(r);
      if (c >= 0) i.mod = static_cast<uint8_t>(c);
      else if (r == ".and") i.mod2 = kBoolAnd;
      else if (r == ".or") i.mod2 = kBoolOr;
      else if (r == ".xor") i.mod2 = kBoolXor;
    }
    // set.cmp.dtype.stype d, a, b: a comparison of stype written as dtype (all ones or 1.0f).
    const Ty dtype = i.ty;
    if (op == "set") {
      i.ty = i.ty2;
      i.ty2 = Ty::none;
    }
    i.op[0] = op == "set" ? temp() : dst(ops[0]);
    if (!ops[0].pair.empty()) i.op[4] = reg(ops[0].pair);
    TRY(value(ops[1], i.ty, i.op[1], a.line));
    TRY(value(ops[2], i.ty, i.op[2], a.line));
    if (ops.size() > 3) {
      TRY(value(ops[3], Ty::pred, i.op[3], a.line));
      if (ops[3].neg) i.mod2 |= kBoolNeg;
    }
    if (op == "setp") return finish("setp");
    const uint32_t p = i.op[0];
    TRY(finish("setp"));
    Insn sel;
    sel.line = a.line;
    sel.opcode = i.opcode;
    sel.guard = i.guard;
    sel.guard_neg = i.guard_neg;
    sel.ty = dtype;
    sel.op[0] = dst(ops[0]);
    sel.op[1] = constant(dtype == Ty::f32 ? 0x3f800000u : 0xffffffffu);
    sel.op[2] = constant(0);
    sel.op[3] = p;
    sel.fn = handler_of("selp", sel);
    emit(sel);
    return Errc::success;
  }
  if (op == "testp") {
    static constexpr std::string_view kT[] = {".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"};
    for (auto r : m.rest)
      for (uint8_t k = 0; k < 6; ++k)
        if (kT[k] == r) i.mod = k;
    TRY(need(2));
    i.op[0] = dst(ops[0]);
    TRY(value(ops[1], i.ty, i.op[1], a.line));
    return finish("testp");
  }
  if (op == "selp") {
    TRY(need(4));
    i.op[0] = dst(ops[0]);
    TRY(value(ops[1], i.ty, i.op[1], a.line));
    TRY(value(ops[2], i.ty, i.op[2], a.line));
    TRY(value(ops[3], Ty::pred, i.op[3], a.line));
    return finish("selp");
  }
  if (op == "cvt") {
    TRY(need(2));
    // cvt.f32.f32 (and the other same-type forms) without a rounding, .ftz or .sat changes no bit,
    // NaN payloads included (an H200 keeps them): a move.
    if (i.ty == i.ty2 && i.mod == 0 && i.flags == 0 && ty_float(i.ty)) {
      i.op[0] = dst(ops[0]);
      TRY(value(ops[1], i.ty, i.op[1], a.line));
      return finish("mov");
    }
    if (std::find(m.rest.begin(), m.rest.end(), ".satfinite") != m.rest.end()) i.mod2 |= 1;
    i.op[0] = dst(ops[0]);
    TRY(value(ops[1], i.ty2, i.op[1], a.line));
    if (ops.size() > 2) TRY(value(ops[2], i.ty2, i.op[2], a.line));
    return finish("cvt");
  }

  // Arithmetic and bits: d, a[, b[, c]] of the instruction's type.
  static constexpr std::string_view kArith[] = {
      "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs", "neg", "and", "or", "xor", "not", "cnot",
      "shl", "shr", "popc", "clz", "brev", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "copysign",
      "mul24", "mad24", "addc", "subc", "madc", "bfe", "bfi", "prmt", "lop3", "shf", "bfind", "fns", "dp4a", "dp2a",
      "sad", "bmsk", "szext"};
  if (std::find(std::begin(kArith), std::end(kArith), op) != std::end(kArith)) {
    TRY(need(2));
    i.op[0] = dst(ops[0]);
    // Source types: shifts take a .u32 amount; mul/mad.wide read narrower sources; popc/clz/…
    // read the instruction's type and write .u32.
    for (size_t k = 1; k < ops.size() && k < 5; ++k) {
      Ty t = i.ty;
      if ((op == "shl" || op == "shr") && k == 2) t = Ty::u32;
      TRY(value(ops[k], t, i.op[k], a.line));
    }
    std::string_view family = op;
    if (op == "addc" || op == "subc" || (m.cc && (op == "add" || op == "sub"))) {
      if (carry_ == kNone) carry_ = temp();
      i.op[4] = carry_;
      i.mod = static_cast<uint8_t>((op == "addc" || op == "subc" ? 1 : 0) | (m.cc ? 2 : 0) |
                                   (op == "sub" || op == "subc" ? 4 : 0));
      family = "add";
      if (i.ty != Ty::u32 && i.ty != Ty::s32 && i.ty != Ty::b32 && i.ty != Ty::u64 && i.ty != Ty::s64 && i.ty != Ty::b64) {
        unsupported(a, "carry chains on this type");
        return Errc::success;
      }
      i.fn = handler_of(family, i);
      emit(i);
      return Errc::success;
    }
    auto has = [&](std::string_view r) { return std::find(m.rest.begin(), m.rest.end(), r) != m.rest.end(); };
    if (op == "madc" || (m.cc && op == "mad")) {
      if (carry_ == kNone) carry_ = temp();
      i.op[4] = carry_;
      i.mod = static_cast<uint8_t>((op == "madc" ? 1 : 0) | (m.cc ? 2 : 0));
      family = "madc";
    } else if (op == "prmt") {
      static constexpr std::string_view kModes[] = {".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
      for (uint8_t k = 0; k < 6; ++k)
        if (has(kModes[k])) i.mod = static_cast<uint8_t>(k + 1);
    } else if (op == "shf") {
      i.mod = static_cast<uint8_t>((has(".r") ? 1 : 0) | (has(".wrap") ? 2 : 0));
    } else if (op == "bfind") {
      i.mod = has(".shiftamt") ? 1 : 0;
    } else if (op == "dp4a" || op == "dp2a") {
      i.mod = static_cast<uint8_t>((ty_signed(i.ty) ? 1 : 0) | (ty_signed(i.ty2) ? 2 : 0) | (op == "dp2a" ? 4 : 0));
    } else if ((op == "min" || op == "max") && has(".xorsign")) {
      i.mod = 1;
    } else if (op == "div" && has(".full")) {
      i.mod2 = 1;
    } else if (op == "bmsk" || op == "szext") {
      i.mod = static_cast<uint8_t>((has(".wrap") ? 1 : 0) | (op == "szext" ? 2 : 0) | (ty_signed(i.ty) ? 4 : 0));
    }
    if (op == "mad24") i.mod = 1, family = "mad24";
    if (m.flags & kApprox) i.flags |= kApprox;
    return finish(family);
  }
  if (one_of(op, {"tex", "tld4", "txq", "suld", "sust"})) return texture(a, i, m);
  if (one_of(op, {"mma", "wmma", "wgmma", "ldmatrix", "stmatrix", "sured",
                  "suq", "cp.async.bulk", "mbarrier", "tensormap", "istypep", "alloca", "stacksave", "stackrestore",
                  "multimem", "tcgen05", "setmaxnreg", "getctarank", "mapa", "clusterlaunchcontrol", "st.async",
                  "red.async", "brx", "vote.ballot", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr",
                  "vmad", "vset"})) {
    unsupported(a, "the engine does not run this instruction yet");
    return Errc::success;
  }
  unsupported(a, "unknown instruction");
  return Errc::success;
}

}  // namespace cuda_shim::exec
