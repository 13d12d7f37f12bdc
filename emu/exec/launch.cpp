// Kernel launches: cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel (and _ptsz).
// Every argument is checked as the real driver checks it; then the launch policy decides
// (Config::kernels, CUDA_SHIM_KERNELS): run the grid on the PTX engine in stream order (the
// default), refuse with CUDA_ERROR_NOT_SUPPORTED (nothing sticky), or complete as a no-op in
// stream order. Every launch is recorded for cuShimGetLaunchRecord.
#include "exec/launch.hpp"

#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/config.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "exec/run_grid.hpp"
#include "module/attributes.hpp"
#include "module/module.hpp"
#include "module/occupancy.hpp"

namespace cuda_shim::module {
namespace {

struct Record {
  std::string name;
  unsigned grid[3], block[3], shared;
  bool skipped;
  uint64_t stream_id;
};

constexpr size_t kKept = 4096;

struct Log {
  std::mutex m;
  uint64_t count = 0;
  std::array<Record, kKept> ring;
};
Log& log() {
  static auto* l = new Log;  // never destroyed: launches may come from threads outliving main
  return *l;
}

void record(const KernelDesc& k, const LaunchArgs& a, bool skipped, uint64_t stream_id) {
  Log& l = log();
  std::lock_guard lk(l.m);
  Record& r = l.ring[l.count % kKept];
  r.name = k.name;
  std::memcpy(r.grid, a.grid, sizeof r.grid);
  std::memcpy(r.block, a.block, sizeof r.block);
  r.shared = a.shared;
  r.skipped = skipped;
  r.stream_id = stream_id;
  ++l.count;
}

Errc check_dims(const LaunchArgs& a, const KernelDesc& k, const FuncSettings& s, const Device& d, const char* api) {
  static const char* axis = "xyz";
  for (int i = 0; i < 3; ++i) {
    if (a.grid[i] == 0 || a.block[i] == 0)
      return fail(Errc::invalid_value, "{}: kernel '{}': {}Dim{} is 0 (every grid and block dimension must be at least 1)",
                  api, k.name, a.grid[i] == 0 ? "grid" : "block", static_cast<char>('X' + i));
    unsigned gmax = static_cast<unsigned>(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i));
    if (a.grid[i] > gmax)
      return fail(Errc::invalid_value, "{}: kernel '{}': gridDim.{} = {} exceeds the device's {}", api, k.name, axis[i],
                  a.grid[i], gmax);
    unsigned bmax = static_cast<unsigned>(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i));
    if (a.block[i] > bmax)
      return fail(Errc::invalid_value, "{}: kernel '{}': blockDim.{} = {} exceeds the device's {}", api, k.name,
                  axis[i], a.block[i], bmax);
  }
  uint64_t threads = uint64_t{a.block[0]} * a.block[1] * a.block[2];
  int most = max_threads(k, d);
  if (threads > static_cast<uint64_t>(most))
    return fail(Errc::invalid_value, "{}: kernel '{}': a block of {}x{}x{} = {} threads exceeds the {} this kernel "
                "allows on device {}{}", api, k.name, a.block[0], a.block[1], a.block[2], threads, most, d.ordinal,
                k.max_threads || k.reqntid[0] ? " (its __launch_bounds__ / .maxntid / .reqntid)" : "");
  int shm = max_dynamic_shared(k, s, d);
  if (a.shared > static_cast<unsigned>(shm))
    return fail(Errc::invalid_value, "{}: kernel '{}': {} bytes of dynamic shared memory exceed the {} it may use "
                "(raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to opt in to more)", api, k.name, a.shared, shm);
  return Errc::success;
}

// A thread block cluster (compute capability 9.0 and later): every dimension at least 1 and
// dividing the grid's; at most 8 blocks (the portable size), or 16 where the function allows a
// non-portable size. NVIDIA's H100 answers CUDA_ERROR_INVALID_CLUSTER_SIZE for each.
Errc check_cluster(const LaunchArgs& a, const KernelDesc& k, const FuncSettings& s, const Device& d, const char* api) {
  if (!a.has_cluster) return Errc::success;
  const int cc = d.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  if (cc < 9 && (a.cluster[0] > 1 || a.cluster[1] > 1 || a.cluster[2] > 1))
    return fail(Errc::invalid_cluster_size, "{}: kernel '{}': thread block clusters need compute capability 9.0; "
                "device {} is {}.x", api, k.name, d.ordinal, cc);
  uint64_t blocks = 1;
  for (int i = 0; i < 3; ++i) {
    if (a.cluster[i] == 0)
      return fail(Errc::invalid_cluster_size, "{}: kernel '{}': clusterDim.{} is 0", api, k.name, "xyz"[i]);
    if (a.grid[i] % a.cluster[i])
      return fail(Errc::invalid_cluster_size, "{}: kernel '{}': gridDim.{} = {} is not a multiple of clusterDim.{} = {}",
                  api, k.name, "xyz"[i], a.grid[i], "xyz"[i], a.cluster[i]);
    blocks *= a.cluster[i];
  }
  const uint64_t most = s.non_portable_cluster ? 16 : 8;
  if (blocks > most)
    return fail(Errc::invalid_cluster_size, "{}: kernel '{}': a cluster of {}x{}x{} = {} blocks exceeds {}{}", api, k.name,
                a.cluster[0], a.cluster[1], a.cluster[2], blocks, most,
                s.non_portable_cluster ? " (the non-portable maximum)"
                                       : " (the portable maximum; CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED "
                                         "allows 16)");
  return Errc::success;
}

