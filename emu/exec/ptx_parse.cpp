// PTX text to the syntax tree of ptx_ast.hpp. A hand-written recursive-descent reader over a
// small tokenizer: names keep their dots apart from modifiers the way PTX spells them
// (`ld.global.f32`: opcode `ld`, modifiers `.global` `.f32`), and every error names its line.
#include <cstdlib>
#include <cstring>

#include "exec/ptx_ast.hpp"

namespace cuda_shim::exec::ast {
namespace {

enum class T : uint8_t { end, ident, dot, num, str, punct };

struct Tok {
  T kind = T::end;
  std::string_view text;
  uint32_t line = 0;
};

bool id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%'; }
bool id_char(char c) { return id_start(c) || (c >= '0' && c <= '9'); }
bool dec(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  Tok next() {
    skip();
    Tok t;
    t.line = line_;
    if (i_ >= s_.size()) return t;
    size_t b = i_;
    char c = s_[i_];
    // Texture and surface geometries (.1d, .2d, .3d) are modifiers that start with a digit.
    const bool geometry = c == '.' && i_ + 2 < s_.size() && s_[i_ + 1] >= '1' && s_[i_ + 1] <= '3' &&
                          s_[i_ + 2] == 'd' && (i_ + 3 >= s_.size() || !id_char(s_[i_ + 3]));
    if (geometry || (c == '.' && i_ + 1 < s_.size() && id_start(s_[i_ + 1]))) {
      ++i_;
      while (i_ < s_.size() && id_char(s_[i_])) ++i_;
      // .shared::cta, .L2::cache_hint, .L2::128B: one modifier.
      while (i_ + 2 < s_.size() && s_[i_] == ':' && s_[i_ + 1] == ':' && id_char(s_[i_ + 2])) {
        i_ += 2;
        while (i_ < s_.size() && id_char(s_[i_])) ++i_;
      }
      t.kind = T::dot;
    } else if (id_start(c)) {
      while (i_ < s_.size() && id_char(s_[i_])) ++i_;
      // Special registers and vector fields spell with a dot: %tid.x, %ctaid.y, %envreg3.
      if (c == '%' && i_ + 1 < s_.size() && s_[i_] == '.' && is_field(s_[i_ + 1]) &&
          (i_ + 2 >= s_.size() || !id_char(s_[i_ + 2])))
        i_ += 2;
      t.kind = T::ident;
    } else if (dec(c) || ((c == '-' || c == '+') && i_ + 1 < s_.size() && dec(s_[i_ + 1]) && number_ok())) {
      ++i_;
      while (i_ < s_.size() && (id_char(s_[i_]) || s_[i_] == '.' ||
                                ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E') &&
                                 !hex_literal(b))))
        ++i_;
      t.kind = T::num;
    } else if (c == '"') {
      ++i_;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
      ++i_;
      t.kind = T::str;
    } else {
      ++i_;
      t.kind = T::punct;
    }
    t.text = s_.substr(b, i_ - b);
    last_ = t.kind;
    last_text_ = t.text;
    return t;
  }

 private:
  static bool is_field(char c) { return c == 'x' || c == 'y' || c == 'z' || c == 'w'; }
  // A sign belongs to a number only where an operand may start (after , [ { ( = or +).
  bool number_ok() const {
    if (last_ != T::punct) return last_ == T::end;
    char p = last_text_.empty() ? 0 : last_text_[0];
    return p == ',' || p == '[' || p == '{' || p == '(' || p == '=' || p == '+';
  }
  bool hex_literal(size_t b) const {
    size_t k = b + ((s_[b] == '-' || s_[b] == '+') ? 1 : 0);
    return k + 1 < s_.size() && s_[k] == '0' &&
           (s_[k + 1] == 'x' || s_[k + 1] == 'X' || s_[k + 1] == 'f' || s_[k + 1] == 'F' || s_[k + 1] == 'd' ||
            s_[k + 1] == 'D');
  }
  void skip() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\0') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        i_ += 2;
        while (i_ + 1 < s_.size() && !(s_[i_] == '*' && s_[i_ + 1] == '/')) {
          if (s_[i_] == '\n') ++line_;
          ++i_;
        }
        i_ += 2;
      } else {
        break;
      }
    }
  }
  std::string_view s_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  T last_ = T::end;
  std::string_view last_text_;
};

