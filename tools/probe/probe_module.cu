// Measures how NVIDIA's driver answers the module, library, kernel/function and launch
// entries (cuModule*, cuLibrary*, cuKernel*, cuFunc*, cuLaunchKernel[Ex]) and the runtime's
// symbol and launch calls (cudaMemcpyTo/FromSymbol, cudaGetSymbolAddress/Size,
// cudaFuncGetAttributes, cudaLaunchKernel, <<<>>>, cudaGetFuncBySymbol, cudaFuncGetName,
// cudaGetKernel). Not part of the build: tools/probe/run_module_probe.sh compiles it with
// nvcc -arch=sm_90 on a GPU machine, together with the images of tests/conformance/module_kernels.cu
// (a fat binary, an sm_90 cubin, an sm_100 cubin, PTX) that the driver sections load:
//   probe_module IMAGE_DIR
// One line per case: "case-name: CUDA_ERROR_NAME (value) [outputs]". Outputs never hold
// addresses, only relations (same/different, set/null/untouched), codes, sizes and values.
// "out=untouched|null|set" says what a failing call did to its output, preset to a sentinel.
// Every section runs in a child (the binary re-executes itself with --section NAME), so a
// crash or a sticky error spoils one section only; each is reported as
// "section NAME: exit N | CRASH(signal N) | TIMEOUT". PROBE_ONLY=prefix1,prefix2 picks
// sections ("name$": that one alone), PROBE_SKIP=text,... leaves out those containing text,
// PROBE_ALARM=seconds bounds each. probe_module.h200.txt beside it is its output on an H200
// (driver 580, CUDA 13.0); tools/probe/run_module_probe.sh runs it.
#include "../../tests/conformance/module_kernels.cu"

#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// ---- output ---------------------------------------------------------------------------
static std::string fmt(const char* f, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
static const char* en(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "UNKNOWN_CURESULT";
  return s;
}
static void P_(const std::string& name, CUresult r, const std::string& extra = "") {
  printf("%s: %s (%d)%s%s\n", name.c_str(), en(r), static_cast<int>(r), extra.empty() ? "" : " ",
         extra.c_str());
  fflush(stdout);
}
static void PR_(const std::string& name, cudaError_t e, const std::string& extra = "") {
  printf("%s: %s (%d)%s%s\n", name.c_str(), cudaGetErrorName(e), static_cast<int>(e),
         extra.empty() ? "" : " ", extra.c_str());
  fflush(stdout);
}
// The call first, then what it wrote: a function's arguments are evaluated in no set order, so
// P(name, call(&x), fmt(x)) as a function could print x from before the call.
#define P(name, call, ...)                 \
  do {                                     \
    CUresult r_ = (call);                  \
    P_(name, r_, ##__VA_ARGS__);           \
  } while (0)
#define PR(name, call, ...)                \
  do {                                     \
    cudaError_t e_ = (call);               \
    PR_(name, e_, ##__VA_ARGS__);          \
  } while (0)
static void NOTE(const std::string& name, const std::string& text) {
  printf("%s: %s\n", name.c_str(), text.c_str());
  fflush(stdout);
}
template <class T>
static std::string state(T v, T sentinel) {
  return v == sentinel ? "untouched" : (v == T() ? "null" : "set");
}
template <class T>
static T sentinel() {
  return reinterpret_cast<T>(uintptr_t(0x5e47e1));
}
static std::string oneline(const char* s, size_t max = 160) {
  std::string o;
  for (size_t i = 0; s[i] && o.size() < max; ++i) o += (s[i] == '\n' || s[i] == '\r') ? '|' : s[i];
  return o;
}

// ---- images -----------------------------------------------------------------------------
static std::string g_dir;
struct Images {
  std::vector<char> fatbin, cub90, cub100, ptx;
  std::string p_fatbin, p_cub90, p_cub100, p_ptx;
} g;
static std::vector<char> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (v.empty()) {
    fprintf(stderr, "cannot read %s\n", path.c_str());
    exit(2);
  }
  v.resize(v.size() + 256, 0);  // NUL padding: reads past an image's end see zeros
  return v;
}
static size_t real_size(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? size_t(st.st_size) : 0;
}
static void load_images() {
  g.p_fatbin = g_dir + "/kernels.fatbin";
  g.p_cub90 = g_dir + "/kernels.sm_90.cubin";
  g.p_cub100 = g_dir + "/kernels.sm_100.cubin";
  g.p_ptx = g_dir + "/kernels.ptx";
  g.fatbin = slurp(g.p_fatbin);
  g.cub90 = slurp(g.p_cub90);
  g.cub100 = slurp(g.p_cub100);
  g.ptx = slurp(g.p_ptx);
}
struct FatbinWrapper {  // what nvcc emits in the host object (__fatBinC_Wrapper_t)
  int magic;
  int version;
  const void* data;
  void* filename_or_fatbins;
};

static const char* kBadPtx =
    ".version 9.0\n.target sm_90\n.address_size 64\n\n"
    ".visible .entry broken(\n)\n{\n  bogus_instruction %r1, 7;\n  ret;\n}\n";

static const char* kNames[] = {"_Z7k_plaincid3S24Pi", "_Z9k_boundedPi", "_Z8k_sharedPi",
                               "_Z6k_tmplIiEvPT_S0_", "_Z6k_tmplIfEvPT_S0_", "k_extern_c",
                               "_Z9k_globalsPi", "_Z7k_emptyv"};
static const char* kAttrNames[] = {"MAX_THREADS_PER_BLOCK", "SHARED_SIZE_BYTES", "CONST_SIZE_BYTES",
                                   "LOCAL_SIZE_BYTES", "NUM_REGS", "PTX_VERSION", "BINARY_VERSION",
                                   "CACHE_MODE_CA", "MAX_DYNAMIC_SHARED_SIZE_BYTES",
                                   "PREFERRED_SHARED_MEMORY_CARVEOUT", "CLUSTER_SIZE_MUST_BE_SET",
                                   "REQUIRED_CLUSTER_WIDTH", "REQUIRED_CLUSTER_HEIGHT",
                                   "REQUIRED_CLUSTER_DEPTH", "NON_PORTABLE_CLUSTER_SIZE_ALLOWED",
                                   "CLUSTER_SCHEDULING_POLICY_PREFERENCE"};

// ---- context and helpers ------------------------------------------------------------------
static CUcontext ctx() {
  CUdevice dev = 0;
  CUcontext c = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS || cuCtxSetCurrent(c) != CUDA_SUCCESS) {
    printf("setup failed\n");
    exit(3);
  }
  return c;
}
static CUmodule load_mod(const std::vector<char>& img) {
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadData(&m, img.data());
  if (r != CUDA_SUCCESS) {
    P("setup.cuModuleLoadData", r);
    exit(4);
  }
  return m;
}
static CUfunction fn(CUmodule m, const char* name) {
  CUfunction f = nullptr;
  CUresult r = cuModuleGetFunction(&f, m, name);
  if (r != CUDA_SUCCESS) {
    P(std::string("setup.cuModuleGetFunction.") + name, r);
    exit(5);
  }
  return f;
}
// Whether the context still works after a failure: cuCtxSynchronize and a fresh cuMemAlloc.
static std::string after() {
  CUresult s = cuCtxSynchronize();
  CUdeviceptr p = 0;
  CUresult a = cuMemAlloc(&p, 256);
  if (a == CUDA_SUCCESS) cuMemFree(p);
  return fmt("sync=%s alloc=%s", en(s), en(a));
}
static std::string func_name(CUfunction f) {
  const char* n = nullptr;
  CUresult r = cuFuncGetName(&n, f);
  return r == CUDA_SUCCESS && n ? std::string(n) : std::string("<") + en(r) + ">";
}
static std::string kernel_name(CUkernel k) {
  const char* n = nullptr;
  CUresult r = cuKernelGetName(&n, k);
  return r == CUDA_SUCCESS && n ? std::string(n) : std::string("<") + en(r) + ">";
}

// ---- sections ---------------------------------------------------------------------------
struct Section {
  std::string name;
  std::function<void()> run;
};
static std::vector<Section> g_sections;
static void add(const std::string& name, std::function<void()> f) { g_sections.push_back({name, std::move(f)}); }

// Images in memory, shared by the loaders' sections.
struct NamedImage {
  std::string name;
  const void* p;
};
static std::vector<NamedImage> image_cases(std::vector<std::vector<char>>& keep) {
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
  keep.emplace_back(64 + 256, 0);
  memcpy(keep.back().data(), "hello, this is not an image at all; just some text!", 52);
  v.push_back({"text_garbage", keep.back().data()});
  keep.emplace_back(64 + 256, 0);
  memcpy(keep.back().data(), "\x7f" "ELF", 4);
  for (int i = 4; i < 64; ++i) keep.back()[i] = char(0xA5);
  v.push_back({"elf_magic_junk", keep.back().data()});
  keep.emplace_back(64 + 256, 0);
  memcpy(keep.back().data(), g.fatbin.data(), 8);  // container header's magic+version
  for (int i = 8; i < 64; ++i) keep.back()[i] = char(0xA5);
  v.push_back({"fatbin_magic_junk", keep.back().data()});
  size_t fsz = real_size(g.p_fatbin);
  keep.emplace_back(fsz + 256, 0);
  memcpy(keep.back().data(), g.fatbin.data(), fsz / 2);
  v.push_back({"fatbin_truncated_half", keep.back().data()});
  keep.emplace_back(fsz + 256, 0);
  memcpy(keep.back().data(), g.fatbin.data(), 16);
  v.push_back({"fatbin_header_only", keep.back().data()});
  size_t csz = real_size(g.p_cub90);
  keep.emplace_back(csz + 256, 0);
  memcpy(keep.back().data(), g.cub90.data(), csz / 2);
  v.push_back({"cubin_truncated_half", keep.back().data()});
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

static bool risky_image(const std::string& n) {
  return n == "garbage64" || n == "text_garbage" || n == "elf_magic_junk" || n == "fatbin_magic_junk" ||
         n == "fatbin_truncated_half" || n == "fatbin_header_only" || n == "cubin_truncated_half";
}
static const char* kRiskyImages[] = {"garbage64", "text_garbage", "elf_magic_junk", "fatbin_magic_junk",
                                     "fatbin_truncated_half", "fatbin_header_only", "cubin_truncated_half"};

// One loader on one in-memory image.
static void load_one(const std::string& api, const NamedImage& c) {
  if (api == "cuModuleLoadData") {
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadData(&m, c.p);
    std::string x = "out=" + state(m, sentinel<CUmodule>());
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      CUresult rc = cuModuleGetFunctionCount(&n, m);
      x += fmt(" functions=%u(%s) unload=%s", n, en(rc), en(cuModuleUnload(m)));
    }
    P("cuModuleLoadData." + c.name, r, x);
  } else if (api == "cuModuleLoadFatBinary") {
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadFatBinary(&m, c.p);
    std::string x = "out=" + state(m, sentinel<CUmodule>());
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      cuModuleGetFunctionCount(&n, m);
      x += fmt(" functions=%u unload=%s", n, en(cuModuleUnload(m)));
    }
    P("cuModuleLoadFatBinary." + c.name, r, x);
  } else if (api == "cuLibraryLoadData") {
    CUlibrary l = sentinel<CUlibrary>();
    CUresult r = cuLibraryLoadData(&l, c.p, nullptr, nullptr, 0, nullptr, nullptr, 0);
    std::string x = "out=" + state(l, sentinel<CUlibrary>());
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      CUresult rc = cuLibraryGetKernelCount(&n, l);
      x += fmt(" kernels=%u(%s) unload=%s", n, en(rc), en(cuLibraryUnload(l)));
    }
    P("cuLibraryLoadData." + c.name, r, x);
  }
}
static void sec_load_risky(const std::string& api, const std::string& image) {
  ctx();
  std::vector<std::vector<char>> keep;
  for (auto& c : image_cases(keep))
    if (c.name == image) load_one(api, c);
}

