// Cubins: ELF images of machine code for one SM (e_machine EM_CUDA). A driver finds what it
// needs in the symbol table and in NVIDIA's .nv.info attribute records. Every layout here was
// checked on nvcc 13.0 and 13.5 output and against what NVIDIA's driver reports for the same
// images (tests/unit/test_module_image.cpp says which).
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "module/image_detail.hpp"

namespace cuda_shim::module {
namespace {

using detail::fits;
using detail::load;

constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtSymtab = 2, kShtStrtab = 3, kShtNobits = 8, kShtCudaInfo = 0x70000000;
constexpr uint8_t kSttObject = 1, kSttFunc = 2;
constexpr uint8_t kStoEntry = 0x10;    // st_other of a kernel
constexpr uint8_t kStoManaged = 0x04;  // st_other of a __managed__ variable
constexpr uint16_t kShnLoreserve = 0xff00;

// .nv.info attributes (cuobjdump's EIATTR_ names).
constexpr uint8_t kMaxThreads = 0x05, kReqNtid = 0x10, kFrameSize = 0x11, kKparamInfo = 0x17,
                  kCbankParamSize = 0x19, kRegCount = 0x2f, kCtaPerCluster = 0x3d, kKparamInfoV2 = 0x45;
// .nv.compat attribute whose value is 1 in sm_XXa code.
constexpr uint8_t kCompatArchSpecific = 0x09;
// From sm_90 on, ptxas puts the block's 1 KiB of system-reserved shared memory at the start of
// each kernel's .nv.shared section; the driver does not count it as the kernel's.
constexpr uint64_t kReservedShared = 1024;
// Device memory is never this large; a bigger .nv.global is damage.
constexpr uint64_t kMaxNobits = uint64_t(1) << 40;

struct Section {
  uint64_t hdr = 0;  // file offset of its header, for explanations
  uint32_t type = 0, link = 0, info = 0;
  uint64_t off = 0, size = 0, entsize = 0;
  std::string_view name;
};

struct Record {
  uint8_t fmt, attr;
  const uint8_t* data;  // 2 bytes for formats 1-3, `len` for format 4
  uint16_t len;
  uint64_t at;  // file offset
};

struct Elf {
  const uint8_t* p;
  uint64_t size;
  const char* api;
  std::vector<Section> secs;

  Errc bad(uint64_t off, std::string_view what) const {
    return fail(Errc::invalid_image, "{}: cubin, offset {:#x}: {}", api, off, what);
  }

  Errc str(const Section& tab, uint64_t off, uint64_t where, std::string_view& out) const {
    if (off >= tab.size) return bad(where, fmt::format("name offset {:#x} is past its string table ({} bytes)", off, tab.size));
    const auto* s = reinterpret_cast<const char*>(p + tab.off + off);
    const void* nul = std::memchr(s, 0, tab.size - off);
    if (!nul) return bad(where, "name runs past the end of its string table");
    out = std::string_view(s, static_cast<const char*>(nul) - s);
    return Errc::success;
  }

  // The attribute records of an .nv.info-style section: {fmt, attr, value} in 4 bytes, or
  // format 4: {fmt, attr, u16 size, size bytes}.
  Errc records(const Section& s, std::vector<Record>& out) const {
    uint64_t o = s.off, end = s.off + s.size;
    while (o < end) {
      if (end - o < 4) return bad(o, fmt::format("{}: attribute record cut short", s.name));
      Record r{p[o], p[o + 1], p + o + 2, 2, o};
      uint64_t next = o + 4;
      if (r.fmt == 4) {
        r.len = load<uint16_t>(p + o + 2);
        r.data = p + o + 4;
        if (!fits(end, o + 4, r.len))
          return bad(o, fmt::format("{}: attribute {:#x} of {} bytes runs past the section's end", s.name, r.attr, r.len));
        next = o + 4 + r.len;
      } else if (r.fmt < 1 || r.fmt > 3) {
        return bad(o, fmt::format("{}: unknown attribute record format {}", s.name, r.fmt));
      }
      out.push_back(r);
      o = next;
    }
    return Errc::success;
  }

