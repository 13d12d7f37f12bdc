// The slots of NVIDIA's private tables that act on driver objects: loading the fat binaries the
// runtime registered (CUDART_INTERFACE), the primary context the runtime works in, the tools
// callback tables (TOOLS_RUNTIME_CALLBACK_HOOKS) and the context checks (CONTEXT_CHECKS).
#include <cstring>
#include <mutex>

#include "abi/call.hpp"
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "hosting/hosting.hpp"
#include "module/image.hpp"

namespace cuda_shim::hosting {
namespace {

Errc no_extras(const char* api, const void* a3, const void* a4, unsigned a5) {
  if (!a3 && !a4 && !a5) return Errc::success;
  return fail(Errc::not_supported, "{}: arguments 3-5 are ({}, {}, {}); only (NULL, NULL, 0), the values NVIDIA's "
              "runtime has been seen to pass, are understood", api, a3, a4, a5);
}

Errc load(CUmodule* module, const void* image, const char* api) {
  TRY(need(module, api, "module"));
  TRY(need(image, api, "the fat binary"));
  // The image is nvcc's wrapper (magic 0x466243b1) or the fat binary container it points at
  // (0xba55ed50). cuModuleLoadData takes only the container (as NVIDIA's does): unwrap.
  if (module::is_fatbin_wrapper(image)) {
    const void* container = nullptr;
    std::memcpy(&container, static_cast<const char*>(image) + 8, sizeof container);
    TRY(need(container, api, "the fat binary the wrapper points at"));
    image = container;
  }
  return api::cuModuleLoadData(module, image);
}

// Tables the runtime writes tools callback state into (entries are pointer-sized; the
// runtime is told how many there are). Accepted and kept: no tool reads them in cuda-shim.
void* g_callbacks1[1024];
void* g_callbacks2[14];

}  // namespace

CUresult CUDAAPI load_fatbin_wrapper(CUmodule* module, const void* wrapper) {
  static constexpr const char* api = "CUDART_INTERFACE[1] (load fat binary)";
  return static_cast<CUresult>(abi::driver_call(api, [&] { return load(module, wrapper, api); }));
}

// The device's primary context, made (inactive) if it does not exist yet, without retaining
// it: the runtime retains it itself through cuDevicePrimaryCtxRetain.
CUresult CUDAAPI get_primary_context(CUcontext* pctx, CUdevice dev) {
  static constexpr const char* api = "CUDART_INTERFACE[2] (primary context)";
  return static_cast<CUresult>(abi::driver_call(api, [&]() -> Errc {
    TRY(Driver::get().require_init(api));
    TRY(need(pctx, api, "pctx"));
    Device* d = nullptr;
    TRY(Driver::get().device(dev, d, api));
    *pctx = reinterpret_cast<CUcontext>(primary_context(dev).get());
    return Errc::success;
  }));
}

CUresult CUDAAPI load_fatbin_wrapper_ex(CUmodule* module, const void* wrapper, void* a3, void* a4, unsigned a5) {
  static constexpr const char* api = "CUDART_INTERFACE[6] (load fat binary, extended)";
  return static_cast<CUresult>(abi::driver_call(api, [&]() -> Errc {
    TRY(no_extras(api, a3, a4, a5));
    return load(module, wrapper, api);
  }));
}

void CUDAAPI cudart_slot7(size_t) {
  abi::driver_call("CUDART_INTERFACE[7] (no effect known)", [] { return Errc::success; });
}

CUresult CUDAAPI load_fatbin_ex(const void* fatbin, CUmodule* module, void* a3, void* a4, unsigned a5) {
  static constexpr const char* api = "CUDART_INTERFACE[8] (load fat binary container)";
  return static_cast<CUresult>(abi::driver_call(api, [&]() -> Errc {
    TRY(no_extras(api, a3, a4, a5));
    return load(module, fatbin, api);
  }));
}

// The real driver loads its PTX compiler, libnvvm and tile IR libraries here; there is nothing
// to load in cuda-shim.
CUresult CUDAAPI load_compilers() {
  return static_cast<CUresult>(abi::driver_call("CUDART_INTERFACE[12] (load compilers)", [] { return Errc::success; }));
}

void CUDAAPI tools_callback_table(void** table, size_t* entries) {
  abi::driver_call("TOOLS_RUNTIME_CALLBACK_HOOKS[2] (callback table)", [&] {
    if (table) *table = g_callbacks1;
    if (entries) *entries = sizeof g_callbacks1 / sizeof g_callbacks1[0];
    return Errc::success;
  });
}

void CUDAAPI tools_callback_table2(void** table, size_t* entries) {
  abi::driver_call("TOOLS_RUNTIME_CALLBACK_HOOKS[6] (callback table)", [&] {
    if (table) *table = g_callbacks2;
    if (entries) *entries = sizeof g_callbacks2 / sizeof g_callbacks2[0];
    return Errc::success;
  });
}

// The runtime asks before it uses a context whether the driver marks it specially; cuda-shim
// has no such marks.
CUresult CUDAAPI context_check(CUcontext, unsigned* flags, const void**) {
  return static_cast<CUresult>(abi::driver_call("CONTEXT_CHECKS[2] (context flags)", [&] {
    if (flags) *flags = 0;
    return Errc::success;
  }));
}

unsigned CUDAAPI context_check_flags() {
  abi::driver_call("CONTEXT_CHECKS[3] (process flags)", [] { return Errc::success; });
  return 0;
}

}  // namespace cuda_shim::hosting
