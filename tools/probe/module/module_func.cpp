// cuModule* (functions, their count and enumeration, globals and writes through them, the other
// images) and cuFunc* (loading state, names, modules, parameter layout, attributes, cache config).
#include "probe.hpp"

namespace {

// cuPointerGetAttribute on a module variable, its alignment, and its first bytes read back.
std::string global_view(const char* n, CUdeviceptr d, size_t bytes) {
  unsigned mt = 0;
  CUresult ra = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
  unsigned managed = 7;
  CUresult rm = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d);
  size_t range = 0;
  CUresult rr = cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d);
  CUdeviceptr base = 0;
  CUresult rb = cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d);
  std::string x = fmt(" MEMORY_TYPE=%s/%u IS_MANAGED=%s/%u RANGE_SIZE=%s/%zu RANGE_START=%s/%s", en(ra), mt, en(rm),
                      managed, en(rr), range, en(rb), base == d ? "same" : "other");
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
  return x;
}

// Null arguments to cuModuleGetGlobal, how the variables lie, writes through the driver, a second
// load of the same image, and a variable's address after its module's unload.
void module_globals_more(CUmodule m) {
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

void sec_module() {
  ctx();
  CUmodule m = load_mod(g.fatbin);
  CUmoduleLoadingMode mode = CUmoduleLoadingMode(0);
  P("cuModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), fmt("mode=%d", int(mode)));
  getter_cases(kModuleListing, m,
               {{"unknown", "no_such_kernel"}, {"demangled_name", "k_plain"}, {"variable_name", "dvar"},
                {"empty_name", ""}, {"null_name", nullptr}});
  // Count and enumeration.
  listing_cases(kModuleListing, m, "same_handles_as_GetFunction", true);
  // Globals.
  for (const char* n : {"dvar", "cvar", "mvar", "k_extern_c", "_Z9k_globalsPi", "no_such_var", ""}) {
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    CUresult r = cuModuleGetGlobal(&d, &bytes, m, n);
    std::string x = fmt("bytes=%zu dptr=%s", bytes, d == 0x5e47e1 ? "untouched" : d ? "set" : "null");
    if (r == CUDA_SUCCESS) x += global_view(n, d, bytes);
    P(std::string("cuModuleGetGlobal.") + (*n ? n : "empty_name"), r, x);
  }
  module_globals_more(m);
  // The other images: counts and names.
  const std::pair<const char*, const std::vector<char>*> others[] = {{"cubin_sm90", &g.cub90}, {"ptx", &g.ptx}};
  for (auto& o : others) {
    CUmodule mo = load_mod(*o.second);
    std::string x = count_and_names(kModuleListing, mo);
    CUdeviceptr d = 0;
    size_t bytes = 0;
    CUresult r = cuModuleGetGlobal(&d, &bytes, mo, "mvar");
    unsigned managed = 0;
    if (r == CUDA_SUCCESS) cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d);
    NOTE(std::string("module.") + o.first, x + fmt(" mvar=%s/%zu/managed=%u", en(r), bytes, managed));
    cuModuleUnload(mo);
  }
  P("cuModuleUnload", cuModuleUnload(m));
  P("cuModuleUnload.null", cuModuleUnload(nullptr));
}

void dump_attrs(const std::string& prefix, CUfunction f) {
  for (int a = 0; a <= CU_FUNC_ATTRIBUTE_MAX + 1; ++a) {
    int v = -7777;
    CUresult r = cuFuncGetAttribute(&v, CUfunction_attribute(a), f);
    P(prefix + attr_suffix(a), r, fmt("value=%d", v));
  }
  int v = -7777;
  P(prefix + ".-1", cuFuncGetAttribute(&v, CUfunction_attribute(-1), f), fmt("value=%d", v));
}

// cuFuncSetAttribute: each settable attribute, limits, read back.
struct SetCase {
  bool shared;  // on k_shared, else on k_extern_c
  CUfunction_attribute a;
  int val;
};
const SetCase kSets[] = {
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0},
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152},
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000},
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448},
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449},
    {false, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1},
    {true, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448 - 4096},
    {true, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448 - 4095},
    {true, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448},
    {false, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50},
    {false, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100},
    {false, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101},
    {false, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1},
    {false, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -2},
    {false, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128},
    {false, CU_FUNC_ATTRIBUTE_NUM_REGS, 32},
    {false, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 16},
    {false, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 1},
    {false, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2},
    {false, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1},
    {false, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2},
    {false, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1},
    {false, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 3},
    {false, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 1},
    {false, CU_FUNC_ATTRIBUTE_MAX, 1},
};
void func_set_attributes(CUmodule m) {
  CUfunction f = fn(m, "k_extern_c");
  CUfunction fs = fn(m, "_Z8k_sharedPi");
  for (const SetCase& s : kSets) {
    CUfunction h = s.shared ? fs : f;
    int a = s.a;
    CUresult r = cuFuncSetAttribute(h, s.a, s.val);
    int back = -7777;
    CUresult rb = cuFuncGetAttribute(&back, s.a, h);
    P(fmt("cuFuncSetAttribute.%s.%s=%d", s.shared ? "k_shared" : "k_extern_c",
          a < CU_FUNC_ATTRIBUTE_MAX && a >= 0 ? kAttrNames[a] : fmt("%d", a).c_str(), s.val),
      r, fmt("readback=%s/%d", en(rb), back));
  }
  P("cuFuncSetAttribute.null_func", cuFuncSetAttribute(nullptr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
  for (int c = 0; c <= 4; ++c) P(fmt("cuFuncSetCacheConfig.%d", c), cuFuncSetCacheConfig(f, CUfunc_cache(c)));
  P("cuFuncSetCacheConfig.99", cuFuncSetCacheConfig(f, CUfunc_cache(99)));
  P("cuFuncSetCacheConfig.null_func", cuFuncSetCacheConfig(nullptr, CU_FUNC_CACHE_PREFER_SHARED));
}

void sec_func() {
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
    P("cuFuncGetModule.null_func", cuFuncGetModule(&fm, nullptr), out_state(fm));
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
  func_set_attributes(m);
}

}  // namespace

void add_module_sections() {
  add("module", sec_module);
  add("func", sec_func);
}