static void sec_load() {
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
    std::string x = "out=" + state(m, sentinel<CUmodule>());
    if (r == CUDA_SUCCESS) x += fmt(" unload=%s", en(cuModuleUnload(m)));
    P("cuModuleLoadDataEx.0opts." + c.name, r, x);
  }
  {
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadDataEx(&m, g.fatbin.data(), 1, nullptr, nullptr);
    P("cuModuleLoadDataEx.1opt_null_arrays.fatbin", r, "out=" + state(m, sentinel<CUmodule>()));
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
  }
  {
    char log[4096] = {0};
    CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[2] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
    CUmodule m = sentinel<CUmodule>();
    CUresult r = cuModuleLoadDataEx(&m, kBadPtx, 2, o, vals);
    P("cuModuleLoadDataEx.errlog.ptx_syntax_error", r,
      "out=" + state(m, sentinel<CUmodule>()) + " log=\"" + oneline(log, 300) + "\"");
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
    std::string x = "out=" + state(m, sentinel<CUmodule>());
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      cuModuleGetFunctionCount(&n, m);
      x += fmt(" functions=%u unload=%s", n, en(cuModuleUnload(m)));
    }
    P("cuModuleLoad." + c.first, r, x);
  }
  P("cuModuleLoad.null_out", cuModuleLoad(nullptr, g.p_fatbin.c_str()));
  // Libraries: the same images.
  for (auto& c : imgs)
    if (!risky_image(c.name)) load_one("cuLibraryLoadData", c);
  P("cuLibraryLoadData.null_out", cuLibraryLoadData(nullptr, g.fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (auto& c : files) {
    CUlibrary l = sentinel<CUlibrary>();
    CUresult r = cuLibraryLoadFromFile(&l, c.second, nullptr, nullptr, 0, nullptr, nullptr, 0);
    std::string x = "out=" + state(l, sentinel<CUlibrary>());
    if (r == CUDA_SUCCESS) {
      unsigned n = 0;
      cuLibraryGetKernelCount(&n, l);
      x += fmt(" kernels=%u unload=%s", n, en(cuLibraryUnload(l)));
    }
    P("cuLibraryLoadFromFile." + c.first, r, x);
  }
}

// Without a current context: which entries need one.
static void sec_noctx() {
  cuInit(0);
  CUmodule m = sentinel<CUmodule>();
  P("noctx.cuModuleLoadData.fatbin", cuModuleLoadData(&m, g.fatbin.data()), "out=" + state(m, sentinel<CUmodule>()));
  CUmoduleLoadingMode mode = CUmoduleLoadingMode(0);
  P("noctx.cuModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), fmt("mode=%d", int(mode)));
  CUlibrary l = sentinel<CUlibrary>();
  CUresult r = cuLibraryLoadData(&l, g.fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  P("noctx.cuLibraryLoadData.fatbin", r, "out=" + state(l, sentinel<CUlibrary>()));
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
  P("noctx.cuKernelGetFunction", cuKernelGetFunction(&f, k), "out=" + state(f, sentinel<CUfunction>()));
  CUmodule lm = sentinel<CUmodule>();
  P("noctx.cuLibraryGetModule", cuLibraryGetModule(&lm, l), "out=" + state(lm, sentinel<CUmodule>()));
  CUdeviceptr d = 0;
  size_t bytes = 0;
  P("noctx.cuLibraryGetGlobal.dvar", cuLibraryGetGlobal(&d, &bytes, l, "dvar"), fmt("bytes=%zu", bytes));
  P("noctx.cuLibraryGetManaged.mvar", cuLibraryGetManaged(&d, &bytes, l, "mvar"), fmt("bytes=%zu", bytes));
  ctx();
  f = sentinel<CUfunction>();
  P("noctx.then_ctx.cuKernelGetFunction", cuKernelGetFunction(&f, k), "out=" + state(f, sentinel<CUfunction>()));
  P("noctx.then_ctx.cuLibraryGetModule", cuLibraryGetModule(&lm, l));
  P("noctx.then_ctx.cuLibraryGetGlobal.dvar", cuLibraryGetGlobal(&d, &bytes, l, "dvar"), fmt("bytes=%zu", bytes));
  P("noctx.cuLibraryUnload", cuLibraryUnload(l));
}

static void sec_module() {
  ctx();
  CUmodule m = load_mod(g.fatbin);
  CUmoduleLoadingMode mode = CUmoduleLoadingMode(0);
  P("cuModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), fmt("mode=%d", int(mode)));
  for (const char* n : kNames) {
    CUfunction f = nullptr;
    CUresult r = cuModuleGetFunction(&f, m, n);
    P(std::string("cuModuleGetFunction.") + n, r, r == CUDA_SUCCESS ? "name=" + func_name(f) : "");
  }
  {
    CUfunction f = sentinel<CUfunction>();
    P("cuModuleGetFunction.unknown", cuModuleGetFunction(&f, m, "no_such_kernel"), "out=" + state(f, sentinel<CUfunction>()));
    f = sentinel<CUfunction>();
    P("cuModuleGetFunction.demangled_name", cuModuleGetFunction(&f, m, "k_plain"), "out=" + state(f, sentinel<CUfunction>()));
    f = sentinel<CUfunction>();
    P("cuModuleGetFunction.variable_name", cuModuleGetFunction(&f, m, "dvar"), "out=" + state(f, sentinel<CUfunction>()));
    f = sentinel<CUfunction>();
    P("cuModuleGetFunction.empty_name", cuModuleGetFunction(&f, m, ""), "out=" + state(f, sentinel<CUfunction>()));
    f = sentinel<CUfunction>();
    P("cuModuleGetFunction.null_name", cuModuleGetFunction(&f, m, nullptr), "out=" + state(f, sentinel<CUfunction>()));
    P("cuModuleGetFunction.null_out", cuModuleGetFunction(nullptr, m, "k_extern_c"));
    f = sentinel<CUfunction>();
    P("cuModuleGetFunction.null_module", cuModuleGetFunction(&f, nullptr, "k_extern_c"), "out=" + state(f, sentinel<CUfunction>()));
    CUfunction a = nullptr, b = nullptr;
    cuModuleGetFunction(&a, m, "k_extern_c");
    cuModuleGetFunction(&b, m, "k_extern_c");
    NOTE("cuModuleGetFunction.twice", a == b ? "same handle" : "different handles");
  }
  // Count and enumeration.
  unsigned count = 0;
  P("cuModuleGetFunctionCount", cuModuleGetFunctionCount(&count, m), fmt("count=%u", count));
  P("cuModuleGetFunctionCount.null_count", cuModuleGetFunctionCount(nullptr, m));
  P("cuModuleGetFunctionCount.null_module", cuModuleGetFunctionCount(&count, nullptr));
  {
    std::vector<CUfunction> fs(count + 4, sentinel<CUfunction>());
    CUresult r = cuModuleEnumerateFunctions(fs.data(), count, m);
    std::string names;
    for (unsigned i = 0; i < count; ++i) names += (i ? "," : "") + func_name(fs[i]);
    P("cuModuleEnumerateFunctions.exact", r, "names=" + names);
    CUfunction direct = nullptr;
    cuModuleGetFunction(&direct, m, "k_extern_c");
    bool found = false;
    for (unsigned i = 0; i < count; ++i) found |= fs[i] == direct;
    NOTE("cuModuleEnumerateFunctions.same_handles_as_GetFunction", found ? "yes" : "no");
    std::vector<CUfunction> more(count + 4, sentinel<CUfunction>());
    r = cuModuleEnumerateFunctions(more.data(), count + 4, m);
    P("cuModuleEnumerateFunctions.larger", r, "slot[count]=" + state(more[count], sentinel<CUfunction>()));
    std::vector<CUfunction> fewer(count, sentinel<CUfunction>());
    r = cuModuleEnumerateFunctions(fewer.data(), 2, m);
    P("cuModuleEnumerateFunctions.fewer2", r, "slot0=" + state(fewer[0], sentinel<CUfunction>()) +
                                                   " slot2=" + state(fewer[2], sentinel<CUfunction>()) +
                                                   " first=" + (fewer[0] != sentinel<CUfunction>() && fewer[0] ? func_name(fewer[0]) : "-"));
    P("cuModuleEnumerateFunctions.zero", cuModuleEnumerateFunctions(fewer.data(), 0, m));
    P("cuModuleEnumerateFunctions.null_array", cuModuleEnumerateFunctions(nullptr, count, m));
    P("cuModuleEnumerateFunctions.null_module", cuModuleEnumerateFunctions(fewer.data(), 2, nullptr));
  }
  // Globals.
  const char* gnames[] = {"dvar", "cvar", "mvar", "k_extern_c", "_Z9k_globalsPi", "no_such_var", ""};
  for (const char* n : gnames) {
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    CUresult r = cuModuleGetGlobal(&d, &bytes, m, n);
    std::string x = fmt("bytes=%zu dptr=%s", bytes, d == 0x5e47e1 ? "untouched" : d ? "set" : "null");
    if (r == CUDA_SUCCESS) {
      unsigned mt = 0;
      CUresult ra = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
      unsigned managed = 7;
      CUresult rm = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d);
      size_t range = 0;
      CUresult rr = cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d);
      CUdeviceptr base = 0;
      CUresult rb = cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d);
      x += fmt(" MEMORY_TYPE=%s/%u IS_MANAGED=%s/%u RANGE_SIZE=%s/%zu RANGE_START=%s/%s", en(ra), mt, en(rm), managed,
               en(rr), range, en(rb), base == d ? "same" : "other");
      x += fmt(" align256=%s", d % 256 == 0 ? "yes" : "no");
      unsigned char buf[64] = {0};
      CUresult rc = cuMemcpyDtoH(buf, d, bytes);
      x += fmt(" DtoH=%s", en(rc));
      if (!strcmp(n, "cvar")) {
        float* fl = reinterpret_cast<float*>(buf);
        for (int i = 0; i < 8; ++i) x += fmt("%s%g", i ? "," : " contents=", fl[i]);
      } else if (bytes <= 16) {
        int* iv = reinterpret_cast<int*>(buf);
        for (size_t i = 0; i < bytes / 4; ++i) x += fmt("%s%d", i ? "," : " contents=", iv[i]);
      }
    }
    P(std::string("cuModuleGetGlobal.") + (*n ? n : "empty_name"), r, x);
  }
  {
    CUdeviceptr d = 0;
    size_t bytes = 0;
    P("cuModuleGetGlobal.null_bytes", cuModuleGetGlobal(&d, nullptr, m, "dvar"), d ? "dptr=set" : "dptr=null");
    P("cuModuleGetGlobal.null_dptr", cuModuleGetGlobal(nullptr, &bytes, m, "dvar"), fmt("bytes=%zu", bytes));
    P("cuModuleGetGlobal.both_null", cuModuleGetGlobal(nullptr, nullptr, m, "dvar"));
    P("cuModuleGetGlobal.null_name", cuModuleGetGlobal(&d, &bytes, m, nullptr));
    P("cuModuleGetGlobal.null_module", cuModuleGetGlobal(&d, &bytes, nullptr, "dvar"));
    CUdeviceptr a = 0, b = 0, c = 0;
    cuModuleGetGlobal(&a, nullptr, m, "dvar");
    cuModuleGetGlobal(&b, nullptr, m, "cvar");
    cuModuleGetGlobal(&c, nullptr, m, "mvar");
    NOTE("cuModuleGetGlobal.relations", fmt("cvar-dvar=%lld mvar-dvar=%s", (long long)(b - a), (c > a && c - a < (1 << 20)) ? "near" : "far"));
    // Writes through the driver: dvar and the __constant__ cvar.
    int nv[4] = {10, 20, 30, 40};
    CUresult r = cuMemcpyHtoD(a + 4, nv, 8);
    int back[4] = {0};
    cuMemcpyDtoH(back, a, 16);
    P("cuMemcpyHtoD.dvar_offset4", r, fmt("contents=%d,%d,%d,%d", back[0], back[1], back[2], back[3]));
    float fv = 9.25f;
    r = cuMemcpyHtoD(b, &fv, 4);
    float fb[8] = {0};
    cuMemcpyDtoH(fb, b, 32);
    P("cuMemcpyHtoD.cvar", r, fmt("cvar0=%g", fb[0]));
    r = cuMemcpyDtoH(back, a + 8, 16);
    P("cuMemcpyDtoH.dvar_past_end", r);
    r = cuMemsetD8(a, 0, 16);
    P("cuMemsetD8.dvar", r);
    // A second load of the same image: its own copy of the variables, initial values again.
    CUmodule m2 = load_mod(g.fatbin);
    CUdeviceptr a2 = 0;
    cuModuleGetGlobal(&a2, nullptr, m2, "dvar");
    cuMemcpyDtoH(back, a2, 16);
    NOTE("second_load.dvar", fmt("%s contents=%d,%d,%d,%d", a2 == a ? "same address" : "different address",
                                 back[0], back[1], back[2], back[3]));
    CUdeviceptr c2 = 0;
    cuModuleGetGlobal(&c2, nullptr, m2, "mvar");
    NOTE("second_load.mvar", c2 == c ? "same address" : "different address");
    P("cuModuleUnload.second", cuModuleUnload(m2));
    // After unload, the variable's address.
    unsigned mt = 0;
    P("after_unload.cuPointerGetAttribute.dvar", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a2), fmt("type=%u", mt));
  }
  // The other images: counts and names.
  const std::pair<const char*, const std::vector<char>*> others[] = {{"cubin_sm90", &g.cub90}, {"ptx", &g.ptx}};
  for (auto& o : others) {
    CUmodule mo = load_mod(*o.second);
    unsigned n = 0;
    cuModuleGetFunctionCount(&n, mo);
    std::vector<CUfunction> fs(n);
    cuModuleEnumerateFunctions(fs.data(), n, mo);
    std::string names;
    for (unsigned i = 0; i < n; ++i) names += (i ? "," : "") + func_name(fs[i]);
    CUdeviceptr d = 0;
    size_t bytes = 0;
    CUresult r = cuModuleGetGlobal(&d, &bytes, mo, "mvar");
    unsigned managed = 0;
    if (r == CUDA_SUCCESS) cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d);
    NOTE(std::string("module.") + o.first, fmt("count=%u names=%s mvar=%s/%zu/managed=%u", n, names.c_str(), en(r), bytes, managed));
    cuModuleUnload(mo);
  }
  P("cuModuleUnload", cuModuleUnload(m));
  P("cuModuleUnload.null", cuModuleUnload(nullptr));
}

