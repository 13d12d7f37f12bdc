// Runtime entries over registered device code: launches (<<<>>>'s call configuration,
// __cudaLaunchKernel, cudaLaunchKernel and friends), kernel attributes, and copies to and
// from __device__/__constant__/__managed__ variables. Launches go to the driver's
// cuLaunchKernel, whose launch policy decides what happens (device code never runs here).
#include <cstring>
#include <vector>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "module/module.hpp"
#include "runtime/rt_register.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

// <<<grid, block, shared, stream>>> pushes a configuration that the stub pops.
struct CallConfig {
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
};
thread_local std::vector<CallConfig> t_configs;

// The CUfunction (in the current context) that func names: a registered kernel stub, or a
// cudaKernel_t / cudaFunction_t handle.
Errc function_of(const void* func, const char* api, CUfunction& out) {
  RT_TRY(rt::context(api));
  // NVIDIA's runtime 13 looks the pointer up in its registrations and answers
  // cudaErrorInvalidResourceHandle for one it does not know (measured on a real H100).
  if (!func) return fail(Errc::invalid_handle, "{}: func is NULL", api);
  CUkernel k = nullptr;
  if (rt::is_kernel_stub(func)) {
    RT_TRY(rt::kernel_of(func, api, k));
    return api::cuKernelGetFunction(&out, k);
  }
  if (module::kernels().find(func)) return api::cuKernelGetFunction(&out, static_cast<CUkernel>(const_cast<void*>(func)));
  if (module::functions().find(func)) {
    out = static_cast<CUfunction>(const_cast<void*>(func));
    return Errc::success;
  }
  return fail(Errc::invalid_handle, "{}: {} is neither a __global__ function registered with the runtime "
              "nor a cudaKernel_t / cudaFunction_t", api, func);
}

Errc launch(CUfunction f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s, bool pt, const char* api) {
  // The driver checks the configuration: a bad one is cudaErrorInvalidValue, as NVIDIA's
  // runtime 13 passes the driver's CUDA_ERROR_INVALID_VALUE on (measured on a real H100).
  return pt ? api::cuLaunchKernel_ptsz(f, g.x, g.y, g.z, b.x, b.y, b.z, static_cast<unsigned>(shm), s, args, nullptr)
            : api::cuLaunchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, static_cast<unsigned>(shm), s, args, nullptr);
}

// cudaLaunchCooperativeKernel: the driver's cooperative launch (every block resident at once).
Errc launch_cooperative(const void* func, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s, bool pt,
                        const char* api) {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  const unsigned sh = static_cast<unsigned>(shm);
  return pt ? api::cuLaunchCooperativeKernel_ptsz(f, g.x, g.y, g.z, b.x, b.y, b.z, sh, s, args)
            : api::cuLaunchCooperativeKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, sh, s, args);
}

// The runtime's launch attributes are the driver's, member for member (ids and value unions).
static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "launch attributes differ in size");

Errc launch_func(const void* func, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s, bool pt, const char* api) {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  return launch(f, g, b, args, shm, s, pt, api);
}

Errc launch_kernel_handle(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s, bool pt,
                          const char* api) {
  RT_TRY(rt::context(api));
  CUfunction f = nullptr;
  RT_TRY(api::cuKernelGetFunction(&f, reinterpret_cast<CUkernel>(k)));
  return launch(f, g, b, args, shm, s, pt, api);
}

// The driver's form of a runtime launch configuration (cudaLaunchAttribute is laid out as
// CUlaunchAttribute).
CUlaunchConfig driver_config(const cudaLaunchConfig_t& c) {
  CUlaunchConfig d{};
  d.gridDimX = c.gridDim.x, d.gridDimY = c.gridDim.y, d.gridDimZ = c.gridDim.z;
  d.blockDimX = c.blockDim.x, d.blockDimY = c.blockDim.y, d.blockDimZ = c.blockDim.z;
  d.sharedMemBytes = static_cast<unsigned>(c.dynamicSmemBytes);
  d.hStream = c.stream;
  d.attrs = reinterpret_cast<CUlaunchAttribute*>(c.attrs);
  d.numAttrs = c.numAttrs;
  return d;
}

