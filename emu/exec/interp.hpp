// The executor's state: a grid's launch, a block, a warp of 32 lanes. A warp runs the lanes
// that share the lowest program counter together (min-PC scheduling): divergent paths run
// one after the other and lanes reconverge where their counters meet again, which gives PTX's
// independent-thread semantics for structured and unstructured control flow alike. A block's
// warps run on one host thread, each until it blocks (barrier, exit); blocks spread over the
// host's threads.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/errc.hpp"
#include "exec/ir.hpp"
#include "exec/memory.hpp"

namespace cuda_shim {
class Context;
}

namespace cuda_shim::exec {

constexpr unsigned kLanes = 32;

// Instruction flag bits (Insn::flags).
enum : uint8_t {
  kFtz = 1, kSat = 2, kApprox = 4, kHi = 8, kWide = 16, kUni = 32, kNaN = 64, kRelu = 128,
};
// Rounding (Insn::mod for arithmetic and cvt): 0 default, then IEEE and integer modes.
enum : uint8_t { kRndDefault = 0, kRn, kRz, kRm, kRp, kRni, kRzi, kRmi, kRpi, kRna };

struct Fault {
  Errc code = Errc::success;
  std::string what;  // the explanation: kernel, block, thread, PTX line, address, nearest allocation
};

struct Launch;

// A call frame: where its registers and local stack begin, and what the caller's lanes were
// doing when the call's lanes entered it.
struct Frame {
  uint32_t func = 0;
  uint32_t reg_base = 0;    // slots
  uint32_t local_base = 0;  // bytes, in each lane's local stack
  uint32_t ret_pc = 0;
  uint32_t caller_alive = 0;  // lanes of the caller that did not enter
  uint32_t returned = 0;      // lanes that executed ret
  uint32_t call_insn = 0;     // the call, for its arguments and results
  uint32_t caller_pcs[kLanes];
};

struct Block;
class Racecheck;

struct Warp {
  Launch* launch = nullptr;
  Block* block = nullptr;
  const Program* prog = nullptr;
  uint32_t index = 0;       // within the block
  uint32_t alive = 0;       // lanes that exist in the current frame and have not exited
  uint32_t exited = 0;
  uint32_t blocked = 0;     // lanes waiting at a barrier
  uint32_t bar_id[kLanes];  // which barrier each blocked lane waits at
  uint32_t pcs[kLanes];
  uint32_t tid[3][kLanes];  // %tid per lane
  std::vector<uint64_t> regs;   // register stack: frame after frame, slot-major, 32 lanes each
  std::vector<Frame> frames;
  uint32_t reg_top = 0;         // slots in use
  uint32_t local_top = 0;       // bytes in use of each lane's local stack
  uint64_t* fr = nullptr;       // the current frame's registers
  uint32_t local_base = 0;      // the current frame's local stack base
  const Insn* cur = nullptr;    // the instruction running (faults name it)
  Fault* fault = nullptr;       // set by a handler that faults; the loop stops the warp

  // Operand access: a frame register (32 lanes) or a module constant (stride 0).
  const uint64_t* src(uint32_t slot, unsigned& stride) const {
    if (slot & kConst) {
      stride = 0;
      return &prog->consts[slot & ~kConst];
    }
    stride = 1;
    return fr + size_t{slot} * kLanes;
  }
  uint64_t get(uint32_t slot, unsigned lane) const {
    return (slot & kConst) ? prog->consts[slot & ~kConst] : fr[size_t{slot} * kLanes + lane];
  }
  uint64_t* dst(uint32_t slot) { return fr + size_t{slot} * kLanes; }
  void set(uint32_t slot, unsigned lane, uint64_t v) { fr[size_t{slot} * kLanes + lane] = v; }
  uint32_t lane_id_mask() const { return alive; }
};

struct Block {
  Launch* launch = nullptr;
  uint32_t ctaid[3] = {0, 0, 0};
  uint32_t linear = 0;
  std::vector<Warp> warps;
  uint8_t* shared = nullptr;    // static + dynamic shared memory
  uint32_t shared_size = 0;
  uint8_t* local = nullptr;     // per-lane local stacks: thread t at local + t * local_stride
  uint32_t local_stride = 0;
  uint32_t threads = 0;
  // Barriers (bar.sync/barrier.sync/bar.arrive): threads arrived and the count expected.
  uint32_t arrived[16] = {};
  uint32_t expected[16] = {};
  uint32_t live_threads = 0;
  // bar.red: what the arriving threads' predicates add up to, and the last released result
  // (read by each waiting thread once it runs again, before it can reach the barrier anew).
  uint32_t red_popc[16] = {}, red_all[16] = {}, red_any[16] = {};
  uint32_t res_popc[16] = {}, res_all[16] = {}, res_any[16] = {};
  MemView* mem = nullptr;       // the host thread's view of global memory
  Racecheck* race = nullptr;    // CUDA_SHIM_STRICT: the host thread's shared-memory race check
};

struct Launch {
  const Program* prog = nullptr;
  uint32_t kernel = 0;
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint32_t dyn_shared = 0;
  uint32_t shared_total = 0;   // static + dynamic bytes a block has
  uint32_t local_stride = 0;   // bytes of local stack per thread
  std::vector<uint8_t> params; // the kernel's parameter buffer
  std::atomic<bool> stop{false};
  int64_t deadline_ns = 0;     // CLOCK_MONOTONIC time past which the grid times out; 0: never
  std::string kernel_name;
  bool racecheck = false;      // CUDA_SHIM_STRICT: shared-memory races are reported (racecheck.hpp)
  // Every block runs at once, on a thread of its own: a cooperative launch, or a kernel that uses
  // cooperative groups' grid barrier (which works on a GPU whenever the grid fits at once).
  bool cooperative = false;
  uint64_t resident_limit = 0;  // non-zero: the grid has more blocks than fit at once (refused when run)
  // The grid workspace, which %envreg1:%envreg2 point at (windows().grid_ws) in every launch.
  alignas(64) uint8_t grid_ws[kGridWorkspace] = {};
  Context* ctx = nullptr;      // the context it runs in (the device heap's)
  uint64_t stream_id = 0;      // the stream it runs on (managed memory attached elsewhere is reported)
  // Device-side printf, gathered in order of completion and printed when the grid ends.
  std::string printf_out;
  std::atomic_flag printf_lock = ATOMIC_FLAG_INIT;
};

// Runs block `linear` of the launch to completion (or a fault). Scratch is reused across blocks
// of one host thread. Returns false with *fault set when the block faulted.
bool run_block(Launch& l, uint32_t linear, Block& scratch, std::vector<uint8_t>& shared_mem,
               std::vector<uint8_t>& local_mem, MemView& mem, Fault& fault);

// Faults: record the first in the launch and stop every block.
void raise(Warp& w, unsigned lane, Errc code, const std::string& what);

// The lanes of `mask`, fast when all 32 are set (the loop then vectorizes).
template <class F>
[[gnu::always_inline]] inline void for_lanes(uint32_t mask, F&& f) {
  if (mask == 0xffffffffu) {
    for (unsigned l = 0; l < kLanes; ++l) f(l);
  } else {
    for (uint32_t m = mask; m; m &= m - 1) f(static_cast<unsigned>(__builtin_ctz(m)));
  }
}

// The handler for a lowered instruction (ops.cpp and friends); null: unknown opcode.
Handler handler_for(const Insn& in, std::string_view opcode);

}  // namespace cuda_shim::exec