static void dump_attrs(const std::string& prefix, CUfunction f) {
  for (int a = 0; a <= CU_FUNC_ATTRIBUTE_MAX + 1; ++a) {
    int v = -7777;
    CUresult r = cuFuncGetAttribute(&v, CUfunction_attribute(a), f);
    const char* an = a < CU_FUNC_ATTRIBUTE_MAX ? kAttrNames[a] : "";
    P(prefix + fmt(".%d%s%s", a, *an ? "." : "", an), r, fmt("value=%d", v));
  }
  int v = -7777;
  P(prefix + ".-1", cuFuncGetAttribute(&v, CUfunction_attribute(-1), f), fmt("value=%d", v));
}

static void sec_func() {
  ctx();
  CUmodule m = load_mod(g.fatbin);
  // Lazy loading state.
  {
    CUfunction f = fn(m, "_Z7k_emptyv");
    CUfunctionLoadingState st = CUfunctionLoadingState(99);
    P("cuFuncIsLoaded.fresh", cuFuncIsLoaded(&st, f), fmt("state=%d", int(st)));
    P("cuFuncLoad", cuFuncLoad(f));
    st = CUfunctionLoadingState(99);
    P("cuFuncIsLoaded.after_cuFuncLoad", cuFuncIsLoaded(&st, f), fmt("state=%d", int(st)));
    CUfunction g2 = fn(m, "k_extern_c");
    int v = 0;
    cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, g2);
    st = CUfunctionLoadingState(99);
    P("cuFuncIsLoaded.after_GetAttribute", cuFuncIsLoaded(&st, g2), fmt("state=%d", int(st)));
    P("cuFuncIsLoaded.null_state", cuFuncIsLoaded(nullptr, f));
    P("cuFuncIsLoaded.null_func", cuFuncIsLoaded(&st, nullptr));
    P("cuFuncLoad.null", cuFuncLoad(nullptr));
  }
  // Names and modules.
  for (const char* n : kNames) {
    CUfunction f = fn(m, n);
    const char* name = nullptr;
    CUresult r = cuFuncGetName(&name, f);
    P(std::string("cuFuncGetName.") + n, r, name ? std::string("name=") + name : "name=null");
    CUmodule fm = nullptr;
    r = cuFuncGetModule(&fm, f);
    P(std::string("cuFuncGetModule.") + n, r, fm == m ? "same module" : "other module");
  }
  {
    const char* name = nullptr;
    P("cuFuncGetName.null_out", cuFuncGetName(nullptr, fn(m, "k_extern_c")));
    P("cuFuncGetName.null_func", cuFuncGetName(&name, nullptr));
    P("cuFuncGetModule.null_out", cuFuncGetModule(nullptr, fn(m, "k_extern_c")));
    CUmodule fm = sentinel<CUmodule>();
    P("cuFuncGetModule.null_func", cuFuncGetModule(&fm, nullptr), "out=" + state(fm, sentinel<CUmodule>()));
  }
  // Parameter layout.
  for (const char* n : kNames) {
    CUfunction f = fn(m, n);
    for (size_t i = 0; i < 7; ++i) {
      size_t off = 777, sz = 777;
      CUresult r = cuFuncGetParamInfo(f, i, &off, &sz);
      P(std::string("cuFuncGetParamInfo.") + n + fmt(".%zu", i), r, fmt("offset=%zu size=%zu", off, sz));
      if (r != CUDA_SUCCESS) break;
    }
  }
  {
    CUfunction f = fn(m, "_Z7k_plaincid3S24Pi");
    size_t off = 777, sz = 777;
    P("cuFuncGetParamInfo.null_offset", cuFuncGetParamInfo(f, 3, nullptr, &sz), fmt("size=%zu", sz));
    P("cuFuncGetParamInfo.null_size", cuFuncGetParamInfo(f, 3, &off, nullptr), fmt("offset=%zu", off));
    P("cuFuncGetParamInfo.both_null", cuFuncGetParamInfo(f, 3, nullptr, nullptr));
    P("cuFuncGetParamInfo.null_func", cuFuncGetParamInfo(nullptr, 0, &off, &sz));
    P("cuFuncGetParamInfo.huge_index", cuFuncGetParamInfo(f, size_t(1) << 40, &off, &sz));
  }
  // Every attribute of every kernel (fat binary), and two kernels from the cubin and PTX.
  for (const char* n : kNames) dump_attrs(std::string("cuFuncGetAttribute.") + n, fn(m, n));
  {
    CUmodule mc = load_mod(g.cub90), mp = load_mod(g.ptx);
    dump_attrs("cuFuncGetAttribute.cubin._Z8k_sharedPi", fn(mc, "_Z8k_sharedPi"));
    dump_attrs("cuFuncGetAttribute.ptx._Z8k_sharedPi", fn(mp, "_Z8k_sharedPi"));
    dump_attrs("cuFuncGetAttribute.ptx._Z9k_boundedPi", fn(mp, "_Z9k_boundedPi"));
  }
  {
    int v = 0;
    P("cuFuncGetAttribute.null_pi", cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, fn(m, "k_extern_c")));
    P("cuFuncGetAttribute.null_func", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr));
  }
  // cuFuncSetAttribute: each settable attribute, limits, read back.
  {
    CUfunction f = fn(m, "k_extern_c");
    CUfunction fs = fn(m, "_Z8k_sharedPi");
    auto set = [&](const char* what, CUfunction h, int a, int val) {
      CUresult r = cuFuncSetAttribute(h, CUfunction_attribute(a), val);
      int back = -7777;
      CUresult rb = cuFuncGetAttribute(&back, CUfunction_attribute(a), h);
      P(fmt("cuFuncSetAttribute.%s.%s=%d", what, a < CU_FUNC_ATTRIBUTE_MAX && a >= 0 ? kAttrNames[a] : fmt("%d", a).c_str(), val), r,
        fmt("readback=%s/%d", en(rb), back));
    };
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1);
    set("k_shared", fs, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448 - 4096);
    set("k_shared", fs, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448 - 4095);
    set("k_shared", fs, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -2);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_NUM_REGS, 32);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 16);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 1);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 3);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 1);
    set("k_extern_c", f, CU_FUNC_ATTRIBUTE_MAX, 1);
    P("cuFuncSetAttribute.null_func", cuFuncSetAttribute(nullptr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    for (int c = 0; c <= 4; ++c) P(fmt("cuFuncSetCacheConfig.%d", c), cuFuncSetCacheConfig(f, CUfunc_cache(c)));
    P("cuFuncSetCacheConfig.99", cuFuncSetCacheConfig(f, CUfunc_cache(99)));
    P("cuFuncSetCacheConfig.null_func", cuFuncSetCacheConfig(nullptr, CU_FUNC_CACHE_PREFER_SHARED));
  }
}

