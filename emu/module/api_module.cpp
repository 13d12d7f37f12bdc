// Driver entries: modules, libraries, kernels and functions (everything but launching).
// Codes follow the real driver 580 (tools/probe/probe_module.h200.txt, measured on H100 and H200).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "module/attributes.hpp"
#include "module/module.hpp"
#include "module/ptx_regs.hpp"

namespace cuda_shim::api {
namespace {
using module::Function;
using module::Kernel;
using module::Library;
using module::Module;

Errc find_module(CUmodule h, const char* api, std::shared_ptr<Module>& out) {
  if (!(out = module::modules().find(h)))
    return fail(Errc::invalid_handle, "{}: {} is not a loaded module", api, static_cast<void*>(h));
  return Errc::success;
}
Errc find_library(CUlibrary h, const char* api, std::shared_ptr<Library>& out) {
  if (!(out = module::libraries().find(h)))
    return fail(Errc::invalid_handle, "{}: {} is not a loaded library", api, static_cast<void*>(h));
  return Errc::success;
}
// What every query of a module or library checks first, in the driver's order: the driver is
// initialized, the output is not NULL, the handle is a loaded one.
Errc module_query(const char* api, const void* out, const char* what, CUmodule h, std::shared_ptr<Module>& m) {
  TRY(Driver::get().require_init(api));
  TRY(need(out, api, what));
  return find_module(h, api, m);
}
Errc library_query(const char* api, const void* out, const char* what, CUlibrary h, std::shared_ptr<Library>& l) {
  TRY(Driver::get().require_init(api));
  TRY(need(out, api, what));
  return find_library(h, api, l);
}
Errc find_kernel(CUkernel h, const char* api, std::shared_ptr<Kernel>& out, std::shared_ptr<Library>* lib = nullptr) {
  out = module::kernels().find(h);
  std::shared_ptr<Library> l = out ? out->library.lock() : nullptr;
  if (!l) return fail(Errc::invalid_handle, "{}: {} is not a kernel of a loaded library", api, static_cast<void*>(h));
  if (lib) *lib = std::move(l);
  return Errc::success;
}

// Reads a whole file (cuModuleLoad, cuLibraryLoadFromFile).
Errc read_file(const char* path, const char* api, std::vector<uint8_t>& out) {
  if (!*path) return fail(Errc::invalid_value, "{}: the file name is empty", api);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Errc::file_not_found, "{}: cannot open '{}': {}", api, path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    // NVIDIA's driver reads a directory as a file of unknown size: CUDA_ERROR_OUT_OF_MEMORY.
    return fail(Errc::out_of_memory, "{}: '{}' is a directory", api, path);
  }
  out.resize(static_cast<size_t>(st.st_size) + 1, 0);  // + a terminator, for PTX text
  size_t got = 0;
  while (got < static_cast<size_t>(st.st_size)) {
    ssize_t n = ::read(fd, out.data() + got, st.st_size - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got == 0) return fail(Errc::invalid_image, "{}: '{}' is empty", api, path);
  out.resize(got + 1);
  return Errc::success;
}

Errc module_load(CUmodule* pm, const void* image, size_t size, const char* api) {
  TRY(need(pm, api, "module"));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(image, api, "image"));
  if (module::is_fatbin_wrapper(image))  // the driver's module loaders take the container only
    return fail(Errc::invalid_image, "{}: this is nvcc's fat binary wrapper (magic 0x466243b1); cuModule* loaders take "
                "the fat binary it points at (cuLibraryLoadData takes either)", api);
  std::shared_ptr<Module> m;
  TRY(module::load_module(image, size, ctx, api, m));
  *pm = reinterpret_cast<CUmodule>(m.get());
  return Errc::success;
}

// JIT options: nothing to compile with them, but a register limit (CU_JIT_MAX_REGISTERS) is
// what the loaded kernels then report; it goes to `max_regs` when asked for.
Errc check_jit_options(unsigned n, const void* opts, const void* vals, const char* api, int* max_regs = nullptr) {
  if (n && (!opts || !vals))
    return fail(Errc::invalid_value, "{}: {} options given, but the option or value array is NULL", api, n);
  for (unsigned i = 0; max_regs && i < n; ++i)
    if (static_cast<const CUjit_option*>(opts)[i] == CU_JIT_MAX_REGISTERS)
      *max_regs = static_cast<int>(static_cast<unsigned>(reinterpret_cast<uintptr_t>(static_cast<void* const*>(vals)[i])));
  return Errc::success;
}

// PTX text loaded with a register limit reads as if its kernels carried that .maxnreg; other
// images (machine code, fat binaries) load as given.
const void* with_register_limit(const void* image, size_t size, int max_regs, std::string& holder) {
  if (max_regs <= 0 || !image || module::is_fatbin_wrapper(image) || module::is_fatbin(image) || module::is_elf(image))
    return image;
  const char* text = static_cast<const char*>(image);
  holder = module::limit_registers({text, size ? strnlen(text, size) : std::strlen(text)}, max_regs);
  return holder.c_str();
}

Errc library_load(CUlibrary* pl, const void* code, size_t size, unsigned nj, const void* jo, const void* jv,
                  unsigned nl, const void* lo, const void* lv, const char* api) {
  TRY(Driver::get().require_init(api));
  TRY(need(pl, api, "library"));
  TRY(need(code, api, "code"));
  int max_regs = 0;
  TRY(check_jit_options(nj, jo, jv, api, &max_regs));
  TRY(check_jit_options(nl, lo, lv, api));
  std::string limited;
  if (const void* c = with_register_limit(code, size, max_regs, limited); c != code) code = c, size = limited.size() + 1;
  std::shared_ptr<Library> lib;
  TRY(module::load_library(code, size, api, lib));
  *pl = reinterpret_cast<CUlibrary>(lib.get());
  return Errc::success;
}

// cuModuleGetGlobal zeroes both outputs when the name is no variable; cuLibraryGetGlobal
// leaves them (`clear_on_miss`). Both call a kernel's name CUDA_ERROR_INVALID_VALUE.
Errc global_of(const Module& m, const char* name, CUdeviceptr* dptr, size_t* bytes, const char* api,
               bool clear_on_miss) {
  TRY(need(name, api, "name"));
  const module::Variable* v = *name ? m.variable(name) : nullptr;
  if (!v) {
    if (clear_on_miss) {
      if (dptr) *dptr = 0;
      if (bytes) *bytes = 0;
    }
    if (!*name) return fail(Errc::invalid_value, "{}: the name is empty", api);
    if (m.function(name))
      return fail(Errc::invalid_value, "{}: '{}' is a kernel, not a global variable (cuModuleGetFunction)", api, name);
    return fail(Errc::not_found, "{}: the module has no global variable named '{}'", api, name);
  }
  if (dptr) *dptr = v->addr;
  if (bytes) *bytes = v->desc->size;
  return Errc::success;
}

Errc param_info(const module::KernelDesc& k, size_t i, size_t* off, size_t* size, const char* api) {
  TRY(need(off, api, "paramOffset"));  // paramSize may be NULL
  if (i >= k.params.size())
    return fail(Errc::invalid_value, "{}: kernel '{}' has {} parameters; index {} is past the end", api, k.name,
                k.params.size(), i);
  if (off) *off = k.params[i].offset;
  if (size) *size = k.params[i].size;
  return Errc::success;
}

Errc kernel_in_current(const std::shared_ptr<Library>& lib, const Kernel& k, const char* api,
                       std::shared_ptr<Function>& out) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Module> m;
  TRY(lib->module_in(ctx, m, api));
  out = m->functions[k.index];
  return Errc::success;
}

}  // namespace

