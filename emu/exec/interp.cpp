// The executor: a block's warps under min-PC scheduling (interp.hpp says why), barriers, calls
// and the control flow the handlers leave to it.
#include "exec/interp.hpp"

#include <sched.h>

#include <time.h>

#include <algorithm>

#include "exec/builtins.hpp"
#include "exec/racecheck.hpp"

namespace cuda_shim::exec {
namespace {

constexpr uint32_t kWarpSyncBar = 0xffffffffu;  // bar_id of lanes waiting for their warp's members

uint32_t popc(uint32_t m) { return static_cast<uint32_t>(__builtin_popcount(m)); }

// Points the warp at its top frame's registers and local stack.
void enter_top(Warp& w) {
  const Frame& f = w.frames.back();
  w.fr = w.regs.data() + size_t{f.reg_base} * kLanes;
  w.local_base = f.local_base;
}

// A new frame for `func` on the warp's register and local stacks; false when the local stack is
// full (the fault is raised).
bool push_frame(Warp& w, uint32_t func, unsigned lane_for_fault) {
  const Func& fn = w.prog->funcs[func];
  Frame f;
  f.func = func;
  f.reg_base = w.reg_top;
  f.local_base = w.local_top;
  if (size_t{w.local_top} + fn.local_bytes > w.block->local_stride) {
    raise(w, lane_for_fault, Errc::illegal_address,
          fmt::format("call of '{}': the thread's stack ({} bytes) overflows; raise it with cuCtxSetLimit("
                      "CU_LIMIT_STACK_SIZE)", fn.name, w.block->local_stride));
    return false;
  }
  w.reg_top += fn.nregs;
  w.local_top += (fn.local_bytes + 15) & ~15u;
  const size_t need = size_t{w.reg_top} * kLanes;
  if (w.regs.size() < need) w.regs.resize(need);
  w.frames.push_back(f);
  enter_top(w);
  return true;
}

uint8_t* lane_local(Warp& w, unsigned l) {
  return w.block->local + size_t{w.index * kLanes + l} * w.block->local_stride;
}

// Barrier bookkeeping: lanes of `w` in `lanes` arrive at barrier `id`, expecting `count` threads
// (0: every live thread of the block).
void arrive(Warp& w, uint32_t id, uint32_t lanes, uint32_t count, bool wait) {
  Block& b = *w.block;
  b.arrived[id] += popc(lanes);
  if (count) b.expected[id] = count;
  if (wait) {
    w.blocked |= lanes;
    for_lanes(lanes, [&](unsigned l) { w.bar_id[l] = id; });
  }
}

// Releases every barrier whose arrivals reached what it waits for.
bool release_barriers(Block& b) {
  bool any = false;
  for (uint32_t id = 0; id < 16; ++id) {
    if (!b.arrived[id]) continue;
    const uint32_t want = b.expected[id] ? b.expected[id] : b.live_threads;
    if (b.arrived[id] < want) continue;
    b.arrived[id] = 0;
    b.expected[id] = 0;
    b.res_popc[id] = b.red_popc[id], b.res_all[id] = b.red_all[id], b.res_any[id] = b.red_any[id];
    b.red_popc[id] = 0, b.red_all[id] = 1, b.red_any[id] = 0;
    for (Warp& w : b.warps) {
      uint32_t rel = 0;
      for_lanes(w.blocked, [&](unsigned l) {
        if (w.bar_id[l] == id) rel |= 1u << l;
      });
      w.blocked &= ~rel;
    }
    any = true;
  }
  if (any && b.race) b.race->barrier();
  return any;
}

// Nothing can run: lanes waiting at a warp-synchronous instruction for members that exited since,
// or wait at a block barrier, go on with the members present (as a GPU does when the others have
// exited; numba-cuda's reduction syncs a warp from inside `if tid < 2`). True when any went on.
bool release_warp_syncs(Block& b) {
  bool any = false;
  for (Warp& w : b.warps) {
    uint32_t rel = 0;
    for_lanes(w.blocked & w.alive, [&](unsigned l) {
      if (w.bar_id[l] == kWarpSyncBar) rel |= 1u << l;
    });
    if (rel) w.blocked &= ~rel, any = true;
  }
  return any;
}

// The lanes of `group` whose guard predicate holds.
uint32_t guarded(const Warp& w, const Insn& in, uint32_t group) {
  if (in.guard == kNone) return group;
  uint32_t m = 0;
  for_lanes(group, [&](unsigned l) {
    if (((w.get(in.guard, l) & 1) != 0) != in.guard_neg) m |= 1u << l;
  });
  return m;
}

// Copies call arguments into the callee's parameters (callee frame on top), or results back.
void copy_args(Warp& w, const CallSite& cs, uint32_t lanes, const Frame& caller, const Frame& callee, bool results) {
  const Func& fn = w.prog->funcs[callee.func];
  for_lanes(lanes, [&](unsigned l) {
    uint8_t* base = lane_local(w, l);
    const size_t n = results ? std::min(cs.ret_off.size(), fn.ret_off.size()) : std::min(cs.arg_off.size(), fn.param_off.size());
    for (size_t i = 0; i < n; ++i) {
      if (!results)
        std::memcpy(base + callee.local_base + fn.param_off[i], base + caller.local_base + cs.arg_off[i],
                    std::min(cs.arg_size[i], fn.param_size[i]));
      else
        std::memcpy(base + caller.local_base + cs.ret_off[i], base + callee.local_base + fn.ret_off[i],
                    std::min(cs.ret_size[i], fn.ret_size[i]));
    }
  });
}

// The callee's lanes all returned or exited: back to the caller.
void pop_frame(Warp& w) {
  Frame f = w.frames.back();
  const uint32_t back = f.returned & ~w.exited;
  Frame& caller = w.frames[w.frames.size() - 2];
  copy_args(w, w.prog->calls[w.prog->code[f.call_insn].target], back, caller, f, true);
  w.frames.pop_back();
  w.reg_top = f.reg_base;
  w.local_top = f.local_base;
  std::memcpy(w.pcs, f.caller_pcs, sizeof w.pcs);
  for_lanes(back, [&](unsigned l) { w.pcs[l] = f.ret_pc; });
  w.alive = (f.caller_alive | back) & ~w.exited;
  enter_top(w);
}

// Lanes leave for good (exit, or ret from the kernel).
void retire(Warp& w, uint32_t lanes) {
  w.exited |= lanes;
  w.alive &= ~lanes;
  for (Frame& f : w.frames) f.caller_alive &= ~lanes;
  w.block->live_threads -= popc(lanes);
}

// Runs a call: builtins at once, functions by pushing a frame. Returns false to reschedule.
bool do_call(Warp& w, const Insn& in, uint32_t exec, uint32_t group, uint32_t& pc) {
  const CallSite& cs = w.prog->calls[in.target];
  uint32_t callee = cs.callee;
  if (cs.indirect != kNone) callee = static_cast<uint32_t>(w.get(cs.indirect, static_cast<unsigned>(__builtin_ctz(exec))));
  const Func& fn = w.prog->funcs[callee];
  if (fn.builtin) {
    run_builtin(w, fn.builtin, cs, exec);
    ++pc;
    return true;
  }
  if (fn.external || fn.begin == fn.end) {
    raise(w, static_cast<unsigned>(__builtin_ctz(exec)), Errc::launch_failed,
          fmt::format("call of '{}', which the module declares but does not define", fn.name));
    return false;
  }
  for_lanes(group, [&](unsigned l) { w.pcs[l] = pc + 1; });
  const uint32_t caller_alive = w.alive & ~exec;
  uint32_t pcs[kLanes];
  std::memcpy(pcs, w.pcs, sizeof pcs);
  if (!push_frame(w, callee, static_cast<unsigned>(__builtin_ctz(exec)))) return false;
  Frame& f = w.frames.back();
  f.ret_pc = pc + 1;
  f.caller_alive = caller_alive;
  f.call_insn = pc;
  std::memcpy(f.caller_pcs, pcs, sizeof pcs);
  copy_args(w, cs, exec, w.frames[w.frames.size() - 2], f, false);
  w.alive = exec;
  pc = fn.begin;
  return exec == group;  // a partial call leaves the others outside: same group continues
}

}  // namespace

void raise(Warp& w, unsigned lane, Errc code, const std::string& what) {
  if (w.fault) return;
  Launch& L = *w.launch;
  const Block& b = *w.block;
  const unsigned t = w.index * kLanes + lane;
  const Insn* in = w.cur;
  w.fault = new Fault;  // owned by run_block, which moves it out
  w.fault->code = code;
  w.fault->what = fmt::format("kernel '{}', block ({},{},{}), thread ({},{},{}){}: {}", L.kernel_name, b.ctaid[0],
                              b.ctaid[1], b.ctaid[2], t % L.block[0], (t / L.block[0]) % L.block[1],
                              t / (L.block[0] * L.block[1]),
                              in ? fmt::format(", PTX line {} ({})", in->line, w.prog->opcodes[in->opcode]) : "", what);
  L.stop.store(true, std::memory_order_relaxed);
}

// The grid ran past its deadline (the fault is raised), or another block faulted.
static bool out_of_time(Warp& w, unsigned lane) {
  Launch& L = *w.launch;
  if (L.stop.load(std::memory_order_relaxed)) {
    w.alive = 0;  // another block faulted: this one stops where it is
    return true;
  }
  if (!L.deadline_ns) return false;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec < L.deadline_ns) return false;
  raise(w, lane, Errc::launch_timeout, "the grid ran past CUDA_SHIM_KERNEL_TIMEOUT");
  return true;
}