static void sec_library() {
  ctx();
  CUlibrary l = nullptr;
  CUresult r = cuLibraryLoadData(&l, g.fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (r != CUDA_SUCCESS) { P("setup.cuLibraryLoadData", r); return; }
  for (const char* n : kNames) {
    CUkernel k = nullptr;
    r = cuLibraryGetKernel(&k, l, n);
    P(std::string("cuLibraryGetKernel.") + n, r, r == CUDA_SUCCESS ? "name=" + kernel_name(k) : "");
  }
  {
    CUkernel k = sentinel<CUkernel>();
    P("cuLibraryGetKernel.unknown", cuLibraryGetKernel(&k, l, "no_such_kernel"), "out=" + state(k, sentinel<CUkernel>()));
    k = sentinel<CUkernel>();
    P("cuLibraryGetKernel.variable_name", cuLibraryGetKernel(&k, l, "dvar"), "out=" + state(k, sentinel<CUkernel>()));
    k = sentinel<CUkernel>();
    P("cuLibraryGetKernel.null_name", cuLibraryGetKernel(&k, l, nullptr), "out=" + state(k, sentinel<CUkernel>()));
    P("cuLibraryGetKernel.null_out", cuLibraryGetKernel(nullptr, l, "k_extern_c"));
    k = sentinel<CUkernel>();
    P("cuLibraryGetKernel.null_library", cuLibraryGetKernel(&k, nullptr, "k_extern_c"), "out=" + state(k, sentinel<CUkernel>()));
    CUkernel a = nullptr, b = nullptr;
    cuLibraryGetKernel(&a, l, "k_extern_c");
    cuLibraryGetKernel(&b, l, "k_extern_c");
    NOTE("cuLibraryGetKernel.twice", a == b ? "same handle" : "different handles");
  }
  unsigned count = 0;
  P("cuLibraryGetKernelCount", cuLibraryGetKernelCount(&count, l), fmt("count=%u", count));
  P("cuLibraryGetKernelCount.null_count", cuLibraryGetKernelCount(nullptr, l));
  P("cuLibraryGetKernelCount.null_library", cuLibraryGetKernelCount(&count, nullptr));
  {
    std::vector<CUkernel> ks(count + 4, sentinel<CUkernel>());
    r = cuLibraryEnumerateKernels(ks.data(), count, l);
    std::string names;
    for (unsigned i = 0; i < count; ++i) names += (i ? "," : "") + kernel_name(ks[i]);
    P("cuLibraryEnumerateKernels.exact", r, "names=" + names);
    CUkernel direct = nullptr;
    cuLibraryGetKernel(&direct, l, "k_extern_c");
    bool found = false;
    for (unsigned i = 0; i < count; ++i) found |= ks[i] == direct;
    NOTE("cuLibraryEnumerateKernels.same_handles_as_GetKernel", found ? "yes" : "no");
    std::vector<CUkernel> more(count + 4, sentinel<CUkernel>());
    r = cuLibraryEnumerateKernels(more.data(), count + 4, l);
    P("cuLibraryEnumerateKernels.larger", r, "slot[count]=" + state(more[count], sentinel<CUkernel>()));
    std::vector<CUkernel> fewer(count, sentinel<CUkernel>());
    r = cuLibraryEnumerateKernels(fewer.data(), 2, l);
    P("cuLibraryEnumerateKernels.fewer2", r, "slot0=" + state(fewer[0], sentinel<CUkernel>()) + " slot2=" + state(fewer[2], sentinel<CUkernel>()));
    P("cuLibraryEnumerateKernels.zero", cuLibraryEnumerateKernels(fewer.data(), 0, l));
    P("cuLibraryEnumerateKernels.null_array", cuLibraryEnumerateKernels(nullptr, count, l));
    P("cuLibraryEnumerateKernels.null_library", cuLibraryEnumerateKernels(fewer.data(), 2, nullptr));
  }
  // Module of the library.
  CUmodule lm = nullptr, lm2 = nullptr;
  P("cuLibraryGetModule", cuLibraryGetModule(&lm, l));
  cuLibraryGetModule(&lm2, l);
  NOTE("cuLibraryGetModule.twice", lm == lm2 ? "same handle" : "different handles");
  P("cuLibraryGetModule.null_out", cuLibraryGetModule(nullptr, l));
  CUmodule lmx = sentinel<CUmodule>();
  P("cuLibraryGetModule.null_library", cuLibraryGetModule(&lmx, nullptr), "out=" + state(lmx, sentinel<CUmodule>()));
  {
    unsigned n = 0;
    cuModuleGetFunctionCount(&n, lm);
    NOTE("cuLibraryGetModule.function_count", fmt("%u", n));
  }
  // Globals.
  const char* gnames[] = {"dvar", "cvar", "mvar", "k_extern_c", "no_such_var"};
  CUdeviceptr lib_dvar = 0, mod_dvar = 0;
  cuModuleGetGlobal(&mod_dvar, nullptr, lm, "dvar");
  for (const char* n : gnames) {
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    r = cuLibraryGetGlobal(&d, &bytes, l, n);
    std::string x = fmt("bytes=%zu dptr=%s", bytes, d == 0x5e47e1 ? "untouched" : d ? "set" : "null");
    if (r == CUDA_SUCCESS) {
      int buf[8] = {0};
      cuMemcpyDtoH(buf, d, bytes < 32 ? bytes : 32);
      if (!strcmp(n, "dvar")) lib_dvar = d, x += fmt(" contents=%d,%d,%d,%d", buf[0], buf[1], buf[2], buf[3]);
      if (!strcmp(n, "mvar")) x += fmt(" contents=%d", buf[0]);
      unsigned managed = 7;
      cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d);
      x += fmt(" IS_MANAGED=%u", managed);
    }
    P(std::string("cuLibraryGetGlobal.") + n, r, x);
  }
  NOTE("cuLibraryGetGlobal.dvar_vs_module", lib_dvar == mod_dvar ? "same address" : "different address");
  for (const char* n : gnames) {
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    r = cuLibraryGetManaged(&d, &bytes, l, n);
    std::string x = fmt("bytes=%zu dptr=%s", bytes, d == 0x5e47e1 ? "untouched" : d ? "set" : "null");
    if (r == CUDA_SUCCESS) {
      int v = 0;
      cuMemcpyDtoH(&v, d, 4);
      x += fmt(" contents=%d", v);
    }
    P(std::string("cuLibraryGetManaged.") + n, r, x);
  }
  {
    CUdeviceptr d = 0;
    size_t bytes = 0;
    P("cuLibraryGetGlobal.null_bytes", cuLibraryGetGlobal(&d, nullptr, l, "dvar"));
    P("cuLibraryGetGlobal.null_dptr", cuLibraryGetGlobal(nullptr, &bytes, l, "dvar"), fmt("bytes=%zu", bytes));
    P("cuLibraryGetGlobal.null_name", cuLibraryGetGlobal(&d, &bytes, l, nullptr));
    P("cuLibraryGetGlobal.null_library", cuLibraryGetGlobal(&d, &bytes, nullptr, "dvar"));
    P("cuLibraryGetManaged.null_bytes", cuLibraryGetManaged(&d, nullptr, l, "mvar"));
    P("cuLibraryGetManaged.null_dptr", cuLibraryGetManaged(nullptr, &bytes, l, "mvar"), fmt("bytes=%zu", bytes));
    P("cuLibraryGetManaged.null_name", cuLibraryGetManaged(&d, &bytes, l, nullptr));
  }
  // Kernels.
  CUkernel k = nullptr, kp = nullptr;
  cuLibraryGetKernel(&k, l, "k_extern_c");
  cuLibraryGetKernel(&kp, l, "_Z7k_plaincid3S24Pi");
  {
    CUfunction f = nullptr, f2 = nullptr;
    P("cuKernelGetFunction", cuKernelGetFunction(&f, k), "name=" + func_name(f));
    cuKernelGetFunction(&f2, k);
    NOTE("cuKernelGetFunction.twice", f == f2 ? "same handle" : "different handles");
    NOTE("cuKernelGetFunction.equals_kernel", reinterpret_cast<void*>(f) == reinterpret_cast<void*>(k) ? "yes" : "no");
    CUmodule fm = nullptr;
    P("cuKernelGetFunction.cuFuncGetModule", cuFuncGetModule(&fm, f), fm == lm ? "same as cuLibraryGetModule" : "other module");
    CUfunction viamod = nullptr;
    cuModuleGetFunction(&viamod, lm, "k_extern_c");
    NOTE("cuKernelGetFunction.vs_cuModuleGetFunction", viamod == f ? "same handle" : "different handles");
    P("cuKernelGetFunction.null_out", cuKernelGetFunction(nullptr, k));
    CUfunction fx = sentinel<CUfunction>();
    P("cuKernelGetFunction.null_kernel", cuKernelGetFunction(&fx, nullptr), "out=" + state(fx, sentinel<CUfunction>()));
  }
  {
    const char* n = nullptr;
    P("cuKernelGetName", cuKernelGetName(&n, kp), n ? std::string("name=") + n : "name=null");
    P("cuKernelGetName.null_out", cuKernelGetName(nullptr, k));
    n = nullptr;
    P("cuKernelGetName.null_kernel", cuKernelGetName(&n, nullptr));
    CUlibrary kl = nullptr;
    P("cuKernelGetLibrary", cuKernelGetLibrary(&kl, k), kl == l ? "same library" : "other library");
    P("cuKernelGetLibrary.null_out", cuKernelGetLibrary(nullptr, k));
    CUlibrary klx = sentinel<CUlibrary>();
    P("cuKernelGetLibrary.null_kernel", cuKernelGetLibrary(&klx, nullptr), "out=" + state(klx, sentinel<CUlibrary>()));
  }
  for (size_t i = 0; i < 7; ++i) {
    size_t off = 777, sz = 777;
    r = cuKernelGetParamInfo(kp, i, &off, &sz);
    P(fmt("cuKernelGetParamInfo.k_plain.%zu", i), r, fmt("offset=%zu size=%zu", off, sz));
    if (r != CUDA_SUCCESS) break;
  }
  {
    size_t off = 777, sz = 777;
    P("cuKernelGetParamInfo.null_offset", cuKernelGetParamInfo(kp, 1, nullptr, &sz), fmt("size=%zu", sz));
    P("cuKernelGetParamInfo.null_size", cuKernelGetParamInfo(kp, 1, &off, nullptr), fmt("offset=%zu", off));
    P("cuKernelGetParamInfo.null_kernel", cuKernelGetParamInfo(nullptr, 0, &off, &sz));
    CUkernel ke = nullptr;
    cuLibraryGetKernel(&ke, l, "_Z7k_emptyv");
    P("cuKernelGetParamInfo.k_empty.0", cuKernelGetParamInfo(ke, 0, &off, &sz));
  }
  for (int a = 0; a <= CU_FUNC_ATTRIBUTE_MAX + 1; ++a) {
    int v = -7777;
    r = cuKernelGetAttribute(&v, CUfunction_attribute(a), k, 0);
    P(fmt("cuKernelGetAttribute.k_extern_c.%d%s%s", a, a < CU_FUNC_ATTRIBUTE_MAX ? "." : "", a < CU_FUNC_ATTRIBUTE_MAX ? kAttrNames[a] : ""), r,
      fmt("value=%d", v));
  }
  {
    int v = -7777;
    P("cuKernelGetAttribute.dev1", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 1), fmt("value=%d", v));
    P("cuKernelGetAttribute.dev-1", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, -1), fmt("value=%d", v));
    P("cuKernelGetAttribute.null_pi", cuKernelGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0));
    P("cuKernelGetAttribute.null_kernel", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr, 0));
    r = cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, 0);
    v = -7777;
    cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0);
    int fv = -7777;
    CUfunction f = nullptr;
    cuKernelGetFunction(&f, k);
    cuFuncGetAttribute(&fv, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
    P("cuKernelSetAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES=65536", r, fmt("kernel_readback=%d function_readback=%d", v, fv));
    P("cuKernelSetAttribute.NUM_REGS", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 8, k, 0));
    P("cuKernelSetAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES=232449", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449, k, 0));
    P("cuKernelSetCacheConfig", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 0));
  }
  // A CUkernel where a CUfunction is expected.
  {
    CUfunction as_f = reinterpret_cast<CUfunction>(k);
    const char* n = nullptr;
    P("kernel_as_function.cuFuncGetName", cuFuncGetName(&n, as_f), n ? std::string("name=") + n : "name=null");
    int v = -7777;
    P("kernel_as_function.cuFuncGetAttribute.NUM_REGS", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, as_f), fmt("value=%d", v));
    size_t off = 777, sz = 777;
    P("kernel_as_function.cuFuncGetParamInfo.1", cuFuncGetParamInfo(as_f, 1, &off, &sz), fmt("offset=%zu size=%zu", off, sz));
    CUmodule fm = nullptr;
    P("kernel_as_function.cuFuncGetModule", cuFuncGetModule(&fm, as_f), fm == lm ? "same as cuLibraryGetModule" : "other");
    CUfunctionLoadingState st = CUfunctionLoadingState(99);
    P("kernel_as_function.cuFuncIsLoaded", cuFuncIsLoaded(&st, as_f), fmt("state=%d", int(st)));
    P("kernel_as_function.cuFuncSetAttribute", cuFuncSetAttribute(as_f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
    P("kernel_as_function.cuFuncSetCacheConfig", cuFuncSetCacheConfig(as_f, CU_FUNC_CACHE_PREFER_SHARED));
  }
  // The other images as libraries.
  const std::pair<const char*, const std::vector<char>*> others[] = {{"cubin_sm90", &g.cub90}, {"ptx", &g.ptx}};
  for (auto& o : others) {
    CUlibrary lo = nullptr;
    r = cuLibraryLoadData(&lo, o.second->data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    unsigned n = 0;
    cuLibraryGetKernelCount(&n, lo);
    std::vector<CUkernel> ks(n);
    cuLibraryEnumerateKernels(ks.data(), n, lo);
    std::string names;
    for (unsigned i = 0; i < n; ++i) names += (i ? "," : "") + kernel_name(ks[i]);
    P(std::string("library.") + o.first, r, fmt("count=%u names=%s", n, names.c_str()));
    cuLibraryUnload(lo);
  }
  P("cuLibraryUnload", cuLibraryUnload(l));
  P("cuLibraryUnload.null", cuLibraryUnload(nullptr));
}

// Risky single cases, each a section of its own.
static void sec_stale(const std::string& which) {
  ctx();
  if (which.rfind("lib", 0) == 0) {
    CUlibrary l = nullptr;
    cuLibraryLoadData(&l, g.fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    CUkernel k = nullptr;
    cuLibraryGetKernel(&k, l, "k_extern_c");
    CUfunction f = nullptr;
    cuKernelGetFunction(&f, k);
    P("stale." + which + ".first_unload", cuLibraryUnload(l));
    if (which == "lib_unload_twice") { P("stale.lib_unload_twice", cuLibraryUnload(l)); return; }
    if (which == "lib_getkernel") {
      CUkernel k2 = sentinel<CUkernel>();
      { P("stale.lib_getkernel", cuLibraryGetKernel(&k2, l, "k_extern_c"), "out=" + state(k2, sentinel<CUkernel>())); return; }
    }
    if (which == "lib_kernel_getfunction") {
      CUfunction f2 = sentinel<CUfunction>();
      { P("stale.lib_kernel_getfunction", cuKernelGetFunction(&f2, k), "out=" + state(f2, sentinel<CUfunction>())); return; }
    }
    if (which == "lib_kernel_getname") {
      const char* n = nullptr;
      { P("stale.lib_kernel_getname", cuKernelGetName(&n, k)); return; }
    }
    if (which == "lib_function_launch") {
      int* d = nullptr;
      int nn = 1;
      void* args[] = {&d, &nn};
      CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
      { P("stale.lib_function_launch", r, after()); return; }
    }
    return;
  }
  CUmodule m = load_mod(g.fatbin);
  CUfunction f = fn(m, "k_extern_c");
  CUdeviceptr d = 0;
  cuModuleGetGlobal(&d, nullptr, m, "dvar");
  P("stale." + which + ".first_unload", cuModuleUnload(m));
  if (which == "unload_twice") { P("stale.unload_twice", cuModuleUnload(m)); return; }
  if (which == "getfunction") {
    CUfunction f2 = sentinel<CUfunction>();
    { P("stale.getfunction", cuModuleGetFunction(&f2, m, "k_extern_c"), "out=" + state(f2, sentinel<CUfunction>())); return; }
  }
  if (which == "getglobal") {
    CUdeviceptr d2 = 0x5e47e1;
    size_t b = 0;
    { P("stale.getglobal", cuModuleGetGlobal(&d2, &b, m, "dvar")); return; }
  }
  if (which == "functioncount") {
    unsigned n = 77;
    { P("stale.functioncount", cuModuleGetFunctionCount(&n, m), fmt("count=%u", n)); return; }
  }
  if (which == "funcgetattribute") {
    int v = -7777;
    { P("stale.funcgetattribute", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), fmt("value=%d", v)); return; }
  }
  if (which == "funcgetname") {
    const char* n = nullptr;
    { P("stale.funcgetname", cuFuncGetName(&n, f)); return; }
  }
  if (which == "funcgetparaminfo") {
    size_t o = 0, s = 0;
    { P("stale.funcgetparaminfo", cuFuncGetParamInfo(f, 0, &o, &s)); return; }
  }
  if (which == "launch") {
    int* dp = nullptr;
    int nn = 1;
    void* args[] = {&dp, &nn};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
    { P("stale.launch", r, after()); return; }
  }
  if (which == "global_memcpy") {
    int buf[4];
    { P("stale.global_memcpy", cuMemcpyDtoH(buf, d, 16)); return; }
  }
}

static void sec_garbage(const std::string& which) {
  ctx();
  static unsigned char zeros[4096];
  static unsigned char junk[4096];
  memset(junk, 0xAB, sizeof junk);
  void* handle = which.find("zeros") != std::string::npos ? static_cast<void*>(zeros)
                 : which.find("junk") != std::string::npos ? static_cast<void*>(junk)
                                                           : reinterpret_cast<void*>(uintptr_t(0x1234));
  if (which.rfind("unload", 0) == 0) { P("garbage." + which, cuModuleUnload(static_cast<CUmodule>(handle))); return; }
  if (which.rfind("libunload", 0) == 0) { P("garbage." + which, cuLibraryUnload(static_cast<CUlibrary>(handle))); return; }
  if (which.rfind("getfunction", 0) == 0) {
    CUfunction f = sentinel<CUfunction>();
    { P("garbage." + which, cuModuleGetFunction(&f, static_cast<CUmodule>(handle), "k_extern_c"), "out=" + state(f, sentinel<CUfunction>())); return; }
  }
  if (which.rfind("funcattr", 0) == 0) {
    int v = -7777;
    { P("garbage." + which, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, static_cast<CUfunction>(handle))); return; }
  }
  if (which.rfind("launch", 0) == 0) {
    int* dp = nullptr;
    int nn = 1;
    void* args[] = {&dp, &nn};
    CUresult r = cuLaunchKernel(static_cast<CUfunction>(handle), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
    { P("garbage." + which, r, after()); return; }
  }
  if (which.rfind("kernelgetfunction", 0) == 0) {
    CUfunction f = sentinel<CUfunction>();
    { P("garbage." + which, cuKernelGetFunction(&f, static_cast<CUkernel>(handle)), "out=" + state(f, sentinel<CUfunction>())); return; }
  }
}

// ---- launches ----------------------------------------------------------------------------
struct LaunchEnv {
  CUmodule m;
  CUfunction ext, plain, bounded, shared, empty;
  CUdeviceptr buf;
  int n = 1234;
  CUdeviceptr* bufp;
  void* args[2];
};
static LaunchEnv* env() {
  static LaunchEnv e;
  ctx();
  e.m = load_mod(g.fatbin);
  e.ext = fn(e.m, "k_extern_c");
  e.plain = fn(e.m, "_Z7k_plaincid3S24Pi");
  e.bounded = fn(e.m, "_Z9k_boundedPi");
  e.shared = fn(e.m, "_Z8k_sharedPi");
  e.empty = fn(e.m, "_Z7k_emptyv");
  cuMemAlloc(&e.buf, 1 << 20);
  cuMemsetD8(e.buf, 0, 1 << 20);
  e.args[0] = &e.buf;
  e.args[1] = &e.n;
  return &e;
}
static std::string readback(CUdeviceptr p) {
  int v = -1;
  CUresult r = cuMemcpyDtoH(&v, p, 4);
  return r == CUDA_SUCCESS ? fmt("out0=%d", v) : std::string("out0=<") + en(r) + ">";
}
static void launch_case(const std::string& name, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, void** params, void** extra, CUdeviceptr buf) {
  CUresult r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, nullptr, params, extra);
  std::string a = after();
  P("cuLaunchKernel." + name, r, a + (r == CUDA_SUCCESS ? " " + readback(buf) : ""));
}