// Integer literal: decimal, 0x hex, 0 octal, 0b binary, optional U suffix, optional sign.
bool int_literal(std::string_view t, uint64_t& out) {
  bool neg = false;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) {
    neg = t[0] == '-';
    t.remove_prefix(1);
  }
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.remove_suffix(1);
  if (t.empty()) return false;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
  else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) base = 2, t.remove_prefix(2);
  else if (t.size() > 1 && t[0] == '0') base = 8, t.remove_prefix(1);
  uint64_t v = 0;
  for (char c : t) {
    int d = dec(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : 99;
    if (d >= base) return false;
    v = v * base + static_cast<uint64_t>(d);
  }
  out = neg ? ~v + 1 : v;
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, const char* api) : lex_(text), api_(api) { advance(); }
  Errc run(Module& m);

 private:
  void advance() {
    cur_ = peek_valid_ ? peek_ : lex_.next();
    peek_valid_ = false;
  }
  const Tok& peek() {
    if (!peek_valid_) peek_ = lex_.next(), peek_valid_ = true;
    return peek_;
  }
  bool is(char c) const { return cur_.kind == T::punct && cur_.text[0] == c; }
  bool is(std::string_view d) const { return cur_.text == d && cur_.kind != T::str; }
  template <class... A>
  Errc bad(fmt::format_string<A...> f, A&&... a) {
    return fail(Errc::invalid_ptx, "{}: PTX line {}: {}", api_, cur_.line, fmt::format(f, std::forward<A>(a)...));
  }
  Errc expect(char c) {
    if (!is(c)) return bad("expected '{}', found '{}'", c, cur_.text);
    advance();
    return Errc::success;
  }
  Errc number(uint64_t& v) {
    if (cur_.kind != T::num || !int_literal(cur_.text, v)) return bad("expected an integer, found '{}'", cur_.text);
    advance();
    return Errc::success;
  }
  Errc skip_statement();
  // .loc and .file end at the line's end, not at a ';'.
  void skip_line() {
    uint32_t l = cur_.line;
    while (cur_.kind != T::end && cur_.line == l) advance();
  }
  void skip_block() {
    int depth = 0;
    do {
      if (is('{')) ++depth;
      if (is('}')) --depth;
      advance();
    } while (depth > 0 && cur_.kind != T::end);
  }
  Errc decl(Decl& d, bool allow_init);
  Errc declared_name(Decl& d);
  Errc initializer(Decl& d);
  Errc func(Module& m, bool kernel, bool external);
  Errc param_list(std::vector<Decl>& out);
  Errc body(Func& f);
  Errc instruction(Insn& in);
  Errc operand(Operand& o, bool in_addr = false);
  Errc address(Operand& o);

  Lexer lex_;
  const char* api_;
  Tok cur_, peek_;
  bool peek_valid_ = false;
};

Errc Parser::skip_statement() {
  while (cur_.kind != T::end && !is(';')) advance();
  if (cur_.kind == T::end) return bad("unexpected end of text");
  advance();
  return Errc::success;
}

// name[<N>][[N]...]: a declaration's name, register count and array dimensions.
Errc Parser::declared_name(Decl& d) {
  if (cur_.kind != T::ident) return bad("expected a name in a declaration, found '{}'", cur_.text);
  d.name = cur_.text;
  advance();
  if (is('<')) {
    advance();
    uint64_t n;
    TRY(number(n));
    d.count = static_cast<int64_t>(n);
    TRY(expect('>'));
  }
  while (is('[')) {
    advance();
    if (is(']')) {
      d.unsized = true;
      advance();
      continue;
    }
    uint64_t n;
    TRY(number(n));
    d.array = d.array ? d.array * n : n;
    TRY(expect(']'));
  }
  return Errc::success;
}

// [.extern|.visible|.weak] .space [.align N] [.vN] .type name[<N>][[N]...] [= init] ;
Errc Parser::decl(Decl& d, bool allow_init) {
  d.line = cur_.line;
  for (;;) {
    if (cur_.kind != T::dot) break;
    std::string_view t = cur_.text;
    if (t == ".extern") {
      d.external = true;
    } else if (t == ".visible" || t == ".weak" || t == ".common") {
    } else if (t == ".align") {
      advance();
      uint64_t a;
      TRY(number(a));
      d.align = static_cast<uint32_t>(a);
      continue;
    } else if (t == ".v2" || t == ".v4" || t == ".v8") {
      d.vec = static_cast<uint32_t>(t[2] - '0');
    } else if (t == ".reg" || t == ".shared" || t == ".local" || t == ".global" || t == ".const" || t == ".param" ||
               t == ".tex") {
      d.space = t;
    } else if (t == ".ptr") {
    } else if (t.substr(0, 3) == ".sh" || t == ".attribute" || t == ".managed" || t == ".unified") {
      // .param .ptr .shared .align 4 / .attribute(.managed): qualifiers of a parameter or variable
      if (t == ".attribute") {
        advance();
        while (cur_.kind != T::end && !is(')')) advance();
      }
    } else {
      d.type = t;
    }
    advance();
  }
  TRY(declared_name(d));
  if (is('=')) {
    if (!allow_init) return bad("'{}' may not have an initializer here", d.name);
    advance();
    TRY(initializer(d));
  }
  return Errc::success;
}