// Runs the warp until none of its lanes can run (all exited, or waiting at a barrier).
static void step(Warp& w) {
  const Program& P = *w.prog;
  uint32_t* pcs = w.pcs;
  for (;;) {
    const uint32_t run = w.alive & ~w.blocked;
    if (!run || w.fault) return;
    uint32_t pc = UINT32_MAX;
    for_lanes(run, [&](unsigned l) { pc = std::min(pc, pcs[l]); });
    uint32_t group = 0, next = UINT32_MAX;
    for_lanes(run, [&](unsigned l) {
      if (pcs[l] == pc) group |= 1u << l;
      else next = std::min(next, pcs[l]);
    });
    // Lanes waiting for their warp at this very instruction join the group.
    for_lanes(w.blocked, [&](unsigned l) {
      if (w.bar_id[l] == kWarpSyncBar && pcs[l] == pc) group |= 1u << l, w.blocked &= ~(1u << l);
    });
    uint32_t others = run & ~group;
    auto park = [&] { for_lanes(group, [&](unsigned l) { pcs[l] = pc; }); };
    // Instructions between looks at the clock and the stop flag. A cooperative grid's blocks each
    // have a host thread, and most of them spin at the grid barrier: they give the processor up
    // every few hundred instructions, so that the blocks still working get it.
    const uint32_t slice = w.launch->cooperative ? 1u << 9 : 1u << 16;
    uint32_t budget = slice;
    for (;;) {
      if (--budget == 0) [[unlikely]] {
        budget = slice;
        if (w.launch->cooperative) sched_yield();
        if (out_of_time(w, static_cast<unsigned>(__builtin_ctz(group)))) return;
      }
      const Insn& in = P.code[pc];
      w.cur = &in;
      const uint32_t exec = guarded(w, in, group);
      switch (in.flow) {
        case Flow::plain:
          if (exec) in.fn(w, in, exec);
          if (w.fault) return;
          ++pc;
          break;
        case Flow::bra:
          if (exec == group) {
            pc = in.target;
          } else if (exec == 0) {
            ++pc;
          } else {
            for_lanes(exec, [&](unsigned l) { pcs[l] = in.target; });
            for_lanes(group & ~exec, [&](unsigned l) { pcs[l] = pc + 1; });
            goto reschedule;
          }
          break;
        case Flow::exit:
        case Flow::ret:
          if (in.flow == Flow::ret && w.frames.size() > 1) {
            w.frames.back().returned |= exec;
            w.alive &= ~exec;
          } else if (exec) {
            retire(w, exec);
            release_barriers(*w.block);
          }
          group &= ~exec;
          if (!group) {
            if (w.frames.size() > 1 && w.alive == 0) pop_frame(w);
            goto next_group;
          }
          ++pc;
          break;
        case Flow::call:
          if (!exec) {
            ++pc;
            break;
          }
          {
            const size_t depth = w.frames.size();
            do_call(w, in, exec, group, pc);
            if (w.fault) return;
            if (w.frames.size() > depth) {  // entered: the group is the callers, the rest wait outside
              group = exec;
              others = 0;
              next = UINT32_MAX;
              continue;
            }
          }
          break;
        case Flow::bar: {
          const uint32_t id = static_cast<uint32_t>(in.op[1] != kNone ? w.get(in.op[1], static_cast<unsigned>(__builtin_ctz(group))) : 0) & 15;
          const uint32_t count = in.op[2] != kNone ? static_cast<uint32_t>(w.get(in.op[2], static_cast<unsigned>(__builtin_ctz(group)))) : 0;
          const bool wait = in.mod == 0;  // bar.sync / barrier.sync; bar.arrive does not wait; 2: bar.red
          ++pc;
          if (exec) {
            for_lanes(group, [&](unsigned l) { pcs[l] = pc; });
            if (in.mod == 2) {  // bar.red: the predicates join the barrier's reduction
              Block& b = *w.block;
              for_lanes(exec, [&](unsigned l) {
                const uint32_t p = ((w.get(in.op[3], l) & 1) != 0) != ((in.mod2 & 4) != 0);
                b.red_popc[id] += p, b.red_all[id] &= p, b.red_any[id] |= p;
              });
            }
            arrive(w, id, exec, count, wait || in.mod == 2);
            release_barriers(*w.block);
            if (wait || in.mod == 2) goto next_group;
          }
          break;
        }
        case Flow::warpsync: {
          // Every live lane the member mask names must be here; otherwise wait for them.
          const uint32_t members = in.op[5] != kNone ? static_cast<uint32_t>(w.get(in.op[5], static_cast<unsigned>(__builtin_ctz(group)))) : 0xffffffffu;
          // Lanes that arrived here earlier and wait join the group.
          for_lanes(w.blocked, [&](unsigned l) {
            if (w.bar_id[l] == kWarpSyncBar && pcs[l] == pc) group |= 1u << l, w.blocked &= ~(1u << l);
          });
          const uint32_t missing = members & w.alive & ~group;
          // Members still running elsewhere: wait for them. Members blocked at a barrier cannot
          // come (the GPU's behaviour is undefined): go on with the lanes here.
          if (missing & ~w.blocked) {
            w.blocked |= group;
            for_lanes(group, [&](unsigned l) { w.bar_id[l] = kWarpSyncBar; pcs[l] = pc; });
            goto next_group;
          }
          if (const uint32_t e = guarded(w, in, group) & members) in.fn(w, in, e);
          if (w.fault) return;
          ++pc;
          break;
        }
        case Flow::brx:
        case Flow::trap:
          raise(w, static_cast<unsigned>(__builtin_ctz(exec ? exec : group)), Errc::launch_failed,
                in.flow == Flow::trap ? "the kernel executed trap" : "brx.idx is not supported");
          return;
      }
      // Reconvergence: lanes parked at this pc join; jumping past parked lanes lets them run first.
      if (others) {
        if (pc == next) {
          for_lanes(others, [&](unsigned l) {
            if (pcs[l] == pc) group |= 1u << l;
          });
          others &= ~group;
          next = UINT32_MAX;
          for_lanes(others, [&](unsigned l) { next = std::min(next, pcs[l]); });
        } else if (pc > next) {
          park();
          break;
        }
      }
      continue;
    reschedule:  // the lanes' counters are stored already
      break;
    }
  next_group:;
  }
}