static void add_launch_sections() {
  struct Dim {
    const char* name;
    unsigned g[3], b[3];
  };
  const Dim dims[] = {
      {"ok_1x1", {1, 1, 1}, {1, 1, 1}},
      {"block_1024", {1, 1, 1}, {1024, 1, 1}},
      {"block_1025", {1, 1, 1}, {1025, 1, 1}},
      {"block_2048", {1, 1, 1}, {2048, 1, 1}},
      {"block_32x32x1", {1, 1, 1}, {32, 32, 1}},
      {"block_32x33x1", {1, 1, 1}, {32, 33, 1}},
      {"block_y1024", {1, 1, 1}, {1, 1024, 1}},
      {"block_y1025", {1, 1, 1}, {1, 1025, 1}},
      {"block_z64", {1, 1, 1}, {1, 1, 64}},
      {"block_z65", {1, 1, 1}, {1, 1, 65}},
      {"block_x0", {1, 1, 1}, {0, 1, 1}},
      {"block_y0", {1, 1, 1}, {1, 0, 1}},
      {"block_z0", {1, 1, 1}, {1, 1, 0}},
      {"grid_x0", {0, 1, 1}, {1, 1, 1}},
      {"grid_y0", {1, 0, 1}, {1, 1, 1}},
      {"grid_z0", {1, 1, 0}, {1, 1, 1}},
      {"grid_y65535", {1, 65535, 1}, {1, 1, 1}},
      {"grid_y65536", {1, 65536, 1}, {1, 1, 1}},
      {"grid_z65535", {1, 1, 65535}, {1, 1, 1}},
      {"grid_z65536", {1, 1, 65536}, {1, 1, 1}},
      {"grid_x2^31", {0x80000000u, 1, 1}, {1, 1, 1}},
      {"grid_x0_block_2048", {0, 1, 1}, {2048, 1, 1}},
  };
  std::vector<Dim> all(std::begin(dims), std::end(dims));
  add("launch.dims", [all] {
    LaunchEnv* e = env();
    for (const Dim& d : all) {
      cuMemsetD8(e->buf, 0, 4);
      launch_case(d.name, e->ext, d.g[0], d.g[1], d.g[2], d.b[0], d.b[1], d.b[2], 0, e->args, nullptr, e->buf);
    }
  });
  add("launch.shmem", [] {
    LaunchEnv* e = env();
    launch_case("shmem_49152", e->ext, 1, 1, 1, 1, 1, 1, 49152, e->args, nullptr, e->buf);
    launch_case("shmem_49153", e->ext, 1, 1, 1, 1, 1, 1, 49153, e->args, nullptr, e->buf);
    launch_case("shmem_232448_no_optin", e->ext, 1, 1, 1, 1, 1, 1, 232448, e->args, nullptr, e->buf);
    void* sargs[] = {&e->buf};
    launch_case("k_shared.shmem_45056", e->shared, 1, 1, 1, 32, 1, 1, 49152 - 4096, sargs, nullptr, e->buf);
    launch_case("k_shared.shmem_45057", e->shared, 1, 1, 1, 32, 1, 1, 49152 - 4095, sargs, nullptr, e->buf);
    P("setup.cuFuncSetAttribute.k_extern_c.232448", cuFuncSetAttribute(e->ext, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448));
    launch_case("optin.shmem_232448", e->ext, 1, 1, 1, 1, 1, 1, 232448, e->args, nullptr, e->buf);
    launch_case("optin.shmem_232449", e->ext, 1, 1, 1, 1, 1, 1, 232449, e->args, nullptr, e->buf);
    P("setup.cuFuncSetAttribute.k_extern_c.65536", cuFuncSetAttribute(e->ext, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    launch_case("optin65536.shmem_65536", e->ext, 1, 1, 1, 1, 1, 1, 65536, e->args, nullptr, e->buf);
    launch_case("optin65536.shmem_65537", e->ext, 1, 1, 1, 1, 1, 1, 65537, e->args, nullptr, e->buf);
    P("setup.cuFuncSetAttribute.k_shared.228352", cuFuncSetAttribute(e->shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448 - 4096));
    launch_case("k_shared.optin.shmem_228352", e->shared, 1, 1, 1, 32, 1, 1, 232448 - 4096, sargs, nullptr, e->buf);
    launch_case("k_shared.optin.shmem_228353", e->shared, 1, 1, 1, 32, 1, 1, 232448 - 4095, sargs, nullptr, e->buf);
  });
  add("launch.null_function", [] {
    LaunchEnv* e = env();
    launch_case("null_function", nullptr, 1, 1, 1, 1, 1, 1, 0, e->args, nullptr, e->buf);
    launch_case("null_function_block_2048", nullptr, 1, 1, 1, 2048, 1, 1, 0, e->args, nullptr, e->buf);
  });
  add("launch.params_null", [] {
    LaunchEnv* e = env();
    launch_case("params_null_extra_null", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, e->buf);
  });
  add("launch.params_null_block_2048", [] {
    LaunchEnv* e = env();
    launch_case("params_null_extra_null_block_2048", e->ext, 1, 1, 1, 2048, 1, 1, 0, nullptr, nullptr, e->buf);
  });
  add("launch.misc", [] {
    LaunchEnv* e = env();
    launch_case("k_empty.params_null", e->empty, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, e->buf);
    struct {
      CUdeviceptr p;
      int n;
      int pad;
    } pb = {e->buf, 777, 0};
    size_t pbsz = 12;  // the real parameter buffer: 8 + 4
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &pbsz, CU_LAUNCH_PARAM_END};
    launch_case("extra_only_size12", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extra, e->buf);
    size_t pbsz16 = 16;
    void* extra16[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &pbsz16, CU_LAUNCH_PARAM_END};
    launch_case("extra_only_size16", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extra16, e->buf);
    size_t pbsz8 = 8;
    void* extra8[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &pbsz8, CU_LAUNCH_PARAM_END};
    launch_case("extra_only_size8", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extra8, e->buf);
    size_t pbszbig = 8192;
    void* extrabig[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &pbszbig, CU_LAUNCH_PARAM_END};
    launch_case("extra_only_size8192", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extrabig, e->buf);
    void* extra_nosize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_END};
    launch_case("extra_pointer_without_size", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_nosize, e->buf);
    void* extra_end[] = {CU_LAUNCH_PARAM_END};
    launch_case("extra_end_only", e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, extra_end, e->buf);
    launch_case("params_and_extra", e->ext, 1, 1, 1, 1, 1, 1, 0, e->args, extra, e->buf);
    launch_case("params_and_extra_end_only", e->ext, 1, 1, 1, 1, 1, 1, 0, e->args, extra_end, e->buf);
    launch_case("params_and_extra_block_2048", e->ext, 1, 1, 1, 2048, 1, 1, 0, e->args, extra, e->buf);
    // k_plain with all its parameters.
    char c = 1;
    int i = 2;
    double dd = 3.0;
    S24 s{};
    s.b = 4;
    s.c[0] = 5;
    void* pargs[] = {&c, &i, &dd, &s, &e->buf};
    launch_case("k_plain.ok", e->plain, 1, 1, 1, 1, 1, 1, 0, pargs, nullptr, e->buf);
    // __launch_bounds__(256)
    cuMemsetD8(e->buf, 0, 4);
    void* bargs[] = {&e->buf};
    launch_case("k_bounded.256", e->bounded, 1, 1, 1, 256, 1, 1, 0, bargs, nullptr, e->buf);
    launch_case("k_bounded.257", e->bounded, 1, 1, 1, 257, 1, 1, 0, bargs, nullptr, e->buf);
    launch_case("k_bounded.512", e->bounded, 1, 1, 1, 512, 1, 1, 0, bargs, nullptr, e->buf);
    launch_case("k_bounded.16x16x1", e->bounded, 1, 1, 1, 16, 16, 1, 0, bargs, nullptr, e->buf);
    launch_case("k_bounded.16x17x1", e->bounded, 1, 1, 1, 16, 17, 1, 0, bargs, nullptr, e->buf);
    // A stream that is not one: a garbage CUstream is not tried (crash-prone); a destroyed one is.
    CUstream st = nullptr;
    cuStreamCreate(&st, 0);
    CUresult r = cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, st, e->args, nullptr);
    P("cuLaunchKernel.created_stream", r, after());
    r = cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD, e->args, nullptr);
    P("cuLaunchKernel.per_thread_stream", r, after());
    // No current context.
    CUresult nr = CUDA_SUCCESS;
    std::thread([&] { nr = cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, e->args, nullptr); }).join();
    P("cuLaunchKernel.no_current_context", nr, after());
    // A function of a module loaded in another context, launched in this one.
    CUcontext other = nullptr;
    CUdevice dev = 0;
    CUctxCreateParams cp{};
    CUresult rc = cuCtxCreate(&other, &cp, 0, dev);
    if (rc == CUDA_SUCCESS) {
      CUfunction f_here = e->ext;
      r = cuLaunchKernel(f_here, 1, 1, 1, 1, 1, 1, 0, nullptr, e->args, nullptr);
      P("cuLaunchKernel.function_of_other_context", r, after());
      cuCtxDestroy(other);
    } else {
      P("setup.cuCtxCreate", rc);
    }
  });
  add("launch.kernel_as_function", [] {
    LaunchEnv* e = env();
    CUlibrary l = nullptr;
    cuLibraryLoadData(&l, g.fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    CUkernel k = nullptr;
    cuLibraryGetKernel(&k, l, "k_extern_c");
    cuMemsetD8(e->buf, 0, 4);
    launch_case("kernel_as_function", reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, e->args, nullptr, e->buf);
    launch_case("kernel_as_function.block_2048", reinterpret_cast<CUfunction>(k), 1, 1, 1, 2048, 1, 1, 0, e->args, nullptr, e->buf);
    CUfunction f = nullptr;
    cuKernelGetFunction(&f, k);
    cuMemsetD8(e->buf, 0, 4);
    launch_case("kernel_function", f, 1, 1, 1, 1, 1, 1, 0, e->args, nullptr, e->buf);
  });
  add("launch.ex", [] {
    LaunchEnv* e = env();
    auto ex = [&](const char* name, unsigned gx, unsigned bx, unsigned cx, bool with_attr, CUfunction f = nullptr) {
      CUlaunchAttribute at[1] = {};
      at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      at[0].value.clusterDim.x = cx;
      at[0].value.clusterDim.y = 1;
      at[0].value.clusterDim.z = 1;
      CUlaunchConfig cfg{};
      cfg.gridDimX = gx;
      cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = bx;
      cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.attrs = with_attr ? at : nullptr;
      cfg.numAttrs = with_attr ? 1 : 0;
      cuMemsetD8(e->buf, 0, 4);
      CUresult r = cuLaunchKernelEx(&cfg, f ? f : e->ext, e->args, nullptr);
      std::string a = after();
      P(std::string("cuLaunchKernelEx.") + name, r, a + (r == CUDA_SUCCESS ? " " + readback(e->buf) : ""));
    };
    ex("no_attrs", 1, 1, 0, false);
    ex("cluster2_grid4", 4, 32, 2, true);
    ex("cluster2_grid3", 3, 32, 2, true);
    ex("cluster8_grid8", 8, 32, 8, true);
    ex("cluster16_grid16", 16, 32, 16, true);
    ex("cluster1_grid1", 1, 1, 1, true);
    ex("cluster0_grid1", 1, 1, 0, true);
    ex("cluster2_block2048", 2, 2048, 2, true);
    ex("cluster2_grid0", 0, 32, 2, true);
    ex("no_attrs_block2048", 1, 2048, 0, false);
    CUresult rn = cuFuncSetAttribute(e->ext, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    P("setup.NON_PORTABLE_CLUSTER_SIZE_ALLOWED", rn);
    ex("nonportable.cluster16_grid16", 16, 32, 16, true);
    ex("nonportable.cluster32_grid32", 32, 32, 32, true);
    P("cuLaunchKernelEx.null_config", cuLaunchKernelEx(nullptr, e->ext, e->args, nullptr), after());
    CUlaunchConfig cfg{};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = nullptr;
    cfg.numAttrs = 1;
    P("cuLaunchKernelEx.null_attrs_num1", cuLaunchKernelEx(&cfg, e->ext, e->args, nullptr), after());
    cfg.numAttrs = 0;
    P("cuLaunchKernelEx.null_function", cuLaunchKernelEx(&cfg, nullptr, e->args, nullptr), after());
  });
  add("launch.fault_is_sticky", [] {
    LaunchEnv* e = env();
    CUdeviceptr bad = 0x10;
    void* args[] = {&bad, &e->n};
    CUresult r = cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
    P("cuLaunchKernel.illegal_address_kernel", r, after());
    P("after_fault.cuLaunchKernel", cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, e->args, nullptr));
    P("after_fault.cuLaunchKernel_block_2048", cuLaunchKernel(e->ext, 1, 1, 1, 2048, 1, 1, 0, nullptr, e->args, nullptr));
    CUmodule m = nullptr;
    P("after_fault.cuModuleLoadData", cuModuleLoadData(&m, g.fatbin.data()));
  });
}

