// PTX text: what a driver learns before its JIT runs. Kernels (.entry) with their parameter
// layout and performance directives, module variables with their initial bytes, and the
// shared, local and constant memory a kernel declares. Register counts come from ptxas, which
// does not run here: they are estimated (ptx_regs.hpp). Shared memory counts what the kernel's body declares or names at
// module scope (not what the functions it calls use).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "module/image_detail.hpp"
#include "module/ptx_regs.hpp"

namespace cuda_shim::module {
namespace {

using detail::Variant;

enum class Tok : uint8_t { end, ident, directive, number, string, punct };

struct Token {
  Tok kind;
  std::string_view text;
  size_t at;  // offset in the text
};

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// Element types: size in bytes and class (i: integer/bits, f: float, h: f16, g: bf16).
struct Type {
  uint8_t size = 0;
  char cls = 0;
};

bool type_of(std::string_view d, Type& t) {
  static constexpr struct {
    std::string_view name;
    Type type;
  } kTypes[] = {
      {".b8", {1, 'i'}},    {".u8", {1, 'i'}},     {".s8", {1, 'i'}},      {".b16", {2, 'i'}},    {".u16", {2, 'i'}},
      {".s16", {2, 'i'}},   {".b32", {4, 'i'}},    {".u32", {4, 'i'}},     {".s32", {4, 'i'}},    {".b64", {8, 'i'}},
      {".u64", {8, 'i'}},   {".s64", {8, 'i'}},    {".b128", {16, 'i'}},   {".f16", {2, 'h'}},    {".bf16", {2, 'g'}},
      {".f16x2", {4, 'i'}}, {".bf16x2", {4, 'i'}}, {".e4m3x2", {2, 'i'}},  {".e5m2x2", {2, 'i'}}, {".tf32", {4, 'i'}},
      {".f32", {4, 'f'}},   {".f64", {8, 'f'}},    {".pred", {1, 'i'}},
  };
  for (const auto& k : kTypes)
    if (k.name == d) {
      t = k.type;
      return true;
    }
  return false;
}

// IEEE single to half (round to nearest even) and to bfloat16.
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - e), half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(h);
}
uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// A numeric literal: an integer, 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX bit patterns, or a decimal real.
struct Value {
  enum Kind { integer, f32, f64, real } kind;
  uint64_t bits = 0;
  double x = 0;
};

bool parse_number(std::string_view s, bool negative, Value& v) {
  std::string t(s);
  if (t.size() >= 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) {
    bool single = t[1] == 'f' || t[1] == 'F';
    if (t.size() != (single ? 10u : 18u)) return false;
    char* end = nullptr;
    uint64_t bits = std::strtoull(t.c_str() + 2, &end, 16);
    if (*end) return false;
    if (single) {
      uint32_t b = static_cast<uint32_t>(bits) ^ (negative ? 0x80000000u : 0);
      v = {Value::f32, b, 0};
    } else {
      v = {Value::f64, bits ^ (negative ? uint64_t(1) << 63 : 0), 0};
    }
    return true;
  }
  bool hex = t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  if (!hex && t.find_first_of(".eE") != std::string::npos) {
    char* end = nullptr;
    double x = std::strtod(t.c_str(), &end);
    if (*end) return false;
    v = {Value::real, 0, negative ? -x : x};
    return true;
  }
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.pop_back();
  int base = 10;
  size_t from = 0;
  if (hex) base = 16, from = 2;
  else if (t.size() > 1 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) base = 2, from = 2;
  else if (t.size() > 1 && t[0] == '0') base = 8, from = 1;
  if (from >= t.size()) return false;
  char* end = nullptr;
  uint64_t n = std::strtoull(t.c_str() + from, &end, base);
  if (*end) return false;
  v = {Value::integer, negative ? ~n + 1 : n, 0};
  return true;
}