// cudaLaunchKernelExC: cuLaunchKernelEx with the same attributes (cluster dimensions, cooperative, ...).
Errc launch_ex(const cudaLaunchConfig_t* c, const void* func, void** args, bool pt, const char* api) {
  RT_TRY(need(c, api, "config"));
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  CUlaunchConfig d = driver_config(*c);
  return pt ? api::cuLaunchKernelEx_ptsz(&d, f, args, nullptr) : api::cuLaunchKernelEx(&d, f, args, nullptr);
}

// cudaOccupancyMaxActiveClusters / MaxPotentialClusterSize: the driver's, with the config converted.
template <class F>
Errc cluster_query(int* out, const void* func, const cudaLaunchConfig_t* c, const char* api, F driver) {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  if (!c) return driver(out, f, nullptr);
  CUlaunchConfig d = driver_config(*c);
  return driver(out, f, &d);
}

// ---- symbols ---------------------------------------------------------------------------------
Errc symbol_range(const void* symbol, size_t count, size_t offset, const char* api, CUdeviceptr& at) {
  RT_TRY(rt::context(api));
  rt::Symbol s;
  RT_TRY(rt::symbol_of(symbol, api, s));
  if (offset > s.size || count > s.size - offset)
    return fail(Errc::invalid_value, "{}: offset {} + count {} runs past the end of '{}' ({} bytes)", api, offset, count,
                s.name, s.size);
  at = s.addr + offset;
  return Errc::success;
}

Errc to_symbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind, bool async,
               cudaStream_t s, bool pt, const char* api) {
  CUdeviceptr at = 0;
  RT_TRY(symbol_range(symbol, count, offset, api, at));
  RT_TRY(rt::check_direction(kind, true, api, "a symbol"));
  void* dst = reinterpret_cast<void*>(at);
  if (!async) return pt ? rtapi::cudaMemcpy_ptds(dst, src, count, kind) : rtapi::cudaMemcpy(dst, src, count, kind);
  return pt ? rtapi::cudaMemcpyAsync_ptsz(dst, src, count, kind, s) : rtapi::cudaMemcpyAsync(dst, src, count, kind, s);
}

Errc from_symbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind, bool async,
                 cudaStream_t s, bool pt, const char* api) {
  CUdeviceptr at = 0;
  RT_TRY(symbol_range(symbol, count, offset, api, at));
  RT_TRY(rt::check_direction(kind, false, api, "a symbol"));
  const void* src = reinterpret_cast<const void*>(at);
  if (!async) return pt ? rtapi::cudaMemcpy_ptds(dst, src, count, kind) : rtapi::cudaMemcpy(dst, src, count, kind);
  return pt ? rtapi::cudaMemcpyAsync_ptsz(dst, src, count, kind, s) : rtapi::cudaMemcpyAsync(dst, src, count, kind, s);
}

}  // namespace

// ---- the call configuration and nvcc's launch stubs ------------------------------------------
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, cudaStream_t stream) noexcept {
  try {
    t_configs.push_back({grid, block, shared, stream});
    return 0;
  } catch (...) {
    return 1;
  }
}

Errc __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) noexcept {
  const char* api = "__cudaPopCallConfiguration";
  if (t_configs.empty()) return fail(Errc::rt_missing_configuration, "{}: no <<<...>>> configuration was pushed", api);
  CallConfig c = t_configs.back();
  t_configs.pop_back();
  if (grid) *grid = c.grid;
  if (block) *block = c.block;
  if (shared) *shared = c.shared;
  if (stream) *static_cast<cudaStream_t*>(stream) = c.stream;
  return Errc::success;
}

Errc __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) noexcept {
  RT_TRY(need(kernel, "__cudaGetKernel", "kernel"));
  CUkernel k = nullptr;
  RT_TRY(rt::kernel_of(hostFun, "__cudaGetKernel", k));
  *kernel = reinterpret_cast<cudaKernel_t>(k);
  return Errc::success;
}
Errc __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_kernel_handle(k, g, b, args, shm, s, false, "cudaLaunchKernel");
}
Errc __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_kernel_handle(k, g, b, args, shm, s, true, "cudaLaunchKernel");
}