// ---- runtime ----------------------------------------------------------------------------
static void sec_runtime() {
  int host_not_symbol[4] = {0};
  int src[2] = {77, 88};
  PR("cudaMemcpyToSymbol.dvar_offset4", cudaMemcpyToSymbol(dvar, src, 8, 4));
  int back[4] = {0};
  cudaError_t e = cudaMemcpyFromSymbol(back, dvar, 16);
  PR("cudaMemcpyFromSymbol.dvar", e, fmt("contents=%d,%d,%d,%d", back[0], back[1], back[2], back[3]));
  PR("cudaMemcpyFromSymbol.dvar_offset8_count8", cudaMemcpyFromSymbol(back, dvar, 8, 8), fmt("got=%d,%d", back[0], back[1]));
  PR("cudaMemcpyToSymbol.offset12_count8", cudaMemcpyToSymbol(dvar, src, 8, 12));
  PR("cudaGetLastError.after_offset_error", cudaGetLastError());
  PR("cudaMemcpyToSymbol.offset16_count0", cudaMemcpyToSymbol(dvar, src, 0, 16));
  PR("cudaMemcpyToSymbol.count17", cudaMemcpyToSymbol(dvar, src, 17, 0));
  PR("cudaMemcpyFromSymbol.offset12_count8", cudaMemcpyFromSymbol(back, dvar, 8, 12));
  PR("cudaMemcpyToSymbol.not_a_symbol", cudaMemcpyToSymbol(host_not_symbol, src, 8));
  PR("cudaGetLastError.after_not_a_symbol", cudaGetLastError());
  PR("cudaMemcpyFromSymbol.not_a_symbol", cudaMemcpyFromSymbol(back, host_not_symbol, 8));
  PR("cudaMemcpyToSymbol.null_symbol", cudaMemcpyToSymbol(nullptr, src, 8));
  float fv[8] = {0};
  e = cudaMemcpyFromSymbol(fv, cvar, 32);
  PR("cudaMemcpyFromSymbol.cvar", e, fmt("cvar=%g,%g..%g", fv[0], fv[1], fv[7]));
  float nf = 11.5f;
  PR("cudaMemcpyToSymbol.cvar", cudaMemcpyToSymbol(cvar, &nf, 4));
  int mv = 0;
  PR("cudaMemcpyFromSymbol.mvar", cudaMemcpyFromSymbol(&mv, mvar, 4), fmt("mvar=%d", mv));
  PR("cudaMemcpyToSymbol.wrong_kind_DtoH", cudaMemcpyToSymbol(dvar, src, 8, 0, cudaMemcpyDeviceToHost));
  void* p = nullptr;
  PR("cudaGetSymbolAddress.dvar", cudaGetSymbolAddress(&p, dvar), p ? "set" : "null");
  void* pc = nullptr;
  PR("cudaGetSymbolAddress.cvar", cudaGetSymbolAddress(&pc, cvar), pc ? "set" : "null");
  void* pm = nullptr;
  PR("cudaGetSymbolAddress.mvar", cudaGetSymbolAddress(&pm, mvar), fmt("%s host_address_of_mvar=%s", pm ? "set" : "null", pm == static_cast<void*>(&mvar) ? "same" : "different"));
  void* px = reinterpret_cast<void*>(0x5e47e1);
  PR("cudaGetSymbolAddress.not_a_symbol", cudaGetSymbolAddress(&px, host_not_symbol), px == reinterpret_cast<void*>(0x5e47e1) ? "out=untouched" : px ? "out=set" : "out=null");
  PR("cudaGetSymbolAddress.kernel", cudaGetSymbolAddress(&px, reinterpret_cast<const void*>(k_extern_c)));
  PR("cudaGetSymbolAddress.null_out", cudaGetSymbolAddress(nullptr, dvar));
  size_t sz = 0;
  PR("cudaGetSymbolSize.dvar", cudaGetSymbolSize(&sz, dvar), fmt("size=%zu", sz));
  sz = 0;
  PR("cudaGetSymbolSize.cvar", cudaGetSymbolSize(&sz, cvar), fmt("size=%zu", sz));
  sz = 0;
  PR("cudaGetSymbolSize.mvar", cudaGetSymbolSize(&sz, mvar), fmt("size=%zu", sz));
  sz = 12345;
  PR("cudaGetSymbolSize.not_a_symbol", cudaGetSymbolSize(&sz, host_not_symbol), fmt("size=%zu", sz));
  PR("cudaGetLastError.after_symbol_errors", cudaGetLastError());
  // The driver's view of the runtime's variable.
  if (p) {
    unsigned mt = 0;
    cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
    unsigned im = 7;
    cuPointerGetAttribute(&im, CU_POINTER_ATTRIBUTE_IS_MANAGED, reinterpret_cast<CUdeviceptr>(pm));
    NOTE("runtime.driver_view", fmt("dvar MEMORY_TYPE=%u mvar IS_MANAGED=%u", mt, im));
  }
  // Function attributes.
  struct K {
    const char* name;
    const void* f;
  } ks[] = {{"k_plain", reinterpret_cast<const void*>(k_plain)},     {"k_bounded", reinterpret_cast<const void*>(k_bounded)},
            {"k_shared", reinterpret_cast<const void*>(k_shared)},   {"k_tmpl<int>", reinterpret_cast<const void*>(k_tmpl<int>)},
            {"k_extern_c", reinterpret_cast<const void*>(k_extern_c)}, {"k_globals", reinterpret_cast<const void*>(k_globals)},
            {"k_empty", reinterpret_cast<const void*>(k_empty)}};
  for (auto& k : ks) {
    cudaFuncAttributes a{};
    e = cudaFuncGetAttributes(&a, k.f);
    PR(std::string("cudaFuncGetAttributes.") + k.name, e,
       fmt("maxThreadsPerBlock=%d sharedSizeBytes=%zu constSizeBytes=%zu localSizeBytes=%zu numRegs=%d ptxVersion=%d "
           "binaryVersion=%d cacheModeCA=%d maxDynamicSharedSizeBytes=%d preferredShmemCarveout=%d clusterDimMustBeSet=%d "
           "requiredClusterWidth=%d nonPortableClusterSizeAllowed=%d clusterSchedulingPolicyPreference=%d",
           a.maxThreadsPerBlock, a.sharedSizeBytes, a.constSizeBytes, a.localSizeBytes, a.numRegs, a.ptxVersion,
           a.binaryVersion, a.cacheModeCA, a.maxDynamicSharedSizeBytes, a.preferredShmemCarveout, a.clusterDimMustBeSet,
           a.requiredClusterWidth, a.nonPortableClusterSizeAllowed, a.clusterSchedulingPolicyPreference));
    const char* n = nullptr;
    e = cudaFuncGetName(&n, k.f);
    PR(std::string("cudaFuncGetName.") + k.name, e, n ? std::string("name=") + n : "name=null");
  }
  {
    cudaFuncAttributes a{};
    PR("cudaFuncGetAttributes.not_a_kernel", cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&sec_runtime)));
    PR("cudaGetLastError.after_not_a_kernel", cudaGetLastError());
    PR("cudaFuncGetAttributes.host_data", cudaFuncGetAttributes(&a, host_not_symbol));
    PR("cudaFuncGetAttributes.null", cudaFuncGetAttributes(&a, nullptr));
    PR("cudaFuncGetAttributes.null_out", cudaFuncGetAttributes(nullptr, reinterpret_cast<const void*>(k_plain)));
    const char* n = nullptr;
    PR("cudaFuncGetName.not_a_kernel", cudaFuncGetName(&n, reinterpret_cast<const void*>(&sec_runtime)));
    PR("cudaFuncGetName.null_out", cudaFuncGetName(nullptr, reinterpret_cast<const void*>(k_plain)));
  }
  // Launches.
  int* d = nullptr;
  cudaMalloc(&d, 4096);
  cudaMemset(d, 0, 4096);
  int n = 4321;
  void* args[] = {&d, &n};
  auto chk = [&](const std::string& name, cudaError_t r) {
    cudaError_t s = cudaDeviceSynchronize();
    cudaError_t l = cudaGetLastError();
    int v = -1;
    cudaMemcpy(&v, d, 4, cudaMemcpyDeviceToHost);
    PR(name, r, fmt("sync=%s lasterror=%s out0=%d", cudaGetErrorName(s), cudaGetErrorName(l), v));
    cudaMemset(d, 0, 4);
  };
  chk("cudaLaunchKernel.ok", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(1), args, 0, nullptr));
  chk("cudaLaunchKernel.block_2048", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(2048), args, 0, nullptr));
  chk("cudaLaunchKernel.block_1025", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(1025), args, 0, nullptr));
  chk("cudaLaunchKernel.block_z65", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(1, 1, 65), args, 0, nullptr));
  chk("cudaLaunchKernel.grid_0", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(0), dim3(1), args, 0, nullptr));
  chk("cudaLaunchKernel.grid_y65536", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1, 65536), dim3(1), args, 0, nullptr));
  chk("cudaLaunchKernel.shmem_49153", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(1), args, 49153, nullptr));
  chk("cudaLaunchKernel.bounded_512", cudaLaunchKernel(reinterpret_cast<const void*>(k_bounded), dim3(1), dim3(512), args, 0, nullptr));
  chk("cudaLaunchKernel.not_a_kernel", cudaLaunchKernel(reinterpret_cast<const void*>(&sec_runtime), dim3(1), dim3(1), args, 0, nullptr));
  chk("cudaLaunchKernel.null_func", cudaLaunchKernel(nullptr, dim3(1), dim3(1), args, 0, nullptr));
  chk("cudaLaunchKernel.null_args", cudaLaunchKernel(reinterpret_cast<const void*>(k_extern_c), dim3(1), dim3(1), nullptr, 0, nullptr));
  cudaKernel_t kk = nullptr;
  e = cudaGetKernel(&kk, reinterpret_cast<const void*>(k_extern_c));
  PR("cudaGetKernel.k_extern_c", e, kk ? "set" : "null");
  if (kk) {
    chk("cudaLaunchKernel.cudaKernel_t", cudaLaunchKernel(reinterpret_cast<const void*>(kk), dim3(1), dim3(1), args, 0, nullptr));
    const char* kn = nullptr;
    P("cudaGetKernel.cuKernelGetName", cuKernelGetName(&kn, reinterpret_cast<CUkernel>(kk)), kn ? std::string("name=") + kn : "");
  }
  cudaKernel_t kx = reinterpret_cast<cudaKernel_t>(0x5e47e1);
  PR("cudaGetKernel.not_a_kernel", cudaGetKernel(&kx, reinterpret_cast<const void*>(&sec_runtime)),
     kx == reinterpret_cast<cudaKernel_t>(0x5e47e1) ? "out=untouched" : kx ? "out=set" : "out=null");
  PR("cudaGetLastError.after_getkernel", cudaGetLastError());
  // <<<>>>
  k_extern_c<<<1, 2048>>>(d, 5);
  PR("triple_chevron.block_2048.cudaPeekAtLastError", cudaPeekAtLastError());
  PR("triple_chevron.block_2048.cudaGetLastError", cudaGetLastError());
  PR("triple_chevron.block_2048.cudaGetLastError_again", cudaGetLastError());
  k_extern_c<<<0, 1>>>(d, 5);
  PR("triple_chevron.grid_0.cudaGetLastError", cudaGetLastError());
  k_extern_c<<<1, 1>>>(d, 5);
  PR("triple_chevron.ok.cudaGetLastError", cudaGetLastError());
  chk("triple_chevron.ok", cudaSuccess);
  k_extern_c<<<1, 2048>>>(d, 5);
  PR("triple_chevron.block_2048.then_cudaDeviceSynchronize", cudaDeviceSynchronize());
  PR("triple_chevron.block_2048.then_cudaGetLastError", cudaGetLastError());
  // Driver handles behind the runtime's kernels.
  cudaFunction_t cf = nullptr;
  e = cudaGetFuncBySymbol(&cf, reinterpret_cast<const void*>(k_plain));
  PR("cudaGetFuncBySymbol.k_plain", e, cf ? "name=" + func_name(reinterpret_cast<CUfunction>(cf)) : "null");
  cudaFunction_t cfx = reinterpret_cast<cudaFunction_t>(0x5e47e1);
  PR("cudaGetFuncBySymbol.not_a_kernel", cudaGetFuncBySymbol(&cfx, reinterpret_cast<const void*>(&sec_runtime)),
     cfx == reinterpret_cast<cudaFunction_t>(0x5e47e1) ? "out=untouched" : cfx ? "out=set" : "out=null");
  if (cf) {
    CUmodule mm = nullptr;
    CUresult r = cuFuncGetModule(&mm, reinterpret_cast<CUfunction>(cf));
    unsigned cnt = 0;
    if (r == CUDA_SUCCESS) cuModuleGetFunctionCount(&cnt, mm);
    CUdeviceptr dv = 0;
    size_t b = 0;
    CUresult rg = r == CUDA_SUCCESS ? cuModuleGetGlobal(&dv, &b, mm, "dvar") : r;
    P("cudaGetFuncBySymbol.cuFuncGetModule", r, fmt("functions=%u dvar=%s/%s", cnt, en(rg), reinterpret_cast<void*>(dv) == p ? "same as cudaGetSymbolAddress" : "other"));
    int nr = 0;
    P("cudaGetFuncBySymbol.cuFuncGetAttribute.NUM_REGS", cuFuncGetAttribute(&nr, CU_FUNC_ATTRIBUTE_NUM_REGS, reinterpret_cast<CUfunction>(cf)), fmt("value=%d", nr));
  }
  PR("cudaGetLastError.final", cudaGetLastError());
  NOTE("runtime.mvar_host_read", fmt("%d", mvar));
}

