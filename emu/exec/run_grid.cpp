// Launch to stream operation: parameters copied at the call (the caller may reuse its buffers
// once the launch returns, as with the driver), the grid run when the stream reaches it, device
// printf written to stdout then, and a fault recorded in the context.
#include "exec/run_grid.hpp"

#include <time.h>

#include <cstdio>
#include <cstring>

#include "core/config.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/stream.hpp"
#include "exec/engine.hpp"
#include "module/occupancy.hpp"

namespace cuda_shim::exec {
namespace {

Errc copy_params(const module::KernelDesc& k, const module::LaunchArgs& a, std::vector<uint8_t>& out, const char* api) {
  out.assign(k.param_bytes, 0);
  if (a.params) {
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (!a.params[i])
        return fail(Errc::invalid_value, "{}: kernel '{}': kernelParams[{}] is NULL", api, k.name, i);
      std::memcpy(out.data() + k.params[i].offset, a.params[i], k.params[i].size);
    }
    return Errc::success;
  }
  if (!a.extra) return Errc::success;
  const void* buf = nullptr;
  size_t size = 0;
  for (size_t i = 0; a.extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
    if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = a.extra[i + 1];
    if (a.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(a.extra[i + 1]);
  }
  if (buf && !out.empty()) std::memcpy(out.data(), buf, std::min<size_t>(size, out.size()));
  return Errc::success;
}

// Bytes of local stack each thread gets: the kernel's frame, and room for calls (the driver's
// default stack, CU_LIMIT_STACK_SIZE, is 1 KiB; functions here keep their parameters there too).
uint32_t local_stride(const Program& p, const Func& k, const Context& ctx) {
  uint32_t most = 0;
  bool calls = false;
  for (const Func& f : p.funcs)
    if (!f.kernel && !f.external) most = std::max(most, f.local_bytes), calls = true;
  size_t stack = ctx.limit[CU_LIMIT_STACK_SIZE] ? ctx.limit[CU_LIMIT_STACK_SIZE] : 1024;
  uint64_t s = ((k.local_bytes + 15) & ~15u) + (calls ? stack + 8 * ((most + 15) & ~15u) : 0);
  return static_cast<uint32_t>(std::min<uint64_t>(s, 1u << 20));
}

}  // namespace

Errc enqueue_grid(module::Module& m, const module::KernelDesc& k, const module::FuncSettings& s,
                  const module::LaunchArgs& a, const std::shared_ptr<Stream>& st, const char* api) {
  std::shared_ptr<const Program> p;
  TRY(program_for(m, p, api));
  const int kernel = p->find(k.name);
  if (kernel < 0 || !p->funcs[kernel].kernel)
    return fail(Errc::not_found, "{}: kernel '{}' is not an .entry of the module's PTX", api, k.name);
  if (std::string why = unsupported_in(*p, static_cast<uint32_t>(kernel)); !why.empty())
    return fail(Errc::not_supported, "{}: kernel '{}' was not launched: it uses {}, which cuda-shim's kernel engine "
                "does not run yet", api, k.name, why);
  auto L = std::make_shared<Launch>();
  L->prog = p.get();
  L->kernel = static_cast<uint32_t>(kernel);
  std::memcpy(L->grid, a.grid, sizeof L->grid);
  std::memcpy(L->block, a.block, sizeof L->block);
  L->dyn_shared = a.shared;
  L->shared_total = p->shared_bytes + a.shared;
  L->local_stride = local_stride(*p, p->funcs[kernel], *st->ctx());
  L->kernel_name = k.name;
  L->stream_id = st->id();
  L->ctx = st->ctx();
  L->racecheck = Config::get().strict != 0;
  L->cooperative = a.cooperative || reads_grid_workspace(*p, static_cast<uint32_t>(kernel));
  if (L->cooperative && !a.cooperative) {  // a plain launch using the grid barrier: only if it fits
    const int threads = static_cast<int>(L->block[0] * L->block[1] * L->block[2]);
    const uint64_t fit = module::resident_blocks(k, s, *st->ctx()->device(), threads, a.shared);
    if (uint64_t{L->grid[0]} * L->grid[1] * L->grid[2] > fit) L->resident_limit = std::max<uint64_t>(fit, 1);
  }
  TRY(copy_params(k, a, L->params, api));
  std::shared_ptr<Context> ctx = st->ctx_ptr();
  st->enqueue([L, p, ctx] {
    if (ctx->faulted()) return;  // the context is unusable: later work does not run (as on a GPU)
    GridResult r;
    if (unsigned t = Config::get().kernel_timeout) {
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      L->deadline_ns = (static_cast<int64_t>(now.tv_sec) + t) * 1000000000 + now.tv_nsec;
    }
    run_grid(*L, r);
    if (!r.printf_out.empty()) {
      std::fwrite(r.printf_out.data(), 1, r.printf_out.size(), stdout);
      std::fflush(stdout);
    }
    if (!r.reports.empty())
      std::fprintf(stderr, "cuda-shim: kernel '%s':\n%s", L->kernel_name.c_str(), r.reports.c_str());
    if (r.fault.code != Errc::success) {
      if (Config::get().explain) std::fprintf(stderr, "cuda-shim: kernel fault: %s\n", r.fault.what.c_str());
      ctx->set_fault(r.fault.code, r.fault.what);
    }
  }, {}, /*inline_ok=*/false);
  return Errc::success;
}

}  // namespace cuda_shim::exec