// ---- launches --------------------------------------------------------------------------------
Errc cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_func(f, g, b, args, shm, s, false, "cudaLaunchKernel");
}
Errc cudaLaunchKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_func(f, g, b, args, shm, s, true, "cudaLaunchKernel");
}
Errc cudaLaunchCooperativeKernel(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_cooperative(f, g, b, args, shm, s, false, "cudaLaunchCooperativeKernel");
}
Errc cudaLaunchCooperativeKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) noexcept {
  return launch_cooperative(f, g, b, args, shm, s, true, "cudaLaunchCooperativeKernel");
}
Errc cudaLaunchKernelExC(const cudaLaunchConfig_t* c, const void* f, void** args) noexcept {
  return launch_ex(c, f, args, false, "cudaLaunchKernelExC");
}
Errc cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* c, const void* f, void** args) noexcept {
  return launch_ex(c, f, args, true, "cudaLaunchKernelExC");
}

// ---- kernels -----------------------------------------------------------------------------------
Errc cudaGetKernel(cudaKernel_t* kernel, const void* entry) noexcept { return __cudaGetKernel(kernel, entry); }

Errc cudaGetFuncBySymbol(cudaFunction_t* fp, const void* symbol) noexcept {
  const char* api = "cudaGetFuncBySymbol";
  RT_TRY(need(fp, api, "functionPtr"));
  CUfunction f = nullptr;
  RT_TRY(function_of(symbol, api, f));
  *fp = reinterpret_cast<cudaFunction_t>(f);
  return Errc::success;
}

// The occupancy calculator: the driver's, for the function the runtime registered.
Errc cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void* func, int threads, size_t dyn,
                                                            unsigned flags) noexcept {
  const char* api = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  return api::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, f, threads, dyn, flags);
}
Errc cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* func, int threads, size_t dyn) noexcept {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, threads, dyn, cudaOccupancyDefault);
}
Errc cudaOccupancyAvailableDynamicSMemPerBlock(size_t* out, const void* func, int blocks, int threads) noexcept {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, "cudaOccupancyAvailableDynamicSMemPerBlock", f));
  return api::cuOccupancyAvailableDynamicSMemPerBlock(out, f, blocks, threads);
}

Errc cudaFuncGetAttributes(cudaFuncAttributes* a, const void* func) noexcept {
  const char* api = "cudaFuncGetAttributes";
  RT_TRY(need(a, api, "attr"));
  CUfunction f = nullptr;
  RT_TRY(function_of(func, api, f));
  int v[CU_FUNC_ATTRIBUTE_MAX] = {};
  for (int i = 0; i < CU_FUNC_ATTRIBUTE_MAX; ++i)
    RT_TRY(api::cuFuncGetAttribute(&v[i], static_cast<CUfunction_attribute>(i), f));
  std::memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = v[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
  a->sharedSizeBytes = static_cast<size_t>(v[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES]);
  a->constSizeBytes = static_cast<size_t>(v[CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES]);
  a->localSizeBytes = static_cast<size_t>(v[CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES]);
  a->numRegs = v[CU_FUNC_ATTRIBUTE_NUM_REGS];
  a->ptxVersion = v[CU_FUNC_ATTRIBUTE_PTX_VERSION];
  a->binaryVersion = v[CU_FUNC_ATTRIBUTE_BINARY_VERSION];
  a->cacheModeCA = v[CU_FUNC_ATTRIBUTE_CACHE_MODE_CA];
  a->maxDynamicSharedSizeBytes = v[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
  a->preferredShmemCarveout = v[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT];
  a->clusterDimMustBeSet = v[CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET];
  a->requiredClusterWidth = v[CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
  a->requiredClusterHeight = v[CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT];
  a->requiredClusterDepth = v[CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH];
  a->clusterSchedulingPolicyPreference = v[CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE];
  a->nonPortableClusterSizeAllowed = v[CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED];
  return Errc::success;
}

Errc cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) noexcept {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, "cudaFuncSetAttribute", f));
  RT_TRY(api::cuFuncSetAttribute(f, static_cast<CUfunction_attribute>(attr), value));
  // NVIDIA's runtime (13.0, measured on this driver) leaves cudaSuccess as the thread's last
  // error after a cudaFuncSetAttribute that succeeds, whatever an earlier call left there.
  rtapi::set_last_error(Errc::success);
  return Errc::success;
}

