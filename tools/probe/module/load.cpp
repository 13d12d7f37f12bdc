// The loaders (cuModuleLoad[Data[Ex]|FatBinary], cuLibraryLoad{Data,FromFile}) on good, broken and
// junk images; the library getters without a current context and on images the device cannot use.
#include "probe.hpp"

#include <sys/stat.h>

namespace {

struct FatbinWrapper {  // what nvcc emits in the host object (__fatBinC_Wrapper_t)
  int magic;
  int version;
  const void* data;
  void* filename_or_fatbins;
};

size_t real_size(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? size_t(st.st_size) : 0;
}

// Images in memory, shared by the loaders' sections.
struct NamedImage {
  std::string name;
  const void* p;
};
// A 64-byte image (then NULs) that starts with `head` (n bytes) and goes on with `fill`.
const void* junk_image(std::vector<std::vector<char>>& keep, const void* head, size_t n, char fill) {
  keep.emplace_back(64 + 256, 0);
  memcpy(keep.back().data(), head, n);
  for (size_t i = n; i < 64; ++i) keep.back()[i] = fill;
  return keep.back().data();
}
// The first n bytes of an image of `size` bytes, NULs after.
const void* cut_image(std::vector<std::vector<char>>& keep, const std::vector<char>& img, size_t size, size_t n) {
  keep.emplace_back(size + 256, 0);
  memcpy(keep.back().data(), img.data(), n);
  return keep.back().data();
}
std::vector<NamedImage> image_cases(std::vector<std::vector<char>>& keep) {
  std::vector<NamedImage> v;
  v.push_back({"fatbin", g.fatbin.data()});
  static FatbinWrapper w;
  w = {0x466243b1, 1, g.fatbin.data(), nullptr};
  v.push_back({"fatbin_wrapper", &w});
  v.push_back({"cubin_sm90", g.cub90.data()});
  v.push_back({"cubin_sm100", g.cub100.data()});
  v.push_back({"ptx", g.ptx.data()});
  v.push_back({"null", nullptr});
  keep.emplace_back(64 + 256, 0);
  for (int i = 0; i < 64; ++i) keep.back()[i] = char(0xA0 + (i * 37) % 64);  // garbage, then NULs
  v.push_back({"garbage64", keep.back().data()});
  const char* text = "hello, this is not an image at all; just some text!";
  v.push_back({"text_garbage", junk_image(keep, text, 52, 0)});
  v.push_back({"elf_magic_junk", junk_image(keep, "\x7f" "ELF", 4, char(0xA5))});
  v.push_back({"fatbin_magic_junk", junk_image(keep, g.fatbin.data(), 8, char(0xA5))});  // container magic+version
  size_t fsz = real_size(g.p_fatbin);
  v.push_back({"fatbin_truncated_half", cut_image(keep, g.fatbin, fsz, fsz / 2)});
  v.push_back({"fatbin_header_only", cut_image(keep, g.fatbin, fsz, 16)});
  size_t csz = real_size(g.p_cub90);
  v.push_back({"cubin_truncated_half", cut_image(keep, g.cub90, csz, csz / 2)});
  v.push_back({"empty_string", ""});
  v.push_back({"ptx_syntax_error", kBadPtx});
  static std::string wrong_target, newer_version;
  wrong_target = std::string(g.ptx.data());
  size_t at = wrong_target.find(".target sm_90");
  if (at != std::string::npos) wrong_target.replace(at, 13, ".target sm_100");
  v.push_back({"ptx_target_sm100", wrong_target.c_str()});
  newer_version = std::string(g.ptx.data());
  at = newer_version.find(".version ");
  if (at != std::string::npos) newer_version.replace(at, 12, ".version 9.9");
  v.push_back({"ptx_version_9.9", newer_version.c_str()});
  return v;
}

const char* const kRiskyImages[] = {"garbage64", "text_garbage", "elf_magic_junk", "fatbin_magic_junk",
                                    "fatbin_truncated_half", "fatbin_header_only", "cubin_truncated_half"};
bool risky_image(const std::string& n) {
  for (const char* r : kRiskyImages)
    if (n == r) return true;
  return false;
}

// What a successful load holds (its function or kernel count, "(code)" of the count with
// with_code), then its unload's code.
std::string loaded(CUmodule m, bool with_code) {
  unsigned n = 0;
  CUresult rc = cuModuleGetFunctionCount(&n, m);
  std::string c = with_code ? fmt("(%s)", en(rc)) : "";
  return fmt(" functions=%u%s unload=%s", n, c.c_str(), en(cuModuleUnload(m)));
}
std::string loaded(CUlibrary l, bool with_code) {
  unsigned n = 0;
  CUresult rc = cuLibraryGetKernelCount(&n, l);
  std::string c = with_code ? fmt("(%s)", en(rc)) : "";
  return fmt(" kernels=%u%s unload=%s", n, c.c_str(), en(cuLibraryUnload(l)));
}
// A load's line: its code, what it did to the handle preset to the sentinel, what it loaded.
template <class H>
void report_load(const std::string& name, CUresult r, H h, bool with_code) {
  std::string x = out_state(h);
  if (r == CUDA_SUCCESS) x += loaded(h, with_code);
  P_(name, r, x);
}

// One loader on one in-memory image.
void load_one(const std::string& api, const NamedImage& c) {
  CUmodule m = sentinel<CUmodule>();
  CUlibrary l = sentinel<CUlibrary>();
  if (api == "cuModuleLoadData") {
    CUresult r = cuModuleLoadData(&m, c.p);
    report_load(api + "." + c.name, r, m, true);
  } else if (api == "cuModuleLoadFatBinary") {
    CUresult r = cuModuleLoadFatBinary(&m, c.p);
    report_load(api + "." + c.name, r, m, false);
  } else if (api == "cuLibraryLoadData") {
    CUresult r = lib_load(&l, c.p);
    report_load(api + "." + c.name, r, l, true);
  }
}
void sec_load_risky(const std::string& api, const std::string& image) {
  ctx();
  std::vector<std::vector<char>> keep;
  for (auto& c : image_cases(keep))
    if (c.name == image) load_one(api, c);
}

void sec_load() {
  ctx();
  std::vector<std::vector<char>> keep;
  auto imgs = image_cases(keep);
  for (auto& c : imgs)
    if (!risky_image(c.name)) load_one("cuModuleLoadData", c);
  P("cuModuleLoadData.null_out", cuModuleLoadData(nullptr, g.fatbin.data()));
  for (auto& c : imgs)
    if (!risky_image(c.name)) load_one("cuModuleLoadFatBinary", c);
  for (auto& c : imgs) {
    if (c.name != "fatbin" && c.name != "cubin_sm90" && c.name != "ptx" && c.name != "null") continue;
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadDataEx(&m, c.p, 0, nullptr, nullptr);
    std::string x = out_state(m);
    if (r == CUDA_SUCCESS) x += fmt(" unload=%s", en(cuModuleUnload(m)));
    P("cuModuleLoadDataEx.0opts." + c.name, r, x);
  }
  {
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadDataEx(&m, g.fatbin.data(), 1, nullptr, nullptr);
    P("cuModuleLoadDataEx.1opt_null_arrays.fatbin", r, out_state(m));
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
  }
  {
    char log[4096] = {0};
    CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[2] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadDataEx(&m, kBadPtx, 2, o, vals);
    P("cuModuleLoadDataEx.errlog.ptx_syntax_error", r, out_state(m) + " log=\"" + oneline(log, 300) + "\"");
  }
  // cuModuleLoad: files
  {
    FILE* f = fopen("/tmp/probe_module_empty_file", "wb");
    if (f) fclose(f);
  }
  std::pair<std::string, const char*> files[] = {
      {"fatbin", g.p_fatbin.c_str()}, {"cubin_sm90", g.p_cub90.c_str()}, {"cubin_sm100", g.p_cub100.c_str()},
      {"ptx", g.p_ptx.c_str()},       {"missing", "/nonexistent/dir/kernels.fatbin"},
      {"null_path", nullptr},         {"directory", "/tmp"},
      {"empty_file", "/tmp/probe_module_empty_file"},
      {"empty_path", ""}};
  for (auto& c : files) {
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoad(&m, c.second);
    report_load("cuModuleLoad." + c.first, r, m, false);
  }
  P("cuModuleLoad.null_out", cuModuleLoad(nullptr, g.p_fatbin.c_str()));
  // Libraries: the same images.
  for (auto& c : imgs)
    if (!risky_image(c.name)) load_one("cuLibraryLoadData", c);
  P("cuLibraryLoadData.null_out", lib_load(nullptr, g.fatbin.data()));
  for (auto& c : files) {
    CUlibrary l = sentinel<CUlibrary>();
    CUresult r = cuLibraryLoadFromFile(&l, c.second, nullptr, nullptr, 0, nullptr, nullptr, 0);
    report_load("cuLibraryLoadFromFile." + c.first, r, l, false);
  }
}

// Without a current context: which entries need one.
void sec_noctx() {
  cuInit(0);
  CUmodule m = sentinel<CUmodule>();
  P("noctx.cuModuleLoadData.fatbin", cuModuleLoadData(&m, g.fatbin.data()), out_state(m));
  CUmoduleLoadingMode mode = CUmoduleLoadingMode(0);
  P("noctx.cuModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), fmt("mode=%d", int(mode)));
  CUlibrary l = sentinel<CUlibrary>();
  CUresult r = lib_load(&l, g.fatbin.data());
  P("noctx.cuLibraryLoadData.fatbin", r, out_state(l));
  if (r != CUDA_SUCCESS) return;
  CUkernel k = nullptr;
  P("noctx.cuLibraryGetKernel", cuLibraryGetKernel(&k, l, "k_extern_c"));
  unsigned n = 0;
  P("noctx.cuLibraryGetKernelCount", cuLibraryGetKernelCount(&n, l), fmt("count=%u", n));
  const char* kn = nullptr;
  P("noctx.cuKernelGetName.ok", cuKernelGetName(&kn, k), kn ? std::string("name=") + kn : "");
  size_t off = 99, sz = 99;
  P("noctx.cuKernelGetParamInfo.0", cuKernelGetParamInfo(k, 0, &off, &sz), fmt("offset=%zu size=%zu", off, sz));
  int v = -7;
  P("noctx.cuKernelGetAttribute.NUM_REGS", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0), fmt("value=%d", v));
  CUfunction f = sentinel<CUfunction>();
  P("noctx.cuKernelGetFunction", cuKernelGetFunction(&f, k), out_state(f));
  CUmodule lm = sentinel<CUmodule>();
  P("noctx.cuLibraryGetModule", cuLibraryGetModule(&lm, l), out_state(lm));
  CUdeviceptr d = 0;
  size_t bytes = 0;
  P("noctx.cuLibraryGetGlobal.dvar", cuLibraryGetGlobal(&d, &bytes, l, "dvar"), fmt("bytes=%zu", bytes));
  P("noctx.cuLibraryGetManaged.mvar", cuLibraryGetManaged(&d, &bytes, l, "mvar"), fmt("bytes=%zu", bytes));
  ctx();
  f = sentinel<CUfunction>();
  P("noctx.then_ctx.cuKernelGetFunction", cuKernelGetFunction(&f, k), out_state(f));
  P("noctx.then_ctx.cuLibraryGetModule", cuLibraryGetModule(&lm, l));
  P("noctx.then_ctx.cuLibraryGetGlobal.dvar", cuLibraryGetGlobal(&d, &bytes, l, "dvar"), fmt("bytes=%zu", bytes));
  P("noctx.cuLibraryUnload", cuLibraryUnload(l));
}

// A library from an image the device cannot use: under lazy loading cuLibraryLoadData succeeds;
// what do its getters say?
void sec_lazylib() {
  ctx();
  std::vector<std::vector<char>> keep;
  for (auto& c : image_cases(keep)) {
    if (c.name != std::string("cubin_sm100") && c.name != std::string("empty_string") &&
        c.name != std::string("ptx_syntax_error") && c.name != std::string("ptx_version_9.9"))
      continue;
    std::string p = std::string("lazylib.") + c.name;
    CUlibrary l = nullptr;
    CUresult r = lib_load(&l, c.p);
    P(p + ".load", r);
    if (r != CUDA_SUCCESS) continue;
    unsigned n = 99;
    P(p + ".count", cuLibraryGetKernelCount(&n, l), fmt("count=%u", n));
    CUkernel k = sentinel<CUkernel>();
    P(p + ".getkernel", cuLibraryGetKernel(&k, l, "k_extern_c"), out_state(k));
    CUmodule m = sentinel<CUmodule>();
    P(p + ".getmodule", cuLibraryGetModule(&m, l), out_state(m));
    CUdeviceptr d = 0x5e47e1;
    size_t b = 12345;
    P(p + ".getglobal", cuLibraryGetGlobal(&d, &b, l, "dvar"), fmt("bytes=%zu", b));
    P(p + ".getmanaged", cuLibraryGetManaged(&d, &b, l, "mvar"), fmt("bytes=%zu", b));
    P(p + ".unload", cuLibraryUnload(l));
  }
}
void sec_loading_mode_null() { P("cuModuleGetLoadingMode.null", cuModuleGetLoadingMode(nullptr)); }

}  // namespace

void add_load_sections() {
  add("lazylib", sec_lazylib);
  add("loadingmode_null", sec_loading_mode_null);
  add("load", sec_load);
  for (const char* api : {"cuModuleLoadData", "cuModuleLoadFatBinary", "cuLibraryLoadData"})
    for (const char* img : kRiskyImages) {
      std::string a = api, i = img;
      add("load." + a + "." + i, [a, i] { sec_load_risky(a, i); });
    }
  add("noctx", sec_noctx);
}
