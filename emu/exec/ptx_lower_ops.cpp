// Lowering of the opcodes whose operands have shapes of their own: calls, loads and stores,
// atomics, asynchronous copies, moves (special registers, symbols, packing) and warp-level
// instructions.
#include <algorithm>

#include "exec/cmp.hpp"
#include "exec/interp.hpp"
#include "exec/ptx_lower_ctx.hpp"

namespace cuda_shim::exec {
namespace {

bool has(const ast::Insn& a, std::string_view m) { return std::find(a.mods.begin(), a.mods.end(), m) != a.mods.end(); }

int index_of(const std::vector<std::string_view>& rest, std::initializer_list<std::string_view> names) {
  int k = 0;
  for (auto n : names) {
    if (std::find(rest.begin(), rest.end(), n) != rest.end()) return k;
    ++k;
  }
  return -1;
}

}  // namespace

// call{.uni} [(rets),] func[, (args)][, prototype]
Errc Lowerer::call(const ast::Insn& a, Insn& i) {
  using K = ast::Operand::Kind;
  const auto& ops = a.ops;
  size_t k = 0;
  CallSite cs;
  const ast::Operand* rets = nullptr;
  const ast::Operand* args = nullptr;
  if (k < ops.size() && ops[k].kind == K::vec) rets = &ops[k++];
  if (k >= ops.size()) return bad(a.line, "call names no function");
  const ast::Operand& target = ops[k++];
  if (k < ops.size() && ops[k].kind == K::vec) args = &ops[k++];
  const Sym* fs = sym(target.name);
  if (fs && fs->func >= 0) {
    cs.callee = static_cast<uint32_t>(fs->func);
  } else if (!target.name.empty() && target.name[0] == '%') {
    cs.indirect = reg(target.name);
  } else {
    return bad(a.line, "call of '{}', which is not a function of the module", target.name);
  }
  auto place = [&](const ast::Operand* list, std::vector<uint32_t>& off, std::vector<uint32_t>& size) -> Errc {
    if (!list) return Errc::success;
    for (const ast::Operand& e : list->elems) {
      const Sym* s = sym(e.name);
      if (!s || !s->frame_rel) {
        unsupported(a, "call arguments must be .param variables");
        return Errc::invalid_ptx;
      }
      off.push_back(static_cast<uint32_t>(s->value));
      size.push_back(s->size);
    }
    return Errc::success;
  };
  if (place(rets, cs.ret_off, cs.ret_size) != Errc::success || place(args, cs.arg_off, cs.arg_size) != Errc::success) {
    clear_explanation();
    return Errc::success;
  }
  i.flow = Flow::call;
  i.target = static_cast<uint32_t>(p_.calls.size());
  p_.calls.push_back(std::move(cs));
  emit(i);
  return Errc::success;
}

// ld[.space][.vN].type d, [a]  /  st[.space][.vN].type [a], b
Errc Lowerer::memory(const ast::Insn& a, Insn& i, const Mods& m) {
  using K = ast::Operand::Kind;
  if (a.ops.size() < 2) return bad(a.line, "'{}' needs two operands", a.opcode);
  const bool load = a.opcode != "st";
  const ast::Operand& addr = load ? a.ops[1] : a.ops[0];
  const ast::Operand& val = load ? a.ops[0] : a.ops[1];
  Space implied;
  TRY(address(addr, i, implied, a.line));
  Space s = m.has_space ? m.space : Space::generic;
  if (s == Space::kparam) {
    if (implied == Space::fparam || (implied == Space::generic && !in_kernel_)) s = Space::fparam;
  } else if (s == Space::constant) {
    s = Space::global;  // constant banks are the module's variables, in device memory
  }
  if (implied == Space::fparam && s == Space::generic) s = Space::fparam;
  i.space = s;
  if (ty_bytes(i.ty) == 16 || i.ty == Ty::none) {
    unsupported(a, "128-bit or untyped accesses are not implemented");
    return Errc::success;
  }
  std::vector<const ast::Operand*> elems;
  if (val.kind == K::vec) {
    for (const auto& e : val.elems) elems.push_back(&e);
  } else {
    elems.push_back(&val);
  }
  if (elems.size() > 4 || elems.size() != i.vec) {
    if (!(elems.size() == 1 && i.vec == 1)) {
      unsupported(a, "vector width does not match its operands");
      return Errc::success;
    }
  }
  for (size_t k = 0; k < elems.size(); ++k) {
    if (load) i.op[k] = elems[k]->kind == K::sink ? kNone : reg(elems[k]->name);
    else TRY(value(*elems[k], i.ty, i.op[k], a.line));
  }
  i.fn = handler_of(load ? "ld" : "st", i);
  if (!i.fn) {
    unsupported(a, "this access is not implemented");
    return Errc::success;
  }
  emit(i);
  return Errc::success;
}

// atom[.space].op.type d, [a], b[, c]  /  red[.space].op.type [a], b
Errc Lowerer::atomic(const ast::Insn& a, Insn& i, const Mods& m) {
  const bool red = a.opcode == "red";
  const int op = index_of(m.rest, {".add", ".min", ".max", ".inc", ".dec", ".cas", ".exch", ".and", ".or", ".xor"});
  if (op < 0 || i.vec != 1) {
    unsupported(a, "this atomic operation is not implemented");
    return Errc::success;
  }
  i.mod = static_cast<uint8_t>(op);
  const size_t base = red ? 0 : 1;
  if (a.ops.size() < base + 2) return bad(a.line, "'{}' needs {} operands", a.opcode, base + 2);
  Space implied;
  i.mod2 = 0;
  TRY(address(a.ops[base], i, implied, a.line));
  i.space = m.has_space ? m.space : implied;
  if (i.space == Space::kparam || i.space == Space::fparam || i.space == Space::local) {
    unsupported(a, "atomics on this state space");
    return Errc::success;
  }
  i.op[0] = red ? kNone : reg(a.ops[0].name);
  TRY(value(a.ops[base + 1], i.ty, i.op[1], a.line));
  if (a.ops.size() > base + 2) TRY(value(a.ops[base + 2], i.ty, i.op[2], a.line));
  i.fn = handler_of("atom", i);
  if (!i.fn) {
    unsupported(a, "atomics of this type are not implemented");
    return Errc::success;
  }
  emit(i);
  return Errc::success;
}

// cp.async.{ca,cg}.shared.global [d], [s], size[, src-size]; commit_group/wait_group/wait_all.
Errc Lowerer::async_copy(const ast::Insn& a, Insn& i, const Mods&) {
  if (!has(a, ".async") || has(a, ".bulk") || has(a, ".mbarrier")) {
    unsupported(a, "this copy is not implemented");
    return Errc::success;
  }
  if (has(a, ".commit_group") || has(a, ".wait_group") || has(a, ".wait_all")) {
    i.fn = handler_of("cp_async_wait", i);  // copies complete when issued
    emit(i);
    return Errc::success;
  }
  if (a.ops.size() < 3) return bad(a.line, "cp.async needs three operands");
  Space implied;
  Insn src;
  TRY(address(a.ops[1], src, implied, a.line));
  TRY(address(a.ops[0], i, implied, a.line));
  i.op[5] = src.op[4] != kNone ? src.op[4] : constant(0);
  i.op[6] = constant(static_cast<uint64_t>(src.imm));
  if (a.ops[2].kind != ast::Operand::imm) return bad(a.line, "cp.async's size must be an immediate");
  i.mod2 = static_cast<uint8_t>(a.ops[2].bits);
  if (i.op[4] == kNone) i.op[4] = constant(0);
  if (a.ops.size() > 3 && a.ops[3].kind != ast::Operand::reg) {
    TRY(value(a.ops[3], Ty::u32, i.op[1], a.line));
  } else if (a.ops.size() > 3 && a.ops[3].name[0] == '%') {
    TRY(value(a.ops[3], Ty::u32, i.op[1], a.line));
  }
  i.fn = handler_of("cp_async", i);
  emit(i);
  return Errc::success;
}

// mov d, a: registers, immediates, special registers, symbols; packing and unpacking vectors.
Errc Lowerer::move(const ast::Insn& a, Insn& i) {
  using K = ast::Operand::Kind;
  if (a.ops.size() < 2) return bad(a.line, "mov needs two operands");
  const ast::Operand& d = a.ops[0];
  const ast::Operand& s = a.ops[1];
  if (d.kind == K::vec || s.kind == K::vec) {
    const ast::Operand& v = d.kind == K::vec ? d : s;
    const unsigned n = static_cast<unsigned>(v.elems.size());
    if (n < 2 || n > 4) return bad(a.line, "mov with a vector of {} elements", n);
    i.vec = static_cast<uint8_t>(n);
    i.imm = ty_bytes(i.ty) * 8 / n;
    if (d.kind == K::vec) {  // unpack
      for (unsigned k = 0; k < n; ++k) i.op[k] = v.elems[k].kind == K::sink ? kNone : reg(v.elems[k].name);
      TRY(value(s, i.ty, i.op[n], a.line));
      i.fn = handler_of("unpack", i);
    } else {
      i.op[0] = reg(d.name);
      for (unsigned k = 0; k < n; ++k) TRY(value(v.elems[k], Ty::b64, i.op[1 + k], a.line));
      i.fn = handler_of("pack", i);
    }
    emit(i);
    return Errc::success;
  }
  i.op[0] = reg(d.name);
  TRY(value(s, i.ty, i.op[1], a.line));
  i.fn = handler_of("mov", i);
  emit(i);
  return Errc::success;
}

Errc Lowerer::warp(const ast::Insn& a, Insn& i, const Mods& m) {
  const std::string_view op = a.opcode;
  const auto& ops = a.ops;
  if (op == "activemask") {
    if (ops.empty()) return bad(a.line, "activemask needs a destination");
    i.op[0] = reg(ops[0].name);
    i.fn = handler_of("activemask", i);
    emit(i);
    return Errc::success;
  }
  i.flow = Flow::warpsync;
  auto mask = [&](size_t k) -> Errc {
    if (m.sync && ops.size() > k) return value(ops[k], Ty::b32, i.op[5], a.line);
    return Errc::success;
  };
  if (op == "shfl") {
    const int mode = index_of(m.rest, {".up", ".down", ".bfly", ".idx"});
    if (mode < 0 || ops.size() < 4) return bad(a.line, "shfl needs a mode and four operands");
    i.mod = static_cast<uint8_t>(mode);
    i.op[0] = reg(ops[0].name);
    if (!ops[0].pair.empty()) i.op[4] = reg(ops[0].pair);
    for (size_t k = 1; k < 4; ++k) TRY(value(ops[k], Ty::b32, i.op[k], a.line));
    TRY(mask(4));
  } else if (op == "vote") {
    int mode = index_of(m.rest, {".all", ".any", ".uni", ".ballot"});
    if (mode < 0 && has(a, ".uni")) mode = 2;  // .uni is otherwise bra.uni's, which changes nothing
    if (mode < 0 || ops.size() < 2) return bad(a.line, "vote needs a mode and two operands");
    i.mod = static_cast<uint8_t>(mode);
    i.op[0] = reg(ops[0].name);
    TRY(value(ops[1], Ty::pred, i.op[1], a.line));
    if (ops[1].neg) i.mod2 |= kBoolNeg;
    TRY(mask(2));
  } else if (op == "match") {
    const int mode = index_of(m.rest, {".any", ".all"});
    if (mode < 0 || ops.size() < 2) return bad(a.line, "match needs a mode and two operands");
    i.mod = static_cast<uint8_t>(mode);
    i.op[0] = reg(ops[0].name);
    if (!ops[0].pair.empty()) i.op[4] = reg(ops[0].pair);
    TRY(value(ops[1], i.ty, i.op[1], a.line));
    TRY(mask(2));
  } else if (op == "redux") {
    const int mode = index_of(m.rest, {".add", ".min", ".max", ".and", ".or", ".xor"});
    if (mode < 0 || ops.size() < 2 || ty_float(i.ty)) {
      unsupported(a, "this reduction is not implemented");
      return Errc::success;
    }
    i.mod = static_cast<uint8_t>(mode);
    i.op[0] = reg(ops[0].name);
    TRY(value(ops[1], i.ty, i.op[1], a.line));
    TRY(mask(2));
  } else {  // elect.sync d|p, membermask
    if (ops.empty()) return bad(a.line, "elect needs operands");
    i.op[0] = ops[0].kind == ast::Operand::sink ? kNone : reg(ops[0].name);
    if (!ops[0].pair.empty()) i.op[4] = reg(ops[0].pair);
    TRY(mask(1));
  }
  i.fn = handler_of(op, i);
  if (!i.fn) {
    unsupported(a, "not implemented");
    return Errc::success;
  }
  emit(i);
  return Errc::success;
}

// bar.red.popc.u32 d, a{, b}, {!}c / bar.red.{and,or}.pred p, a{, b}, {!}c: the barrier (mod 2,
// its predicate in op[3]), then an instruction that reads the released result into d.
Errc Lowerer::barrier_reduction(const ast::Insn& a, Insn& i, const Mods& m) {
  const int op = index_of(m.rest, {".popc", ".and", ".or"});
  if (op < 0 || a.ops.size() < 3) return bad(a.line, "bar.red needs .popc, .and or .or and three operands");
  i.flow = Flow::bar;
  i.mod = 2;
  TRY(value(a.ops[1], Ty::b32, i.op[1], a.line));
  if (a.ops.size() > 3) TRY(value(a.ops[2], Ty::b32, i.op[2], a.line));
  const ast::Operand& c = a.ops.back();
  TRY(value(c, Ty::pred, i.op[3], a.line));
  if (c.neg) i.mod2 |= 4;
  emit(i);
  Insn r;
  r.line = a.line;
  r.opcode = i.opcode;
  r.guard = i.guard;
  r.guard_neg = i.guard_neg;
  r.op[0] = reg(a.ops[0].name);
  r.op[1] = i.op[1];
  r.mod = static_cast<uint8_t>(op);
  r.fn = handler_of("bar_red_result", r);
  emit(r);
  return Errc::success;
}

// slct.dtype.ctype d, a, b, c: a when c >= 0 (a signed integer, or a float: -0 counts, NaN does
// not), else b. Lowered as setp.ge on c into a temporary, then selp.
Errc Lowerer::select_sign(const ast::Insn& a, Insn& i, const Mods& m) {
  if (a.ops.size() < 4 || m.types.size() < 2) return bad(a.line, "slct needs two types and four operands");
  Insn t = i;
  t.ty = m.types[1];
  t.ty2 = Ty::none;
  t.mod = static_cast<uint8_t>(Cmp::ge);
  t.mod2 = 0;
  t.op[0] = temp();
  TRY(value(a.ops[3], t.ty, t.op[1], a.line));
  t.op[2] = constant(0);
  t.fn = handler_of("setp", t);
  if (!t.fn) {
    unsupported(a, "slct with this comparison type");
    return Errc::success;
  }
  emit(t);
  i.ty = m.types[0];
  i.flags = 0;
  i.op[0] = reg(a.ops[0].name);
  TRY(value(a.ops[1], i.ty, i.op[1], a.line));
  TRY(value(a.ops[2], i.ty, i.op[2], a.line));
  i.op[3] = t.op[0];
  i.fn = handler_of("selp", i);
  emit(i);
  return Errc::success;
}

}  // namespace cuda_shim::exec
