// The device code image parser (emu/module), compiled in from source, over images nvcc built
// from module_samples/*.cu at build time. The expected numbers are what NVIDIA's driver (580,
// on an H100) reported for the same images through cuFuncGetAttribute, cuFuncGetParamInfo and
// cuModuleGetGlobal, and which entry of a fat binary it ran, with either nvcc (13.0, 13.5).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <unordered_map>
#include <string>
#include <vector>

#include "module/image.hpp"
#include "module/ptx_regs.hpp"

namespace cuda_shim {
// errc.cpp's recorder, without the driver's thread state.
namespace {
thread_local std::string g_why;
}
void set_explanation(Errc, std::string msg) noexcept { g_why = std::move(msg); }
}  // namespace cuda_shim

using namespace cuda_shim;
using namespace cuda_shim::module;
using Bytes = std::vector<uint8_t>;

namespace {

const char* const kApi = "cuModuleLoadData";

Bytes sample(const std::string& name) {
  std::ifstream f(std::string(MODULE_SAMPLES_DIR) + "/" + name, std::ios::binary);
  INFO(name);
  REQUIRE(f.good());
  Bytes b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (name.ends_with(".ptx")) b.push_back(0);
  return b;
}

// Parses a copy of exactly `n` bytes, so that the sanitizers see any read past them.
Errc parse_n(const Bytes& b, size_t n, int cc, Image& img) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[n ? n : 1]);
  std::memcpy(copy.get(), b.data(), n);
  return parse_image(copy.get(), n, cc, img, kApi);
}

Image parse_ok(const Bytes& b, int cc) {
  Image img;
  Errc e = parse_n(b, b.size(), cc, img);
  INFO(g_why);
  REQUIRE(e == Errc::success);
  return img;
}

const KernelDesc& kernel(const Image& img, const std::string& name) {
  for (const KernelDesc& k : img.kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  throw;
}

const GlobalDesc& global(const Image& img, const std::string& name) {
  for (const GlobalDesc& g : img.globals)
    if (g.name == name) return g;
  FAIL("no global " << name);
  throw;
}

std::vector<std::pair<uint32_t, uint32_t>> params(const KernelDesc& k) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (const Param& p : k.params) v.emplace_back(p.offset, p.size);
  return v;
}

Bytes contents(const GlobalDesc& g) {  // the initial bytes, zeros after the initializer
  Bytes b = g.init;
  b.resize(g.size, 0);
  return b;
}

bool same(const Image& a, const Image& b) {
  if (a.kernels.size() != b.kernels.size() || a.globals.size() != b.globals.size()) return false;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelDesc &x = a.kernels[i], &y = b.kernels[i];
    if (x.name != y.name || params(x) != params(y) || x.param_bytes != y.param_bytes || x.num_regs != y.num_regs ||
        x.shared_bytes != y.shared_bytes || x.const_bytes != y.const_bytes || x.local_bytes != y.local_bytes ||
        x.max_threads != y.max_threads)
      return false;
  }
  for (size_t i = 0; i < a.globals.size(); ++i)
    if (a.globals[i].name != b.globals[i].name || contents(a.globals[i]) != contents(b.globals[i]) ||
        a.globals[i].space != b.globals[i].space)
      return false;
  return true;
}

using P = std::vector<std::pair<uint32_t, uint32_t>>;