// Whether `extra` holds nothing but CU_LAUNCH_PARAM_END (the driver treats it as absent).
bool extra_empty(void** extra) { return !extra || extra[0] == CU_LAUNCH_PARAM_END; }

// `extra`: CU_LAUNCH_PARAM_BUFFER_POINTER, ptr, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
// CU_LAUNCH_PARAM_END, in any order of the pairs.
Errc check_extra(void** extra, const KernelDesc& k, const char* api) {
  bool have_ptr = false, have_size = false;
  for (size_t i = 0; i < 64; i += 2) {
    void* key = extra[i];
    if (key == CU_LAUNCH_PARAM_END) {
      if (!have_ptr || !have_size)
        return fail(Errc::invalid_value, "{}: kernel '{}': extra lacks CU_LAUNCH_PARAM_BUFFER_{}", api, k.name,
                    have_ptr ? "SIZE" : "POINTER");
      return Errc::success;
    }
    if (key == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      have_ptr = true;
    } else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      have_size = true;
      auto* sz = static_cast<size_t*>(extra[i + 1]);
      if (!sz) return fail(Errc::invalid_value, "{}: kernel '{}': CU_LAUNCH_PARAM_BUFFER_SIZE points at NULL", api, k.name);
      // A shorter buffer is taken (the rest of the parameters are undefined); a longer one
      // does not fit the kernel's parameter space.
      if (*sz > k.param_bytes)
        return fail(Errc::launch_out_of_resources, "{}: kernel '{}': the parameter buffer holds {} bytes; its "
                    "parameters take {}", api, k.name, *sz, k.param_bytes);
    } else {
      return fail(Errc::invalid_value, "{}: kernel '{}': extra[{}] = {} is not a CU_LAUNCH_PARAM_* key", api, k.name, i,
                  key);
    }
  }
  return fail(Errc::invalid_value, "{}: kernel '{}': extra has no CU_LAUNCH_PARAM_END in its first 64 entries", api,
              k.name);
}

// A cooperative grid must fit on the device at once: blocks per SM (the occupancy calculator)
// times the SMs, as NVIDIA's driver checks.
Errc check_cooperative(const LaunchArgs& a, const KernelDesc& k, const FuncSettings& s, const Device& d,
                       const char* api) {
  const uint64_t blocks = uint64_t{a.grid[0]} * a.grid[1] * a.grid[2];
  const int threads = static_cast<int>(a.block[0] * a.block[1] * a.block[2]);
  const uint64_t fit = resident_blocks(k, s, d, threads, a.shared);
  if (blocks > fit)
    return fail(Errc::cooperative_launch_too_large, "{}: a cooperative grid of {} blocks of {} threads ({} bytes of dynamic "
                "shared memory) of kernel '{}': the device holds {} such blocks at once", api, blocks, threads,
                a.shared, k.name, fit);
  return Errc::success;
}

}  // namespace

namespace {

// A launch's arguments copied out, owned by a graph node: the node launches with them every time.
struct KeptArgs {
  std::vector<unsigned char> buf;
  std::vector<void*> ptrs;
  size_t size = 0;
  void* extra[5] = {};
};

std::shared_ptr<KeptArgs> keep_args(const KernelDesc& k, const LaunchArgs& a) {
  auto kept = std::make_shared<KeptArgs>();
  if (a.params) {
    kept->buf.resize(k.param_bytes);
    kept->ptrs.resize(k.params.size());
    for (size_t i = 0; i < k.params.size(); ++i) {
      std::memcpy(kept->buf.data() + k.params[i].offset, a.params[i], k.params[i].size);
      kept->ptrs[i] = kept->buf.data() + k.params[i].offset;
    }
    if (kept->ptrs.empty()) kept->ptrs.push_back(nullptr);  // kernelParams stays non-NULL
    return kept;
  }
  if (extra_empty(a.extra)) return kept;
  const void* src = nullptr;
  for (size_t i = 0; a.extra[i] != CU_LAUNCH_PARAM_END; i += 2)
    if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) src = a.extra[i + 1];
    else if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) kept->size = *static_cast<size_t*>(a.extra[i + 1]);
  kept->buf.resize(kept->size);
  if (src && kept->size) std::memcpy(kept->buf.data(), src, kept->size);
  kept->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
  kept->extra[1] = kept->buf.data();
  kept->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
  kept->extra[3] = &kept->size;
  kept->extra[4] = CU_LAUNCH_PARAM_END;
  return kept;
}

