// Lowering, structure and operands: module symbols (shared memory laid out module-wide, global
// and constant variables at the module's allocations), functions and their frames, registers,
// constants and addresses. Instructions are in ptx_lower_insn.cpp.
#include <algorithm>
#include <cstring>

#include "exec/builtins.hpp"
#include "exec/ptx_lower_ctx.hpp"

namespace cuda_shim::exec {

Ty type_of(std::string_view m) {
  static constexpr struct {
    std::string_view name;
    Ty ty;
  } kTypes[] = {
      {".pred", Ty::pred}, {".b8", Ty::b8},     {".b16", Ty::b16},       {".b32", Ty::b32},   {".b64", Ty::b64},
      {".b128", Ty::b128}, {".u8", Ty::u8},     {".u16", Ty::u16},       {".u32", Ty::u32},   {".u64", Ty::u64},
      {".s8", Ty::s8},     {".s16", Ty::s16},   {".s32", Ty::s32},       {".s64", Ty::s64},   {".f16", Ty::f16},
      {".f16x2", Ty::f16x2}, {".bf16", Ty::bf16}, {".bf16x2", Ty::bf16x2}, {".tf32", Ty::tf32}, {".f32", Ty::f32},
      {".f64", Ty::f64},   {".e4m3x2", Ty::e4m3x2}, {".e5m2x2", Ty::e5m2x2},
  };
  for (const auto& t : kTypes)
    if (t.name == m) return t.ty;
  return Ty::none;
}

unsigned ty_bytes(Ty t) noexcept {
  switch (t) {
    case Ty::pred: case Ty::b8: case Ty::u8: case Ty::s8: return 1;
    case Ty::b16: case Ty::u16: case Ty::s16: case Ty::f16: case Ty::bf16: case Ty::e4m3x2: case Ty::e5m2x2: return 2;
    case Ty::b32: case Ty::u32: case Ty::s32: case Ty::f32: case Ty::f16x2: case Ty::bf16x2: case Ty::tf32: return 4;
    case Ty::b64: case Ty::u64: case Ty::s64: case Ty::f64: return 8;
    case Ty::b128: return 16;
    default: return 0;
  }
}
bool ty_signed(Ty t) noexcept { return t == Ty::s8 || t == Ty::s16 || t == Ty::s32 || t == Ty::s64; }
bool ty_float(Ty t) noexcept { return t == Ty::f16 || t == Ty::bf16 || t == Ty::f32 || t == Ty::f64; }

namespace {

uint32_t decl_bytes(const ast::Decl& d) {
  unsigned n = 0;
  switch (type_of(d.type)) {
    case Ty::none: n = 1; break;
    default: n = ty_bytes(type_of(d.type)); break;
  }
  n *= d.vec;
  return static_cast<uint32_t>(d.array ? n * d.array : n);
}
uint32_t decl_align(const ast::Decl& d) {
  uint32_t a = d.align ? d.align : ty_bytes(type_of(d.type)) * d.vec;
  return a ? a : 1;
}
uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

}  // namespace

uint32_t Lowerer::constant(uint64_t bits) {
  auto it = const_index_.find(bits);
  if (it != const_index_.end()) return it->second;
  uint32_t i = static_cast<uint32_t>(p_.consts.size()) | kConst;
  p_.consts.push_back(bits);
  const_index_.emplace(bits, i);
  return i;
}

uint32_t Lowerer::reg(std::string_view name) {
  auto [it, fresh] = regs_.emplace(name, 0);
  if (fresh) it->second = fn_->nregs++;
  return it->second;
}

const Sym* Lowerer::sym(std::string_view name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    auto it = s->find(name);
    if (it != s->end()) return &it->second;
  }
  auto it = module_syms_.find(name);
  return it == module_syms_.end() ? nullptr : &it->second;
}

