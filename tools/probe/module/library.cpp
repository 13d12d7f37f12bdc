// cuLibrary* and cuKernel* (kernels, their count and enumeration, the library's module, globals
// and managed variables, a CUkernel where a CUfunction is expected), then handles that are stale
// (after their module's or library's unload) or junk, each a section of its own.
#include "probe.hpp"

namespace {

// cuLibraryGetGlobal and cuLibraryGetManaged on each variable (and names that are none).
void library_globals(CUlibrary l, CUmodule lm) {
  const char* gnames[] = {"dvar", "cvar", "mvar", "k_extern_c", "no_such_var"};
  CUdeviceptr lib_dvar = 0, mod_dvar = 0;
  cuModuleGetGlobal(&mod_dvar, nullptr, lm, "dvar");
  for (const char* n : gnames) {
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    CUresult r = cuLibraryGetGlobal(&d, &bytes, l, n);
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
    CUresult r = cuLibraryGetManaged(&d, &bytes, l, n);
    std::string x = fmt("bytes=%zu dptr=%s", bytes, d == 0x5e47e1 ? "untouched" : d ? "set" : "null");
    if (r == CUDA_SUCCESS) {
      int v = 0;
      cuMemcpyDtoH(&v, d, 4);
      x += fmt(" contents=%d", v);
    }
    P(std::string("cuLibraryGetManaged.") + n, r, x);
  }
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

// cuKernelGetFunction, GetName, GetLibrary, GetParamInfo on k_extern_c (k) and k_plain (kp).
void kernel_getters(CUlibrary l, CUmodule lm, CUkernel k, CUkernel kp) {
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
  P("cuKernelGetFunction.null_kernel", cuKernelGetFunction(&fx, nullptr), out_state(fx));
  const char* n = nullptr;
  P("cuKernelGetName", cuKernelGetName(&n, kp), n ? std::string("name=") + n : "name=null");
  P("cuKernelGetName.null_out", cuKernelGetName(nullptr, k));
  n = nullptr;
  P("cuKernelGetName.null_kernel", cuKernelGetName(&n, nullptr));
  CUlibrary kl = nullptr;
  P("cuKernelGetLibrary", cuKernelGetLibrary(&kl, k), kl == l ? "same library" : "other library");
  P("cuKernelGetLibrary.null_out", cuKernelGetLibrary(nullptr, k));
  CUlibrary klx = sentinel<CUlibrary>();
  P("cuKernelGetLibrary.null_kernel", cuKernelGetLibrary(&klx, nullptr), out_state(klx));
  for (size_t i = 0; i < 7; ++i) {
    size_t off = 777, sz = 777;
    CUresult r = cuKernelGetParamInfo(kp, i, &off, &sz);
    P(fmt("cuKernelGetParamInfo.k_plain.%zu", i), r, fmt("offset=%zu size=%zu", off, sz));
    if (r != CUDA_SUCCESS) break;
  }
  size_t off = 777, sz = 777;
  P("cuKernelGetParamInfo.null_offset", cuKernelGetParamInfo(kp, 1, nullptr, &sz), fmt("size=%zu", sz));
  P("cuKernelGetParamInfo.null_size", cuKernelGetParamInfo(kp, 1, &off, nullptr), fmt("offset=%zu", off));
  P("cuKernelGetParamInfo.null_kernel", cuKernelGetParamInfo(nullptr, 0, &off, &sz));
  CUkernel ke = nullptr;
  cuLibraryGetKernel(&ke, l, "_Z7k_emptyv");
  P("cuKernelGetParamInfo.k_empty.0", cuKernelGetParamInfo(ke, 0, &off, &sz));
}

// cuKernelGetAttribute / SetAttribute / SetCacheConfig on k_extern_c.
void kernel_attributes(CUkernel k) {
  for (int a = 0; a <= CU_FUNC_ATTRIBUTE_MAX + 1; ++a) {
    int v = -7777;
    CUresult r = cuKernelGetAttribute(&v, CUfunction_attribute(a), k, 0);
    P("cuKernelGetAttribute.k_extern_c" + attr_suffix(a), r, fmt("value=%d", v));
  }
  int v = -7777;
  P("cuKernelGetAttribute.dev1", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 1), fmt("value=%d", v));
  P("cuKernelGetAttribute.dev-1", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, -1), fmt("value=%d", v));
  P("cuKernelGetAttribute.null_pi", cuKernelGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0));
  P("cuKernelGetAttribute.null_kernel", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr, 0));
  CUresult r = cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, 0);
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
void kernel_as_function(CUmodule lm, CUkernel k) {
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

void sec_library() {
  ctx();
  CUlibrary l = nullptr;
  CUresult r = lib_load(&l, g.fatbin.data());
  if (r != CUDA_SUCCESS) { P("setup.cuLibraryLoadData", r); return; }
  getter_cases(kLibraryListing, l, {{"unknown", "no_such_kernel"}, {"variable_name", "dvar"}, {"null_name", nullptr}});
  listing_cases(kLibraryListing, l, "same_handles_as_GetKernel", false);
  // Module of the library.
  CUmodule lm = nullptr, lm2 = nullptr;
  P("cuLibraryGetModule", cuLibraryGetModule(&lm, l));
  cuLibraryGetModule(&lm2, l);
  NOTE("cuLibraryGetModule.twice", lm == lm2 ? "same handle" : "different handles");
  P("cuLibraryGetModule.null_out", cuLibraryGetModule(nullptr, l));
  CUmodule lmx = sentinel<CUmodule>();
  P("cuLibraryGetModule.null_library", cuLibraryGetModule(&lmx, nullptr), out_state(lmx));
  {
    unsigned n = 0;
    cuModuleGetFunctionCount(&n, lm);
    NOTE("cuLibraryGetModule.function_count", fmt("%u", n));
  }
  library_globals(l, lm);
  // Kernels.
  CUkernel k = nullptr, kp = nullptr;
  cuLibraryGetKernel(&k, l, "k_extern_c");
  cuLibraryGetKernel(&kp, l, "_Z7k_plaincid3S24Pi");
  kernel_getters(l, lm, k, kp);
  kernel_attributes(k);
  kernel_as_function(lm, k);
  // The other images as libraries.
  const std::pair<const char*, const std::vector<char>*> others[] = {{"cubin_sm90", &g.cub90}, {"ptx", &g.ptx}};
  for (auto& o : others) {
    CUlibrary lo = nullptr;
    r = lib_load(&lo, o.second->data());
    P(std::string("library.") + o.first, r, count_and_names(kLibraryListing, lo));
    cuLibraryUnload(lo);
  }
  P("cuLibraryUnload", cuLibraryUnload(l));
  P("cuLibraryUnload.null", cuLibraryUnload(nullptr));
}

// Risky single cases, each a section of its own: a library's handles after its unload.
void sec_stale_lib(const std::string& which) {
  CUlibrary l = nullptr;
  lib_load(&l, g.fatbin.data());
  CUkernel k = nullptr;
  cuLibraryGetKernel(&k, l, "k_extern_c");
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, k);
  P("stale." + which + ".first_unload", cuLibraryUnload(l));
  std::string name = "stale." + which;
  if (which == "lib_unload_twice") {
    P(name, cuLibraryUnload(l));
  } else if (which == "lib_getkernel") {
    CUkernel k2 = sentinel<CUkernel>();
    P(name, cuLibraryGetKernel(&k2, l, "k_extern_c"), out_state(k2));
  } else if (which == "lib_kernel_getfunction") {
    CUfunction f2 = sentinel<CUfunction>();
    P(name, cuKernelGetFunction(&f2, k), out_state(f2));
  } else if (which == "lib_kernel_getname") {
    const char* n = nullptr;
    P(name, cuKernelGetName(&n, k));
  } else if (which == "lib_function_launch") {
    P(name, launch_1x1(f), after());
  }
}