// What kernels.cu holds, as the driver reported it; `machine`: from a cubin (registers known).
void check_kernels(const Image& img, bool machine) {
  const KernelDesc& simple = kernel(img, "k_simple");
  CHECK(params(simple) == P{{0, 8}, {8, 4}});
  CHECK(simple.param_bytes == 12);
  const KernelDesc& bounds = kernel(img, "k_bounds");
  CHECK(params(bounds) == P{{0, 8}, {8, 8}, {16, 1}});
  CHECK(bounds.param_bytes == 17);
  CHECK(bounds.max_threads == 256);
  const KernelDesc& st = kernel(img, "k_struct");
  CHECK(params(st) == P{{0, 1}, {16, 16}, {32, 8}, {40, 3}});
  CHECK(st.param_bytes == 43);
  CHECK(st.max_threads == 0);
  CHECK(kernel(img, "k_shared").shared_bytes == 512);
  CHECK(kernel(img, "k_simple").shared_bytes == 0);
  CHECK(kernel(img, "k_local").local_bytes == 400);
  CHECK(kernel(img, "k_simple").local_bytes == 0);
  CHECK(params(kernel(img, "_Z5k_cppi")) == P{{0, 4}});
  CHECK(params(kernel(img, "_Z6k_tmplIfEvPT_")) == P{{0, 8}});
  const KernelDesc& none = kernel(img, "k_noparams");
  CHECK(none.params.empty());
  CHECK(none.param_bytes == 0);
  CHECK(img.kernels.size() == 8);
  for (const KernelDesc& k : img.kernels) {
    INFO(k.name);
    CHECK(k.const_bytes == 8);  // cvar, counted for every kernel of the module
    CHECK(k.reqntid[0] == 0);
    CHECK(k.cluster_dim[0] == 0);
    CHECK(k.num_regs > 0);  // ptxas's, or estimated from the PTX
    CHECK(k.regs_estimated == !machine);
  }
  CHECK(none.num_regs == 4);  // an empty kernel: ptxas's count, and the estimate's

  CHECK(img.globals.size() == 8);
  const GlobalDesc& d = global(img, "dvar");
  CHECK(d.space == Space::global);
  CHECK(contents(d) == Bytes{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0});
  CHECK(global(img, "zvar").size == 32);
  CHECK(contents(global(img, "zvar")) == Bytes(32, 0));
  CHECK(global(img, "cvar").space == Space::constant);
  CHECK(contents(global(img, "cvar")) == Bytes{0, 0, 0xc0, 0x3f, 0, 0, 0, 0x40});
  CHECK(global(img, "mvar").space == Space::managed);
  CHECK(contents(global(img, "mvar")) == Bytes{7, 0, 0, 0});
  CHECK(global(img, "mzero").space == Space::managed);
  CHECK(contents(global(img, "mzero")) == Bytes{0, 0, 0, 0});
  CHECK(global(img, "svar").space == Space::global);
  CHECK(contents(global(img, "svar")) == Bytes{3, 0, 0, 0});
  CHECK(contents(global(img, "ptrvar")) == Bytes(8, 0));  // &dvar[1]: relocated at load
  CHECK(contents(global(img, "dbl")) == Bytes{0, 0, 0, 0, 0, 0, 0xd0, 0x3f});
}

// The entries of a fat binary: {kind, SM, flags}.
struct EntryInfo {
  uint16_t kind;
  uint32_t arch;
  uint64_t flags;
};
std::vector<EntryInfo> entries(const Bytes& b) {
  std::vector<EntryInfo> v;
  uint64_t total, at;
  std::memcpy(&total, b.data() + 8, 8);
  total += 16;
  for (at = 16; at < total;) {
    uint32_t hs;
    uint64_t padded;
    EntryInfo e;
    std::memcpy(&e.kind, b.data() + at, 2);
    std::memcpy(&hs, b.data() + at + 4, 4);
    std::memcpy(&padded, b.data() + at + 8, 8);
    std::memcpy(&e.arch, b.data() + at + 28, 4);
    std::memcpy(&e.flags, b.data() + at + 40, 8);
    v.push_back(e);
    at += hs + padded;
  }
  return v;
}

template <class T>
void put(Bytes& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <class T>
T get(const Bytes& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// Header offset and {offset, size} of a cubin's section.
struct Sec {
  size_t hdr, off, size;
};
Sec section(const Bytes& elf, const std::string& name) {
  uint64_t shoff = get<uint64_t>(elf, 0x28);
  uint16_t shnum = get<uint16_t>(elf, 0x3c), shstrndx = get<uint16_t>(elf, 0x3e);
  uint64_t strs = get<uint64_t>(elf, shoff + shstrndx * 64 + 0x18);
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t h = shoff + i * 64;
    if (name == reinterpret_cast<const char*>(elf.data() + strs + get<uint32_t>(elf, h)))
      return {h, get<uint64_t>(elf, h + 0x18), get<uint64_t>(elf, h + 0x20)};
  }
  FAIL("no section " << name);
  throw;
}

Errc damaged(const Bytes& b, int cc = 90) {
  Image img;
  Errc e = parse_n(b, b.size(), cc, img);
  INFO(g_why);
  CHECK(g_why.find(kApi) != std::string::npos);
  return e;
}

}  // namespace

