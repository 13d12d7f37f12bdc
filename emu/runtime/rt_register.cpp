// The registration ABI of nvcc-generated host code (crt/host_runtime.h): each translation
// unit's static constructor registers its fat binary, then its kernels' stubs and its
// variables' shadows under device names; __cudaInitModule and the first use of any of them
// load the fat binary as a library; exit (or dlclose) unregisters it.
#include "runtime/rt_register.hpp"

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rt {
namespace {

struct Fatbin {
  const void* image = nullptr;  // the __fatBinC_Wrapper_t nvcc emitted
  std::mutex m;
  bool tried = false;
  Errc error = Errc::success;
  std::string why;  // the load failure's explanation, repeated at every later use
  CUlibrary lib = nullptr;
};

struct FuncReg {
  std::shared_ptr<Fatbin> fb;
  std::string name;
  CUkernel kernel = nullptr;  // resolved on first use
};

struct VarReg {
  std::shared_ptr<Fatbin> fb;
  std::string name;
  size_t size = 0;
  void** host_ptr = nullptr;  // __managed__: where the host code keeps the variable's address
};

struct Registrations {
  std::shared_mutex m;
  std::unordered_map<const void*, std::shared_ptr<Fatbin>> fatbins;  // by handle
  std::unordered_map<const void*, FuncReg> funcs;                   // by stub address
  std::unordered_map<const void*, VarReg> vars;                     // by shadow address
  std::vector<VarReg> managed;
};
Registrations& regs() {
  static auto* r = new Registrations;  // never destroyed: exit-time unregistration still needs it
  return *r;
}

std::shared_ptr<Fatbin> fatbin(void** handle) {
  auto& r = regs();
  std::shared_lock lk(r.m);
  auto it = r.fatbins.find(handle);
  return it == r.fatbins.end() ? nullptr : it->second;
}

// Loads fb as a library (once) and points its __managed__ variables' host pointers at their memory.
Errc load(Fatbin& fb, const char* api, CUlibrary& out) {
  std::lock_guard lk(fb.m);
  if (!fb.tried) {
    fb.tried = true;
    Errc e = rt::context(api);
    if (e == Errc::success)
      e = api::cuLibraryLoadData(&fb.lib, fb.image, nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e == Errc::success) {
      std::vector<VarReg> managed;
      {
        std::shared_lock rl(regs().m);
        for (auto& v : regs().managed)
          if (v.fb.get() == &fb) managed.push_back(v);
      }
      for (auto& v : managed) {
        CUdeviceptr p = 0;
        size_t n = 0;
        if ((e = api::cuLibraryGetManaged(&p, &n, fb.lib, v.name.c_str())) != Errc::success) break;
        *v.host_ptr = reinterpret_cast<void*>(p);
      }
    }
    if (e != Errc::success) {
      fb.error = e;
      fb.why = explanation();
    }
  }
  if (fb.error != Errc::success)
    return fail(fb.error, "{}: the fat binary registered at {} could not be loaded: {}", api, fb.image, fb.why);
  out = fb.lib;
  return Errc::success;
}

}  // namespace

Errc kernel_of(const void* hostFun, const char* api, CUkernel& out) {
  FuncReg reg;
  {
    auto& r = regs();
    std::shared_lock lk(r.m);
    auto it = r.funcs.find(hostFun);
    if (it == r.funcs.end())
      return fail(Errc::rt_invalid_device_function, "{}: {} is not a __global__ function registered with the runtime",
                  api, hostFun);
    if (it->second.kernel) {
      out = it->second.kernel;
      return Errc::success;
    }
    reg = it->second;
  }
  CUlibrary lib = nullptr;
  RT_TRY(load(*reg.fb, api, lib));
  RT_TRY(api::cuLibraryGetKernel(&out, lib, reg.name.c_str()));
  auto& r = regs();
  std::unique_lock lk(r.m);
  if (auto it = r.funcs.find(hostFun); it != r.funcs.end()) it->second.kernel = out;
  return Errc::success;
}

bool is_kernel_stub(const void* hostFun) noexcept {
  auto& r = regs();
  std::shared_lock lk(r.m);
  return r.funcs.count(hostFun) != 0;
}

Errc symbol_of(const void* symbol, const char* api, Symbol& out) {
  VarReg reg;
  bool found = false, managed = false;
  {
    auto& r = regs();
    std::shared_lock lk(r.m);
    if (auto it = r.vars.find(symbol); it != r.vars.end()) {
      reg = it->second;
      found = true;
    } else {
      for (auto& v : r.managed)
        if (symbol && *v.host_ptr == symbol) {
          reg = v;
          found = managed = true;
          break;
        }
    }
  }
  if (!found)
    return fail(Errc::rt_invalid_symbol, "{}: {} is not a __device__, __constant__ or __managed__ variable "
                "registered with the runtime (pass the variable itself, not a pointer to its memory)", api, symbol);
  CUlibrary lib = nullptr;
  RT_TRY(load(*reg.fb, api, lib));
  RT_TRY(rt::context(api));
  out.name = reg.name;
  if (managed) return api::cuLibraryGetManaged(&out.addr, &out.size, lib, reg.name.c_str());
  return api::cuLibraryGetGlobal(&out.addr, &out.size, lib, reg.name.c_str());
}

}  // namespace cuda_shim::rt