// ---- modules -------------------------------------------------------------------------------
Errc cuModuleLoadData(CUmodule* m, const void* image) noexcept { return module_load(m, image, 0, "cuModuleLoadData"); }
Errc cuModuleLoadFatBinary(CUmodule* m, const void* fatCubin) noexcept {
  return module_load(m, fatCubin, 0, "cuModuleLoadFatBinary");
}
// Measured (H200, driver 580): a load given CU_JIT_INFO_LOG_BUFFER with its size writes an empty
// string there and sets CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES to 0 (nothing was logged).
void empty_info_log(unsigned n, const CUjit_option* opts, void** vals) {
  size_t size = 0;
  for (unsigned i = 0; i < n; ++i)
    if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) size = reinterpret_cast<uintptr_t>(vals[i]);
  for (unsigned i = 0; i < n; ++i) {
    if (opts[i] == CU_JIT_INFO_LOG_BUFFER && vals[i] && size) static_cast<char*>(vals[i])[0] = '\0';
    if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) vals[i] = nullptr;
  }
}

Errc cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int n, CUjit_option* opts, void** vals) noexcept {
  int max_regs = 0;
  TRY(check_jit_options(n, opts, vals, "cuModuleLoadDataEx", &max_regs));
  std::string limited;
  TRY(module_load(m, with_register_limit(image, 0, max_regs, limited), 0, "cuModuleLoadDataEx"));
  empty_info_log(n, opts, vals);
  return Errc::success;
}
Errc cuModuleLoad(CUmodule* m, const char* fname) noexcept {
  const char* api = "cuModuleLoad";
  TRY(need(m, api, "module"));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(fname, api, "fname"));
  std::vector<uint8_t> bytes;
  TRY(read_file(fname, api, bytes));
  return module_load(m, bytes.data(), bytes.size(), api);
}
Errc cuModuleUnload(CUmodule h) noexcept {
  TRY(Driver::get().require_init("cuModuleUnload"));
  return module::unload_module(h, "cuModuleUnload");
}
Errc cuModuleGetFunction(CUfunction* pf, CUmodule h, const char* name) noexcept {
  const char* api = "cuModuleGetFunction";
  std::shared_ptr<Module> m;
  TRY(module_query(api, pf, "hfunc", h, m));
  TRY(need(name, api, "name"));
  if (!*name) return fail(Errc::invalid_value, "{}: the name is empty", api);
  const Function* f = m->function(name);
  if (!f) {
    *pf = nullptr;
    return fail(Errc::not_found, "{}: the module has no kernel named '{}'", api, name);
  }
  *pf = reinterpret_cast<CUfunction>(const_cast<Function*>(f));
  return Errc::success;
}
Errc cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule h, const char* name) noexcept {
  const char* api = "cuModuleGetGlobal";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Module> m;
  TRY(find_module(h, api, m));
  if (!dptr && !bytes) return fail(Errc::invalid_value, "{}: dptr and bytes are both NULL", api);
  return global_of(*m, name, dptr, bytes, api, /*clear_on_miss=*/true);
}
Errc cuModuleGetFunctionCount(unsigned int* count, CUmodule h) noexcept {
  const char* api = "cuModuleGetFunctionCount";
  std::shared_ptr<Module> m;
  TRY(module_query(api, count, "count", h, m));
  *count = static_cast<unsigned>(m->functions.size());
  return Errc::success;
}
Errc cuModuleEnumerateFunctions(CUfunction* fs, unsigned int n, CUmodule h) noexcept {
  const char* api = "cuModuleEnumerateFunctions";
  std::shared_ptr<Module> m;
  TRY(module_query(api, fs, "functions", h, m));
  // The first min(numFunctions, count) handles, the image's kernels in reverse (a cubin lists
  // them last one first; NVIDIA's driver gives a module's in source order); the rest of the
  // array is left as it is.
  const size_t count = m->functions.size();
  for (size_t i = 0; i < std::min<size_t>(n, count); ++i)
    fs[i] = reinterpret_cast<CUfunction>(m->functions[count - 1 - i].get());
  return Errc::success;
}
Errc cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) noexcept {
  const char* api = "cuModuleGetLoadingMode";
  TRY(Driver::get().require_init(api));
  TRY(need(mode, api, "mode"));
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  *mode = env && std::strcmp(env, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return Errc::success;
}

// ---- libraries -----------------------------------------------------------------------------
Errc cuLibraryLoadData(CUlibrary* l, const void* code, CUjit_option* jo, void** jv, unsigned int nj,
                       CUlibraryOption* lo, void** lv, unsigned int nl) noexcept {
  return library_load(l, code, 0, nj, jo, jv, nl, lo, lv, "cuLibraryLoadData");
}
Errc cuLibraryLoadFromFile(CUlibrary* l, const char* file, CUjit_option* jo, void** jv, unsigned int nj,
                           CUlibraryOption* lo, void** lv, unsigned int nl) noexcept {
  const char* api = "cuLibraryLoadFromFile";
  TRY(Driver::get().require_init(api));
  TRY(need(l, api, "library"));
  TRY(need(file, api, "fileName"));
  std::vector<uint8_t> bytes;
  TRY(read_file(file, api, bytes));
  return library_load(l, bytes.data(), bytes.size(), nj, jo, jv, nl, lo, lv, api);
}
Errc cuLibraryUnload(CUlibrary h) noexcept {
  TRY(Driver::get().require_init("cuLibraryUnload"));
  return module::unload_library(h, "cuLibraryUnload");
}
Errc cuLibraryGetKernel(CUkernel* pk, CUlibrary h, const char* name) noexcept {
  const char* api = "cuLibraryGetKernel";
  std::shared_ptr<Library> lib;
  TRY(library_query(api, pk, "pKernel", h, lib));
  TRY(need(name, api, "name"));
  TRY(lib->usable(api));
  const Kernel* k = lib->kernel(name);
  if (!k) return fail(Errc::not_found, "{}: the library has no kernel named '{}'", api, name);
  *pk = reinterpret_cast<CUkernel>(const_cast<Kernel*>(k));
  return Errc::success;
}
Errc cuLibraryGetKernelCount(unsigned int* count, CUlibrary h) noexcept {
  const char* api = "cuLibraryGetKernelCount";
  std::shared_ptr<Library> lib;
  TRY(library_query(api, count, "count", h, lib));
  *count = static_cast<unsigned>(lib->kernels.size());
  return Errc::success;
}
Errc cuLibraryEnumerateKernels(CUkernel* ks, unsigned int n, CUlibrary h) noexcept {
  const char* api = "cuLibraryEnumerateKernels";
  std::shared_ptr<Library> lib;
  TRY(library_query(api, ks, "kernels", h, lib));
  // The first min(numKernels, count) handles in the image's order (a cubin's: last kernel of
  // the source first, as NVIDIA's driver lists a library's); the rest of the array is left.
  for (size_t i = 0; i < std::min<size_t>(n, lib->kernels.size()); ++i)
    ks[i] = reinterpret_cast<CUkernel>(lib->kernels[i].get());
  return Errc::success;
}
Errc cuLibraryGetModule(CUmodule* pm, CUlibrary h) noexcept {
  const char* api = "cuLibraryGetModule";
  std::shared_ptr<Library> lib;
  TRY(library_query(api, pm, "pMod", h, lib));
  TRY(lib->usable(api));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Module> m;
  TRY(lib->module_in(ctx, m, api));
  if (!module::modules().find(m.get())) module::modules().add(m);
  *pm = reinterpret_cast<CUmodule>(m.get());
  return Errc::success;
}
Errc cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary h, const char* name) noexcept {
  const char* api = "cuLibraryGetGlobal";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Library> lib;
  TRY(find_library(h, api, lib));
  TRY(lib->usable(api));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Module> m;
  TRY(lib->module_in(ctx, m, api));
  return global_of(*m, name, dptr, bytes, api, /*clear_on_miss=*/false);
}
Errc cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary h, const char* name) noexcept {
  const char* api = "cuLibraryGetManaged";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Library> lib;
  TRY(find_library(h, api, lib));
  TRY(need(name, api, "name"));
  TRY(lib->usable(api));
  // Managed variables belong to the library, not to a context: NVIDIA's driver answers with
  // no context current (measured), and its runtime asks before it makes one current. They
  // are then made in device 0's primary context.
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) ctx = primary_context(0);
  if (!ctx) return fail(Errc::no_device, "{}: there is no device to hold the library's managed variables", api);
  std::shared_ptr<Module> m;
  TRY(lib->module_in(ctx, m, api));  // makes the managed variables on first use
  const module::Variable* v = m->variable(name);
  if (!v || v->desc->space != module::Space::managed)
    return fail(Errc::not_found, "{}: the library has no __managed__ variable named '{}'{}", api, name,
                v ? " (it is a __device__ or __constant__ variable: cuLibraryGetGlobal)" : "");
  if (dptr) *dptr = v->addr;
  if (bytes) *bytes = v->desc->size;
  return Errc::success;
}

