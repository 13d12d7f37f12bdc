// Compiling a module's PTX (once, kept on the module) and running a grid: blocks are claimed
// one at a time from a shared counter by the host threads of core/parallel's pool, each with its
// own view of global memory and its own shared and local memory, reused block after block.
#include "exec/engine.hpp"
#include "exec/racecheck.hpp"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/config.hpp"
#include "core/parallel.hpp"
#include "exec/ptx_lower.hpp"
#include "memory/address_space.hpp"
#include "memory/device_alloc.hpp"
#include "module/module.hpp"

namespace cuda_shim::exec {

Errc program_for(module::Module& m, std::shared_ptr<const Program>& out, const char* api) {
  std::lock_guard lk(m.engine_m);
  if (m.engine) {
    out = std::static_pointer_cast<const Program>(m.engine);
    return Errc::success;
  }
  if (m.image->ptx.empty())
    return fail(Errc::not_supported, "{}: the module holds machine code (sm_{}) and no PTX; cuda-shim runs kernels from "
                "PTX only (build with nvcc's default -arch=sm_XX, which keeps compute_XX PTX, or add "
                "-gencode arch=compute_XX,code=compute_XX)", api, m.image->arch);
  auto p = std::make_shared<Program>();
  auto globals = [&m, api](const std::string& name, uint64_t size, const std::vector<uint8_t>& init, uint64_t& addr) {
    if (const module::Variable* v = m.variable(name)) {
      addr = v->addr;
      return true;
    }
    // A variable the image's own list lacks (the chosen entry is machine code, whose symbol table
    // keeps only what the host can name): memory of its own, freed with the module.
    CUdeviceptr p = 0;
    if (mem::alloc_device(m.ctx, size, api, p, /*module_owned=*/true) != Errc::success) return false;
    m.owned.push_back(p);
    if (mem::RangePtr r = mem::AddressSpace::get().find(p)) {
      std::memset(r->translate(p), 0, size);
      std::memcpy(r->translate(p), init.data(), std::min<size_t>(init.size(), size));
    }
    addr = p;
    return true;
  };
  TRY(compile(m.image->ptx, globals, *p, api));
  m.engine = p;
  out = std::move(p);
  return Errc::success;
}

namespace {
// The first of the kernel and the functions it can call (directly; an indirect call may reach
// any) for which stop(fn) holds, or null.
template <class Stop>
const Func* reachable(const Program& p, uint32_t kernel, Stop&& stop) {
  std::vector<bool> seen(p.funcs.size());
  std::vector<uint32_t> todo{kernel};
  while (!todo.empty()) {
    uint32_t f = todo.back();
    todo.pop_back();
    if (seen[f]) continue;
    seen[f] = true;
    const Func& fn = p.funcs[f];
    if (stop(fn)) return &fn;
    for (uint32_t pc = fn.begin; pc < fn.end; ++pc) {
      const Insn& in = p.code[pc];
      if (in.flow != Flow::call) continue;
      const CallSite& cs = p.calls[in.target];
      if (cs.indirect != kNone) {
        for (uint32_t g = 0; g < p.funcs.size(); ++g) todo.push_back(g);
      } else {
        todo.push_back(cs.callee);
      }
    }
  }
  return nullptr;
}
}  // namespace

std::string unsupported_in(const Program& p, uint32_t kernel) {
  const Func* f = reachable(p, kernel, [](const Func& fn) { return !fn.unsupported.empty(); });
  return f ? fmt::format("{} in '{}'", f->unsupported, f->name) : std::string{};
}

bool reads_grid_workspace(const Program& p, uint32_t kernel) {
  return reachable(p, kernel, [](const Func& fn) { return fn.grid_ws; }) != nullptr;
}

namespace {

struct Grid {
  Launch* launch;
  uint64_t blocks;
  std::atomic<uint64_t> next{0};
  std::mutex m;
  GridResult* result;
};

// One host thread's share: claim blocks until none is left or a fault stops the grid.
void worker(void* ctx, size_t) {
  Grid& g = *static_cast<Grid*>(ctx);
  Launch& L = *g.launch;
  MemView mem(L.stream_id, L.grid_ws);
  Racecheck race;
  Block b;
  b.race = L.racecheck ? &race : nullptr;
  std::vector<uint8_t> shm, loc;
  Fault f;
  for (;;) {
    if (L.stop.load(std::memory_order_relaxed)) break;
    const uint64_t i = g.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= g.blocks) break;
    if (!run_block(L, static_cast<uint32_t>(i), b, shm, loc, mem, f)) {
      std::lock_guard lk(g.m);
      if (g.result->fault.code == Errc::success) g.result->fault = f;
      break;
    }
  }
  std::string rep = mem.take_reports();
  if (!rep.empty()) {
    std::lock_guard lk(g.m);
    g.result->reports += rep;
  }
}

// A cooperative grid's blocks must all be running at once (they wait for each other at the grid
// barrier): a host thread each. The launch was refused when the grid is larger than the device
// holds at once, as NVIDIA's driver refuses it.
void run_cooperative(Grid& g) {
  std::vector<std::thread> threads;
  try {
    threads.reserve(g.blocks);
    for (uint64_t i = 0; i < g.blocks; ++i) threads.emplace_back(worker, &g, i);
  } catch (const std::exception&) {
    std::lock_guard lk(g.m);
    g.result->fault.code = Errc::launch_out_of_resources;
    g.result->fault.what = fmt::format("kernel '{}': a cooperative grid of {} blocks needs a host thread each; only {} "
                                       "could be started", g.launch->kernel_name, g.blocks, threads.size());
    g.launch->stop.store(true, std::memory_order_relaxed);  // blocks already waiting at the grid barrier stop
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

void run_grid(Launch& L, GridResult& r) {
  Grid g;
  g.launch = &L;
  g.blocks = uint64_t{L.grid[0]} * L.grid[1] * L.grid[2];
  g.result = &r;
  if (L.resident_limit) {
    r.fault.code = Errc::launch_failed;
    r.fault.what = fmt::format("kernel '{}' waits at a grid-wide barrier (cooperative groups' grid.sync()), but its {} "
                               "blocks are more than the {} the device runs at once: the barrier never opens (a GPU "
                               "hangs). Launch it cooperatively (cudaLaunchCooperativeKernel) with a grid that fits",
                               L.kernel_name, g.blocks, L.resident_limit);
  } else if (L.cooperative) {
    run_cooperative(g);
  } else {
    const unsigned want = Config::get().exec_threads;
    size_t parts = std::min<uint64_t>(g.blocks, want ? want : par::threads());
    if (parts == 0) parts = 1;
    par::run(parts, &worker, &g);
  }
  r.printf_out = std::move(L.printf_out);
}

}  // namespace cuda_shim::exec
