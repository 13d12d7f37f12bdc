// The kernel engine's internal form: what the PTX front end (ptx_parse.cpp, ptx_lower.cpp)
// produces and the executor (interp*.cpp) runs. One instruction array per module; every
// function is a range of it, so a program counter names an instruction module-wide.
//
// Operands are slots: a register of the current frame (one 64-bit value per lane, the low bits
// of the instruction's type meaningful) or, with kConst set, a module constant (the same for
// every lane: immediates and symbol addresses). An instruction carries the handler the lowering
// chose for its opcode, type and modifiers, so the executor dispatches once per instruction and
// warp, never per lane; a JIT can later replace handlers function by function without touching
// the front end.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cuda_shim::exec {

struct Warp;
struct Insn;
using Handler = void (*)(Warp& w, const Insn& in, uint32_t mask);

constexpr uint32_t kConst = 0x80000000u;  // operand slot flag: a module constant
constexpr uint32_t kNone = 0xffffffffu;   // no operand

// Element types. The order of the integer ones is relied on (is_signed, width).
enum class Ty : uint8_t {
  none, pred,
  b8, b16, b32, b64, b128,
  u8, u16, u32, u64,
  s8, s16, s32, s64,
  f16, f16x2, bf16, bf16x2, tf32, f32, f64,
  e4m3x2, e5m2x2,
};
unsigned ty_bytes(Ty t) noexcept;
bool ty_signed(Ty t) noexcept;
bool ty_float(Ty t) noexcept;  // f16, bf16, f32, f64 (scalar)
const char* ty_name(Ty t) noexcept;

// State spaces as PTX names them; `kparam` is a kernel's parameter buffer, `fparam` a function's
// parameters and a call sequence's arguments (per lane, in the frame's local stack).
enum class Space : uint8_t { generic, global, shared, local, constant, kparam, fparam, sreg };

// Special registers (mov d, %tid.x ...).
enum class Sreg : uint8_t {
  tid_x, tid_y, tid_z, ntid_x, ntid_y, ntid_z, ctaid_x, ctaid_y, ctaid_z, nctaid_x, nctaid_y, nctaid_z,
  laneid, warpid, nwarpid, smid, nsmid, gridid, clock, clock_hi, clock64, globaltimer, globaltimer_lo,
  globaltimer_hi, lanemask_eq, lanemask_le, lanemask_lt, lanemask_ge, lanemask_gt, dynamic_smem_size,
  total_smem_size, cluster_ctarank, cluster_nctarank, clusterid_x, clusterid_y, clusterid_z,
  nclusterid_x, nclusterid_y, nclusterid_z, cluster_ctaid_x, cluster_ctaid_y, cluster_ctaid_z,
  cluster_nctaid_x, cluster_nctaid_y, cluster_nctaid_z, is_explicit_cluster, envreg, envreg1, envreg2, pm, aggr_smem_size,
  reserved_smem_offset_begin, reserved_smem_offset_end, reserved_smem_offset_cap,
};

// What the executor's loop must handle itself (control flow and anything that blocks or
// reschedules); every other instruction is `plain` and runs through its handler.
enum class Flow : uint8_t { plain, bra, brx, call, ret, exit, bar, warpsync, trap };

struct Insn {
  Handler fn = nullptr;
  Flow flow = Flow::plain;
  Ty ty = Ty::none;    // the instruction's (first) type
  Ty ty2 = Ty::none;   // a second type (cvt's source, setp's comparison type, ...)
  Space space = Space::generic;
  uint8_t mod = 0;     // opcode-specific: comparison, rounding, atomic operation, shfl mode ...
  uint8_t mod2 = 0;    // opcode-specific: a second modifier (boolean op of setp, ...)
  uint8_t flags = 0;   // opcode-specific bits (ftz, sat, ...): see interp.hpp
  uint8_t vec = 1;     // vector width of ld/st/mov
  bool guard_neg = false;
  uint32_t guard = kNone;  // predicate slot, or kNone
  uint32_t op[8] = {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone};  // operands (destinations first)
  int64_t imm = 0;     // address offset, barrier thread count, ...
  uint32_t target = 0; // branch target pc; call: callee index
  uint32_t line = 0;   // PTX line, for faults and explanations
  uint16_t opcode = 0; // index into the opcode names (explanations)
};

// A function or kernel: a range of the module's instructions and its frame's sizes.
struct Func {
  std::string name;
  bool kernel = false;
  bool external = false;     // .extern .func: a builtin (vprintf, __assertfail) or unresolved
  uint32_t begin = 0, end = 0;  // [begin, end) in Program::code
  uint32_t nregs = 0;        // register slots of a frame
  uint32_t local_bytes = 0;  // frame's local stack bytes per lane (.local, parameters, arguments)
  uint32_t shared_bytes = 0; // static shared memory the kernel reaches (kernels)
  uint32_t param_bytes = 0;  // kernels: parameter buffer size
  // Functions: where each parameter lies in the frame's local stack, and the return values.
  std::vector<uint32_t> param_off, param_size;
  std::vector<uint32_t> ret_off, ret_size;
  std::string unsupported;   // non-empty: an instruction the engine refuses ("mma.sync… at line 12")
  bool grid_ws = false;      // reads %envreg1/%envreg2: cooperative groups' grid barrier
  int builtin = 0;           // external functions the engine provides (Builtin)
};

// A call: the callee and where the caller's argument and result variables lie in the caller's
// frame (local stack offsets), in the callee's parameter order.
struct CallSite {
  uint32_t callee = 0;
  std::vector<uint32_t> arg_off, arg_size;
  std::vector<uint32_t> ret_off, ret_size;
  uint32_t indirect = kNone;  // call through a register (the callee's index), or kNone
};

enum Builtin : int { kNoBuiltin = 0, kVprintf = 1, kAssertFail = 2, kMalloc = 3, kFree = 4 };

struct Program {
  std::vector<Insn> code;
  std::vector<Func> funcs;
  std::vector<CallSite> calls;         // Insn::target of Flow::call
  std::vector<uint64_t> consts;        // module constants (operand slots with kConst)
  std::vector<std::string> opcodes;    // opcode text by Insn::opcode, for explanations
  uint32_t shared_bytes = 0;           // module-scope .shared (every kernel reaches it)
  int find(const std::string& name) const {
    for (size_t i = 0; i < funcs.size(); ++i)
      if (funcs[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace cuda_shim::exec