// A checked launch as a graph node: cuGraphLaunch launches h again with the copied arguments.
void kernel_spec(CUfunction h, const KernelDesc& k, const LaunchArgs& a, cap::Spec& sp) {
  auto kept = keep_args(k, a);
  LaunchArgs b = a;
  b.params = kept->ptrs.empty() ? nullptr : kept->ptrs.data();
  b.extra = kept->extra[0] ? kept->extra : nullptr;
  b.stream = nullptr;
  b.per_thread = false;
  sp.kind = cap::Kind::kernel;
  sp.label = k.name;
  sp.kernel = CUDA_KERNEL_NODE_PARAMS{h, a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2], a.shared,
                                      b.params, b.extra, nullptr, nullptr};
  sp.keep = kept;
  sp.issue = [h, b, kept](CUstream s) {
    LaunchArgs c = b;
    c.stream = s;
    return launch(h, c, "cuGraphLaunch");
  };
}

// Every check of a launch that does not depend on its stream.
Errc check_launch(CUfunction h, const LaunchArgs& a, const char* api, std::shared_ptr<Function>& f,
                  std::shared_ptr<Module>& m) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(resolve_function(h, api, f, /*accept_kernel=*/true));
  m = f->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  if (m->ctx != ctx)
    return fail(Errc::invalid_handle, "{}: kernel '{}' was loaded in context {}, not the current context {}", api,
                f->desc->name, static_cast<void*>(m->ctx.get()), static_cast<void*>(ctx.get()));
  const KernelDesc& k = *f->desc;
  FuncSettings s;
  {
    std::lock_guard lk(f->m);
    s = f->settings;
  }
  TRY(check_dims(a, k, s, *ctx->device(), api));
  const bool extra = !extra_empty(a.extra);
  if (a.params && extra)
    return fail(Errc::invalid_value, "{}: kernel '{}': kernelParams and extra are both given; pass one", api, k.name);
  if (!a.params && !extra && !k.params.empty())
    return fail(Errc::invalid_value, "{}: kernel '{}' takes {} parameters, but kernelParams and extra are both NULL",
                api, k.name, k.params.size());
  if (extra) TRY(check_extra(a.extra, k, api));
  TRY(check_cluster(a, k, s, *ctx->device(), api));
  if (a.cooperative) TRY(check_cooperative(a, k, s, *ctx->device(), api));
  return Errc::success;
}

}  // namespace

Errc kernel_node(const CUDA_KERNEL_NODE_PARAMS& p, cap::Spec& out, const char* api) {
  CUfunction h = p.func ? p.func : reinterpret_cast<CUfunction>(p.kern);
  LaunchArgs a{{p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes,
               nullptr, p.kernelParams, p.extra, false};
  std::shared_ptr<Function> f;
  std::shared_ptr<Module> m;
  TRY(check_launch(h, a, api, f, m));
  kernel_spec(h, *f->desc, a, out);
  // GetParams hands back the function as it was given (NVIDIA's runtime passes a CUkernel, which
  // it maps back to its kernel stub).
  out.kernel.func = p.func;
  out.kernel.kern = p.kern;
  out.kernel.ctx = p.ctx;
  out.ctx = reinterpret_cast<CUcontext>(m->ctx.get());
  return Errc::success;
}

Errc launch(CUfunction h, const LaunchArgs& a, const char* api) {
  std::shared_ptr<Function> f;
  std::shared_ptr<Module> m;
  TRY(check_launch(h, a, api, f, m));
  const KernelDesc& k = *f->desc;
  FuncSettings s;
  {
    std::lock_guard lk(f->m);
    s = f->settings;
  }
  std::shared_ptr<Stream> st;
  TRY(resolve_stream(a.stream, a.per_thread, api, st));
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(*st, api, seq));
  if (seq) [[unlikely]] {  // a capturing stream: the launch becomes a kernel node
    cap::Spec sp;
    kernel_spec(h, k, a, sp);
    sp.ctx = reinterpret_cast<CUcontext>(m->ctx.get());
    return seq->add(*st, std::move(sp), api);
  }
  const auto policy = Config::get().kernels;
  record(k, a, policy == Config::KernelPolicy::skip, st->id());
  if (policy == Config::KernelPolicy::refuse)
    return fail(Errc::not_supported, "{}: kernel '{}' ({}x{}x{} blocks of {}x{}x{} threads) was not launched: "
                "CUDA_SHIM_KERNELS=refuse. Set CUDA_SHIM_KERNELS=run (the default) to run it, or skip to complete "
                "launches as no-ops in stream order", api, k.name, a.grid[0], a.grid[1], a.grid[2], a.block[0],
                a.block[1], a.block[2]);
  if (policy == Config::KernelPolicy::skip) {
    st->enqueue(nullptr, {}, true);  // a point in stream order: what follows waits for what came before
    return Errc::success;
  }
  return exec::enqueue_grid(*m, k, s, a, st, api);
}