unsigned type_size(std::string_view t) {
  if (t == ".b8" || t == ".u8" || t == ".s8" || t == ".pred") return 1;
  if (t == ".b16" || t == ".u16" || t == ".s16" || t == ".f16" || t == ".bf16") return 2;
  if (t == ".b32" || t == ".u32" || t == ".s32" || t == ".f32" || t == ".f16x2" || t == ".bf16x2") return 4;
  if (t == ".b64" || t == ".u64" || t == ".s64" || t == ".f64") return 8;
  if (t == ".b128") return 16;
  return 0;
}

// = value | {v, v, {..}, ...}: flattened into bytes of the declared type.
Errc Parser::initializer(Decl& d) {
  const unsigned size = type_size(d.type);
  if (!size) return bad("variable '{}' of type '{}' cannot be initialised here", d.name, d.type);
  auto leaf = [&]() -> Errc {
    uint64_t v = 0;
    if (cur_.kind == T::ident) {  // a symbol's address: generic addresses the engine does not relocate
      d.init_syms.push_back(cur_.text);
      advance();
      if (is('+')) {
        advance();
        TRY(number(v));
      }
      v = 0;
    } else if (cur_.kind == T::num) {
      std::string_view t = cur_.text;
      if (t.size() > 2 && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D') && t[0] == '0') {
        v = std::strtoull(std::string(t.substr(2)).c_str(), nullptr, 16);
      } else if (t.find_first_of(".eE") != std::string_view::npos && t.substr(0, 2) != "0x") {
        double x = std::strtod(std::string(t).c_str(), nullptr);
        if (d.type == ".f32") {
          float f = static_cast<float>(x);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          v = b;
        } else {
          std::memcpy(&v, &x, 8);
        }
      } else if (!int_literal(t, v)) {
        return bad("'{}' is not a number", t);
      }
      advance();
    } else {
      return bad("unexpected '{}' in the initializer of '{}'", cur_.text, d.name);
    }
    size_t at = d.init.size();
    d.init.resize(at + size);
    std::memcpy(d.init.data() + at, &v, size);
    return Errc::success;
  };
  int depth = 0;
  do {
    while (is('{')) ++depth, advance();
    TRY(leaf());
    while (is('}') && depth > 0) --depth, advance();
    if (is(',')) advance();
    else if (depth > 0 && !is('}')) return bad("expected ',' or '}}' in the initializer of '{}'", d.name);
  } while (depth > 0 && cur_.kind != T::end);
  return Errc::success;
}

// ( .param .b64 a, .param .align 8 .b8 b[16] )
Errc Parser::param_list(std::vector<Decl>& out) {
  TRY(expect('('));
  while (!is(')')) {
    Decl d;
    TRY(decl(d, false));
    out.push_back(std::move(d));
    if (is(',')) advance();
    else if (!is(')')) return bad("expected ',' or ')' in a parameter list, found '{}'", cur_.text);
  }
  advance();
  return Errc::success;
}

Errc Parser::func(Module& m, bool kernel, bool external) {
  Func f;
  f.kernel = kernel;
  f.external = external;
  f.line = cur_.line;
  advance();  // .entry / .func
  if (!kernel && is('(')) TRY(param_list(f.rets));
  if (cur_.kind != T::ident) return bad("expected a function name, found '{}'", cur_.text);
  f.name = cur_.text;
  advance();
  if (is('(')) TRY(param_list(f.params));
  // Performance directives (.maxntid 256, 1, 1 / .reqntid / .minnctapersm / .noreturn / .pragma ...)
  while (cur_.kind == T::dot || (cur_.kind == T::num) || is(',')) advance();
  if (is(';')) {
    advance();
    f.external = true;
    m.funcs.push_back(std::move(f));
    return Errc::success;
  }
  if (!is('{')) return bad("expected '{{' or ';' after function '{}', found '{}'", f.name, cur_.text);
  f.has_body = true;
  advance();
  TRY(body(f));
  m.funcs.push_back(std::move(f));
  return Errc::success;
}