// Stores `v` as one element of type `t`.
void encode(const Value& v, const Type& t, std::vector<uint8_t>& out) {
  double x = v.kind == Value::real ? v.x : 0;
  if (v.kind == Value::f32) {
    float f;
    uint32_t b = static_cast<uint32_t>(v.bits);
    std::memcpy(&f, &b, 4);
    x = f;
  } else if (v.kind == Value::f64) {
    std::memcpy(&x, &v.bits, 8);
  } else if (v.kind == Value::integer) {
    x = static_cast<double>(static_cast<int64_t>(v.bits));
  }
  uint8_t b[16] = {};
  uint64_t bits = v.bits;
  if (t.cls == 'f' && t.size == 4 && v.kind != Value::f32) {
    float f = static_cast<float>(x);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = u;
  } else if (t.cls == 'f' && t.size == 8 && v.kind != Value::f64) {
    std::memcpy(&bits, &x, 8);
  } else if ((t.cls == 'h' || t.cls == 'g') && v.kind != Value::integer) {
    bits = t.cls == 'h' ? to_half(static_cast<float>(x)) : to_bf16(static_cast<float>(x));
  } else if (t.cls == 'i' && v.kind == Value::real) {
    // Saturated (NaN as 0): a literal past int64's range must not be undefined behaviour.
    const double lim = 9223372036854775808.0;  // 2^63
    const int64_t i = !(x == x) ? 0 : x >= lim ? INT64_MAX : x < -lim ? INT64_MIN : static_cast<int64_t>(x);
    bits = static_cast<uint64_t>(i);
  }
  std::memcpy(b, &bits, 8);
  if (t.size == 16 && v.kind == Value::integer && static_cast<int64_t>(v.bits) < 0) std::memset(b + 8, 0xff, 8);
  out.insert(out.end(), b, b + t.size);
}

