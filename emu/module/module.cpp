// Loading images into contexts, libraries' per-context modules, unloading, and the
// registries that validate module, library, function and kernel handles.
#include "module/module.hpp"
#include "core/fresh_alloc.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/events.hpp"
#include "memory/address_space.hpp"
#include "memory/device_alloc.hpp"
#include "memory/managed.hpp"

namespace cuda_shim::module {

Registry<Module>& modules() {
  static auto* r = new Registry<Module>;
  return *r;
}
Registry<Library>& libraries() {
  static auto* r = new Registry<Library>;
  return *r;
}
Registry<Function>& functions() {
  static auto* r = new Registry<Function>;
  return *r;
}
Registry<Kernel>& kernels() {
  static auto* r = new Registry<Kernel>;
  return *r;
}

int compute_capability(const Context& ctx) {
  const Device* d = ctx.device();
  return d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
         d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

namespace {

// A module leaves the registries: its handle and its functions' handles stop resolving.
void forget(Module& m) {
  modules().remove(&m);
  for (auto& f : m.functions) functions().remove(f.get());
  ev::module_unloaded.emit(m);
}

// A context is going: its modules, and what libraries made in it, go too (their memory is
// released with the context's). A library loads again in the context's next life.
void forget_context(Context* ctx) noexcept {
  try {
    std::vector<std::shared_ptr<Module>> gone;
    modules().for_each([&](const std::shared_ptr<Module>& m) {
      if (m->ctx.get() == ctx && m->library.expired()) gone.push_back(m);
    });
    for (auto& m : gone) forget(*m);
    std::vector<std::shared_ptr<Library>> libs;
    libraries().for_each([&](const std::shared_ptr<Library>& l) { libs.push_back(l); });
    for (auto& l : libs) {
      std::lock_guard lk(l->m);
      if (auto it = l->modules.find(ctx); it != l->modules.end()) {
        forget(*it->second);
        l->modules.erase(it);
      }
      if (l->managed_ctx == ctx) {
        std::fill(l->managed.begin(), l->managed.end(), 0);
        l->owned_managed.clear();
        l->managed_ctx = nullptr;
      }
    }
  } catch (...) {
  }
}

// After the context-local storage's destructors (ev::kFirst), which may still unload modules.
[[maybe_unused]] const ev::Registration kOnTeardown{ev::context_teardown, &forget_context};

// Writes a variable's initial bytes (the rest of it is already zero: fresh memory).
void initialise(CUdeviceptr addr, const GlobalDesc& g) {
  if (g.init.empty() || !addr) return;
  mem::RangePtr r = mem::AddressSpace::get().find(addr);
  if (!r) return;
  std::memcpy(r->translate(addr), g.init.data(), std::min<size_t>(g.init.size(), g.size));
}

Errc make_managed(const std::shared_ptr<Context>& ctx, const GlobalDesc& g, const char* api, CUdeviceptr& out) {
  TRY(mem::alloc_managed(ctx, std::max<uint64_t>(g.size, 1), CU_MEM_ATTACH_GLOBAL, api, out));
  if (mem::RangePtr r = mem::AddressSpace::get().find(out)) r->module_owned = true;
  initialise(out, g);
  return Errc::success;
}

// Gives the image's variables memory in ctx and registers the functions. `lib`: the library
// this module belongs to (its managed variables are shared), or null.
Errc instantiate(const std::shared_ptr<const Image>& img, const std::shared_ptr<Context>& ctx, Library* lib,
                 const char* api, std::shared_ptr<Module>& out) {
  auto m = make_fresh<Module>();
  m->image = img;
  m->ctx = ctx;
  if (lib) m->library = lib->weak_from_this();
  m->vars.reserve(img->globals.size());
  for (size_t i = 0; i < img->globals.size(); ++i) {
    const GlobalDesc& g = img->globals[i];
    Variable v{&g, 0};
    if (g.space == Space::managed) {
      if (lib) {
        if (!lib->managed[i]) {
          TRY(make_managed(ctx, g, api, lib->managed[i]));
          lib->owned_managed.push_back(lib->managed[i]);
          lib->managed_ctx = ctx.get();
        }
        v.addr = lib->managed[i];
      } else {
        TRY(make_managed(ctx, g, api, v.addr));  // m's destructor frees what was made so far
        m->owned.push_back(v.addr);
      }
    } else {
      TRY(mem::alloc_device(ctx, std::max<uint64_t>(g.size, 1), api, v.addr, /*module_owned=*/true));
      m->owned.push_back(v.addr);
      initialise(v.addr, g);
    }
    m->vars.push_back(v);
  }
  m->functions.reserve(img->kernels.size());
  for (const KernelDesc& k : img->kernels) {
    auto f = make_fresh<Function>();
    f->module = m;
    f->desc = &k;
    f->image = img;
    if (lib) {  // what cuKernelSetAttribute set so far applies in this context too
      Kernel& kk = *lib->kernels[m->functions.size()];
      std::lock_guard kl(kk.m);
      f->settings = kk.settings;
    }
    m->functions.push_back(f);
  }
  for (auto& f : m->functions) functions().add(f);
  ev::module_loaded.emit(*m);
  out = std::move(m);
  return Errc::success;
}

Errc parse(const void* image, size_t size, int cc, const char* api, std::shared_ptr<const Image>& out) {
  auto img = std::make_shared<Image>();
  TRY(parse_image(image, size, cc, *img, api));
  img->device_cc = cc;
  out = std::move(img);
  return Errc::success;
}


}  // namespace

Module::~Module() {
  for (CUdeviceptr p : owned) mem::free_owned(p);
}

const Function* Module::function(const std::string& name) const {
  for (auto& f : functions)
    if (f->desc->name == name) return f.get();
  return nullptr;
}

const Variable* Module::variable(const std::string& name) const {
  for (auto& v : vars)
    if (v.desc->name == name) return &v;
  return nullptr;
}

Library::~Library() {
  for (CUdeviceptr p : owned_managed) mem::free_owned(p);
}

Errc Library::usable(const char* api) const {
  if (deferred == Errc::success) return Errc::success;
  return fail(deferred, "{}: the library's image could not be loaded: {}", api, deferred_why);
}

Errc Library::module_in(const std::shared_ptr<Context>& ctx, std::shared_ptr<Module>& out, const char* api) {
  TRY(usable(api));
  std::lock_guard lk(m);
  auto it = modules.find(ctx.get());
  if (it != modules.end()) {
    out = it->second;
    return Errc::success;
  }
  if (compute_capability(*ctx) != image->device_cc) {
    // Chosen for another device: choose again for this one (a machine of mixed devices).
    return fail(Errc::no_binary_for_gpu, "{}: the library was loaded for compute capability {}.{}; device {} is {}.{}",
                api, image->device_cc / 10, image->device_cc % 10, ctx->ordinal(), compute_capability(*ctx) / 10,
                compute_capability(*ctx) % 10);
  }
  std::shared_ptr<Module> mod;
  TRY(instantiate(image, ctx, this, api, mod));
  modules.emplace(ctx.get(), mod);
  out = std::move(mod);
  return Errc::success;
}

const Kernel* Library::kernel(const std::string& name) const {
  for (auto& k : kernels)
    if (image->kernels[k->index].name == name) return k.get();
  return nullptr;
}

Errc load_module(const void* image, size_t size, const std::shared_ptr<Context>& ctx, const char* api,
                 std::shared_ptr<Module>& out) {
  std::shared_ptr<const Image> img;
  TRY(parse(image, size, compute_capability(*ctx), api, img));
  std::shared_ptr<Module> m;
  TRY(instantiate(img, ctx, nullptr, api, m));
  modules().add(m);
  out = std::move(m);
  return Errc::success;
}

Errc load_library(const void* image, size_t size, const char* api, std::shared_ptr<Library>& out) {
  Driver& drv = Driver::get();
  if (drv.device_count() == 0) return fail(Errc::no_device, "{}: there is no device to load the library for", api);
  Device& d0 = drv.dev(0);
  const int cc = d0.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                 d0.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  if (!image) return fail(Errc::invalid_value, "{}: code is NULL", api);
  std::shared_ptr<const Image> img;
  auto lib = make_fresh<Library>();
  if (Errc e = parse(image, size, cc, api, img); e != Errc::success) {
    if (e == Errc::out_of_memory || e == Errc::invalid_value) return e;
    lib->deferred = e;  // the driver says so when the library is first used
    lib->deferred_why = explanation();
    clear_explanation();
    img = std::make_shared<Image>();
  }
  lib->image = img;
  lib->managed.assign(img->globals.size(), 0);
  for (size_t i = 0; i < img->kernels.size(); ++i) {
    auto k = make_fresh<Kernel>();
    k->library = lib;
    k->index = i;
    k->image = img;
    lib->kernels.push_back(k);
  }
  for (auto& k : lib->kernels) kernels().add(k);
  libraries().add(lib);
  out = std::move(lib);
  return Errc::success;
}

Errc unload_module(CUmodule h, const char* api) {
  auto m = modules().find(h);
  if (!m) return fail(Errc::invalid_handle, "{}: {} is not a loaded module", api, static_cast<void*>(h));
  if (!m->library.expired())  // a library's module lives and dies with its library
    return fail(Errc::invalid_handle, "{}: module {} belongs to a library: cuLibraryUnload unloads it", api,
                static_cast<void*>(h));
  forget(*m);
  if (m->ctx) m->ctx->synchronize();  // launches in flight may still name its functions
  return Errc::success;
}

Errc unload_library(CUlibrary h, const char* api) {
  auto lib = libraries().remove(h);
  if (!lib) return fail(Errc::invalid_handle, "{}: {} is not a loaded library", api, static_cast<void*>(h));
  for (auto& k : lib->kernels) kernels().remove(k.get());
  std::lock_guard lk(lib->m);
  for (auto& [ctx, m] : lib->modules) {
    forget(*m);
    if (m->ctx) m->ctx->synchronize();
  }
  lib->modules.clear();
  return Errc::success;
}

Errc resolve_function(CUfunction h, const char* api, std::shared_ptr<Function>& out, bool accept_kernel) {
  if (!h) return fail(Errc::invalid_handle, "{}: the function handle is NULL", api);
  if ((out = functions().find(h))) {
    if (out->module.expired())
      return fail(Errc::invalid_handle, "{}: function {} belongs to an unloaded module", api, static_cast<void*>(h));
    return Errc::success;
  }
  auto k = kernels().find(h);
  if (k && !accept_kernel)
    return fail(Errc::invalid_handle, "{}: {} is a CUkernel; this entry takes a CUfunction (cuKernelGetFunction gives "
                "the kernel's function in the current context)", api, static_cast<void*>(h));
  if (!k)
    return fail(Errc::invalid_handle, "{}: {} is neither a loaded function (CUfunction) nor a kernel (CUkernel)", api,
                static_cast<void*>(h));
  auto lib = k->library.lock();
  if (!lib) return fail(Errc::invalid_handle, "{}: kernel {} belongs to an unloaded library", api, static_cast<void*>(h));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Module> m;
  TRY(lib->module_in(ctx, m, api));
  out = m->functions[k->index];
  return Errc::success;
}

}  // namespace cuda_shim::module