Errc Parser::body(Func& f) {
  int depth = 1;
  while (depth > 0) {
    if (cur_.kind == T::end) return bad("function '{}' has no closing '}}'", f.name);
    Item it;
    if (is('{')) {
      ++depth;
      it.kind = Item::open;
      advance();
    } else if (is('}')) {
      if (--depth == 0) {
        advance();
        break;
      }
      it.kind = Item::close;
      advance();
    } else if (cur_.kind == T::ident && peek().kind == T::punct && peek().text[0] == ':') {
      it.kind = Item::label_def;
      it.label = cur_.text;
      advance();
      advance();
    } else if (cur_.kind == T::dot && (is(".reg") || is(".local") || is(".shared") || is(".param") || is(".const") ||
                                       is(".global"))) {
      it.kind = Item::declaration;
      TRY(decl(it.decl, true));
      // .reg .b32 a, b, c;
      while (is(',')) {
        advance();
        f.body.push_back(it);
        Decl d;
        d.space = it.decl.space, d.type = it.decl.type, d.align = it.decl.align, d.vec = it.decl.vec, d.line = cur_.line;
        TRY(declared_name(d));
        it.decl = d;
      }
      TRY(expect(';'));
    } else if (is(".loc") || is(".file")) {
      skip_line();
      continue;
    } else if (cur_.kind == T::dot) {
      TRY(skip_statement());  // .pragma, .maxnreg inside a body
      continue;
    } else {
      it.kind = Item::instruction;
      TRY(instruction(it.in));
    }
    f.body.push_back(std::move(it));
  }
  return Errc::success;
}

Errc Parser::instruction(Insn& in) {
  in.line = cur_.line;
  if (is('@')) {
    advance();
    if (is('!')) in.guard_neg = true, advance();
    if (cur_.kind != T::ident) return bad("expected a predicate after '@', found '{}'", cur_.text);
    in.guard = cur_.text;
    advance();
  }
  if (cur_.kind != T::ident) return bad("expected an instruction, found '{}'", cur_.text);
  in.opcode = cur_.text;
  advance();
  while (cur_.kind == T::dot) {
    in.mods.push_back(cur_.text);
    advance();
  }
  // call (ret), func, (args) / call func, (args) — parenthesised lists become vec operands.
  while (!is(';')) {
    if (cur_.kind == T::end) return bad("'{}' has no ';'", in.opcode);
    Operand o;
    if (is('(')) {
      advance();
      o.kind = Operand::vec;
      while (!is(')')) {
        Operand e;
        TRY(operand(e));
        o.elems.push_back(std::move(e));
        if (is(',')) advance();
        else if (!is(')')) return bad("expected ',' or ')' in '{}', found '{}'", in.opcode, cur_.text);
      }
      advance();
    } else {
      TRY(operand(o));
    }
    in.ops.push_back(std::move(o));
    if (is(',')) advance();
    else if (!is(';')) return bad("expected ',' or ';' after an operand of '{}', found '{}'", in.opcode, cur_.text);
  }
  advance();
  return Errc::success;
}

Errc Parser::address(Operand& o) {
  o.kind = Operand::addr;
  advance();  // [
  if (cur_.kind == T::ident) {
    Operand b;
    b.kind = Operand::reg;
    b.name = cur_.text;
    advance();
    o.elems.push_back(b);
    // [tex, {x, y}] / [surf, {x, y}]: the texture or surface and its coordinates, a second element.
    if (is(',')) {
      advance();
      Operand c;
      TRY(operand(c, false));
      o.elems.push_back(std::move(c));
    }
  }
  while (is('+') || is('-') || cur_.kind == T::num) {
    bool minus = is('-');
    if (cur_.kind == T::punct) advance();
    uint64_t v;
    TRY(number(v));
    o.off += minus ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }
  return expect(']');
}