TEST_CASE("cubin: kernels, parameters, resources and globals as the driver reports them") {
  Image sm90 = parse_ok(sample("kernels_sm90.cubin"), 90);
  CHECK_FALSE(sm90.from_ptx);
  CHECK(sm90.arch == 90);
  check_kernels(sm90, true);
  // sm_75 machine code runs on later 7.x devices only.
  Image sm75 = parse_ok(sample("kernels_sm75.cubin"), 75);
  CHECK(sm75.arch == 75);
  check_kernels(sm75, true);
  Image img;
  CHECK(parse_image(sample("kernels_sm75.cubin").data(), 0, 90, img, kApi) == Errc::no_binary_for_gpu);
  CHECK(parse_image(sample("kernels_sm90.cubin").data(), 0, 100, img, kApi) == Errc::no_binary_for_gpu);
  CHECK(g_why.find("sm_90") != std::string::npos);
}

TEST_CASE("PTX: the same kernels and globals, registers unknown") {
  Bytes ptx = sample("kernels.ptx");
  Image img = parse_ok(ptx, 90);
  CHECK(img.from_ptx);
  CHECK(img.arch == 90);
  CHECK(img.ptx_version >= 90);
  check_kernels(img, false);
  // A later device compiles it; an earlier one cannot (the driver's JIT: CUDA_ERROR_INVALID_PTX).
  CHECK(parse_ok(ptx, 120).arch == 90);
  Image none;
  CHECK(parse_image(ptx.data(), 0, 89, none, kApi) == Errc::invalid_ptx);
  // Arch-specific PTX compiles for its own SM only.
  Bytes a = sample("choice_90a.ptx");
  CHECK(parse_ok(a, 90).kernels.at(0).shared_bytes == 3604);
  CHECK(parse_image(a.data(), a.size(), 100, none, kApi) == Errc::invalid_ptx);
}

TEST_CASE("launch attributes: clusters, launch bounds, required block size, large parameters") {
  for (const char* name : {"launch_sm90.cubin", "launch.ptx"}) {
    INFO(name);
    Image img = parse_ok(sample(name), 90);
    const KernelDesc& c = kernel(img, "k_cluster");
    CHECK((c.cluster_dim[0] == 2 && c.cluster_dim[1] == 1 && c.cluster_dim[2] == 1));
    CHECK(kernel(img, "k_lb2").max_threads == 128);
    CHECK(kernel(img, "k_lb3").max_threads == 96);
    const KernelDesc& b = kernel(img, "k_block");  // __block_size__((64, 2, 1)): a cluster of 1
    CHECK((b.reqntid[0] == 64 && b.reqntid[1] == 2 && b.reqntid[2] == 1));
    CHECK((b.cluster_dim[0] == 1 && b.cluster_dim[1] == 1 && b.cluster_dim[2] == 1));
    const KernelDesc& bc = kernel(img, "k_block_cluster");
    CHECK((bc.reqntid[0] == 32 && bc.reqntid[1] == 1 && bc.reqntid[2] == 1));
    CHECK(bc.cluster_dim[0] == 4);
    const KernelDesc& big = kernel(img, "k_big");  // over 16 KiB: EIATTR_KPARAM_INFO_V2
    CHECK(params(big) == P{{0, 1}, {4, 20000}, {20008, 8}});
    CHECK(big.param_bytes == 20016);
    CHECK(big.const_bytes == 0);
  }
}