// Lays out block `linear` in `b` (reusing its warps' storage) and runs it to the end.
bool run_block(Launch& L, uint32_t linear, Block& b, std::vector<uint8_t>& shm, std::vector<uint8_t>& loc, MemView& mem,
               Fault& fault) {
  const Program& P = *L.prog;
  const Func& k = P.funcs[L.kernel];
  b.launch = &L;
  b.mem = &mem;
  b.linear = linear;
  b.ctaid[0] = linear % L.grid[0];
  b.ctaid[1] = (linear / L.grid[0]) % L.grid[1];
  b.ctaid[2] = linear / (L.grid[0] * L.grid[1]);
  b.threads = L.block[0] * L.block[1] * L.block[2];
  b.live_threads = b.threads;
  std::fill(std::begin(b.arrived), std::end(b.arrived), 0u);
  std::fill(std::begin(b.expected), std::end(b.expected), 0u);
  std::fill(std::begin(b.red_popc), std::end(b.red_popc), 0u);
  std::fill(std::begin(b.red_all), std::end(b.red_all), 1u);
  std::fill(std::begin(b.red_any), std::end(b.red_any), 0u);
  // A block's shared memory comes in 128-byte units, as on a GPU: a vector load that reaches into
  // the last unit's padding (numba-cuda's dynamic shared slices) reads it without a fault.
  const uint32_t shared = (L.shared_total + 127) / 128 * 128;
  if (shm.size() < shared) shm.resize(shared);
  if (shared) std::memset(shm.data(), 0, shared);  // no shared memory: no buffer
  b.shared = shm.data();
  b.shared_size = shared;
  if (b.race) b.race->reset(shared);
  b.local_stride = L.local_stride;
  const size_t lbytes = size_t{b.threads} * L.local_stride;
  if (loc.size() < lbytes) loc.resize(lbytes);
  b.local = loc.data();
  const uint32_t nwarps = (b.threads + kLanes - 1) / kLanes;
  if (b.warps.size() < nwarps) b.warps.resize(nwarps);
  for (uint32_t wi = 0; wi < nwarps; ++wi) {
    Warp& w = b.warps[wi];
    w.launch = &L;
    w.block = &b;
    w.prog = &P;
    w.index = wi;
    const uint32_t n = std::min(kLanes, b.threads - wi * kLanes);
    w.alive = n == kLanes ? 0xffffffffu : (1u << n) - 1;
    w.exited = 0;
    w.blocked = 0;
    w.fault = nullptr;
    w.cur = nullptr;
    if (L.block[1] == 1 && L.block[2] == 1) {  // one-dimensional blocks: no divisions
      for (unsigned l = 0; l < kLanes; ++l) {
        w.tid[0][l] = wi * kLanes + l;
        w.tid[1][l] = w.tid[2][l] = 0;
        w.pcs[l] = k.begin;
      }
    } else {
      for (unsigned l = 0; l < kLanes; ++l) {
        const uint32_t t = wi * kLanes + l;
        w.tid[0][l] = t % L.block[0];
        w.tid[1][l] = (t / L.block[0]) % L.block[1];
        w.tid[2][l] = t / (L.block[0] * L.block[1]);
        w.pcs[l] = k.begin;
      }
    }
    w.frames.clear();
    w.reg_top = 0;
    w.local_top = 0;
    push_frame(w, L.kernel, 0);
  }
  if (nwarps < b.warps.size()) b.warps.resize(nwarps);
  for (;;) {
    bool any_alive = false, progressed = false;
    for (Warp& w : b.warps) {
      if (!w.alive) continue;
      any_alive = true;
      if (w.alive & ~w.blocked) {
        step(w);
        progressed = true;
      }
      if (w.fault) {
        fault = std::move(*w.fault);
        delete w.fault;
        w.fault = nullptr;
        return false;
      }
      if (L.stop.load(std::memory_order_relaxed)) return true;
    }
    if (!any_alive) return true;
    if (!progressed && !release_barriers(b) && !release_warp_syncs(b)) {
      Warp& w = *std::find_if(b.warps.begin(), b.warps.end(), [](const Warp& x) { return x.alive != 0; });
      w.cur = nullptr;
      raise(w, static_cast<unsigned>(__builtin_ctz(w.alive)), Errc::launch_failed,
            "every live thread of the block waits (a barrier some threads never reach, or a warp-synchronous "
            "instruction whose member lanes diverged): on a GPU the kernel would hang");
      fault = std::move(*w.fault);
      delete w.fault;
      w.fault = nullptr;
      return false;
    }
  }
}

}  // namespace cuda_shim::exec