uint64_t align_up(uint64_t x, uint64_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

// The instructions of the PTX ISA (9.x), by the name before the first '.': ptxas refuses a
// statement that starts with anything else (CUDA_ERROR_INVALID_PTX).
bool known_opcode(std::string_view op) {
  static const std::string_view kOps[] = {
      "abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "barrier", "bfe", "bfi",
      "bfind", "bmsk", "bra", "brev", "brkpt", "brx", "call", "clusterlaunchcontrol", "clz", "cnot", "copysign", "cos",
      "cp", "createpolicy", "cvt", "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2", "exit", "fence", "fma",
      "fns", "getctarank", "griddepcontrol", "isspacep", "istypeof", "ld", "ldmatrix", "ldu", "lg2", "lop3", "mad",
      "mad24", "madc", "mapa", "match", "max", "mbarrier", "membar", "min", "mma", "mov", "movmatrix", "mul", "mul24",
      "multimem", "nanosleep", "neg", "not", "or", "pmevent", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red",
      "redux", "rem", "ret", "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin",
      "slct", "sqrt", "st", "stackrestore", "stacksave", "stmatrix", "sub", "subc", "suld", "suq", "sured", "sust",
      "szext", "tanh", "tcgen05", "tensormap", "testp", "tex", "tld4", "trap", "txq", "vabsdiff", "vabsdiff2",
      "vabsdiff4", "vadd", "vadd2", "vadd4", "vavrg2", "vavrg4", "vmad", "vmax", "vmax2", "vmax4", "vmin", "vmin2",
      "vmin4", "vote", "vset", "vset2", "vset4", "vshl", "vshr", "vsub", "vsub2", "vsub4", "wgmma", "wmma", "xor"};
  op = op.substr(0, op.find('.'));
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// A declaration's attributes before the name: `.align 8 .v2 .f32`, `.attribute(.managed)`.
struct Head {
  Type type;
  uint64_t align = 0;
  int vec = 1;
  bool managed = false, opaque = false;
};

struct Decl {
  std::string_view name;
  uint64_t size = 0, align = 1;
  std::vector<uint8_t> init;
};

class Parser {
 public:
  Parser(const char* s, size_t n, const char* api) : s_(s), n_(n), api_(api) {}

  Errc run(Image& img, Variant& variant);

 private:
  const char* s_;
  size_t n_;
  const char* api_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  struct Shared {
    std::string_view name;
    uint64_t size, align;
  };
  std::vector<Shared> shared_;  // module-scope .shared variables

  Errc bad(size_t at, std::string_view what) const {
    size_t line = 1 + static_cast<size_t>(std::count(s_, s_ + std::min(at, n_), '\n'));
    return fail(Errc::invalid_ptx, "{}: PTX, line {} (offset {:#x}): {}", api_, line, at, what);
  }
  const Token& tok(size_t k = 0) const {
    static const Token kEnd{Tok::end, {}, 0};
    return i_ + k < toks_.size() ? toks_[i_ + k] : kEnd;
  }
  size_t here() const { return i_ < toks_.size() ? toks_[i_].at : n_; }
  bool is(std::string_view t, size_t k = 0) const { return tok(k).kind != Tok::end && tok(k).text == t; }
  Errc expect(std::string_view t) {
    if (!is(t)) return bad(here(), fmt::format("expected '{}', found '{}'", t, tok().text));
    ++i_;
    return Errc::success;
  }
  Errc lex();
  Errc integer(uint64_t& out);
  Errc skip_statement();
  Errc skip_block();
  Errc head(Head& h, bool param);
  Errc declarator(const Head& h, bool allow_init, Decl& d);
  Errc initializer(const Type& t, uint64_t max_leaves, std::vector<uint8_t>& out);
  Errc leaf(const Type& t, std::vector<uint8_t>& out);
  Errc dims3(int out[3], bool product, int* prod);
  Errc entry(Image& img);
  void estimate(Image& img) const;
};

// What ptxas would report as each kernel's registers, within its .maxnreg.
void Parser::estimate(Image& img) const {
  std::unordered_map<std::string, int> regs = estimate_registers({s_, n_});
  for (KernelDesc& k : img.kernels) {
    auto it = regs.find(k.name);
    if (it == regs.end()) continue;
    k.num_regs = k.max_regs > 0 ? std::min(it->second, k.max_regs) : it->second;
    k.regs_estimated = true;
  }
}

Errc Parser::lex() {
  size_t i = 0;
  while (i < n_) {
    char c = s_[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (c == '/' && i + 1 < n_ && s_[i + 1] == '/') {
      while (i < n_ && s_[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n_ && s_[i + 1] == '*') {
      size_t at = i;
      for (i += 2; i + 1 < n_ && !(s_[i] == '*' && s_[i + 1] == '/');) ++i;
      if (i + 1 >= n_) return bad(at, "comment not closed");
      i += 2;
    } else if (c == '"') {
      size_t at = i++;
      while (i < n_ && s_[i] != '"' && s_[i] != '\n') i += (s_[i] == '\\' && i + 1 < n_) ? 2 : 1;
      if (i >= n_ || s_[i] != '"') return bad(at, "string not closed");
      toks_.push_back({Tok::string, {s_ + at, ++i - at}, at});
    } else if (c == '.' && i + 1 < n_ && ident_start(s_[i + 1])) {
      size_t at = i++;
      while (i < n_ && ident_char(s_[i])) ++i;
      toks_.push_back({Tok::directive, {s_ + at, i - at}, at});
    } else if (ident_start(c)) {
      // Instructions keep their dotted suffixes (ld.shared.u32): one token, never a directive.
      size_t at = i;
      while (i < n_ && (ident_char(s_[i]) || s_[i] == '.')) ++i;
      toks_.push_back({Tok::ident, {s_ + at, i - at}, at});
    } else if (digit(c)) {
      size_t at = i;
      bool hexlike = c == '0' && i + 1 < n_ && std::strchr("xXfFdD", s_[i + 1]);
      while (i < n_ && (ident_char(s_[i]) || s_[i] == '.')) {
        ++i;
        if (!hexlike && (s_[i - 1] == 'e' || s_[i - 1] == 'E') && i < n_ && (s_[i] == '+' || s_[i] == '-')) ++i;
      }
      toks_.push_back({Tok::number, {s_ + at, i - at}, at});
    } else {
      toks_.push_back({Tok::punct, {s_ + i, 1}, i});
      ++i;
    }
  }
  return Errc::success;
}

Errc Parser::integer(uint64_t& out) {
  Value v;
  if (tok().kind != Tok::number || !parse_number(tok().text, false, v) || v.kind != Value::integer)
    return bad(here(), fmt::format("expected an integer, found '{}'", tok().text));
  out = v.bits;
  ++i_;
  return Errc::success;
}

// Up to the ';' that ends a statement, over any braces.
Errc Parser::skip_statement() {
  int depth = 0;
  for (; tok().kind != Tok::end; ++i_) {
    if (is("{")) ++depth;
    else if (is("}")) --depth;
    else if (is(";") && depth <= 0) {
      ++i_;
      return Errc::success;
    }
  }
  return bad(n_, "statement not ended by ';'");
}

// From '{' to its '}'.
Errc Parser::skip_block() {
  size_t at = here();
  int depth = 0;
  for (; tok().kind != Tok::end; ++i_) {
    if (is("{")) ++depth;
    else if (is("}") && --depth == 0) {
      ++i_;
      return Errc::success;
    }
  }
  return bad(at, "block not closed by '}'");
}

Errc Parser::head(Head& h, bool param) {
  bool typed = false;
  while (tok().kind == Tok::directive) {
    std::string_view d = tok().text;
    size_t at = here();
    ++i_;
    if (d == ".align") {
      uint64_t a;
      TRY(integer(a));
      if (a == 0 || (a & (a - 1)) || a > 4096) return bad(at, fmt::format("alignment {} is not a power of two up to 4096", a));
      if (!typed) h.align = a;  // after the type (.ptr .global .align 8) it is the pointee's
    } else if (d == ".attribute") {
      TRY(expect("("));
      for (int depth = 1; depth > 0; ++i_) {
        if (tok().kind == Tok::end) return bad(at, "attribute not closed");
        if (is("(")) ++depth;
        else if (is(")")) --depth;
        else if (is(".managed") && depth == 1) h.managed = true;
      }
    } else if (d == ".v2" || d == ".v4" || d == ".v8") {
      h.vec = d[2] - '0';
    } else if (d == ".texref" || d == ".samplerref" || d == ".surfref") {
      h.opaque = typed = true;
    } else if (param && typed && (d == ".ptr" || d == ".global" || d == ".const" || d == ".shared" || d == ".local")) {
      // pointer attributes of a kernel parameter
    } else if (type_of(d, h.type)) {
      typed = true;
    } else {
      return bad(at, fmt::format("unexpected '{}' in a declaration", d));
    }
  }
  if (!typed) return bad(here(), "declaration without a type");
  return Errc::success;
}

Errc Parser::declarator(const Head& h, bool allow_init, Decl& d) {
  if (tok().kind != Tok::ident) return bad(here(), fmt::format("expected a name, found '{}'", tok().text));
  d.name = tok().text;
  size_t at = here();
  ++i_;
  uint64_t elem = uint64_t(h.type.size) * h.vec, count = 1;
  bool unsized = false;
  while (is("[")) {
    ++i_;
    if (is("]")) {
      unsized = true;  // size from the initializer
    } else {
      uint64_t n;
      TRY(integer(n));
      if (n != 0 && count > detail::kMaxPayloadBytes / n) return bad(at, fmt::format("{} is too large", d.name));
      count *= n;
    }
    TRY(expect("]"));
  }
  d.align = h.align ? h.align : std::max<uint64_t>(elem, 1);
  d.size = elem * count;
  if (d.size > detail::kMaxPayloadBytes) return bad(at, fmt::format("{} is too large", d.name));
  if (is("=")) {
    if (!allow_init) return bad(here(), fmt::format("{} cannot have an initializer", d.name));
    ++i_;
    uint64_t leaves = unsized ? detail::kMaxPayloadBytes / std::max<uint8_t>(h.type.size, 1) : count * h.vec;
    TRY(initializer(h.type, leaves, d.init));
    if (unsized) d.size = align_up(d.init.size(), std::max<uint64_t>(elem, 1));
  } else if (unsized) {
    d.size = 0;  // only an .extern declaration leaves the size open
  }
  return Errc::success;
}

Errc Parser::leaf(const Type& t, std::vector<uint8_t>& out) {
  size_t start = i_, at = here();
  int depth = 0;
  for (; tok().kind != Tok::end; ++i_) {
    if (is("(")) ++depth;
    else if (is(")")) --depth;
    else if (depth == 0 && (is(",") || is("}") || is(";"))) break;
  }
  size_t len = i_ - start;
  if (len == 0) return bad(at, "empty initializer");
  const Token& first = toks_[start];
  bool neg = first.text == "-";
  Value v;
  if ((len == 1 && first.kind == Tok::number) || (len == 2 && neg && toks_[start + 1].kind == Tok::number)) {
    if (!parse_number(toks_[start + len - 1].text, neg, v)) return bad(at, fmt::format("bad number '{}'", toks_[start + len - 1].text));
  } else {
    v = {Value::integer, 0, 0};  // an address (generic(x)+4, 0xFF(generic(x))): relocated at load, zero here
  }
  encode(v, t, out);
  return Errc::success;
}

Errc Parser::initializer(const Type& t, uint64_t max_leaves, std::vector<uint8_t>& out) {
  size_t at = here();
  if (!is("{")) {
    TRY(leaf(t, out));
  } else {
    // Nested braces (arrays of arrays, vectors) flatten into one run of elements.
    for (int depth = 0;;) {
      if (is("{")) {
        ++depth;
        ++i_;
      } else if (is("}")) {
        ++i_;
        if (--depth == 0) break;
        if (is(",")) ++i_;
      } else {
        TRY(leaf(t, out));
        if (is(",")) ++i_;
        else if (!is("}")) return bad(here(), fmt::format("expected ',' or '}}' in an initializer, found '{}'", tok().text));
      }
    }
  }
  if (out.size() / std::max<uint8_t>(t.size, 1) > max_leaves) return bad(at, "more initializers than elements");
  return Errc::success;
}

// `a[, b[, c]]`: absent dimensions are 1.
Errc Parser::dims3(int out[3], bool product, int* prod) {
  uint64_t v[3] = {1, 1, 1};
  size_t at = here();
  for (int k = 0; k < 3; ++k) {
    TRY(integer(v[k]));
    if (v[k] == 0 || v[k] > 0x7fffffff) return bad(at, fmt::format("dimension {} is out of range", v[k]));
    if (!is(",")) break;
    ++i_;
  }
  if (product) {
    uint64_t p = v[0] * v[1] * v[2];
    if (p > 0x7fffffff) return bad(at, "thread count out of range");
    *prod = static_cast<int>(p);
  } else {
    for (int k = 0; k < 3; ++k) out[k] = static_cast<int>(v[k]);
  }
  return Errc::success;
}

Errc Parser::entry(Image& img) {
  if (tok().kind != Tok::ident) return bad(here(), "expected the kernel's name after .entry");
  KernelDesc k;
  k.name = std::string(tok().text);
  ++i_;
  if (is("(")) {
    ++i_;
    uint64_t off = 0;
    while (!is(")")) {
      if (!is(".param")) return bad(here(), fmt::format("{}: expected .param, found '{}'", k.name, tok().text));
      ++i_;
      Head h;
      Decl d;
      TRY(head(h, true));
      TRY(declarator(h, false, d));
      off = align_up(off, d.align);
      if (off + d.size > UINT32_MAX) return bad(here(), fmt::format("{}: parameters too large", k.name));
      k.params.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(d.size)});
      off += d.size;
      if (!is(")")) TRY(expect(","));
    }
    ++i_;
    k.param_bytes = static_cast<uint32_t>(off);
  }
  // Performance directives, up to the body.
  while (tok().kind == Tok::directive) {
    std::string_view d = tok().text;
    ++i_;
    if (d == ".maxntid") TRY(dims3(nullptr, true, &k.max_threads));
    else if (d == ".reqntid") TRY(dims3(k.reqntid, false, nullptr));
    else if (d == ".reqnctapercluster") TRY(dims3(k.cluster_dim, false, nullptr));
    else if (d == ".pragma") TRY(skip_statement());
    else if (d == ".maxnreg" && tok().kind == Tok::number) {
      uint64_t n = 0;
      TRY(integer(n));
      k.max_regs = static_cast<int>(std::min<uint64_t>(n, 255));
    } else
      while (tok().kind == Tok::number || is(",")) ++i_;  // .minnctapersm 2, .maxnreg 40, .noreturn, ...
  }
  if (is(";")) {  // a declaration
    ++i_;
    return Errc::success;
  }
  if (!is("{")) return bad(here(), fmt::format("{}: expected its body, found '{}'", k.name, tok().text));
  // The body: declarations of shared and local memory, and names of module-scope shared variables.
  size_t at = here();
  uint64_t shared = 0, local = 0;
  std::vector<std::string_view> named;
  int depth = 0;
  bool start = true;          // at the start of a statement
  std::vector<bool> blocks;   // for each open '{': whether it opened a block
  for (;;) {
    const Token& t = tok();
    if (t.kind == Tok::end) return bad(at, fmt::format("{}: body not closed by '}}'", k.name));
    if (start && t.kind == Tok::punct && t.text == "@") {  // a guard predicate: @%p1 or @!%p1
      ++i_;
      if (is("!")) ++i_;
      if (is("%")) ++i_;
      if (tok().kind == Tok::ident) ++i_;
      continue;
    }
    if (start && t.kind == Tok::ident && is(":", 1)) {  // a label
      i_ += 2;
      continue;
    }
    if (start && t.kind == Tok::ident && !known_opcode(t.text))
      return bad(t.at, fmt::format("{}: '{}' is not a PTX instruction", k.name, t.text));
    // A '{' at a statement's start opens a block; elsewhere it is a vector operand ({%r1, %r2}).
    if (t.kind == Tok::punct && t.text == "{") {
      blocks.push_back(start);
    } else if (t.kind == Tok::punct && t.text == "}") {
      start = !blocks.empty() && blocks.back();
      if (!blocks.empty()) blocks.pop_back();
    } else {
      start = t.kind == Tok::punct && t.text == ";";
    }
    // Instructions are single tokens (st.shared.u32), so a lone .shared or .local declares.
    if (t.text == ".shared" || t.text == ".local") {
      bool is_shared = t.text == ".shared";
      ++i_;
      Head h;
      Decl d;
      TRY(head(h, false));
      TRY(declarator(h, false, d));
      uint64_t& total = is_shared ? shared : local;
      total = align_up(total, d.align) + d.size;
      start = false;
      continue;
    }
    if (t.kind == Tok::ident) {
      for (const Shared& s : shared_)
        if (s.name == t.text && std::find(named.begin(), named.end(), s.name) == named.end()) {
          named.push_back(s.name);
          shared = align_up(shared, s.align) + s.size;
        }
    }
    ++i_;
    if (t.text == "{") ++depth;
    else if (t.text == "}" && --depth == 0) break;
  }
  if (shared > UINT32_MAX || local > UINT32_MAX) return bad(at, fmt::format("{}: memory sizes out of range", k.name));
  k.shared_bytes = static_cast<uint32_t>(shared);
  k.local_bytes = static_cast<uint32_t>(local);
  img.kernels.push_back(std::move(k));
  return Errc::success;
}

Errc Parser::run(Image& img, Variant& variant) {
  TRY(lex());
  bool version = false, target = false;
  uint64_t const_bytes = 0;
  while (tok().kind != Tok::end) {
    const Token& t = tok();
    size_t at = here();
    if (t.kind != Tok::directive) return bad(at, fmt::format("unexpected '{}'", t.text));
    if (!version && t.text != ".version") return bad(at, "PTX must begin with .version");
    ++i_;
    if (t.text == ".version") {
      std::string_view v = tok().text;
      size_t dot = v.find('.');
      if (tok().kind != Tok::number || dot == std::string_view::npos || dot == 0 || dot + 2 != v.size() || !digit(v[dot + 1]))
        return bad(at, fmt::format("bad .version '{}'", v));
      int major = 0;
      for (char c : v.substr(0, dot)) {
        if (!digit(c) || (major = major * 10 + (c - '0')) > 99) return bad(at, fmt::format("bad .version '{}'", v));
      }
      img.ptx_version = major * 10 + (v[dot + 1] - '0');
      version = true;
      ++i_;
    } else if (t.text == ".target") {
      std::string_view sm = tok().text;
      if (tok().kind != Tok::ident || !sm.starts_with("sm_") || sm.size() < 5 || !digit(sm[3]))
        return bad(at, fmt::format("bad .target '{}'", sm));
      variant = sm.ends_with("a") ? Variant::specific : sm.ends_with("f") ? Variant::family : Variant::plain;
      int arch = 0;
      for (char c : sm.substr(3)) {  // sm_90, sm_90a, sm_100f: digits, then a variant letter
        if (!digit(c)) break;
        if ((arch = arch * 10 + (c - '0')) > 9999) return bad(at, fmt::format("bad .target '{}'", sm));
      }
      img.arch = arch;
      target = true;
      ++i_;
      while (is(",") && tok(1).kind == Tok::ident) i_ += 2;  // texmode_independent, debug, ...
    } else if (t.text == ".address_size") {
      uint64_t n;
      TRY(integer(n));
    } else if (t.text == ".file") {
      while (tok().kind == Tok::number || tok().kind == Tok::string || is(",")) ++i_;
    } else if (t.text == ".section") {
      while (tok().kind != Tok::end && !is("{")) ++i_;
      TRY(skip_block());
    } else if (t.text == ".visible" || t.text == ".weak" || t.text == ".common") {
      // linkage: what follows is declared here
    } else if (t.text == ".extern") {
      TRY(skip_statement());  // defined elsewhere
    } else if (t.text == ".entry") {
      if (!target) return bad(at, "kernel before .target");
      TRY(entry(img));
    } else if (t.text == ".func") {
      while (tok().kind != Tok::end && !is("{") && !is(";")) ++i_;
      if (is(";")) ++i_;
      else TRY(skip_block());
    } else if (t.text == ".global" || t.text == ".const" || t.text == ".shared") {
      Head h;
      TRY(head(h, false));
      for (;;) {
        Decl d;
        TRY(declarator(h, t.text != ".shared", d));
        if (h.opaque) {
          // texture, sampler and surface references: no memory
        } else if (t.text == ".shared") {
          shared_.push_back({d.name, d.size, d.align});
        } else {
          GlobalDesc g;
          g.name = std::string(d.name);
          g.size = d.size;
          g.space = t.text == ".const" ? Space::constant : h.managed ? Space::managed : Space::global;
          g.init = std::move(d.init);
          if (g.space == Space::constant) const_bytes = align_up(const_bytes, d.align) + d.size;
          img.globals.push_back(std::move(g));
        }
        if (!is(",")) break;
        ++i_;
      }
      TRY(expect(";"));
    } else {
      TRY(skip_statement());  // .pragma, .alias, and what this reader need not know
    }
  }
  if (!version || !target) return bad(n_, "no .version or .target");
  for (KernelDesc& k : img.kernels) k.const_bytes = static_cast<uint32_t>(std::min<uint64_t>(const_bytes, UINT32_MAX));
  estimate(img);
  // The cubin the JIT makes lists its kernels last one first, as nvcc's cubins do: keep that
  // order (module.hpp: the image's order).
  std::reverse(img.kernels.begin(), img.kernels.end());
  return Errc::success;
}

}  // namespace

Errc detail::ptx(const char* text, size_t size, Image& out, const char* api, Variant& variant) {
  if (!text) return fail(Errc::invalid_value, "{}: PTX is NULL", api);
  // The text ends at its NUL, or at `size` when that comes first.
  size_t n = size ? strnlen(text, size) : std::strlen(text);
  Parser parser(text, n, api);
  Image img;
  TRY(parser.run(img, variant));
  img.from_ptx = true;
  img.ptx.assign(text, n);
  out = std::move(img);
  return Errc::success;
}

Errc parse_ptx(const char* text, size_t size, Image& out, const char* api) {
  try {
    Variant v;
    return detail::ptx(text, size, out, api, v);
  } catch (const std::bad_alloc&) {
    return fail(Errc::out_of_memory, "{}: out of host memory reading PTX", api);
  }
}

}  // namespace cuda_shim::module