Errc cudaFuncSetCacheConfig(const void* func, cudaFuncCache c) noexcept {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, "cudaFuncSetCacheConfig", f));
  return api::cuFuncSetCacheConfig(f, static_cast<CUfunc_cache>(c));
}

Errc cudaFuncGetName(const char** name, const void* func) noexcept {
  RT_TRY(need(name, "cudaFuncGetName", "name"));
  CUfunction f = nullptr;
  RT_TRY(function_of(func, "cudaFuncGetName", f));
  return api::cuFuncGetName(name, f);
}

Errc cudaFuncGetParamInfo(const void* func, size_t i, size_t* off, size_t* size) noexcept {
  CUfunction f = nullptr;
  RT_TRY(function_of(func, "cudaFuncGetParamInfo", f));
  return api::cuFuncGetParamInfo(f, i, off, size);
}

// ---- symbols -----------------------------------------------------------------------------------
Errc cudaGetSymbolAddress(void** p, const void* symbol) noexcept {
  const char* api = "cudaGetSymbolAddress";
  RT_TRY(need(p, api, "devPtr"));
  RT_TRY(rt::context(api));
  rt::Symbol s;
  RT_TRY(rt::symbol_of(symbol, api, s));
  *p = reinterpret_cast<void*>(s.addr);
  return Errc::success;
}

Errc cudaGetSymbolSize(size_t* size, const void* symbol) noexcept {
  const char* api = "cudaGetSymbolSize";
  RT_TRY(need(size, api, "size"));
  RT_TRY(rt::context(api));
  rt::Symbol s;
  RT_TRY(rt::symbol_of(symbol, api, s));
  *size = s.size;
  return Errc::success;
}

Errc cudaMemcpyToSymbol(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return to_symbol(sym, src, n, off, k, false, nullptr, false, "cudaMemcpyToSymbol");
}
Errc cudaMemcpyToSymbol_ptds(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return to_symbol(sym, src, n, off, k, false, nullptr, true, "cudaMemcpyToSymbol");
}
Errc cudaMemcpyFromSymbol(void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return from_symbol(dst, sym, n, off, k, false, nullptr, false, "cudaMemcpyFromSymbol");
}
Errc cudaMemcpyFromSymbol_ptds(void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return from_symbol(dst, sym, n, off, k, false, nullptr, true, "cudaMemcpyFromSymbol");
}
Errc cudaMemcpyToSymbolAsync(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind k,
                             cudaStream_t s) noexcept {
  return to_symbol(sym, src, n, off, k, true, s, false, "cudaMemcpyToSymbolAsync");
}
Errc cudaMemcpyToSymbolAsync_ptsz(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind k,
                                  cudaStream_t s) noexcept {
  return to_symbol(sym, src, n, off, k, true, s, true, "cudaMemcpyToSymbolAsync");
}
Errc cudaMemcpyFromSymbolAsync(void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind k,
                               cudaStream_t s) noexcept {
  return from_symbol(dst, sym, n, off, k, true, s, false, "cudaMemcpyFromSymbolAsync");
}
Errc cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind k,
                                    cudaStream_t s) noexcept {
  return from_symbol(dst, sym, n, off, k, true, s, true, "cudaMemcpyFromSymbolAsync");
}

Errc cudaOccupancyMaxActiveClusters(int* n, const void* func, const cudaLaunchConfig_t* c) noexcept {
  return cluster_query(n, func, c, "cudaOccupancyMaxActiveClusters",
                       [](int* o, CUfunction f, const CUlaunchConfig* d) { return api::cuOccupancyMaxActiveClusters(o, f, d); });
}
Errc cudaOccupancyMaxPotentialClusterSize(int* n, const void* func, const cudaLaunchConfig_t* c) noexcept {
  return cluster_query(n, func, c, "cudaOccupancyMaxPotentialClusterSize", [](int* o, CUfunction f, const CUlaunchConfig* d) {
    return api::cuOccupancyMaxPotentialClusterSize(o, f, d);
  });
}

// For the runtime's graph entries (rt_graph.cpp): a kernel node names its function as a launch does.
Errc graph_function_of(const void* func, const char* api, CUfunction& out) { return function_of(func, api, out); }

}  // namespace cuda_shim::rtapi