bool Lowerer::sreg_id(std::string_view n, Sreg& out) const {
  static constexpr struct {
    std::string_view name;
    Sreg id;
  } kRegs[] = {
      {"%tid.x", Sreg::tid_x}, {"%tid.y", Sreg::tid_y}, {"%tid.z", Sreg::tid_z}, {"%ntid.x", Sreg::ntid_x},
      {"%ntid.y", Sreg::ntid_y}, {"%ntid.z", Sreg::ntid_z}, {"%ctaid.x", Sreg::ctaid_x}, {"%ctaid.y", Sreg::ctaid_y},
      {"%ctaid.z", Sreg::ctaid_z}, {"%nctaid.x", Sreg::nctaid_x}, {"%nctaid.y", Sreg::nctaid_y},
      {"%nctaid.z", Sreg::nctaid_z}, {"%laneid", Sreg::laneid}, {"%warpid", Sreg::warpid}, {"%nwarpid", Sreg::nwarpid},
      {"%smid", Sreg::smid}, {"%nsmid", Sreg::nsmid}, {"%gridid", Sreg::gridid}, {"%clock", Sreg::clock},
      {"%clock_hi", Sreg::clock_hi}, {"%clock64", Sreg::clock64}, {"%globaltimer", Sreg::globaltimer},
      {"%globaltimer_lo", Sreg::globaltimer_lo}, {"%globaltimer_hi", Sreg::globaltimer_hi},
      {"%lanemask_eq", Sreg::lanemask_eq}, {"%lanemask_le", Sreg::lanemask_le}, {"%lanemask_lt", Sreg::lanemask_lt},
      {"%lanemask_ge", Sreg::lanemask_ge}, {"%lanemask_gt", Sreg::lanemask_gt},
      {"%dynamic_smem_size", Sreg::dynamic_smem_size}, {"%total_smem_size", Sreg::total_smem_size},
      {"%aggr_smem_size", Sreg::aggr_smem_size}, {"%cluster_ctarank", Sreg::cluster_ctarank},
      {"%cluster_nctarank", Sreg::cluster_nctarank}, {"%clusterid.x", Sreg::clusterid_x},
      {"%clusterid.y", Sreg::clusterid_y}, {"%clusterid.z", Sreg::clusterid_z}, {"%nclusterid.x", Sreg::nclusterid_x},
      {"%nclusterid.y", Sreg::nclusterid_y}, {"%nclusterid.z", Sreg::nclusterid_z},
      {"%cluster_ctaid.x", Sreg::cluster_ctaid_x}, {"%cluster_ctaid.y", Sreg::cluster_ctaid_y},
      {"%cluster_ctaid.z", Sreg::cluster_ctaid_z}, {"%cluster_nctaid.x", Sreg::cluster_nctaid_x},
      {"%cluster_nctaid.y", Sreg::cluster_nctaid_y}, {"%cluster_nctaid.z", Sreg::cluster_nctaid_z},
      {"%is_explicit_cluster", Sreg::is_explicit_cluster},
  };
  for (const auto& r : kRegs)
    if (r.name == n) {
      out = r.id;
      return true;
    }
  // %envreg1:%envreg2: the grid workspace of a cooperative launch (cooperative groups' grid sync).
  if (n == "%envreg1" || n == "%envreg2") {
    out = n == "%envreg1" ? Sreg::envreg1 : Sreg::envreg2;
    return true;
  }
  if (n.substr(0, 7) == "%envreg" || n.substr(0, 4) == "%pm") {
    out = Sreg::envreg;
    return true;
  }
  return false;
}