static void sec_managed_host() {
  ctx();
  CUmodule m = load_mod(g.fatbin);
  CUdeviceptr d = 0;
  cuModuleGetGlobal(&d, nullptr, m, "mvar");
  int v = *reinterpret_cast<volatile int*>(d);
  NOTE("module.mvar.host_read", fmt("%d", v));
  *reinterpret_cast<volatile int*>(d) = 43;
  int back = 0;
  cuMemcpyDtoH(&back, d, 4);
  NOTE("module.mvar.host_write_then_DtoH", fmt("%d", back));
}

// A library from an image the device cannot use: under lazy loading cuLibraryLoadData succeeds;
// what do its getters say?
static void sec_lazylib() {
  ctx();
  std::vector<std::vector<char>> keep;
  for (auto& c : image_cases(keep)) {
    if (c.name != std::string("cubin_sm100") && c.name != std::string("empty_string") &&
        c.name != std::string("ptx_syntax_error") && c.name != std::string("ptx_version_9.9"))
      continue;
    std::string p = std::string("lazylib.") + c.name;
    CUlibrary l = nullptr;
    CUresult r = cuLibraryLoadData(&l, c.p, nullptr, nullptr, 0, nullptr, nullptr, 0);
    P(p + ".load", r);
    if (r != CUDA_SUCCESS) continue;
    unsigned n = 99;
    P(p + ".count", cuLibraryGetKernelCount(&n, l), fmt("count=%u", n));
    CUkernel k = sentinel<CUkernel>();
    P(p + ".getkernel", cuLibraryGetKernel(&k, l, "k_extern_c"), "out=" + state(k, sentinel<CUkernel>()));
    CUmodule m = sentinel<CUmodule>();
    P(p + ".getmodule", cuLibraryGetModule(&m, l), "out=" + state(m, sentinel<CUmodule>()));
    CUdeviceptr d = 0x5e47e1;
    size_t b = 12345;
    P(p + ".getglobal", cuLibraryGetGlobal(&d, &b, l, "dvar"), fmt("bytes=%zu", b));
    P(p + ".getmanaged", cuLibraryGetManaged(&d, &b, l, "mvar"), fmt("bytes=%zu", b));
    P(p + ".unload", cuLibraryUnload(l));
  }
}
static void sec_loading_mode_null() { P("cuModuleGetLoadingMode.null", cuModuleGetLoadingMode(nullptr)); }

