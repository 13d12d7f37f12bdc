// The PTX front end's first stage: text to a syntax tree (ptx_parse.cpp). It knows PTX's
// grammar (directives, declarations, labels, instructions with their dotted modifiers and
// operands) but not what instructions mean; ptx_lower.cpp gives them meaning.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim::exec::ast {

struct Operand {
  enum Kind : uint8_t { reg, imm, fimm32, fimm64, dimm, sym, addr, vec, sink } kind = reg;
  std::string_view name;     // reg / sym: the name (%r1, %tid.x, $L__BB0_2, param symbols)
  uint64_t bits = 0;         // imm: the integer (two's complement); fimm32/64: the bits
  double d = 0;              // dimm: a decimal floating literal
  int64_t off = 0;           // addr: [name + off]; sym: name + off
  bool neg = false;          // !%p (predicate operands of setp/selp/…)
  std::vector<Operand> elems;  // vec: {a, b, ...}; addr: base (one elem: reg or sym), or none
  std::string_view pair;     // d|p: the second destination (shfl, setp)
};

struct Insn {
  std::string_view guard;    // @%p / @!%p: the predicate, or empty
  bool guard_neg = false;
  std::string_view opcode;   // "ld"
  std::vector<std::string_view> mods;  // ".global", ".f32", ...
  std::vector<Operand> ops;
  uint32_t line = 0;
};

// .reg/.local/.shared/.const/.global/.param declarations.
struct Decl {
  std::string_view space;    // ".reg", ".shared", ...
  std::string_view type;     // ".b32"
  std::string_view name;
  uint32_t align = 0;
  uint32_t vec = 1;          // .v2/.v4
  int64_t count = -1;        // %r<6>: 6 registers %r0..%r5; -1: one
  uint64_t array = 0;        // name[N] elements (product of dimensions); 0: scalar
  bool unsized = false;      // name[]
  bool external = false;     // .extern
  std::vector<uint8_t> init; // initial bytes (module variables)
  std::vector<std::string_view> init_syms;  // initialisers naming symbols (generic addresses): unsupported
  uint32_t line = 0;
};

struct Item {
  enum Kind : uint8_t { instruction, label_def, declaration, open, close } kind = instruction;
  Insn in;
  Decl decl;
  std::string_view label;
};

struct Func {
  std::string_view name;
  bool kernel = false;
  bool external = false;  // a declaration only (.extern, or a prototype without a body)
  bool has_body = false;
  std::vector<Decl> params;
  std::vector<Decl> rets;
  std::vector<Item> body;
  uint32_t line = 0;
};

struct Module {
  int version = 0;  // major*10+minor
  int sm = 0;
  std::vector<Decl> vars;  // module-scope variables
  std::vector<Func> funcs;
};

// Parses PTX text (which must outlive the tree: names are views into it). Errors name the line.
Errc parse(std::string_view text, Module& out, const char* api);

}  // namespace cuda_shim::exec::ast