TEST_CASE("fat binary: the entry a device of each compute capability runs") {
  // choice.cu's kernel declares TAG ints of shared memory: __CUDA_ARCH__, +1 for sm_XXa, +2
  // for sm_XXf. The driver took sm_90a over sm_90 and compute_90a over compute_90.
  Bytes mix = sample("choice.fatbin");
  struct Row {
    int cc;
    bool ptx;
    int arch;
    uint32_t shared;
  };
  const Row rows[] = {{75, false, 75, 3000},  {80, false, 80, 3200},  {86, false, 86, 3440},  {87, false, 86, 3440},
                      {89, false, 86, 3440},  {90, false, 90, 3604},  {100, false, 100, 4004}, {103, false, 100, 4008},
                      {110, true, 90, 3600},  {120, false, 120, 4800}, {121, false, 120, 4800}};
  for (const Row& r : rows) {
    INFO("cc " << r.cc);
    Image img = parse_ok(mix, r.cc);
    CHECK(img.from_ptx == r.ptx);
    CHECK(img.arch == r.arch);
    CHECK(kernel(img, "k_which").shared_bytes == r.shared);
    CHECK((img.ptx_version >= 90) == (r.cc >= 90));  // compute_90's ISA version, when it compiles here
  }
  Image img;
  CHECK(parse_n(mix, mix.size(), 70, img) == Errc::no_binary_for_gpu);
  CHECK(g_why.find("sm_90a") != std::string::npos);
  CHECK(g_why.find("compute_90") != std::string::npos);

  Bytes ptx = sample("choice_ptx.fatbin");
  const Row ptx_rows[] = {{75, true, 75, 3000}, {80, true, 75, 3000},  {90, true, 90, 3604}, {100, true, 100, 4008},
                          {103, true, 100, 4008}, {110, true, 75, 3000}, {120, true, 75, 3000}};
  for (const Row& r : ptx_rows) {
    INFO("PTX only, cc " << r.cc);
    Image i = parse_ok(ptx, r.cc);
    CHECK(i.from_ptx);
    CHECK(i.arch == r.arch);
    CHECK(kernel(i, "k_which").shared_bytes == r.shared);
    CHECK(i.kernels.at(0).regs_estimated);
  }
  CHECK(parse_n(ptx, ptx.size(), 70, img) == Errc::no_binary_for_gpu);
}

TEST_CASE("fat binary: zstd, LZ4 and plain entries give the same image") {
  Bytes plain = sample("kernels_plain.fatbin"), zstd = sample("kernels_zstd.fatbin"), lz4 = sample("kernels_lz4.fatbin"),
        dflt = sample("kernels.fatbin");
  // The samples hold what they are meant to: nvcc compresses PTX by default, everything with
  // -compress-all, with LZ4 in --compress-mode=speed.
  for (const EntryInfo& e : entries(plain)) CHECK((e.flags & 0xa000) == 0);
  for (const EntryInfo& e : entries(zstd)) CHECK((e.flags & 0xa000) == 0x8000);
  for (const EntryInfo& e : entries(lz4)) CHECK((e.flags & 0xa000) == 0x2000);
  for (const EntryInfo& e : entries(dflt)) CHECK((e.flags & 0xa000) == (e.kind == 1 ? 0x8000u : 0u));
  Image sm90 = parse_ok(sample("kernels_sm90.cubin"), 90), sm75 = parse_ok(sample("kernels_sm75.cubin"), 75),
        ptx = parse_ok(sample("kernels.ptx"), 100);
  for (const Bytes* b : {&plain, &zstd, &lz4, &dflt}) {
    CHECK(same(parse_ok(*b, 90), sm90));
    CHECK(same(parse_ok(*b, 75), sm75));
    Image jit = parse_ok(*b, 100);  // sm_90 code does not run on 10.0: compute_90 PTX does
    CHECK(jit.from_ptx);
    CHECK(same(jit, ptx));
    Image img;
    CHECK(parse_n(*b, b->size(), 86, img) == Errc::no_binary_for_gpu);
    // A size of 0 trusts the container's own.
    CHECK(parse_image(b->data(), 0, 90, img, kApi) == Errc::success);
    CHECK(same(img, sm90));
  }
}

TEST_CASE("fat binary: nvcc's wrapper points at the container") {
  Bytes fb = sample("kernels.fatbin");
  struct Wrapper {
    uint32_t magic, version;
    const void* data;
    void* filename_or_fatbins;
  } w{0x466243b1, 1, fb.data(), nullptr};
  static_assert(sizeof(Wrapper) == 24);
  CHECK(is_fatbin_wrapper(&w));
  CHECK_FALSE(is_fatbin(&w));
  CHECK(is_fatbin(fb.data()));
  CHECK_FALSE(is_elf(fb.data()));
  CHECK(is_elf(sample("kernels_sm90.cubin").data()));
  CHECK_FALSE(is_fatbin_wrapper(""));
  Image img;
  REQUIRE(parse_image(&w, 0, 90, img, kApi) == Errc::success);
  CHECK(same(img, parse_ok(sample("kernels_sm90.cubin"), 90)));
  REQUIRE(parse_image(&w, sizeof w, 75, img, kApi) == Errc::success);
  CHECK(img.arch == 75);
  w.version = 3;
  CHECK(parse_image(&w, 0, 90, img, kApi) == Errc::invalid_image);
  w.version = 2;
  w.data = nullptr;
  CHECK(parse_image(&w, 0, 90, img, kApi) == Errc::invalid_image);
  w.data = "not a fat binary";
  CHECK(parse_image(&w, 0, 90, img, kApi) == Errc::invalid_image);
  CHECK(parse_image(nullptr, 0, 90, img, kApi) == Errc::invalid_value);
  CHECK(parse_image("\x01\x02\x03 junk", 0, 90, img, kApi) == Errc::invalid_image);
}