// A module's handles after its unload.
void sec_stale(const std::string& which) {
  ctx();
  if (which.rfind("lib", 0) == 0) return sec_stale_lib(which);
  CUmodule m = load_mod(g.fatbin);
  CUfunction f = fn(m, "k_extern_c");
  CUdeviceptr d = 0;
  cuModuleGetGlobal(&d, nullptr, m, "dvar");
  P("stale." + which + ".first_unload", cuModuleUnload(m));
  std::string name = "stale." + which;
  if (which == "unload_twice") {
    P(name, cuModuleUnload(m));
  } else if (which == "getfunction") {
    CUfunction f2 = sentinel<CUfunction>();
    P(name, cuModuleGetFunction(&f2, m, "k_extern_c"), out_state(f2));
  } else if (which == "getglobal") {
    CUdeviceptr d2 = 0x5e47e1;
    size_t b = 0;
    P(name, cuModuleGetGlobal(&d2, &b, m, "dvar"));
  } else if (which == "functioncount") {
    unsigned n = 77;
    P(name, cuModuleGetFunctionCount(&n, m), fmt("count=%u", n));
  } else if (which == "funcgetattribute") {
    int v = -7777;
    P(name, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), fmt("value=%d", v));
  } else if (which == "funcgetname") {
    const char* n = nullptr;
    P(name, cuFuncGetName(&n, f));
  } else if (which == "funcgetparaminfo") {
    size_t o = 0, s = 0;
    P(name, cuFuncGetParamInfo(f, 0, &o, &s));
  } else if (which == "launch") {
    P(name, launch_1x1(f), after());
  } else if (which == "global_memcpy") {
    int buf[4];
    P(name, cuMemcpyDtoH(buf, d, 16));
  }
}