// ---- kernels -------------------------------------------------------------------------------
Errc cuKernelGetFunction(CUfunction* pf, CUkernel h) noexcept {
  const char* api = "cuKernelGetFunction";
  TRY(Driver::get().require_init(api));
  TRY(need(pf, api, "pFunc"));
  std::shared_ptr<Kernel> k;
  std::shared_ptr<Library> lib;
  TRY(find_kernel(h, api, k, &lib));
  std::shared_ptr<Function> f;
  TRY(kernel_in_current(lib, *k, api, f));
  *pf = reinterpret_cast<CUfunction>(f.get());
  return Errc::success;
}
Errc cuKernelGetLibrary(CUlibrary* pl, CUkernel h) noexcept {
  const char* api = "cuKernelGetLibrary";
  TRY(Driver::get().require_init(api));
  TRY(need(pl, api, "pLib"));
  std::shared_ptr<Kernel> k;
  std::shared_ptr<Library> lib;
  TRY(find_kernel(h, api, k, &lib));
  *pl = reinterpret_cast<CUlibrary>(lib.get());
  return Errc::success;
}
Errc cuKernelGetName(const char** name, CUkernel h) noexcept {
  const char* api = "cuKernelGetName";
  TRY(Driver::get().require_init(api));
  TRY(need(name, api, "name"));
  TRY(need(h, api, "kernel"));
  std::shared_ptr<Kernel> k;
  TRY(find_kernel(h, api, k));
  *name = k->image->kernels[k->index].name.c_str();
  return Errc::success;
}
Errc cuKernelGetParamInfo(CUkernel h, size_t i, size_t* off, size_t* size) noexcept {
  const char* api = "cuKernelGetParamInfo";
  TRY(Driver::get().require_init(api));
  TRY(need(h, api, "kernel"));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Kernel> k;
  TRY(find_kernel(h, api, k));
  return param_info(k->image->kernels[k->index], i, off, size, api);
}
Errc cuKernelGetAttribute(int* pi, CUfunction_attribute a, CUkernel h, CUdevice dev) noexcept {
  const char* api = "cuKernelGetAttribute";
  TRY(Driver::get().require_init(api));
  TRY(need(pi, api, "pi"));
  std::shared_ptr<Kernel> k;
  TRY(find_kernel(h, api, k));
  Device* d = nullptr;
  TRY(Driver::get().device(dev, d, api));
  std::lock_guard lk(k->m);
  return module::get_attribute(*k->image, k->image->kernels[k->index], k->settings, *d, a, *pi, api);
}
Errc cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel h, CUdevice dev) noexcept {
  const char* api = "cuKernelSetAttribute";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Kernel> k;
  TRY(find_kernel(h, api, k));
  Device* d = nullptr;
  TRY(Driver::get().device(dev, d, api));
  std::shared_ptr<Library> lib = k->library.lock();
  {
    std::lock_guard lk(k->m);
    TRY(module::set_attribute(k->image->kernels[k->index], k->settings, *d, a, v, api));
  }
  // The setting applies to the kernel's function in every context that has one already.
  if (lib) {
    std::lock_guard ll(lib->m);
    for (auto& [ctx, m] : lib->modules) {
      Function& f = *m->functions[k->index];
      std::lock_guard fl(f.m);
      (void)module::set_attribute(*f.desc, f.settings, *d, a, v, api);
    }
  }
  return Errc::success;
}
Errc cuKernelSetCacheConfig(CUkernel h, CUfunc_cache c, CUdevice dev) noexcept {
  const char* api = "cuKernelSetCacheConfig";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Kernel> k;
  TRY(find_kernel(h, api, k));
  Device* d = nullptr;
  TRY(Driver::get().device(dev, d, api));
  TRY(module::check_cache_config(c, api));
  std::lock_guard lk(k->m);
  k->settings.cache = c;
  return Errc::success;
}