TEST_CASE("PTX: initializers, vectors, declarations the parser must step over") {
  const char* text = R"(
    // comment
    /* block
       comment */
    .version 8.7
    .target sm_80, texmode_independent
    .address_size 64
    .file 1 "x.cu"
    .extern .global .align 4 .b8 elsewhere[];
    .global .texref tex;
    .global .align 4 .u32 s = 42;
    .global .align 4 .s32 neg[3] = {-1, 0x10, 010};
    .global .align 4 .f32 f[2] = {0f3FC00000, 2.5};
    .global .align 8 .f64 d = 0d3FF0000000000000;
    .global .align 8 .v2 .u32 v[2] = {{1, 2}, {3, 4}};
    .global .align 2 .f16 h = 0x3C00;
    .global .align 2 .b16 hb[2];
    .global .align 1 .b8 str[] = {104, 105, 0};
    .global .align 8 .b8 addr[16] = {0xFF(generic(s)), 0xFF00(generic(s)), 7};
    .global .align 8 .u64 p1 = generic(s)+4, p2 = 9;
    .weak .global .align 4 .u32 w;
    .const .align 8 .b8 c1[3];
    .const .align 4 .u32 c2 = 5;
    .shared .align 16 .b8 msh[100];
    .extern .shared .align 16 .b8 dyn[];
    .extern .func (.param .b32 r) ext(.param .b32 a);
    .func helper(.param .b64 x) { ret; }
    .visible .entry k(
      .param .u8 a,
      .param .u64 .ptr .global .align 16 b,
      .param .align 8 .b8 c[12],
      .param .v2 .f32 e
    )
    .maxntid 32, 4
    .minnctapersm 2
    .pragma "nounroll";
    {
      .reg .b32 %r<3>;
      .shared .align 8 .b8 own[24];
      .local .align 4 .b8 depot[40];
      $L1:
      ld.shared.u32 %r1, [msh+4];
      st.shared.u32 [own], %r1;
      { .reg .b32 inner; }
      ret;
    }
    .entry k2 .reqntid 8, 2, 1 { ret; }
  )";
  Image img;
  REQUIRE(parse_ptx(text, 0, img, kApi) == Errc::success);
  CHECK(img.ptx_version == 87);
  CHECK(img.arch == 80);
  auto bytes = [&](const char* n) { return contents(global(img, n)); };
  CHECK(bytes("s") == Bytes{42, 0, 0, 0});
  CHECK(bytes("neg") == Bytes{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 8, 0, 0, 0});
  CHECK(bytes("f") == Bytes{0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0x40});
  CHECK(bytes("d") == Bytes{0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
  CHECK(bytes("v") == Bytes{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0});
  CHECK(bytes("h") == Bytes{0x00, 0x3c});
  CHECK(bytes("hb") == Bytes{0, 0, 0, 0});
  CHECK(bytes("str") == Bytes{104, 105, 0});
  CHECK(bytes("addr") == Bytes{0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(bytes("p1") == Bytes(8, 0));
  CHECK(bytes("p2") == Bytes{9, 0, 0, 0, 0, 0, 0, 0});
  CHECK(global(img, "c2").space == Space::constant);
  CHECK(img.globals.size() == 14);  // s neg f d v h hb str addr p1 p2 w c1 c2
  REQUIRE(img.kernels.size() == 2);
  // The kernels last one first, the order of the cubin the JIT would make.
  const KernelDesc& k = img.kernels[1];
  CHECK(k.name == "k");
  CHECK(params(k) == P{{0, 1}, {8, 8}, {16, 12}, {32, 8}});
  CHECK(k.param_bytes == 40);
  CHECK(k.max_threads == 128);
  CHECK(k.shared_bytes == 24 + 8 + 100);  // own, then msh aligned to 16
  CHECK(k.local_bytes == 40);
  CHECK(k.const_bytes == 8);  // c1[3], then c2 aligned to 4
  CHECK((img.kernels[0].reqntid[0] == 8 && img.kernels[0].reqntid[1] == 2 && img.kernels[0].reqntid[2] == 1));
  CHECK(img.kernels[0].params.empty());
}

TEST_CASE("PTX: what the parser refuses, with the line") {
  Image img;
  auto bad = [&](const char* text, const char* why) {
    INFO(text);
    CHECK(parse_ptx(text, 0, img, kApi) == Errc::invalid_ptx);
    INFO(g_why);
    CHECK(g_why.find(why) != std::string::npos);
  };
  bad(".target sm_90\n", "must begin with .version");
  bad(".version 9.0\n.target sm_90\n.global .u32 x[2] = {1, 2, 3};\n", "line 3");
  bad(".version 9.0\n.target sm_90\n.entry k(.param .u32 a { ret; }\n", "expected");
  bad(".version 9.0\n.target sm_90\n.entry k() {\n ret;\n", "not closed");
  bad(".version 9.0\n.target sm_90\n.global .q32 x;\n", ".q32");
  bad(".version 9.0\n/* open", "comment not closed");
  bad(".version 9.0\n.target sm_90\n.global .u32 x = 0zz;\n", "bad number");
  bad(".version 9.0\n", "no .version or .target");
  // What ptxas refuses: a statement that is no instruction (labels, guards and vector operands
  // are not mistaken for one).
  bad(".version 9.0\n.target sm_90\n.entry k() {\n bogus_instruction %r1, 7;\n ret;\n}\n",
      "'bogus_instruction' is not a PTX instruction");
  CHECK(parse_ptx(".version 9.0\n.target sm_90\n.entry k() {\n .reg .b32 %r<3>;\n .reg .pred %p;\n"
                  "$L0:\n @!%p bra $L0;\n { .reg .b64 %t; mov.b64 {%r1, %r2}, %t; }\n ret;\n}\n",
                  0, img, kApi) == Errc::success);
  // A size shorter than the text ends it there.
  CHECK(parse_ptx(".version 9.0\n.target sm_90\n.global .u32 x = 5;", 30, img, kApi) == Errc::invalid_ptx);
}

TEST_CASE("damaged images: every truncation, wrong magic, sizes past the end") {
  for (const char* name : {"kernels_sm90.cubin", "kernels.fatbin", "kernels_zstd.fatbin", "kernels_lz4.fatbin", "launch.ptx"}) {
    Bytes b = sample(name);
    bool ptx = std::string(name).ends_with(".ptx");
    size_t bad = 0;
    for (size_t n = 1; n < b.size() - (ptx ? 1 : 0); ++n) {
      Image img;
      g_why.clear();
      Errc e = parse_n(b, n, 90, img);
      // Binary images end where their headers say; cut PTX usually leaves a sentence unfinished.
      if (!ptx && e != Errc::invalid_image) ++bad;
      if (ptx && e != Errc::invalid_ptx && e != Errc::invalid_image && e != Errc::success) ++bad;
      if (e != Errc::success && g_why.find(kApi) == std::string::npos) ++bad;
    }
    INFO(name);
    CHECK(bad == 0);
  }

  Bytes fb = sample("kernels_zstd.fatbin");
  auto fbe = entries(fb);
  REQUIRE(fbe.size() == 3);
  size_t e1 = 16;  // the first entry's header
  auto edit = [&](auto f) {
    Bytes c = fb;
    f(c);
    return c;
  };
  CHECK(damaged(edit([](Bytes& c) { c[0] ^= 1; })) == Errc::invalid_image);
  CHECK(damaged(edit([](Bytes& c) { put<uint16_t>(c, 4, 2); })) == Errc::invalid_image);
  CHECK(damaged(edit([](Bytes& c) { put<uint64_t>(c, 8, uint64_t(1) << 63); })) == Errc::invalid_image);
  CHECK(damaged(edit([](Bytes& c) { put<uint64_t>(c, 8, ~uint64_t(0)); })) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint32_t>(c, e1 + 4, 0xffffff00u); })) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint32_t>(c, e1 + 4, 8); })) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint64_t>(c, e1 + 8, uint64_t(1) << 62); })) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint32_t>(c, e1 + 16, 0xffffffffu); }), 75) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint64_t>(c, e1 + 56, uint64_t(1) << 40); }), 75) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint64_t>(c, e1 + 56, get<uint64_t>(c, e1 + 56) - 1); }), 75) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint64_t>(c, e1 + 56, get<uint64_t>(c, e1 + 56) + 1); }), 75) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) { put<uint64_t>(c, e1 + 40, get<uint64_t>(c, e1 + 40) | 0x2000); }), 75) == Errc::invalid_image);
  CHECK(damaged(edit([&](Bytes& c) {  // the zstd stream itself
          for (size_t i = 0; i < 64; ++i) c[e1 + 64 + 100 + i] ^= 0x5a;
        }), 75) == Errc::invalid_image);
  Bytes lz = sample("kernels_lz4.fatbin");
  for (size_t i = 0; i < 64; ++i) lz[e1 + 64 + 100 + i] = 0xff;
  CHECK(damaged(lz, 75) == Errc::invalid_image);

  Bytes cubin = sample("kernels_sm90.cubin");
  auto cedit = [&](auto f) {
    Bytes c = cubin;
    f(c);
    return c;
  };
  CHECK(damaged(cedit([](Bytes& c) { c[1] = 'X'; })) == Errc::invalid_image);
  CHECK(damaged(cedit([](Bytes& c) { c[4] = 1; })) == Errc::invalid_image);  // 32-bit
  CHECK(damaged(cedit([](Bytes& c) { put<uint16_t>(c, 18, 62); })) == Errc::invalid_image);
  CHECK(damaged(cedit([](Bytes& c) { put<uint64_t>(c, 0x28, uint64_t(1) << 60); })) == Errc::invalid_image);
  CHECK(damaged(cedit([](Bytes& c) { put<uint16_t>(c, 0x3c, 0xffff); })) == Errc::invalid_image);
  CHECK(damaged(cedit([](Bytes& c) { put<uint16_t>(c, 0x3e, 0xfff0); })) == Errc::invalid_image);
  Sec info = section(cubin, ".nv.info.k_struct"), symtab = section(cubin, ".symtab");
  CHECK(damaged(cedit([&](Bytes& c) { put<uint64_t>(c, info.hdr + 0x20, uint64_t(1) << 50); })) == Errc::invalid_image);
  CHECK(damaged(cedit([&](Bytes& c) { put<uint64_t>(c, info.hdr + 0x18, c.size() - 2); })) == Errc::invalid_image);
  CHECK(damaged(cedit([&](Bytes& c) { put<uint64_t>(c, symtab.hdr + 0x38, 16); })) == Errc::invalid_image);
  CHECK(damaged(cedit([&](Bytes& c) { put<uint32_t>(c, symtab.off + 24, 0xfffffff0u); })) == Errc::invalid_image);
  // An attribute record whose size runs past its section, and one of an unknown format.
  CHECK(damaged(cedit([&](Bytes& c) { put<uint16_t>(c, info.off + 2 + 4 * 0, 0xfff0); })) == Errc::invalid_image);
  CHECK(damaged(cedit([&](Bytes& c) { c[info.off] = 9; })) == Errc::invalid_image);
}

