// Loaded device code: modules (CUmodule, one context's copy of an image), libraries
// (CUlibrary, context-independent: a module per context, made when first needed), their
// kernels (CUfunction in a module, CUkernel in a library) and variables. Variables are real
// emulator memory: __device__ and __constant__ ones device memory, __managed__ ones managed
// memory, each initialised from the image's bytes. Handles are the objects' addresses,
// validated through registries before any use.
#pragma once
#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/errc.hpp"
#include "core/registry.hpp"
#include "module/image.hpp"

namespace cuda_shim {
class Context;
}

namespace cuda_shim::module {

class Module;
class Library;

// Attributes a program may set on a function (cuFuncSetAttribute, cuFuncSetCacheConfig).
struct FuncSettings {
  int max_dynamic_shared = -1;  // -1: the default (48 KiB less static shared memory)
  int carveout = -1;
  int non_portable_cluster = 0;
  int cluster_policy = 0;
  int required_cluster[3] = {0, 0, 0};
  CUfunc_cache cache = CU_FUNC_CACHE_PREFER_NONE;
};

// A kernel of a module: what CUfunction names.
struct Function {
  std::weak_ptr<Module> module;
  const KernelDesc* desc = nullptr;
  std::shared_ptr<const Image> image;  // keeps desc alive
  std::mutex m;
  FuncSettings settings;
};

struct Variable {
  const GlobalDesc* desc = nullptr;
  CUdeviceptr addr = 0;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  std::shared_ptr<const Image> image;
  std::shared_ptr<Context> ctx;
  std::weak_ptr<Library> library;  // set when this is a library's module in ctx
  std::vector<std::shared_ptr<Function>> functions;  // image->kernels' order
  std::vector<Variable> vars;                        // image->globals' order
  std::vector<CUdeviceptr> owned;                    // what unload frees
  // The kernel engine's compiled form of the image's PTX, made at the first launch and dying with
  // the module. Opaque here: the engine (emu/exec/, a room above) owns its type.
  std::mutex engine_m;
  std::shared_ptr<const void> engine;

  ~Module();
  const Function* function(const std::string& name) const;
  const Variable* variable(const std::string& name) const;
};

// A kernel of a library: what CUkernel names.
struct Kernel {
  std::weak_ptr<Library> library;
  size_t index = 0;  // into image->kernels
  std::shared_ptr<const Image> image;
  std::mutex m;
  FuncSettings settings;  // cuKernelSetAttribute: applied to every context's function
};

class Library : public std::enable_shared_from_this<Library> {
 public:
  std::shared_ptr<const Image> image;
  std::vector<std::shared_ptr<Kernel>> kernels;  // image->kernels' order
  std::mutex m;
  std::unordered_map<const Context*, std::shared_ptr<Module>> modules;
  // __managed__ variables exist once per library (every context sees the same memory).
  std::vector<CUdeviceptr> managed;  // image->globals' order; 0 for the others and until made
  std::vector<CUdeviceptr> owned_managed;
  const Context* managed_ctx = nullptr;  // the context whose memory holds them
  // The driver loads a library's code lazily, in every loading mode: cuLibraryLoadData takes an
  // image no device can use, and its getters give the image's error (CUDA_ERROR_INVALID_IMAGE,
  // CUDA_ERROR_NO_BINARY_FOR_GPU, ...). Such a library has no kernels.
  Errc deferred = Errc::success;
  std::string deferred_why;
  Errc usable(const char* api) const;

  ~Library();
  // This library's module in ctx, loaded on first use.
  Errc module_in(const std::shared_ptr<Context>& ctx, std::shared_ptr<Module>& out, const char* api);
  const Kernel* kernel(const std::string& name) const;
};

Registry<Module>& modules();
Registry<Library>& libraries();
Registry<Function>& functions();
Registry<Kernel>& kernels();

// Parses an image for ctx's device and loads it there (cuModuleLoadData and friends).
Errc load_module(const void* image, size_t size, const std::shared_ptr<Context>& ctx, const char* api,
                 std::shared_ptr<Module>& out);
// Parses an image for the devices the process has (cuLibraryLoadData).
Errc load_library(const void* image, size_t size, const char* api, std::shared_ptr<Library>& out);
// Removes a module or library and every handle that names its parts.
Errc unload_module(CUmodule h, const char* api);
Errc unload_library(CUlibrary h, const char* api);

// The compute capability (major*10+minor) of a context's device.
int compute_capability(const Context& ctx);

// Resolves a CUfunction argument: a module's function or, where `accept_kernel` (the launches
// do; cuFunc* entries answer CUDA_ERROR_INVALID_HANDLE), a CUkernel cast to CUfunction, which
// names the kernel's function in the current context.
Errc resolve_function(CUfunction h, const char* api, std::shared_ptr<Function>& out, bool accept_kernel = false);

}  // namespace cuda_shim::module