uint64_t launch_count() noexcept {
  Log& l = log();
  std::lock_guard lk(l.m);
  return l.count;
}

bool launch_record(uint64_t index, CUshimLaunchRecord& out, std::string& name) {
  Log& l = log();
  std::lock_guard lk(l.m);
  if (index >= l.count || l.count - index > kKept) return false;
  const Record& r = l.ring[index % kKept];
  std::memcpy(out.grid, r.grid, sizeof out.grid);
  std::memcpy(out.block, r.block, sizeof out.block);
  out.sharedMemBytes = r.shared;
  out.skipped = r.skipped ? 1 : 0;
  out.streamId = r.stream_id;
  name = r.name;
  return true;
}

}  // namespace cuda_shim::module

namespace cuda_shim::api {
namespace {
using module::LaunchArgs;

Errc launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shm, CUstream s, void** params, void** extra, bool pt, const char* api) {
  LaunchArgs a{{gx, gy, gz}, {bx, by, bz}, shm, s, params, extra, pt};
  return module::launch(f, a, api);
}

Errc launch_ex(const CUlaunchConfig* c, CUfunction f, void** params, void** extra, bool pt, const char* api) {
  TRY(need(c, api, "config"));
  if (c->numAttrs && !c->attrs)
    return fail(Errc::invalid_value, "{}: config->numAttrs is {} but config->attrs is NULL", api, c->numAttrs);
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    const CUlaunchAttribute& at = c->attrs[i];
    if (at.id < CU_LAUNCH_ATTRIBUTE_IGNORE || at.id >= CU_LAUNCH_ATTRIBUTE_MAX)
      return fail(Errc::invalid_value, "{}: config->attrs[{}].id = {} is not a CUlaunchAttributeID", api, i,
                  static_cast<int>(at.id));
  }
  LaunchArgs a{{c->gridDimX, c->gridDimY, c->gridDimZ}, {c->blockDimX, c->blockDimY, c->blockDimZ},
               c->sharedMemBytes, c->hStream, params, extra, pt};
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& cd = c->attrs[i].value.clusterDim;
      a.cluster[0] = cd.x, a.cluster[1] = cd.y, a.cluster[2] = cd.z;
      a.has_cluster = true;
    } else if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      a.cooperative = c->attrs[i].value.cooperative != 0;
    }
  return module::launch(f, a, api);
}

}  // namespace

Errc cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                    unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) noexcept {
  return launch_kernel(f, gx, gy, gz, bx, by, bz, shm, s, p, e, false, "cuLaunchKernel");
}
Errc cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                         unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) noexcept {
  return launch_kernel(f, gx, gy, gz, bx, by, bz, shm, s, p, e, true, "cuLaunchKernel");
}
Errc cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                               unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p) noexcept {
  LaunchArgs a{{gx, gy, gz}, {bx, by, bz}, shm, s, p, nullptr, false};
  a.cooperative = true;
  return module::launch(f, a, "cuLaunchCooperativeKernel");
}
Errc cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                    unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p) noexcept {
  LaunchArgs a{{gx, gy, gz}, {bx, by, bz}, shm, s, p, nullptr, true};
  a.cooperative = true;
  return module::launch(f, a, "cuLaunchCooperativeKernel");
}
Errc cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** p, void** e) noexcept {
  return launch_ex(c, f, p, e, false, "cuLaunchKernelEx");
}
Errc cuLaunchKernelEx_ptsz(const CUlaunchConfig* c, CUfunction f, void** p, void** e) noexcept {
  return launch_ex(c, f, p, e, true, "cuLaunchKernelEx");
}

}  // namespace cuda_shim::api
