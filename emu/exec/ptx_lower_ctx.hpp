// The lowering's state while it walks one function (ptx_lower.cpp: structure and operands;
// ptx_lower_insn.cpp: instructions).
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exec/ir.hpp"
#include "exec/ptx_ast.hpp"
#include "exec/ptx_lower.hpp"

namespace cuda_shim::exec {

// What a name means in an operand.
struct Sym {
  Space space = Space::global;
  uint64_t value = 0;       // address (global), offset (shared, kparam), frame offset (local, fparam)
  uint32_t size = 0;
  bool frame_rel = false;   // value is relative to the frame's local stack base
  bool dyn_shared = false;  // .extern .shared x[]: the dynamic shared memory
  int func = -1;            // a function's index
};

// The decoded modifiers of one instruction.
struct Mods {
  std::vector<Ty> types;
  Space space = Space::generic;
  bool has_space = false;
  uint8_t vec = 1;
  uint8_t rnd = 0;
  uint8_t flags = 0;
  bool to = false;         // cvta.to
  bool cc = false;         // .cc (carry out)
  bool sync = false;
  std::vector<std::string_view> rest;  // what the opcode itself interprets (.eq, .add, .down, ...)
};

class Lowerer {
 public:
  Lowerer(const ast::Module& m, const GlobalAddress& g, Program& p, const char* api) : m_(m), globals_(g), p_(p), api_(api) {}
  Errc run();

  // ptx_lower_insn.cpp
  Errc insn(const ast::Insn& in);
  // ptx_lower_ops.cpp: the opcodes with operand shapes of their own.
  Errc call(const ast::Insn& a, Insn& i);
  Errc memory(const ast::Insn& a, Insn& i, const Mods& m);
  Errc atomic(const ast::Insn& a, Insn& i, const Mods& m);
  Errc async_copy(const ast::Insn& a, Insn& i, const Mods& m);
  Errc move(const ast::Insn& a, Insn& i);
  Errc warp(const ast::Insn& a, Insn& i, const Mods& m);
  Errc barrier_reduction(const ast::Insn& a, Insn& i, const Mods& m);
  Errc select_sign(const ast::Insn& a, Insn& i, const Mods& m);
  Errc texture(const ast::Insn& a, Insn& i, const Mods& m);  // tex, tld4, txq, suld, sust

 private:
  friend struct InsnLowering;
  Errc module_symbols();
  Errc function(const ast::Func& f, uint32_t index);
  Errc declare(const ast::Decl& d);
  uint32_t alloc_local(uint32_t size, uint32_t align);

 public:
  // Operands.
  uint32_t reg(std::string_view name);
  uint32_t constant(uint64_t bits);
  uint32_t temp() { return fn_->nregs++; }
  const Sym* sym(std::string_view name) const;
  bool sreg_id(std::string_view name, Sreg& out) const;
  // A value operand for an instruction of type t: a slot (emitting a helper instruction for
  // special registers and frame-relative symbols). kNone with the error recorded on failure.
  Errc value(const ast::Operand& o, Ty t, uint32_t& slot, uint32_t line);
  // An address operand: base slot (or kNone), offset, frame-relative flag, and the space its
  // symbol implies (generic when none).
  Errc address(const ast::Operand& o, Insn& out, Space& implied, uint32_t line);
  Errc decode(const ast::Insn& in, Mods& m, uint32_t line);
  uint16_t opcode_id(const ast::Insn& in);
  uint16_t opcode_id_for(std::string_view text);
  // The handler of the family that knows `op` (ops_*.cpp), or null.
  static Handler handler_of(std::string_view op, Insn& i);
  void emit(Insn i) { p_.code.push_back(i); }
  void unsupported(const ast::Insn& in, const char* why);
  template <class... A>
  Errc bad(uint32_t line, fmt::format_string<A...> f, A&&... a) {
    return fail(Errc::invalid_ptx, "{}: PTX line {}: {}", api_, line, fmt::format(f, std::forward<A>(a)...));
  }

  const ast::Module& m_;
  const GlobalAddress& globals_;
  Program& p_;
  const char* api_;
  Func* fn_ = nullptr;
  bool in_kernel_ = false;
  std::unordered_map<std::string_view, Sym> module_syms_;
  std::vector<std::unordered_map<std::string_view, Sym>> scopes_;  // function body, then nested { }
  std::vector<uint32_t> scope_local_;  // local stack top at each scope's opening
  std::unordered_map<std::string_view, uint32_t> regs_;
  std::unordered_map<std::string_view, uint32_t> labels_;
  std::vector<std::pair<uint32_t, std::string_view>> fixups_;  // branch pc, label
  std::unordered_map<uint64_t, uint32_t> const_index_;
  std::unordered_map<std::string, uint16_t> opcode_ids_;
  uint32_t local_top_ = 0;
  uint32_t carry_ = kNone;  // the frame's CC.CF slot
  uint32_t shared_top_ = 0;
  uint32_t dyn_shared_base_ = 0;
};

Ty type_of(std::string_view mod);

}  // namespace cuda_shim::exec