  const Section* find(std::string_view name) const {
    for (const Section& s : secs)
      if (s.name == name) return &s;
    return nullptr;
  }
};

// {x, y, z} of a format-4 record; x*y*z when `product`.
Errc dims(const Elf& e, const Record& r, const char* what, int out[3]) {
  if (r.fmt != 4 || r.len < 12) return e.bad(r.at, fmt::format("{} record of {} bytes, expected 12", what, r.len));
  for (int i = 0; i < 3; ++i) {
    uint32_t v = load<uint32_t>(r.data + 4 * i);
    if (v > 0x7fffffff) return e.bad(r.at, fmt::format("{} dimension {} is {}", what, i, v));
    out[i] = static_cast<int>(v);
  }
  return Errc::success;
}

Errc read_headers(Elf& e) {
  const uint8_t* p = e.p;
  if (e.size != 0 && e.size < 64) return e.bad(0, fmt::format("{} bytes cannot hold an ELF header (64)", e.size));
  if (p[4] != 2 || p[5] != 1) return e.bad(4, "not a 64-bit little-endian ELF image");
  if (uint16_t m = load<uint16_t>(p + 18); m != kEmCuda)
    return e.bad(18, fmt::format("e_machine is {}, not EM_CUDA ({})", m, kEmCuda));
  uint64_t phoff = load<uint64_t>(p + 0x20), shoff = load<uint64_t>(p + 0x28);
  uint16_t phentsize = load<uint16_t>(p + 0x36), phnum = load<uint16_t>(p + 0x38);
  uint16_t shentsize = load<uint16_t>(p + 0x3a), shnum = load<uint16_t>(p + 0x3c), shstrndx = load<uint16_t>(p + 0x3e);
  if (shnum == 0) return e.bad(0x3c, "no section headers");
  if (shentsize != 64) return e.bad(0x3a, fmt::format("section header size {}, expected 64", shentsize));
  if (phnum != 0 && phentsize != 56) return e.bad(0x36, fmt::format("program header size {}, expected 56", phentsize));
  if (e.size == 0) {
    // Unknown size: trust the extent the headers describe, as the driver does.
    uint64_t ext = 64;
    if (shoff > ~uint64_t(0) - uint64_t(shnum) * 64 || phoff > ~uint64_t(0) - uint64_t(phnum) * 56)
      return e.bad(0x20, "header table offsets overflow");
    ext = std::max({ext, shoff + uint64_t(shnum) * 64, phoff + uint64_t(phnum) * 56});
    for (uint16_t i = 0; i < shnum; ++i) {
      const uint8_t* h = p + shoff + uint64_t(i) * 64;
      uint64_t off = load<uint64_t>(h + 0x18), sz = load<uint64_t>(h + 0x20);
      if (load<uint32_t>(h + 4) == kShtNobits) continue;
      if (off > ~uint64_t(0) - sz) return e.bad(shoff + uint64_t(i) * 64, "section extent overflows");
      ext = std::max(ext, off + sz);
    }
    e.size = ext;
  }
  if (!fits(e.size, shoff, uint64_t(shnum) * 64))
    return e.bad(0x28, fmt::format("section header table ({} entries at {:#x}) runs past the image's {} bytes", shnum, shoff, e.size));
  if (!fits(e.size, phoff, uint64_t(phnum) * 56))
    return e.bad(0x20, fmt::format("program header table ({} entries at {:#x}) runs past the image's {} bytes", phnum, phoff, e.size));
  e.secs.resize(shnum);
  std::vector<uint32_t> names(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    Section& s = e.secs[i];
    s.hdr = shoff + uint64_t(i) * 64;
    const uint8_t* h = p + s.hdr;
    names[i] = load<uint32_t>(h);
    s.type = load<uint32_t>(h + 4);
    s.off = load<uint64_t>(h + 0x18);
    s.size = load<uint64_t>(h + 0x20);
    s.link = load<uint32_t>(h + 0x28);
    s.info = load<uint32_t>(h + 0x2c);
    s.entsize = load<uint64_t>(h + 0x38);
    if (s.type != kShtNobits && !fits(e.size, s.off, s.size))
      return e.bad(s.hdr, fmt::format("section {} ({} bytes at {:#x}) runs past the image's {} bytes", i, s.size, s.off, e.size));
  }
  if (shstrndx >= shnum || e.secs[shstrndx].type != kShtStrtab)
    return e.bad(0x3e, fmt::format("section name table index {} is not a string table", shstrndx));
  for (uint16_t i = 0; i < shnum; ++i) TRY(e.str(e.secs[shstrndx], names[i], e.secs[i].hdr, e.secs[i].name));
  return Errc::success;
}

struct Sym {
  std::string_view name;
  uint8_t type, other;
  uint16_t shndx;
  uint64_t value, size, at;
};

Errc parse(Elf& e, Image& img, detail::Variant& variant) {
  TRY(read_headers(e));
  const uint8_t* p = e.p;
  uint32_t flags = load<uint32_t>(p + 0x30);
  // ELF ABI 8 (CUDA 13) keeps the SM in bits 8-15 of e_flags; earlier ABIs in bits 0-7.
  int sm = static_cast<int>(p[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
  if (sm < 10) return e.bad(0x30, fmt::format("e_flags {:#x} name no SM", flags));
  img.arch = sm;

  variant = detail::Variant::plain;
  if (const Section* c = e.find(".nv.compat"); c && c->type != kShtNobits) {
    std::vector<Record> rs;
    TRY(e.records(*c, rs));
    for (const Record& r : rs)
      if (r.attr == kCompatArchSpecific && r.fmt == 2 && r.data[0] == 1) variant = detail::Variant::specific;
  }

  // The symbol table.
  const Section* symtab = nullptr;
  for (const Section& s : e.secs)
    if (s.type == kShtSymtab) symtab = &s;
  if (!symtab) return e.bad(0x28, "no symbol table");
  if (symtab->entsize != 24) return e.bad(symtab->hdr, fmt::format("symbol size {}, expected 24", symtab->entsize));
  if (symtab->link >= e.secs.size() || e.secs[symtab->link].type != kShtStrtab)
    return e.bad(symtab->hdr, "the symbol table's string table is not one");
  const Section& strtab = e.secs[symtab->link];
  std::vector<Sym> syms(symtab->size / 24);
  bool reserved_shared = false;
  for (size_t i = 0; i < syms.size(); ++i) {
    Sym& s = syms[i];
    s.at = symtab->off + i * 24;
    const uint8_t* q = p + s.at;
    TRY(e.str(strtab, load<uint32_t>(q), s.at, s.name));
    s.type = q[4] & 0xf;
    s.other = q[5];
    s.shndx = load<uint16_t>(q + 6);
    s.value = load<uint64_t>(q + 8);
    s.size = load<uint64_t>(q + 16);
    if (s.name == ".nv.reservedSmem.offset0") reserved_shared = true;
  }
  for (const Section& s : e.secs)
    if (s.name.starts_with(".nv.shared.reserved.")) reserved_shared = true;

  // Registers and stack frames, by symbol index, from the module-wide .nv.info.
  std::unordered_map<uint32_t, uint32_t> regs, frame;
  if (const Section* info = e.find(".nv.info"); info && info->type == kShtCudaInfo) {
    std::vector<Record> rs;
    TRY(e.records(*info, rs));
    for (const Record& r : rs) {
      if (r.attr != kRegCount && r.attr != kFrameSize) continue;
      if (r.fmt != 4 || r.len < 8) return e.bad(r.at, fmt::format("attribute {:#x} of {} bytes, expected 8", r.attr, r.len));
      (r.attr == kRegCount ? regs : frame)[load<uint32_t>(r.data)] = load<uint32_t>(r.data + 4);
    }
  }
  const Section* const3 = e.find(".nv.constant3");

  for (size_t i = 0; i < syms.size(); ++i) {
    const Sym& s = syms[i];
    if (s.type == kSttFunc && (s.other & kStoEntry)) {
      if (s.shndx == 0 || s.shndx >= e.secs.size())
        return e.bad(s.at, fmt::format("kernel {} lies in section {}, which does not exist", s.name, s.shndx));
      KernelDesc k;
      k.name = std::string(s.name);
      if (auto it = regs.find(static_cast<uint32_t>(i)); it != regs.end()) k.num_regs = static_cast<int>(std::min<uint32_t>(it->second, 255));
      else k.num_regs = static_cast<int>(e.secs[s.shndx].info >> 24);  // sm_75/sm_80 also keep it here
      if (auto it = frame.find(static_cast<uint32_t>(i)); it != frame.end()) k.local_bytes = it->second;
      if (const3) k.const_bytes = static_cast<uint32_t>(std::min<uint64_t>(const3->size, UINT32_MAX));
      std::string shared_name = ".nv.shared." + k.name;
      if (const Section* sh = e.find(shared_name); sh && sh->type == kShtNobits) {
        uint64_t n = sh->size;
        if (reserved_shared) n = n > kReservedShared ? n - kReservedShared : 0;
        if (n > UINT32_MAX) return e.bad(sh->hdr, fmt::format("{} is {} bytes", sh->name, sh->size));
        k.shared_bytes = static_cast<uint32_t>(n);
      }

      // Parameters and launch attributes from the kernel's own .nv.info.<name>.
      std::string info_name = ".nv.info." + k.name;
      const Section* info = e.find(info_name);
      if (info && info->type != kShtCudaInfo) info = nullptr;
      std::vector<Record> rs;
      if (info) TRY(e.records(*info, rs));
      struct P {
        uint32_t ord, off, size;
        uint64_t at;
      };
      std::vector<P> ps;
      bool have_bytes = false;
      for (const Record& r : rs) {
        switch (r.attr) {
          case kKparamInfo:
          case kKparamInfoV2: {
            if (r.fmt != 4 || r.len < 12)
              return e.bad(r.at, fmt::format("{}: parameter record of {} bytes, expected 12", k.name, r.len));
            uint32_t w = load<uint32_t>(r.data + 8);
            // v1 packs the size into bits 18-31; v2 (parameters of 16 KiB and more) keeps it whole.
            uint32_t size = r.attr == kKparamInfo ? w >> 18 : load<uint16_t>(r.data + 8);
            ps.push_back({load<uint16_t>(r.data + 4), load<uint16_t>(r.data + 6), size, r.at});
            break;
          }
          case kCbankParamSize:
            if (r.fmt != 3) return e.bad(r.at, fmt::format("{}: parameter buffer size in record format {}", k.name, r.fmt));
            k.param_bytes = load<uint16_t>(r.data);
            have_bytes = true;
            break;
          case kMaxThreads: {
            int d[3];
            TRY(dims(e, r, "EIATTR_MAX_THREADS", d));
            uint64_t n = uint64_t(d[0]) * uint64_t(d[1]) * uint64_t(d[2]);
            if (n > 0x7fffffff) return e.bad(r.at, fmt::format("{}: maximum of {} threads", k.name, n));
            k.max_threads = static_cast<int>(n);
            break;
          }
          case kReqNtid: TRY(dims(e, r, "EIATTR_REQNTID", k.reqntid)); break;
          case kCtaPerCluster: TRY(dims(e, r, "EIATTR_CTA_PER_CLUSTER", k.cluster_dim)); break;
          default: break;
        }
      }
      // Records come in any order (ptxas writes the last parameter first): place by ordinal.
      std::sort(ps.begin(), ps.end(), [](const P& a, const P& b) { return a.ord < b.ord; });
      uint32_t end = 0;
      for (size_t j = 0; j < ps.size(); ++j) {
        if (ps[j].ord != j)
          return e.bad(ps[j].at, fmt::format("{}: parameter ordinal {} where {} belongs", k.name, ps[j].ord, j));
        end = std::max(end, ps[j].off + ps[j].size);
        k.params.push_back({ps[j].off, ps[j].size});
      }
      if (!have_bytes) k.param_bytes = end;
      else if (end > k.param_bytes)
        return e.bad(info->off, fmt::format("{}: parameters reach byte {} of a {}-byte buffer", k.name, end, k.param_bytes));
      img.kernels.push_back(std::move(k));
    } else if (s.type == kSttObject && s.shndx != 0 && s.shndx < kShnLoreserve) {
      if (s.shndx >= e.secs.size()) return e.bad(s.at, fmt::format("{} lies in section {}, which does not exist", s.name, s.shndx));
      const Section& sec = e.secs[s.shndx];
      GlobalDesc g;
      if (sec.name == ".nv.global" || sec.name == ".nv.global.init") g.space = (s.other & kStoManaged) ? Space::managed : Space::global;
      else if (sec.name == ".nv.constant3") g.space = Space::constant;
      else continue;  // driver-internal objects (parameter banks, reserved shared memory)
      if (!fits(sec.size, s.value, s.size))
        return e.bad(s.at, fmt::format("{} ({} bytes at {:#x}) runs past its section {} ({} bytes)", s.name, s.size, s.value, sec.name, sec.size));
      if (sec.type == kShtNobits && sec.size > kMaxNobits)
        return e.bad(sec.hdr, fmt::format("{} claims {} bytes", sec.name, sec.size));
      g.name = std::string(s.name);
      g.size = s.size;
      if (sec.type != kShtNobits) g.init.assign(p + sec.off + s.value, p + sec.off + s.value + s.size);
      img.globals.push_back(std::move(g));
    }
  }
  return Errc::success;
}

}  // namespace

bool is_elf(const void* data) noexcept {
  // Byte by byte: a shorter NUL-terminated text stops at its NUL.
  const auto* p = static_cast<const uint8_t*>(data);
  return p && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

Errc detail::cubin(const uint8_t* data, size_t size, Image& out, const char* api, Variant& variant) {
  if (!data) return fail(Errc::invalid_value, "{}: image is NULL", api);
  if (size != 0 && size < 4) return fail(Errc::invalid_image, "{}: {} bytes cannot hold a cubin", api, size);
  if (!is_elf(data)) return fail(Errc::invalid_image, "{}: not an ELF image (no \\x7fELF at offset 0)", api);
  Elf e{data, size, api, {}};
  Image img;
  TRY(parse(e, img, variant));
  out = std::move(img);
  return Errc::success;
}

Errc parse_cubin(const uint8_t* data, size_t size, Image& out, const char* api) {
  try {
    detail::Variant v;
    return detail::cubin(data, size, out, api, v);
  } catch (const std::bad_alloc&) {
    return fail(Errc::out_of_memory, "{}: out of host memory reading a cubin", api);
  }
}

}  // namespace cuda_shim::module
