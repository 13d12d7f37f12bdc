// cuLaunchKernel and cuLaunchKernelEx: grid and block dimensions, dynamic shared memory with and
// without the opt-in, parameters and the extra buffer, streams and contexts, clusters, a CUkernel
// as the function, and whether a faulting kernel's error is sticky.
#include "probe.hpp"

#include <iterator>
#include <thread>

namespace {

struct LaunchEnv {
  CUmodule m;
  CUfunction ext, plain, bounded, shared, empty;
  CUdeviceptr buf;
  int n = 1234;
  CUdeviceptr* bufp;
  void* args[2];
};
LaunchEnv* env() {
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
std::string readback(CUdeviceptr p) {
  int v = -1;
  CUresult r = cuMemcpyDtoH(&v, p, 4);
  return r == CUDA_SUCCESS ? fmt("out0=%d", v) : std::string("out0=<") + en(r) + ">";
}
// A launch's line: its code, whether the context still works, and what a kernel that ran wrote.
void report_launch(const std::string& name, CUresult r, CUdeviceptr buf) {
  std::string a = after();
  P_(name, r, a + (r == CUDA_SUCCESS ? " " + readback(buf) : ""));
}
void launch_case(const std::string& name, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                 unsigned by, unsigned bz, unsigned shmem, void** params, void** extra, CUdeviceptr buf) {
  CUresult r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, nullptr, params, extra);
  report_launch("cuLaunchKernel." + name, r, buf);
}
// A 1x1x1 launch of f (block bx x by x 1, shmem bytes of dynamic shared memory).
void launch_1(LaunchEnv* e, const std::string& name, CUfunction f, unsigned bx, unsigned shmem, void** params,
              void** extra = nullptr, unsigned by = 1) {
  launch_case(name, f, 1, 1, 1, bx, by, 1, shmem, params, extra, e->buf);
}

struct Dim {
  const char* name;
  unsigned g[3], b[3];
};
// At a limit and one past it, where there is one; zeros; the largest grid.
const Dim kDims[] = {
    {"ok_1x1", {1, 1, 1}, {1, 1, 1}},
    {"block_1024", {1, 1, 1}, {1024, 1, 1}}, {"block_1025", {1, 1, 1}, {1025, 1, 1}},
    {"block_2048", {1, 1, 1}, {2048, 1, 1}},
    {"block_32x32x1", {1, 1, 1}, {32, 32, 1}}, {"block_32x33x1", {1, 1, 1}, {32, 33, 1}},
    {"block_y1024", {1, 1, 1}, {1, 1024, 1}}, {"block_y1025", {1, 1, 1}, {1, 1025, 1}},
    {"block_z64", {1, 1, 1}, {1, 1, 64}}, {"block_z65", {1, 1, 1}, {1, 1, 65}},
    {"block_x0", {1, 1, 1}, {0, 1, 1}}, {"block_y0", {1, 1, 1}, {1, 0, 1}}, {"block_z0", {1, 1, 1}, {1, 1, 0}},
    {"grid_x0", {0, 1, 1}, {1, 1, 1}}, {"grid_y0", {1, 0, 1}, {1, 1, 1}}, {"grid_z0", {1, 1, 0}, {1, 1, 1}},
    {"grid_y65535", {1, 65535, 1}, {1, 1, 1}}, {"grid_y65536", {1, 65536, 1}, {1, 1, 1}},
    {"grid_z65535", {1, 1, 65535}, {1, 1, 1}}, {"grid_z65536", {1, 1, 65536}, {1, 1, 1}},
    {"grid_x2^31", {0x80000000u, 1, 1}, {1, 1, 1}},
    {"grid_x0_block_2048", {0, 1, 1}, {2048, 1, 1}},
};
void sec_dims() {
  LaunchEnv* e = env();
  for (const Dim& d : kDims) {
    cuMemsetD8(e->buf, 0, 4);
    launch_case(d.name, e->ext, d.g[0], d.g[1], d.g[2], d.b[0], d.b[1], d.b[2], 0, e->args, nullptr, e->buf);
  }
}

void set_max_dynamic_shared(const char* name, CUfunction f, int bytes) {
  P(name, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}
void sec_shmem() {
  LaunchEnv* e = env();
  launch_1(e, "shmem_49152", e->ext, 1, 49152, e->args);
  launch_1(e, "shmem_49153", e->ext, 1, 49153, e->args);
  launch_1(e, "shmem_232448_no_optin", e->ext, 1, 232448, e->args);
  void* sargs[] = {&e->buf};
  launch_1(e, "k_shared.shmem_45056", e->shared, 32, 49152 - 4096, sargs);
  launch_1(e, "k_shared.shmem_45057", e->shared, 32, 49152 - 4095, sargs);
  set_max_dynamic_shared("setup.cuFuncSetAttribute.k_extern_c.232448", e->ext, 232448);
  launch_1(e, "optin.shmem_232448", e->ext, 1, 232448, e->args);
  launch_1(e, "optin.shmem_232449", e->ext, 1, 232449, e->args);
  set_max_dynamic_shared("setup.cuFuncSetAttribute.k_extern_c.65536", e->ext, 65536);
  launch_1(e, "optin65536.shmem_65536", e->ext, 1, 65536, e->args);
  launch_1(e, "optin65536.shmem_65537", e->ext, 1, 65537, e->args);
  set_max_dynamic_shared("setup.cuFuncSetAttribute.k_shared.228352", e->shared, 232448 - 4096);
  launch_1(e, "k_shared.optin.shmem_228352", e->shared, 32, 232448 - 4096, sargs);
  launch_1(e, "k_shared.optin.shmem_228353", e->shared, 32, 232448 - 4095, sargs);
}

// The extra buffer (k_extern_c's parameters, 8 + 4 bytes, padded) in its forms, and k_plain and
// k_bounded with their own parameters.
void misc_parameters(LaunchEnv* e) {
  launch_1(e, "k_empty.params_null", e->empty, 1, 0, nullptr);
  struct {
    CUdeviceptr p;
    int n;
    int pad;
  } pb = {e->buf, 777, 0};
  size_t sizes[] = {12, 16, 8, 8192};  // 12: the real parameter buffer
  void* extras[4][5];
  for (int i = 0; i < 4; ++i) {
    void* x[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &sizes[i], CU_LAUNCH_PARAM_END};
    std::copy(std::begin(x), std::end(x), extras[i]);
    launch_1(e, fmt("extra_only_size%zu", sizes[i]), e->ext, 1, 0, nullptr, extras[i]);
  }
  void** extra = extras[0];
  void* extra_nosize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_END};
  launch_1(e, "extra_pointer_without_size", e->ext, 1, 0, nullptr, extra_nosize);
  void* extra_end[] = {CU_LAUNCH_PARAM_END};
  launch_1(e, "extra_end_only", e->ext, 1, 0, nullptr, extra_end);
  launch_1(e, "params_and_extra", e->ext, 1, 0, e->args, extra);
  launch_1(e, "params_and_extra_end_only", e->ext, 1, 0, e->args, extra_end);
  launch_1(e, "params_and_extra_block_2048", e->ext, 2048, 0, e->args, extra);
  // k_plain with all its parameters.
  char c = 1;
  int i = 2;
  double dd = 3.0;
  std::vector<char> s = s24_arg(4, 5);
  void* pargs[] = {&c, &i, &dd, s.data(), &e->buf};
  launch_1(e, "k_plain.ok", e->plain, 1, 0, pargs);
  // __launch_bounds__(256)
  cuMemsetD8(e->buf, 0, 4);
  void* bargs[] = {&e->buf};
  launch_1(e, "k_bounded.256", e->bounded, 256, 0, bargs);
  launch_1(e, "k_bounded.257", e->bounded, 257, 0, bargs);
  launch_1(e, "k_bounded.512", e->bounded, 512, 0, bargs);
  launch_1(e, "k_bounded.16x16x1", e->bounded, 16, 0, bargs, nullptr, 16);
  launch_1(e, "k_bounded.16x17x1", e->bounded, 16, 0, bargs, nullptr, 17);
}

void sec_misc() {
  LaunchEnv* e = env();
  misc_parameters(e);
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
}

void sec_kernel_as_function() {
  LaunchEnv* e = env();
  CUlibrary l = nullptr;
  lib_load(&l, g.fatbin.data());
  CUkernel k = nullptr;
  cuLibraryGetKernel(&k, l, "k_extern_c");
  cuMemsetD8(e->buf, 0, 4);
  launch_1(e, "kernel_as_function", reinterpret_cast<CUfunction>(k), 1, 0, e->args);
  launch_1(e, "kernel_as_function.block_2048", reinterpret_cast<CUfunction>(k), 2048, 0, e->args);
  CUfunction f = nullptr;
  cuKernelGetFunction(&f, k);
  cuMemsetD8(e->buf, 0, 4);
  launch_1(e, "kernel_function", f, 1, 0, e->args);
}

// cuLaunchKernelEx of k_extern_c: grid gx, block bx, with a cluster attribute of cx when with_attr.
void launch_ex(LaunchEnv* e, const char* name, unsigned gx, unsigned bx, unsigned cx, bool with_attr) {
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
  CUresult r = cuLaunchKernelEx(&cfg, e->ext, e->args, nullptr);
  report_launch(std::string("cuLaunchKernelEx.") + name, r, e->buf);
}
void sec_ex() {
  LaunchEnv* e = env();
  launch_ex(e, "no_attrs", 1, 1, 0, false);
  launch_ex(e, "cluster2_grid4", 4, 32, 2, true);
  launch_ex(e, "cluster2_grid3", 3, 32, 2, true);
  launch_ex(e, "cluster8_grid8", 8, 32, 8, true);
  launch_ex(e, "cluster16_grid16", 16, 32, 16, true);
  launch_ex(e, "cluster1_grid1", 1, 1, 1, true);
  launch_ex(e, "cluster0_grid1", 1, 1, 0, true);
  launch_ex(e, "cluster2_block2048", 2, 2048, 2, true);
  launch_ex(e, "cluster2_grid0", 0, 32, 2, true);
  launch_ex(e, "no_attrs_block2048", 1, 2048, 0, false);
  CUresult rn = cuFuncSetAttribute(e->ext, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  P("setup.NON_PORTABLE_CLUSTER_SIZE_ALLOWED", rn);
  launch_ex(e, "nonportable.cluster16_grid16", 16, 32, 16, true);
  launch_ex(e, "nonportable.cluster32_grid32", 32, 32, 32, true);
  P("cuLaunchKernelEx.null_config", cuLaunchKernelEx(nullptr, e->ext, e->args, nullptr), after());
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = nullptr;
  cfg.numAttrs = 1;
  P("cuLaunchKernelEx.null_attrs_num1", cuLaunchKernelEx(&cfg, e->ext, e->args, nullptr), after());
  cfg.numAttrs = 0;
  P("cuLaunchKernelEx.null_function", cuLaunchKernelEx(&cfg, nullptr, e->args, nullptr), after());
}

void sec_fault_is_sticky() {
  LaunchEnv* e = env();
  CUdeviceptr bad = 0x10;
  void* args[] = {&bad, &e->n};
  CUresult r = cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  P("cuLaunchKernel.illegal_address_kernel", r, after());
  P("after_fault.cuLaunchKernel", cuLaunchKernel(e->ext, 1, 1, 1, 1, 1, 1, 0, nullptr, e->args, nullptr));
  P("after_fault.cuLaunchKernel_block_2048", cuLaunchKernel(e->ext, 1, 1, 1, 2048, 1, 1, 0, nullptr, e->args, nullptr));
  CUmodule m = nullptr;
  P("after_fault.cuModuleLoadData", cuModuleLoadData(&m, g.fatbin.data()));
}

}  // namespace

void add_launch_sections() {
  add("launch.dims", sec_dims);
  add("launch.shmem", sec_shmem);
  add("launch.null_function", [] {
    LaunchEnv* e = env();
    launch_1(e, "null_function", nullptr, 1, 0, e->args);
    launch_1(e, "null_function_block_2048", nullptr, 2048, 0, e->args);
  });
  add("launch.params_null", [] {
    LaunchEnv* e = env();
    launch_1(e, "params_null_extra_null", e->ext, 1, 0, nullptr);
  });
  add("launch.params_null_block_2048", [] {
    LaunchEnv* e = env();
    launch_1(e, "params_null_extra_null_block_2048", e->ext, 2048, 0, nullptr);
  });
  add("launch.misc", sec_misc);
  add("launch.kernel_as_function", sec_kernel_as_function);
  add("launch.ex", sec_ex);
  add("launch.fault_is_sticky", sec_fault_is_sticky);
}