// Handles that never were: 0x1234, a page of zeros, a page of 0xAB.
void sec_garbage(const std::string& which) {
  ctx();
  static unsigned char zeros[4096];
  static unsigned char junk[4096];
  memset(junk, 0xAB, sizeof junk);
  void* handle = which.find("zeros") != std::string::npos ? static_cast<void*>(zeros)
                 : which.find("junk") != std::string::npos ? static_cast<void*>(junk)
                                                           : reinterpret_cast<void*>(uintptr_t(0x1234));
  std::string name = "garbage." + which;
  auto is = [&](const char* prefix) { return which.rfind(prefix, 0) == 0; };
  if (is("unload")) {
    P(name, cuModuleUnload(static_cast<CUmodule>(handle)));
  } else if (is("libunload")) {
    P(name, cuLibraryUnload(static_cast<CUlibrary>(handle)));
  } else if (is("getfunction")) {
    CUfunction f = sentinel<CUfunction>();
    P(name, cuModuleGetFunction(&f, static_cast<CUmodule>(handle), "k_extern_c"), out_state(f));
  } else if (is("funcattr")) {
    int v = -7777;
    P(name, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, static_cast<CUfunction>(handle)));
  } else if (is("launch")) {
    P(name, launch_1x1(static_cast<CUfunction>(handle)), after());
  } else if (is("kernelgetfunction")) {
    CUfunction f = sentinel<CUfunction>();
    P(name, cuKernelGetFunction(&f, static_cast<CUkernel>(handle)), out_state(f));
  }
}

}  // namespace

void add_library_sections() {
  add("library", sec_library);
  add_each("stale", {"unload_twice", "getfunction", "getglobal", "functioncount", "funcgetattribute", "funcgetname",
                     "funcgetparaminfo", "launch", "global_memcpy", "lib_unload_twice", "lib_getkernel",
                     "lib_kernel_getfunction", "lib_kernel_getname", "lib_function_launch"},
           sec_stale);
  add_each("garbage", {"unload_0x1234", "unload_zeros", "unload_junk", "libunload_0x1234", "libunload_zeros",
                       "getfunction_0x1234", "getfunction_zeros", "funcattr_0x1234", "funcattr_zeros",
                       "launch_0x1234", "launch_zeros", "launch_junk", "kernelgetfunction_0x1234",
                       "kernelgetfunction_zeros"},
           sec_garbage);
}
