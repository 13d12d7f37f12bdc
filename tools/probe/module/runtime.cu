// The runtime's symbol and launch calls on this program's own kernels and variables
// (cudaMemcpyTo/FromSymbol, cudaGetSymbolAddress/Size, cudaFuncGetAttributes, cudaFuncGetName,
// cudaLaunchKernel, <<<>>>, cudaGetKernel, cudaGetFuncBySymbol), and a __managed__ variable of a
// driver-loaded module read and written from the host. The probe's one file with device code.
#include "../../../tests/conformance/module_kernels.cu"
#include "probe.hpp"

#include <cuda_runtime.h>

#include <string>

std::vector<char> s24_arg(int b, char c0) {
  S24 s{};
  s.b = b;
  s.c[0] = c0;
  std::vector<char> v(sizeof s);
  memcpy(v.data(), &s, sizeof s);
  return v;
}

namespace {

void PR_(const std::string& name, cudaError_t e, const std::string& extra = "") {
  line(name, cudaGetErrorName(e), static_cast<int>(e), extra);
}
#define PR(name, call, ...)                \
  do {                                     \
    cudaError_t e_ = (call);               \
    PR_(name, e_, ##__VA_ARGS__);          \
  } while (0)

template <class T>
std::string out_of(T v) {  // a runtime output preset to 0x5e47e1
  return v == reinterpret_cast<T>(0x5e47e1) ? "out=untouched" : v ? "out=set" : "out=null";
}
void sec_runtime();
const void* not_a_kernel() { return reinterpret_cast<const void*>(&sec_runtime); }

// Symbols: copies to and from __device__, __constant__ and __managed__ variables, their
// addresses and sizes, and a host array that is no symbol. Returns dvar's address.
void* runtime_symbols() {
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
  PR("cudaGetSymbolAddress.not_a_symbol", cudaGetSymbolAddress(&px, host_not_symbol), out_of(px));
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
  cudaFuncAttributes a{};
  PR("cudaFuncGetAttributes.not_a_kernel", cudaFuncGetAttributes(&a, not_a_kernel()));
  PR("cudaGetLastError.after_not_a_kernel", cudaGetLastError());
  PR("cudaFuncGetAttributes.host_data", cudaFuncGetAttributes(&a, host_not_symbol));
  PR("cudaFuncGetAttributes.null", cudaFuncGetAttributes(&a, nullptr));
  PR("cudaFuncGetAttributes.null_out", cudaFuncGetAttributes(nullptr, reinterpret_cast<const void*>(k_plain)));
  const char* n = nullptr;
  PR("cudaFuncGetName.not_a_kernel", cudaFuncGetName(&n, not_a_kernel()));
  PR("cudaFuncGetName.null_out", cudaFuncGetName(nullptr, reinterpret_cast<const void*>(k_plain)));
  return p;
}

// The driver handles behind the runtime's kernels; p: dvar's address from cudaGetSymbolAddress.
void runtime_driver_handles(void* p) {
  cudaFunction_t cf = nullptr;
  cudaError_t e = cudaGetFuncBySymbol(&cf, reinterpret_cast<const void*>(k_plain));
  PR("cudaGetFuncBySymbol.k_plain", e, cf ? "name=" + func_name(reinterpret_cast<CUfunction>(cf)) : "null");
  cudaFunction_t cfx = reinterpret_cast<cudaFunction_t>(0x5e47e1);
  PR("cudaGetFuncBySymbol.not_a_kernel", cudaGetFuncBySymbol(&cfx, not_a_kernel()), out_of(cfx));
  if (!cf) return;
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

void sec_runtime() {
  void* p = runtime_symbols();
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
  auto launch = [&](const char* name, const void* f, dim3 grid, dim3 block, void** a, size_t shmem) {
    chk(std::string("cudaLaunchKernel.") + name, cudaLaunchKernel(f, grid, block, a, shmem, nullptr));
  };
  const void* ext = reinterpret_cast<const void*>(k_extern_c);
  launch("ok", ext, dim3(1), dim3(1), args, 0);
  launch("block_2048", ext, dim3(1), dim3(2048), args, 0);
  launch("block_1025", ext, dim3(1), dim3(1025), args, 0);
  launch("block_z65", ext, dim3(1), dim3(1, 1, 65), args, 0);
  launch("grid_0", ext, dim3(0), dim3(1), args, 0);
  launch("grid_y65536", ext, dim3(1, 65536), dim3(1), args, 0);
  launch("shmem_49153", ext, dim3(1), dim3(1), args, 49153);
  launch("bounded_512", reinterpret_cast<const void*>(k_bounded), dim3(1), dim3(512), args, 0);
  launch("not_a_kernel", not_a_kernel(), dim3(1), dim3(1), args, 0);
  launch("null_func", nullptr, dim3(1), dim3(1), args, 0);
  launch("null_args", ext, dim3(1), dim3(1), nullptr, 0);
  cudaKernel_t kk = nullptr;
  cudaError_t e = cudaGetKernel(&kk, ext);
  PR("cudaGetKernel.k_extern_c", e, kk ? "set" : "null");
  if (kk) {
    launch("cudaKernel_t", reinterpret_cast<const void*>(kk), dim3(1), dim3(1), args, 0);
    const char* kn = nullptr;
    P("cudaGetKernel.cuKernelGetName", cuKernelGetName(&kn, reinterpret_cast<CUkernel>(kk)), kn ? std::string("name=") + kn : "");
  }
  cudaKernel_t kx = reinterpret_cast<cudaKernel_t>(0x5e47e1);
  PR("cudaGetKernel.not_a_kernel", cudaGetKernel(&kx, not_a_kernel()), out_of(kx));
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
  runtime_driver_handles(p);
  PR("cudaGetLastError.final", cudaGetLastError());
  NOTE("runtime.mvar_host_read", fmt("%d", mvar));
}

void sec_managed_host() {
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

}  // namespace

void add_runtime_sections() {
  add("runtime", sec_runtime);
  add("managed_host", sec_managed_host);
}