static void register_sections() {
  add("lazylib", sec_lazylib);
  add("loadingmode_null", sec_loading_mode_null);
  add("load", sec_load);
  for (const char* api : {"cuModuleLoadData", "cuModuleLoadFatBinary", "cuLibraryLoadData"})
    for (const char* img : kRiskyImages) {
      std::string a = api, i = img;
      add("load." + a + "." + i, [a, i] { sec_load_risky(a, i); });
    }
  add("noctx", sec_noctx);
  add("module", sec_module);
  add("func", sec_func);
  add("library", sec_library);
  for (const char* w : {"unload_twice", "getfunction", "getglobal", "functioncount", "funcgetattribute", "funcgetname",
                        "funcgetparaminfo", "launch", "global_memcpy", "lib_unload_twice", "lib_getkernel",
                        "lib_kernel_getfunction", "lib_kernel_getname", "lib_function_launch"}) {
    std::string s = w;
    add("stale." + s, [s] { sec_stale(s); });
  }
  for (const char* w : {"unload_0x1234", "unload_zeros", "unload_junk", "libunload_0x1234", "libunload_zeros",
                        "getfunction_0x1234", "getfunction_zeros", "funcattr_0x1234", "funcattr_zeros",
                        "launch_0x1234", "launch_zeros", "launch_junk", "kernelgetfunction_0x1234", "kernelgetfunction_zeros"}) {
    std::string s = w;
    add("garbage." + s, [s] { sec_garbage(s); });
  }
  add_launch_sections();
  add("runtime", sec_runtime);
  add("managed_host", sec_managed_host);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s IMAGE_DIR [--section NAME]\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  load_images();
  register_sections();
  if (argc == 4 && !strcmp(argv[2], "--section")) {
    alarm(getenv("PROBE_ALARM") ? unsigned(atoi(getenv("PROBE_ALARM"))) : 60u);
    for (auto& s : g_sections)
      if (s.name == argv[3]) {
        s.run();
        fflush(stdout);
        return 0;
      }
    return 9;
  }
  std::vector<std::string> only;
  if (const char* o = getenv("PROBE_ONLY")) {
    std::string all = o;
    size_t pos = 0;
    while (pos <= all.size()) {
      size_t c = all.find(',', pos);
      if (c == std::string::npos) c = all.size();
      if (c > pos) only.push_back(all.substr(pos, c - pos));
      pos = c + 1;
    }
  }
  {
    int drv = 0;
    cuDriverGetVersion(&drv);
    printf("# driver %d; CUDA_MODULE_LOADING=%s\n", drv, getenv("CUDA_MODULE_LOADING") ? getenv("CUDA_MODULE_LOADING") : "(unset)");
  }
  // PROBE_SKIP=text: sections whose names contain it are left out (the truncated fat binaries
  // NVIDIA's driver 580 hangs on: PROBE_SKIP=fatbin_truncated,fatbin_header).
  std::vector<std::string> skip;
  if (const char* o = getenv("PROBE_SKIP")) {
    std::string all = o;
    for (size_t pos = 0; pos <= all.size();) {
      size_t c = all.find(',', pos);
      if (c == std::string::npos) c = all.size();
      if (c > pos) skip.push_back(all.substr(pos, c - pos));
      pos = c + 1;
    }
  }
  for (auto& s : g_sections) {
    bool skipped = false;
    for (auto& k : skip) skipped |= s.name.find(k) != std::string::npos;
    if (skipped) continue;
    if (!only.empty()) {
      bool pick = false;
      for (auto& o : only)  // "name$": that section alone; else every section the prefix starts
        pick |= o.back() == '$' ? s.name == o.substr(0, o.size() - 1) : s.name.rfind(o, 0) == 0;
      if (!pick) continue;
    }
    printf("== section %s\n", s.name.c_str());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], argv[1], "--section", s.name.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
      printf("section %s: %s(signal %d)\n", s.name.c_str(), WTERMSIG(st) == SIGALRM ? "TIMEOUT" : "CRASH", WTERMSIG(st));
    else
      printf("section %s: exit %d\n", s.name.c_str(), WEXITSTATUS(st));
    fflush(stdout);
  }
  return 0;
}