// ---- functions -----------------------------------------------------------------------------
Errc cuFuncGetAttribute(int* pi, CUfunction_attribute a, CUfunction h) noexcept {
  const char* api = "cuFuncGetAttribute";
  TRY(Driver::get().require_init(api));
  TRY(need(pi, api, "pi"));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  auto m = f->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  std::lock_guard lk(f->m);
  return module::get_attribute(*f->image, *f->desc, f->settings, *m->ctx->device(), a, *pi, api);
}
Errc cuFuncSetAttribute(CUfunction h, CUfunction_attribute a, int v) noexcept {
  const char* api = "cuFuncSetAttribute";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  auto m = f->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  std::lock_guard lk(f->m);
  return module::set_attribute(*f->desc, f->settings, *m->ctx->device(), a, v, api);
}
Errc cuFuncSetCacheConfig(CUfunction h, CUfunc_cache c) noexcept {
  const char* api = "cuFuncSetCacheConfig";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  TRY(module::check_cache_config(c, api));
  std::lock_guard lk(f->m);
  f->settings.cache = c;
  return Errc::success;
}
Errc cuFuncGetName(const char** name, CUfunction h) noexcept {
  const char* api = "cuFuncGetName";
  TRY(Driver::get().require_init(api));
  TRY(need(name, api, "name"));
  TRY(need(h, api, "hfunc"));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  *name = f->desc->name.c_str();
  return Errc::success;
}
Errc cuFuncGetModule(CUmodule* pm, CUfunction h) noexcept {
  const char* api = "cuFuncGetModule";
  TRY(Driver::get().require_init(api));
  TRY(need(pm, api, "hmod"));
  TRY(need(h, api, "hfunc"));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  auto m = f->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  if (!module::modules().find(m.get())) module::modules().add(m);  // a library's module, now named
  *pm = reinterpret_cast<CUmodule>(m.get());
  return Errc::success;
}
Errc cuFuncGetParamInfo(CUfunction h, size_t i, size_t* off, size_t* size) noexcept {
  const char* api = "cuFuncGetParamInfo";
  TRY(Driver::get().require_init(api));
  TRY(need(h, api, "func"));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  return param_info(*f->desc, i, off, size, api);
}
Errc cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction h) noexcept {
  const char* api = "cuFuncIsLoaded";
  TRY(Driver::get().require_init(api));
  TRY(need(state, api, "state"));
  std::shared_ptr<Function> f;
  TRY(module::resolve_function(h, api, f));
  *state = CU_FUNCTION_LOADING_STATE_LOADED;  // nothing to compile or upload here
  return Errc::success;
}
Errc cuFuncLoad(CUfunction h) noexcept {
  const char* api = "cuFuncLoad";
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Function> f;
  return module::resolve_function(h, api, f);
}

}  // namespace cuda_shim::api
