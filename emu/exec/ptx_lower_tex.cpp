// Lowering of the texture and surface instructions (ops_tex.cpp runs them):
//   tex[.level].geom.v4.dtype.ctype  d, [t, {c...}] [, lod]
//   tld4.comp.2d.v4.dtype.f32        d, [t, {x, y}]
//   txq[.level].query.b32            d, [t] [, lod]
//   suld.b.geom[.vN].bT.mode         d, [s, {x, y, z}]
//   sust.b.geom[.vN].bT.mode         [s, {x, y, z}], v
// Operand slots: op[0..3] the destinations (tex, tld4, suld) or the values (sust), op[4] the
// object's handle, op[5..7] the coordinates (a layered geometry's layer first, as PTX writes
// them); tex.level's lod goes in the first free coordinate slot. Insn::mod is the geometry
// (TexGeom), mod2 the level flag, gather component, query or boundary mode.
#include "exec/ops_tex.hpp"
#include "exec/ptx_lower_ctx.hpp"

namespace cuda_shim::exec {
namespace {

int geometry(const std::vector<std::string_view>& rest) {
  static const std::pair<std::string_view, TexGeom> k[] = {
      {".1d", TexGeom::g1d}, {".2d", TexGeom::g2d}, {".3d", TexGeom::g3d}, {".a1d", TexGeom::a1d},
      {".a2d", TexGeom::a2d}, {".cube", TexGeom::cube}, {".acube", TexGeom::acube}, {".2dms", TexGeom::ms2d},
      {".a2dms", TexGeom::ams2d}};
  for (std::string_view r : rest)
    for (const auto& [name, g] : k)
      if (r == name) return static_cast<int>(g);
  return -1;
}

bool has(const std::vector<std::string_view>& rest, std::string_view m) {
  return std::find(rest.begin(), rest.end(), m) != rest.end();
}

}  // namespace

Errc Lowerer::texture(const ast::Insn& a, Insn& i, const Mods& m) {
  using K = ast::Operand::Kind;
  const std::string_view op = a.opcode;
  const bool store = op == "sust", query = op == "txq";
  const int geo = query ? 0 : geometry(m.rest);
  if (geo < 0) {
    unsupported(a, "no geometry this instruction takes");
    return Errc::success;
  }
  i.mod = static_cast<uint8_t>(geo);
  if (op == "tex") {
    if (has(m.rest, ".grad") || a.ops.size() > 3 || (!a.ops.empty() && !a.ops[0].pair.empty())) {
      unsupported(a, "tex.grad and a predicate destination are not implemented");
      return Errc::success;
    }
    i.mod2 = has(a.mods, ".level") ? kTexLevel : 0;  // (the decoder drops .level as a prefetch level)
  } else if (op == "tld4") {
    static const std::string_view comps[] = {".r", ".g", ".b", ".a"};
    for (uint8_t k = 0; k < 4; ++k)
      if (has(m.rest, comps[k])) i.mod2 = k;
  } else if (query) {
    static const std::string_view q[] = {".width", ".height", ".depth", ".channel_data_type", ".channel_order",
                                         ".normalized_coords", ".filter_mode", ".addr_mode_0", ".addr_mode_1",
                                         ".addr_mode_2", ".array_size", ".num_mipmap_levels", ".num_samples"};
    i.mod2 = 0xff;
    for (uint8_t k = 0; k < std::size(q); ++k)
      if (has(m.rest, q[k])) i.mod2 = k;
    if (i.mod2 == 0xff || has(a.mods, ".level") || a.ops.size() != 2) {
      unsupported(a, "this texture query is not implemented");
      return Errc::success;
    }
  } else {  // suld / sust
    if (!has(m.rest, ".b")) {
      unsupported(a, "formatted surface accesses (.p) are not implemented");
      return Errc::success;
    }
    i.mod2 = has(m.rest, ".zero") ? kSurfZero : has(m.rest, ".clamp") ? kSurfClamp : kSurfTrap;
  }
  if (a.ops.size() < 2) return bad(a.line, "'{}' needs two operands", op);
  const ast::Operand& addr = store ? a.ops[0] : a.ops[1];
  const ast::Operand& data = store ? a.ops[1] : a.ops[0];
  if (addr.kind != K::addr || addr.elems.empty()) return bad(a.line, "'{}' needs [object, {{coordinates}}]", op);
  TRY(value(addr.elems[0], Ty::u64, i.op[4], a.line));
  std::vector<const ast::Operand*> coords;
  if (addr.elems.size() > 1) {
    const ast::Operand& c = addr.elems[1];
    if (c.kind == K::vec)
      for (const auto& e : c.elems) coords.push_back(&e);
    else
      coords.push_back(&c);
  }
  // 3D and layered 2D coordinates come as four (the last unused): three slots are enough.
  const size_t used = std::min<size_t>(coords.size(), 3);
  const Ty ct = i.ty2 == Ty::none ? Ty::b32 : i.ty2;
  for (size_t k = 0; k < used; ++k) TRY(value(*coords[k], k == 0 && geo >= 3 ? Ty::b32 : ct, i.op[5 + k], a.line));
  if (i.mod2 == kTexLevel && op == "tex") {
    if (used >= 3 || a.ops.size() < 3) {
      unsupported(a, "tex.level of this geometry is not implemented");
      return Errc::success;
    }
    TRY(value(a.ops[2], Ty::f32, i.op[5 + used], a.line));
  }
  std::vector<const ast::Operand*> vals;
  if (data.kind == K::vec)
    for (const auto& e : data.elems) vals.push_back(&e);
  else
    vals.push_back(&data);
  if (vals.size() > 4) return bad(a.line, "'{}' has more than four values", op);
  i.vec = static_cast<uint8_t>(vals.size());
  for (size_t k = 0; k < vals.size(); ++k) {
    if (store) TRY(value(*vals[k], i.ty, i.op[k], a.line));
    else i.op[k] = vals[k]->kind == K::sink ? kNone : reg(vals[k]->name);
  }
  i.fn = tex_handler(op, i);
  if (!i.fn) {
    unsupported(a, "this texture or surface form is not implemented");
    return Errc::success;
  }
  emit(i);
  return Errc::success;
}

}  // namespace cuda_shim::exec