Errc Parser::operand(Operand& o, bool) {
  if (is('[')) return address(o);
  if (is('{')) {
    advance();
    o.kind = Operand::vec;
    while (!is('}')) {
      Operand e;
      TRY(operand(e));
      o.elems.push_back(std::move(e));
      if (is(',')) advance();
      else if (!is('}')) return bad("expected ',' or '}}' in a vector operand, found '{}'", cur_.text);
    }
    advance();
    return Errc::success;
  }
  if (is('!')) {
    advance();
    o.neg = true;
  }
  if (is('-') && peek().kind == T::ident) {  // -%r1 is not PTX; keep the error clear
    return bad("a register cannot be negated in an operand");
  }
  if (cur_.kind == T::ident) {
    o.kind = cur_.text == "_" ? Operand::sink : Operand::reg;
    o.name = cur_.text;
    advance();
    if (is('|')) {
      advance();
      if (cur_.kind != T::ident) return bad("expected a predicate after '|', found '{}'", cur_.text);
      o.pair = cur_.text;
      advance();
    }
    if (is('+') && peek().kind == T::num) {  // symbol + offset
      advance();
      uint64_t v;
      TRY(number(v));
      o.kind = Operand::sym;
      o.off = static_cast<int64_t>(v);
    }
    return Errc::success;
  }
  // A sign the lexer kept apart (right after the opcode: `bar.warp.sync -1;`, as CuPy's
  // kernels write it) belongs to the number.
  std::string signed_text;
  if (is('-') && peek().kind == T::num && cur_.text.size() == 1) {
    advance();
    signed_text = "-" + std::string(cur_.text);
  }
  if (cur_.kind == T::num) {
    std::string_view t = signed_text.empty() ? cur_.text : std::string_view(signed_text);
    std::string_view u = (t[0] == '-' || t[0] == '+') ? t.substr(1) : t;
    bool neg = t[0] == '-';
    if (u.size() > 2 && u[0] == '0' && (u[1] == 'f' || u[1] == 'F' || u[1] == 'd' || u[1] == 'D')) {
      bool f32 = u[1] == 'f' || u[1] == 'F';
      uint64_t v = std::strtoull(std::string(u.substr(2)).c_str(), nullptr, 16);
      if (neg) v ^= f32 ? 0x80000000ull : 0x8000000000000000ull;
      o.kind = f32 ? Operand::fimm32 : Operand::fimm64;
      o.bits = v;
    } else if (u.find_first_of(".eE") != std::string_view::npos && !(u.size() > 1 && (u[1] == 'x' || u[1] == 'X'))) {
      o.kind = Operand::dimm;
      o.d = std::strtod(std::string(t).c_str(), nullptr);
    } else {
      o.kind = Operand::imm;
      if (!int_literal(t, o.bits)) return bad("'{}' is not a number", t);
    }
    advance();
    return Errc::success;
  }
  return bad("unexpected '{}' where an operand belongs", cur_.text);
}

Errc Parser::run(Module& m) {
  while (cur_.kind != T::end) {
    if (is(".version")) {
      advance();
      std::string_view t = cur_.text;
      size_t dot = t.find('.');
      m.version = std::atoi(std::string(t.substr(0, dot)).c_str()) * 10 +
                  (dot == std::string_view::npos ? 0 : std::atoi(std::string(t.substr(dot + 1)).c_str()));
      advance();
    } else if (is(".target")) {
      advance();
      if (cur_.text.substr(0, 3) == "sm_") m.sm = std::atoi(std::string(cur_.text.substr(3)).c_str());
      while (cur_.kind != T::end && (cur_.kind == T::ident || is(','))) advance();
    } else if (is(".address_size")) {
      advance();
      uint64_t v;
      TRY(number(v));
      if (v != 64) return bad(".address_size {}: only 64-bit PTX is supported", v);
    } else if (is(".loc") || is(".file")) {
      skip_line();
    } else if (is(".section")) {  // debug information: .section .debug_info { ... }
      advance();
      advance();
      if (is('{')) skip_block();
    } else if (cur_.kind == T::dot) {
      // Linkage and then .entry/.func, or a variable.
      bool external = false;
      Tok first = cur_;
      while (is(".visible") || is(".extern") || is(".weak") || is(".common")) {
        if (is(".extern")) external = true;
        advance();
      }
      if (is(".entry") || is(".func")) {
        TRY(func(m, is(".entry"), external));
      } else if (is(".global") || is(".shared") || is(".const") || is(".local") || is(".tex") || is(".surfref") ||
                 is(".texref") || is(".samplerref")) {
        Decl d;
        d.external = external;
        TRY(decl(d, true));
        TRY(expect(';'));
        m.vars.push_back(std::move(d));
      } else {
        (void)first;
        TRY(skip_statement());  // .file, .section (debug info), .pragma, .alias ...
      }
    } else if (is('{')) {  // a stray block: skip it whole
      skip_block();
    } else {
      return bad("unexpected '{}' at module scope", cur_.text);
    }
  }
  if (!m.version) return fail(Errc::invalid_ptx, "{}: PTX has no .version directive", api_);
  return Errc::success;
}

}  // namespace

Errc parse(std::string_view text, Module& out, const char* api) {
  Parser p(text, api);
  return p.run(out);
}

}  // namespace cuda_shim::exec::ast