TEST_CASE("damaged images: random bytes changed never crash the parser") {
  std::mt19937 rng(1234);
  for (const char* name : {"kernels_sm90.cubin", "kernels_zstd.fatbin", "kernels_lz4.fatbin", "choice.fatbin", "launch.ptx"}) {
    Bytes orig = sample(name);
    size_t changed = 0;
    for (int round = 0; round < 1500; ++round) {
      Bytes b = orig;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        // Mostly the headers, where the sizes and offsets are.
        size_t at = (rng() % 2) ? rng() % std::min<size_t>(b.size(), 512) : rng() % b.size();
        b[at] = static_cast<uint8_t>(rng());
      }
      Image img;
      if (parse_n(b, b.size(), 90, img) != Errc::success) ++changed;
    }
    INFO(name << ": " << changed << " of 1500 refused");
    SUCCEED();
  }
}

// ---- register estimates (ptx_regs.hpp) ------------------------------------------------------
namespace {

// A kernel keeping `n` f64 accumulators across a loop, as numba-cuda's register test does.
std::string accumulators(int n, const char* directives = "") {
  std::string s = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry acc(.param .u64 out, .param .u32 k)";
  s += directives;
  s += "\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .f64 %fd<" + std::to_string(2 * n + 2) + ">;\n.reg .b64 %rd<3>;\n";
  for (int i = 0; i < n; ++i) s += "mov.f64 %fd" + std::to_string(i) + ", 0d3FF0000000000000;\n";
  s += "ld.param.u32 %r1, [k];\nmov.u32 %r2, 0;\n$L_top:\n";
  for (int i = 0; i < n; ++i) s += "mul.f64 %fd" + std::to_string(i) + ", %fd" + std::to_string(i) + ", %fd" + std::to_string(i) + ";\n";
  s += "add.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %r1;\n@%p1 bra $L_top;\n";
  s += "mov.f64 %fd" + std::to_string(2 * n) + ", 0d0000000000000000;\n";
  for (int i = 0; i < n; ++i) s += "add.f64 %fd" + std::to_string(2 * n) + ", %fd" + std::to_string(2 * n) + ", %fd" + std::to_string(i) + ";\n";
  s += "ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nst.global.f64 [%rd2], %fd" + std::to_string(2 * n) + ";\nret;\n}\n";
  return s;
}

int regs_of(const std::string& ptx) {
  Image img;
  REQUIRE(parse_ptx(ptx.c_str(), 0, img, kApi) == Errc::success);
  REQUIRE(img.kernels.size() == 1);
  CHECK(img.kernels[0].regs_estimated);
  return img.kernels[0].num_regs;
}

}  // namespace