Errc Lowerer::value(const ast::Operand& o, Ty t, uint32_t& slot, uint32_t line) {
  using K = ast::Operand::Kind;
  switch (o.kind) {
    case K::reg: {
      Sreg sr;
      if (!o.name.empty() && o.name[0] == '%' && !regs_.count(o.name) && sreg_id(o.name, sr)) {
        Insn i;
        i.op[0] = slot = temp();
        i.mod = static_cast<uint8_t>(sr);
        i.line = line;
        if (sr == Sreg::envreg1 || sr == Sreg::envreg2) fn_->grid_ws = true;
        i.opcode = opcode_id_for("sreg");
        i.fn = handler_of("sreg", i);
        emit(i);
        return Errc::success;
      }
      if (o.name[0] != '%' && sym(o.name)) {
        ast::Operand so = o;
        so.kind = K::sym;
        return value(so, t, slot, line);
      }
      slot = reg(o.name);
      return Errc::success;
    }
    case K::sym: {
      const Sym* s = sym(o.name);
      if (!s) return bad(line, "'{}' is not declared", o.name);
      if (s->frame_rel) {
        Insn i;
        i.op[0] = slot = temp();
        i.imm = static_cast<int64_t>(s->value) + o.off;
        i.line = line;
        i.opcode = opcode_id_for("local_addr");
        i.fn = handler_of("local_addr", i);
        emit(i);
        return Errc::success;
      }
      uint64_t v = s->func >= 0 ? static_cast<uint64_t>(s->func) : s->value;
      if (s->dyn_shared) v = dyn_shared_base_;
      slot = constant(v + static_cast<uint64_t>(o.off));
      return Errc::success;
    }
    case K::imm: {
      uint64_t v = o.bits;
      if (t == Ty::f32) {  // an integer literal where a float is expected: its value
        float f = static_cast<float>(static_cast<int64_t>(v));
        uint32_t b;
        std::memcpy(&b, &f, 4);
        v = b;
      } else if (t == Ty::f64) {
        double d = static_cast<double>(static_cast<int64_t>(v));
        std::memcpy(&v, &d, 8);
      }
      slot = constant(v);
      return Errc::success;
    }
    case K::fimm32: {
      uint64_t v = o.bits;
      if (t == Ty::f64) {  // 0f literal in a double instruction: widen
        float f;
        uint32_t b = static_cast<uint32_t>(v);
        std::memcpy(&f, &b, 4);
        double d = f;
        std::memcpy(&v, &d, 8);
      }
      slot = constant(v);
      return Errc::success;
    }
    case K::fimm64: {
      uint64_t v = o.bits;
      if (t == Ty::f32) {
        double d;
        std::memcpy(&d, &v, 8);
        float f = static_cast<float>(d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        v = b;
      }
      slot = constant(v);
      return Errc::success;
    }
    case K::dimm: {
      uint64_t v;
      if (t == Ty::f32) {
        float f = static_cast<float>(o.d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        v = b;
      } else {
        std::memcpy(&v, &o.d, 8);
      }
      slot = constant(v);
      return Errc::success;
    }
    case K::sink:
      slot = temp();
      return Errc::success;
    default:
      return bad(line, "this operand cannot be a value");
  }
}

Errc Lowerer::address(const ast::Operand& o, Insn& out, Space& implied, uint32_t line) {
  implied = Space::generic;
  out.op[4] = kNone;
  out.imm = o.off;
  if (o.kind != ast::Operand::addr) return bad(line, "expected an address [..]");
  if (o.elems.empty()) return Errc::success;  // [immediate]
  const ast::Operand& b = o.elems[0];
  if (b.name[0] == '%' && !sym(b.name)) {
    out.op[4] = reg(b.name);
    return Errc::success;
  }
  const Sym* s = sym(b.name);
  if (!s) {
    if (b.name[0] != '%') return bad(line, "'{}' is not declared", b.name);
    out.op[4] = reg(b.name);
    return Errc::success;
  }
  implied = s->space;
  if (s->frame_rel) {
    out.mod2 |= 1;
    out.imm += static_cast<int64_t>(s->value);
  } else {
    out.imm += static_cast<int64_t>(s->dyn_shared ? dyn_shared_base_ : s->value);
  }
  return Errc::success;
}

uint32_t Lowerer::alloc_local(uint32_t size, uint32_t align) {
  local_top_ = align_up(local_top_, std::max<uint32_t>(align, 1));
  uint32_t at = local_top_;
  local_top_ += size;
  fn_->local_bytes = std::max(fn_->local_bytes, local_top_);
  return at;
}

// A declaration inside a function body.
Errc Lowerer::declare(const ast::Decl& d) {
  if (d.space == ".reg") return Errc::success;  // registers get slots on first use
  Sym s;
  s.size = decl_bytes(d);
  if (d.space == ".local" || d.space == ".param") {
    s.space = d.space == ".local" ? Space::local : Space::fparam;
    s.frame_rel = true;
    s.value = alloc_local(s.size, decl_align(d));
  } else if (d.space == ".shared") {
    s.space = Space::shared;
    if (d.external) {
      s.dyn_shared = true;
    } else {
      shared_top_ = align_up(shared_top_, decl_align(d));
      s.value = shared_top_;
      shared_top_ += s.size;
    }
  } else {
    return bad(d.line, "'{}' declares {} memory inside a function, which the engine does not support", d.name, d.space);
  }
  scopes_.back()[d.name] = s;
  return Errc::success;
}

Errc Lowerer::module_symbols() {
  // Shared variables first: their layout fixes where dynamic shared memory begins.
  for (const ast::Decl& d : m_.vars) {
    Sym s;
    s.size = decl_bytes(d);
    if (d.space == ".shared") {
      s.space = Space::shared;
      if (d.external) s.dyn_shared = true;
      else {
        shared_top_ = align_up(shared_top_, decl_align(d));
        s.value = shared_top_;
        shared_top_ += s.size;
      }
    } else if (d.space == ".global" || d.space == ".const") {
      s.space = d.space == ".global" ? Space::global : Space::constant;
      uint64_t a = 0;
      if (!globals_(std::string(d.name), std::max<uint64_t>(s.size, 1), d.init, a) && !d.external)
        return fail(Errc::invalid_ptx, "{}: PTX line {}: variable '{}' has no memory in the module", api_, d.line, d.name);
      s.value = a;
    } else {
      continue;  // .tex/.surfref/.samplerref: handles the engine does not use
    }
    module_syms_[d.name] = s;
  }
  for (uint32_t i = 0; i < p_.funcs.size(); ++i) {
    Sym s;
    s.func = static_cast<int>(i);
    module_syms_[p_.funcs[i].name] = s;
  }
  return Errc::success;
}

Errc Lowerer::function(const ast::Func& f, uint32_t index) {
  fn_ = &p_.funcs[index];
  in_kernel_ = f.kernel;
  regs_.clear();
  labels_.clear();
  fixups_.clear();
  scopes_.assign(1, {});
  local_top_ = 0;
  carry_ = kNone;
  fn_->begin = static_cast<uint32_t>(p_.code.size());
  // Parameters: a kernel's in its parameter buffer, a function's in its frame.
  uint32_t poff = 0;
  for (const ast::Decl& d : f.params) {
    Sym s;
    s.size = decl_bytes(d);
    if (f.kernel) {
      poff = align_up(poff, decl_align(d));
      s.space = Space::kparam;
      s.value = poff;
      poff += s.size;
    } else {
      s.space = Space::fparam;
      s.frame_rel = true;
      s.value = alloc_local(s.size, std::max<uint32_t>(decl_align(d), 8));
      fn_->param_off.push_back(static_cast<uint32_t>(s.value));
      fn_->param_size.push_back(s.size);
    }
    scopes_[0][d.name] = s;
  }
  fn_->param_bytes = poff;
  for (const ast::Decl& d : f.rets) {
    Sym s;
    s.size = decl_bytes(d);
    s.space = Space::fparam;
    s.frame_rel = true;
    s.value = alloc_local(s.size, std::max<uint32_t>(decl_align(d), 8));
    fn_->ret_off.push_back(static_cast<uint32_t>(s.value));
    fn_->ret_size.push_back(s.size);
    scopes_[0][d.name] = s;
  }
  // Branches name labels before or after them: fixed up once the body is lowered.
  for (const ast::Item& it : f.body) {
    switch (it.kind) {
      case ast::Item::label_def:
        labels_[it.label] = static_cast<uint32_t>(p_.code.size());
        break;
      case ast::Item::declaration:
        TRY(declare(it.decl));
        break;
      case ast::Item::open:
        scopes_.emplace_back();
        scope_local_.push_back(local_top_);
        break;
      case ast::Item::close:
        if (scopes_.size() > 1) {
          scopes_.pop_back();
          local_top_ = scope_local_.back();  // the scope's locals are dead: reuse their bytes
          scope_local_.pop_back();
        }
        break;
      case ast::Item::instruction:
        TRY(insn(it.in));
        break;
    }
  }
  // Falling off the end returns.
  Insn r;
  r.flow = Flow::ret;
  r.line = f.body.empty() ? f.line : f.body.back().in.line;
  r.opcode = opcode_id_for("ret");
  emit(r);
  for (auto& [pc, name] : fixups_) {
    auto it = labels_.find(name);
    if (it == labels_.end()) return bad(p_.code[pc].line, "branch to '{}', which is not a label of '{}'", name, f.name);
    p_.code[pc].target = it->second;
  }
  fn_->end = static_cast<uint32_t>(p_.code.size());
  return Errc::success;
}

Errc Lowerer::run() {
  // One Func per name; a definition wins over its prototypes.
  std::unordered_map<std::string_view, uint32_t> index;
  std::vector<const ast::Func*> bodies;
  for (const ast::Func& f : m_.funcs) {
    auto [it, fresh] = index.emplace(f.name, static_cast<uint32_t>(p_.funcs.size()));
    if (fresh) {
      Func fn;
      fn.name = std::string(f.name);
      fn.kernel = f.kernel;
      fn.external = !f.has_body;
      fn.builtin = f.has_body ? kNoBuiltin : builtin_for(fn.name);
      p_.funcs.push_back(std::move(fn));
      bodies.push_back(f.has_body ? &f : nullptr);
    } else if (f.has_body) {
      if (bodies[it->second]) return fail(Errc::invalid_ptx, "{}: PTX line {}: '{}' is defined twice", api_, f.line, f.name);
      bodies[it->second] = &f;
      p_.funcs[it->second].external = false;
      p_.funcs[it->second].builtin = kNoBuiltin;
      p_.funcs[it->second].kernel = f.kernel;
    }
  }
  TRY(module_symbols());
  // Every function's shared variables are laid out module-wide; dynamic shared memory follows all
  // of them, so its base is known only after the bodies: lower twice when a body declares some.
  const uint32_t module_shared = shared_top_;
  dyn_shared_base_ = align_up(module_shared, 16);
  for (uint32_t i = 0; i < p_.funcs.size(); ++i) {
    if (!bodies[i]) continue;
    const ast::Func& f = *bodies[i];
    // A body's own shared variables: count them first so the dynamic base stays fixed.
    for (const ast::Item& it : f.body)
      if (it.kind == ast::Item::declaration && it.decl.space == ".shared" && !it.decl.external) {
        shared_top_ = align_up(shared_top_, decl_align(it.decl)) + decl_bytes(it.decl);
      }
  }
  dyn_shared_base_ = align_up(shared_top_, 16);
  shared_top_ = module_shared;
  for (uint32_t i = 0; i < p_.funcs.size(); ++i)
    if (bodies[i]) TRY(function(*bodies[i], i));
  p_.shared_bytes = dyn_shared_base_;
  for (Func& f : p_.funcs) f.shared_bytes = dyn_shared_base_;
  return Errc::success;
}

Errc lower(const ast::Module& m, const GlobalAddress& globals, Program& out, const char* api) {
  Lowerer l(m, globals, out, api);
  return l.run();
}

Errc compile(std::string_view ptx, const GlobalAddress& globals, Program& out, const char* api) {
  ast::Module m;
  TRY(ast::parse(ptx, m, api));
  return lower(m, globals, out, api);
}

}  // namespace cuda_shim::exec
