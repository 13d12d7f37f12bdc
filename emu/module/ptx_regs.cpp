// Register estimates for PTX kernels (ptx_regs.hpp). A scanner of its own, much lighter than
// the loader's parser: it needs only statements, register names, labels, branches and calls.
#include "module/ptx_regs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace cuda_shim::module {
namespace {

using Toks = std::vector<std::string_view>;

bool word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%' || c == '.';
}
bool word_char(char c) { return word_start(c) || (c >= '0' && c <= '9'); }

// Words (opcodes with their dotted suffixes, registers, labels, directives), numbers and single
// punctuation; comments and strings are dropped.
Toks scan(std::string_view s) {
  Toks out;
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? n : e + 2;
    } else if (c == '"') {
      for (++i; i < n && s[i] != '"'; ++i)
        if (s[i] == '\\') ++i;
      ++i;
    } else if (word_char(c)) {
      size_t b = i;
      while (i < n && word_char(s[i])) ++i;
      out.push_back(s.substr(b, i - b));
    } else {
      out.push_back(s.substr(i++, 1));
    }
  }
  return out;
}

// Width in 32-bit registers of a .reg type suffix; -1 for what is no type.
int type_width(std::string_view t) {
  if (t == ".pred") return 0;
  if (t == ".b64" || t == ".u64" || t == ".s64" || t == ".f64") return 2;
  if (t == ".b128") return 4;
  static const char* const one[] = {".b8", ".u8", ".s8", ".b16", ".u16", ".s16", ".f16", ".bf16",
                                    ".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2", ".tf32"};
  for (const char* o : one)
    if (t == o) return 1;
  return -1;
}

struct Fn {
  int own = 0;
  bool calls = false;
  std::vector<std::string_view> callees;
};

// The registers a function body declares: exact names and `%r<N>` prefixes, with their widths.
struct Decls {
  std::unordered_map<std::string_view, int> exact, prefix;

  void declare(const Toks& st) {  // .reg [.vN] .type name, name<N>, ...
    int w = 1, vec = 1;
    size_t j = 1;
    for (; j < st.size() && st[j].starts_with('.'); ++j) {
      if (st[j] == ".v2" || st[j] == ".v4" || st[j] == ".v8") vec = st[j][2] - '0';
      else if (int t = type_width(st[j]); t >= 0) w = t;
    }
    for (; j < st.size(); ++j) {
      if (st[j] == "," || st[j] == "<" || st[j] == ">" || !word_start(st[j][0])) continue;
      (j + 1 < st.size() && st[j + 1] == "<" ? prefix : exact)[st[j]] = w * vec;
    }
  }
  int width(std::string_view r) const {
    if (auto it = exact.find(r); it != exact.end()) return it->second;
    size_t e = r.size();
    while (e > 0 && r[e - 1] >= '0' && r[e - 1] <= '9') --e;
    if (e == r.size()) return -1;
    auto it = prefix.find(r.substr(0, e));
    return it == prefix.end() ? -1 : it->second;
  }
};

struct Live {
  size_t first, last;
  int width;
};

// Most 32-bit registers live at once over `insns` (statements, guard included).
int pressure(const std::vector<Toks>& insns, const Decls& d, const std::vector<std::pair<size_t, size_t>>& loops) {
  std::unordered_map<std::string_view, Live> live;
  for (size_t k = 0; k < insns.size(); ++k)
    for (std::string_view t : insns[k]) {
      if (!t.starts_with('%')) continue;
      int w = d.width(t);
      if (w <= 0) continue;  // predicates, special registers
      auto [it, fresh] = live.try_emplace(t, Live{k, k, w});
      it->second.last = k;
    }
  // A value made before a loop and used in it stays live until the loop's back edge.
  for (int pass = 0; pass < 8; ++pass) {
    bool changed = false;
    for (auto& [name, l] : live)
      for (auto [top, back] : loops)
        if (l.first < top && l.last >= top && l.last < back) l.last = back, changed = true;
    if (!changed) break;
  }
  std::vector<int> delta(insns.size() + 1, 0);
  for (auto& [name, l] : live) delta[l.first] += l.width, delta[l.last + 1] -= l.width;
  int now = 0, most = 0;
  for (int x : delta) most = std::max(most, now += x);
  return most;
}