namespace cuda_shim::rtapi {
using rt::Fatbin;
using rt::regs;

void** __cudaRegisterFatBinary(void* fatCubin) noexcept {
  try {
    auto fb = std::make_shared<Fatbin>();
    fb->image = fatCubin;
    void** handle = reinterpret_cast<void**>(fb.get());
    std::unique_lock lk(regs().m);
    regs().fatbins.emplace(handle, std::move(fb));
    return handle;
  } catch (...) {
    return nullptr;  // out of memory before main: its kernels and symbols will be unknown
  }
}

void __cudaRegisterFatBinaryEnd(void** handle) noexcept {}  // lazy loading: nothing to do yet

void __cudaUnregisterFatBinary(void** handle) noexcept {
  std::shared_ptr<Fatbin> fb;
  {
    auto& r = regs();
    std::unique_lock lk(r.m);
    auto it = r.fatbins.find(handle);
    if (it == r.fatbins.end()) return;
    fb = std::move(it->second);
    r.fatbins.erase(it);
    std::erase_if(r.funcs, [&](auto& kv) { return kv.second.fb == fb; });
    std::erase_if(r.vars, [&](auto& kv) { return kv.second.fb == fb; });
    std::erase_if(r.managed, [&](auto& v) { return v.fb == fb; });
  }
  std::lock_guard lk(fb->m);
  if (fb->lib) (void)api::cuLibraryUnload(fb->lib);  // its memory goes back; failures matter no more
  fb->lib = nullptr;
}

void __cudaRegisterFunction(void** handle, const char* hostFun, char* deviceFun, const char* deviceName,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bDim, dim3* gDim, int* wSize) noexcept {
  try {
    auto fb = rt::fatbin(handle);
    if (!fb || !hostFun || !deviceName) return;
    std::unique_lock lk(regs().m);
    regs().funcs[hostFun] = rt::FuncReg{std::move(fb), deviceName, nullptr};
  } catch (...) {
  }
}

void __cudaRegisterVar(void** handle, char* hostVar, char* deviceAddress, const char* deviceName, int ext,
                       size_t size, int constant, int global) noexcept {
  try {
    auto fb = rt::fatbin(handle);
    if (!fb || !hostVar || !deviceName) return;
    std::unique_lock lk(regs().m);
    regs().vars[hostVar] = rt::VarReg{std::move(fb), deviceName, size, nullptr};
  } catch (...) {
  }
}

void __cudaRegisterManagedVar(void** handle, void** hostVarPtrAddress, char* deviceAddress, const char* deviceName,
                              int ext, size_t size, int constant, int global) noexcept {
  try {
    auto fb = rt::fatbin(handle);
    if (!fb || !hostVarPtrAddress || !deviceName) return;
    std::unique_lock lk(regs().m);
    regs().managed.push_back(rt::VarReg{std::move(fb), deviceName, size, hostVarPtrAddress});
  } catch (...) {
  }
}

char __cudaInitModule(void** handle) noexcept {
  try {
    auto fb = rt::fatbin(handle);
    if (!fb) return 0;
    CUlibrary lib = nullptr;
    return rt::load(*fb, "__cudaInitModule", lib) == Errc::success ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

}  // namespace cuda_shim::rtapi
