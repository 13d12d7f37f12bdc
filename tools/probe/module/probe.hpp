// What every file of the module probe shares (tools/probe/module/, README in main.cpp): the
// output lines, the images it loads, the context and handle helpers, the list of sections.
#pragma once

#include <cuda.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

// ---- output ---------------------------------------------------------------------------
inline std::string fmt(const char* f, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
inline const char* en(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "UNKNOWN_CURESULT";
  return s;
}
// One line per case: "case-name: ERROR_NAME (value) [outputs]".
inline void line(const std::string& name, const char* code_name, int code, const std::string& extra) {
  printf("%s: %s (%d)%s%s\n", name.c_str(), code_name, code, extra.empty() ? "" : " ", extra.c_str());
  fflush(stdout);
}
inline void P_(const std::string& name, CUresult r, const std::string& extra = "") {
  line(name, en(r), static_cast<int>(r), extra);
}
// The call first, then what it wrote: a function's arguments are evaluated in no set order, so
// P(name, call(&x), fmt(x)) as a function could print x from before the call.
#define P(name, call, ...)                 \
  do {                                     \
    CUresult r_ = (call);                  \
    P_(name, r_, ##__VA_ARGS__);           \
  } while (0)
inline void NOTE(const std::string& name, const std::string& text) {
  printf("%s: %s\n", name.c_str(), text.c_str());
  fflush(stdout);
}
template <class T>
std::string state(T v, T sentinel) {
  return v == sentinel ? "untouched" : (v == T() ? "null" : "set");
}
template <class T>
T sentinel() {
  return reinterpret_cast<T>(uintptr_t(0x5e47e1));
}
// "out=untouched|null|set" of a handle preset to the sentinel.
template <class T>
std::string out_state(T v) {
  return "out=" + state(v, sentinel<T>());
}
inline std::string oneline(const char* s, size_t max = 160) {
  std::string o;
  for (size_t i = 0; s[i] && o.size() < max; ++i) o += (s[i] == '\n' || s[i] == '\r') ? '|' : s[i];
  return o;
}

// ---- images -----------------------------------------------------------------------------
struct Images {
  std::vector<char> fatbin, cub90, cub100, ptx;
  std::string p_fatbin, p_cub90, p_cub100, p_ptx;
};
inline std::string g_dir;
inline Images g;
void load_images();  // main.cpp: reads g_dir's four images into g

inline const char* kBadPtx =
    ".version 9.0\n.target sm_90\n.address_size 64\n\n"
    ".visible .entry broken(\n)\n{\n  bogus_instruction %r1, 7;\n  ret;\n}\n";

inline const char* const kNames[] = {"_Z7k_plaincid3S24Pi", "_Z9k_boundedPi", "_Z8k_sharedPi",
                                     "_Z6k_tmplIiEvPT_S0_", "_Z6k_tmplIfEvPT_S0_", "k_extern_c",
                                     "_Z9k_globalsPi", "_Z7k_emptyv"};
inline const char* const kAttrNames[] = {
    "MAX_THREADS_PER_BLOCK", "SHARED_SIZE_BYTES", "CONST_SIZE_BYTES", "LOCAL_SIZE_BYTES", "NUM_REGS",
    "PTX_VERSION", "BINARY_VERSION", "CACHE_MODE_CA", "MAX_DYNAMIC_SHARED_SIZE_BYTES",
    "PREFERRED_SHARED_MEMORY_CARVEOUT", "CLUSTER_SIZE_MUST_BE_SET", "REQUIRED_CLUSTER_WIDTH",
    "REQUIRED_CLUSTER_HEIGHT", "REQUIRED_CLUSTER_DEPTH", "NON_PORTABLE_CLUSTER_SIZE_ALLOWED",
    "CLUSTER_SCHEDULING_POLICY_PREFERENCE"};
// ".N.NAME" for an attribute's case name; ".N" past the named ones.
inline std::string attr_suffix(int a) {
  return fmt(".%d%s%s", a, a < CU_FUNC_ATTRIBUTE_MAX ? "." : "", a < CU_FUNC_ATTRIBUTE_MAX ? kAttrNames[a] : "");
}
// The fat binary and the other two images the module and library sections load whole.
inline CUresult lib_load(CUlibrary* l, const void* image) {
  return cuLibraryLoadData(l, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
}

// ---- context and helpers ------------------------------------------------------------------
inline CUcontext ctx() {
  CUdevice dev = 0;
  CUcontext c = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS || cuCtxSetCurrent(c) != CUDA_SUCCESS) {
    printf("setup failed\n");
    exit(3);
  }
  return c;
}
inline CUmodule load_mod(const std::vector<char>& img) {
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadData(&m, img.data());
  if (r != CUDA_SUCCESS) {
    P("setup.cuModuleLoadData", r);
    exit(4);
  }
  return m;
}
inline CUfunction fn(CUmodule m, const char* name) {
  CUfunction f = nullptr;
  CUresult r = cuModuleGetFunction(&f, m, name);
  if (r != CUDA_SUCCESS) {
    P(std::string("setup.cuModuleGetFunction.") + name, r);
    exit(5);
  }
  return f;
}
// Whether the context still works after a failure: cuCtxSynchronize and a fresh cuMemAlloc.
inline std::string after() {
  CUresult s = cuCtxSynchronize();
  CUdeviceptr p = 0;
  CUresult a = cuMemAlloc(&p, 256);
  if (a == CUDA_SUCCESS) cuMemFree(p);
  return fmt("sync=%s alloc=%s", en(s), en(a));
}
inline std::string func_name(CUfunction f) {
  const char* n = nullptr;
  CUresult r = cuFuncGetName(&n, f);
  return r == CUDA_SUCCESS && n ? std::string(n) : std::string("<") + en(r) + ">";
}
inline std::string kernel_name(CUkernel k) {
  const char* n = nullptr;
  CUresult r = cuKernelGetName(&n, k);
  return r == CUDA_SUCCESS && n ? std::string(n) : std::string("<") + en(r) + ">";
}
inline std::string handle_name(CUfunction f) { return func_name(f); }
inline std::string handle_name(CUkernel k) { return kernel_name(k); }
// A one-argument launch of k_extern_c's shape (int*, int) on a handle that may be stale or junk.
inline CUresult launch_1x1(CUfunction f) {
  int* d = nullptr;
  int n = 1;
  void* args[] = {&d, &n};
  return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
}

// ---- sections ---------------------------------------------------------------------------
// Each section runs in a child of its own (main.cpp); the files add theirs in one fixed order.
struct Section {
  std::string name;
  std::function<void()> run;
};
inline std::vector<Section> g_sections;
inline void add(const std::string& name, std::function<void()> f) { g_sections.push_back({name, std::move(f)}); }
// A section per word: NAME.word runs f(word).
inline void add_each(const std::string& prefix, std::initializer_list<const char*> words,
                     void (*f)(const std::string&)) {
  for (const char* w : words) {
    std::string s = w;
    add(prefix + "." + s, [s, f] { f(s); });
  }
}

void add_load_sections();     // load.cpp: lazylib, loadingmode_null, load, load.API.IMAGE, noctx
void add_module_sections();   // module_func.cpp: module, func
void add_library_sections();  // library.cpp: library, stale.*, garbage.*
void add_launch_sections();   // launch.cpp: launch.*
void add_runtime_sections();  // runtime.cu: runtime, managed_host

// k_plain's S24 argument (runtime.cu holds the device code and its types): b and c[0] set.
std::vector<char> s24_arg(int b, char c0);

// ---- handle listings: cuModule{GetFunction,GetFunctionCount,EnumerateFunctions} and ----------
// cuLibrary{GetKernel,GetKernelCount,EnumerateKernels} have one shape, asked the same questions.
template <class H>
std::string names_of(const std::vector<H>& hs, unsigned n) {
  std::string names;
  for (unsigned i = 0; i < n; ++i) names += (i ? "," : "") + handle_name(hs[i]);
  return names;
}
template <class H, class C>
struct Listing {
  const char* get_api;    // "cuModuleGetFunction"
  const char* count_api;  // "cuModuleGetFunctionCount"
  const char* enum_api;   // "cuModuleEnumerateFunctions"
  const char* null_c;     // "null_module"
  CUresult (*get)(H*, C, const char*);
  CUresult (*count)(unsigned*, C);
  CUresult (*enumerate)(H*, unsigned, C);
};
// The getter on every kernel's name, on names it refuses (name suffix, name) each into a handle
// preset to the sentinel, then a null output, a null container, and whether two calls give one handle.
template <class H, class C>
void getter_cases(const Listing<H, C>& L, C c, std::initializer_list<std::pair<const char*, const char*>> refused) {
  std::string api = L.get_api;
  for (const char* n : kNames) {
    H h = nullptr;
    CUresult r = L.get(&h, c, n);
    P(api + "." + n, r, r == CUDA_SUCCESS ? "name=" + handle_name(h) : "");
  }
  for (auto& n : refused) {
    H h = sentinel<H>();
    P(api + "." + n.first, L.get(&h, c, n.second), out_state(h));
  }
  P(api + ".null_out", L.get(nullptr, c, "k_extern_c"));
  H h = sentinel<H>();
  P(api + "." + L.null_c, L.get(&h, nullptr, "k_extern_c"), out_state(h));
  H a = nullptr, b = nullptr;
  L.get(&a, c, "k_extern_c");
  L.get(&b, c, "k_extern_c");
  NOTE(api + ".twice", a == b ? "same handle" : "different handles");
}
// The count, then the enumeration into arrays of the count, more, 2 and 0 slots; with `first`,
// the 2-slot case also names its first handle.
template <class H, class C>
void listing_cases(const Listing<H, C>& L, C c, const char* same_note, bool first) {
  std::string ca = L.count_api, ea = L.enum_api;
  unsigned count = 0;
  P(ca, L.count(&count, c), fmt("count=%u", count));
  P(ca + ".null_count", L.count(nullptr, c));
  P(ca + "." + L.null_c, L.count(&count, nullptr));
  std::vector<H> hs(count + 4, sentinel<H>());
  CUresult r = L.enumerate(hs.data(), count, c);
  P(ea + ".exact", r, "names=" + names_of(hs, count));
  H direct = nullptr;
  L.get(&direct, c, "k_extern_c");
  bool found = false;
  for (unsigned i = 0; i < count; ++i) found |= hs[i] == direct;
  NOTE(ea + "." + same_note, found ? "yes" : "no");
  std::vector<H> more(count + 4, sentinel<H>());
  r = L.enumerate(more.data(), count + 4, c);
  P(ea + ".larger", r, "slot[count]=" + state(more[count], sentinel<H>()));
  std::vector<H> fewer(count, sentinel<H>());
  r = L.enumerate(fewer.data(), 2, c);
  std::string x = "slot0=" + state(fewer[0], sentinel<H>()) + " slot2=" + state(fewer[2], sentinel<H>());
  if (first) x += " first=" + (fewer[0] != sentinel<H>() && fewer[0] ? handle_name(fewer[0]) : std::string("-"));
  P(ea + ".fewer2", r, x);
  P(ea + ".zero", L.enumerate(fewer.data(), 0, c));
  P(ea + ".null_array", L.enumerate(nullptr, count, c));
  P(ea + "." + L.null_c, L.enumerate(fewer.data(), 2, nullptr));
}
// Another image loaded whole: its handles' count and names.
template <class H, class C>
std::string count_and_names(const Listing<H, C>& L, C c) {
  unsigned n = 0;
  L.count(&n, c);
  std::vector<H> hs(n);
  L.enumerate(hs.data(), n, c);
  return fmt("count=%u names=%s", n, names_of(hs, n).c_str());
}
inline const Listing<CUfunction, CUmodule> kModuleListing = {
    "cuModuleGetFunction", "cuModuleGetFunctionCount", "cuModuleEnumerateFunctions", "null_module",
    cuModuleGetFunction,   cuModuleGetFunctionCount,   cuModuleEnumerateFunctions};
inline const Listing<CUkernel, CUlibrary> kLibraryListing = {
    "cuLibraryGetKernel", "cuLibraryGetKernelCount", "cuLibraryEnumerateKernels", "null_library",
    cuLibraryGetKernel,   cuLibraryGetKernelCount,   cuLibraryEnumerateKernels};