TEST_CASE("PTX registers: values live across a loop count, 64-bit ones twice") {
  // 20 f64 accumulators live around the loop: 40 registers, plus the counters and addressing.
  int twenty = regs_of(accumulators(20));
  CHECK(twenty >= 40);
  CHECK(twenty <= 56);
  // Half the accumulators, about half the registers; never below ptxas's floor of 8.
  int ten = regs_of(accumulators(10));
  CHECK(ten < twenty - 16);
  CHECK(ten >= 20);
  CHECK(regs_of(accumulators(0)) >= 8);
  // An empty kernel: ptxas's 4.
  CHECK(regs_of(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry e()\n{\nret;\n}\n") == 4);
}

TEST_CASE("PTX registers: .maxnreg bounds the estimate; limit_registers writes it") {
  CHECK(regs_of(accumulators(20, "\n.maxnreg 40")) == 40);
  CHECK(regs_of(accumulators(2, "\n.maxnreg 40")) < 40);
  std::string limited = limit_registers(accumulators(20), 38);
  CHECK(limited.find(".maxnreg 38") != std::string::npos);
  CHECK(regs_of(limited) == 38);
  // An existing larger limit is lowered, a smaller one kept; declarations are left alone.
  CHECK(regs_of(limit_registers(accumulators(20, "\n.maxnreg 200"), 30)) == 30);
  std::string kept = limit_registers(accumulators(20, "\n.maxnreg 24"), 30);
  CHECK(kept.find(".maxnreg 24") != std::string::npos);
  CHECK(kept.find(".maxnreg 30") == std::string::npos);
  std::string decl = ".version 8.0\n.target sm_80\n.extern .entry x(.param .u64 p);\n";
  CHECK(limit_registers(decl, 30) == decl);
}

TEST_CASE("PTX registers: a call costs the calling convention's registers, and the callee's") {
  const char* text = R"(.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) f(.param .b32 a)
{
.reg .b32 %r<40>;
ld.param.b32 %r1, [a];
add.s32 %r2, %r1, 1;
st.param.b32 [r], %r2;
ret;
}
.visible .entry k(.param .u64 out)
{
.reg .b32 %r<3>;
.param .b32 a0;
.param .b32 r0;
st.param.b32 [a0], 1;
call.uni (r0), f, (a0);
ld.param.b32 %r1, [r0];
ret;
}
)";
  Image img;
  REQUIRE(parse_ptx(text, 0, img, kApi) == Errc::success);
  REQUIRE(img.kernels.size() == 1);
  CHECK(img.kernels[0].num_regs == 24);
  std::unordered_map<std::string, int> all = estimate_registers(text);
  CHECK(all.size() == 2);
  CHECK(all["f"] >= 8);
}