// One function body: its own estimate and whom it calls.
Fn body(const Toks& t, size_t b, size_t e) {
  Fn f;
  Decls d;
  std::vector<Toks> insns;
  std::unordered_map<std::string_view, size_t> labels;
  std::vector<std::pair<size_t, std::string_view>> branches;
  Toks st;
  for (size_t i = b; i < e; ++i) {
    if (t[i] == "{" || t[i] == "}") continue;
    if (st.empty() && i + 1 < e && t[i + 1] == ":" && word_start(t[i][0]) && t[i][0] != '.') {
      labels[t[i]] = insns.size();
      ++i;
      continue;
    }
    if (t[i] != ";") {
      st.push_back(t[i]);
      continue;
    }
    if (st.empty()) continue;
    if (st[0] == ".reg") d.declare(st);
    if (!st[0].starts_with('.')) {
      size_t op = 0;
      while (op < st.size() && (st[op] == "@" || st[op] == "!" || st[op].starts_with('%'))) ++op;
      std::string_view opc = op < st.size() ? st[op] : std::string_view{};
      if (opc.starts_with("bra") && st.size() > op + 1) branches.push_back({insns.size(), st.back()});
      if (opc.starts_with("call")) {
        f.calls = true;
        for (size_t j = op + 1; j < st.size(); ++j)
          if (word_start(st[j][0]) && st[j][0] != '%' && st[j][0] != '.') {
            f.callees.push_back(st[j]);
            break;
          }
      }
      insns.push_back(std::move(st));
    }
    st.clear();
  }
  std::vector<std::pair<size_t, size_t>> loops;
  for (auto [at, label] : branches)
    if (auto it = labels.find(label); it != labels.end() && it->second <= at) loops.push_back({it->second, at});
  int p = pressure(insns, d, loops);
  // ptxas: a few registers beyond the live values (addresses, the stack pointer), allocated in
  // pairs, 8 at least once the kernel does anything; 24 where the calling convention is used.
  f.own = p == 0 && insns.size() <= 1 ? 4 : std::max(8, (p + 2 + 1) / 2 * 2);
  if (f.calls) f.own = std::max(f.own, 24);
  return f;
}

// Index just past the brace that closes the one at `i`.
size_t close_brace(const Toks& t, size_t i) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (t[i] == "{") ++depth;
    else if (t[i] == "}" && --depth == 0) return i + 1;
  }
  return t.size();
}

// From the token after .entry/.func: skips a return-parameter list, returns the name's index.
size_t name_index(const Toks& t, size_t i) {
  if (i < t.size() && t[i] == "(")
    for (int depth = 0; i < t.size(); ++i) {
      if (t[i] == "(") ++depth;
      else if (t[i] == ")" && --depth == 0) return i + 1;
    }
  return i;
}

// The index of the '{' opening the body, or of the ';' ending a declaration, after the name.
size_t body_start(const Toks& t, size_t i) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (t[i] == "(") ++depth;
    else if (t[i] == ")") --depth;
    else if (depth == 0 && (t[i] == "{" || t[i] == ";")) return i;
  }
  return t.size();
}

int total(const std::string_view name, const std::unordered_map<std::string_view, Fn>& fns,
          std::vector<std::string_view>& path) {
  auto it = fns.find(name);
  if (it == fns.end() || std::find(path.begin(), path.end(), name) != path.end()) return 0;  // extern, recursion
  path.push_back(name);
  int n = it->second.own;
  for (std::string_view c : it->second.callees) n = std::max(n, total(c, fns, path));
  path.pop_back();
  return n;
}

}  // namespace

std::unordered_map<std::string, int> estimate_registers(std::string_view ptx) {
  Toks t = scan(ptx);
  std::unordered_map<std::string_view, Fn> fns;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != ".entry" && t[i] != ".func") continue;
    size_t n = name_index(t, i + 1);
    if (n >= t.size()) break;
    size_t open = body_start(t, n + 1);
    if (open >= t.size() || t[open] == ";") continue;
    size_t end = close_brace(t, open);
    fns[t[n]] = body(t, open + 1, end - 1);
    i = end - 1;
  }
  std::unordered_map<std::string, int> out;
  std::vector<std::string_view> path;
  for (auto& [name, f] : fns) out[std::string(name)] = std::min(total(name, fns, path), 255);
  return out;
}

std::string limit_registers(std::string_view ptx, int max_regs) {
  Toks t = scan(ptx);
  std::string out;
  size_t copied = 0;
  auto offset = [&](std::string_view tok) { return static_cast<size_t>(tok.data() - ptx.data()); };
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != ".entry") continue;
    size_t n = name_index(t, i + 1);
    size_t open = body_start(t, n + 1);
    if (open >= t.size() || t[open] == ";") continue;
    size_t directive = open;
    for (size_t j = n + 1; j + 1 < open; ++j)
      if (t[j] == ".maxnreg") directive = j + 1;
    if (directive != open) {  // lower an existing limit that is larger
      std::string_view num = t[directive];
      if (std::strtol(std::string(num).c_str(), nullptr, 10) <= max_regs) continue;
      out.append(ptx.substr(copied, offset(num) - copied)).append(std::to_string(max_regs));
      copied = offset(num) + num.size();
    } else {
      out.append(ptx.substr(copied, offset(t[open]) - copied)).append(".maxnreg " + std::to_string(max_regs) + "\n");
      copied = offset(t[open]);
    }
    i = open;
  }
  out.append(ptx.substr(copied));
  return out;
}

}  // namespace cuda_shim::module
