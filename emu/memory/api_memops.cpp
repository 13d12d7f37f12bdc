// Driver entries: stream memory operations (cuStreamWriteValue32/64, cuStreamWaitValue32/64 and
// cuStreamBatchMemOp, the _v2 symbols CUDA 13's header names; the CUDA 8 symbols stay
// NOT_SUPPORTED, as driver 580 answers). A write stores its value when the stream reaches it; a
// wait holds its stream until the word satisfies the condition, whoever writes it (another
// stream, the host, a kernel, another process through IPC). Rules marked "measured" come from
// the H200 (driver 580, CUDA 13.0; tests/probe/cases/memops.cases):
//  - addresses: cuMemAlloc'd device memory, pinned or registered host memory, 4- or 8-byte
//    aligned, inside the allocation; memory pools' allocations, managed, pageable, freed and NULL
//    addresses are INVALID_VALUE (VMM mappings were not measured: accepted);
//  - writes take flags 0 only (NO_MEMORY_BARRIER too is refused); waits GEQ, EQ, AND, NOR;
//    CU_STREAM_WAIT_VALUE_FLUSH and FLUSH_REMOTE_WRITES are NOT_SUPPORTED (the H200 cannot);
//  - a batch is checked whole before any operation is queued; count 0 succeeds; 256 operations
//    are refused; barriers take flags 0 or 1 (SYS, GPU); batch flags must be 0;
//  - every stream is accepted (NULL and legacy included); under capture each call becomes one
//    batch-memory-operation node.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "memory/copy.hpp"

namespace cuda_shim::api {
namespace {

constexpr unsigned kMaxBatch = 255;  // measured: 256 refused

// One checked operation: where (emulator view), and what.
struct MemOp {
  CUstreamBatchMemOpParams p{};
  char* at = nullptr;
  mem::RangePtr keep;  // holds the memory mapped while the stream has the operation
};

Errc check_address(CUdeviceptr a, unsigned bytes, const char* api, const std::string& what, MemOp& op) {
  if (!a) return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
  if (a % bytes)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is not {}-byte aligned", api, what, a, bytes);
  mem::Side s;
  TRY(mem::resolve(a, mem::Space::device, mem::Extent{bytes, 1, 1, bytes, bytes}, api, what.c_str(), s));
  // Measured: managed memory and memory pools' allocations (cuMemAllocAsync, cuda.core's
  // Device.allocate) are refused.
  const char* refused = s.pageable()                                ? "pageable host memory"
                        : s.r->kind == mem::Kind::managed          ? "managed memory"
                        : s.r->kind == mem::Kind::pool             ? "an allocation of a memory pool"
                                                                   : nullptr;
  if (refused)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is {}: stream memory operations take cuMemAlloc'd device memory "
                "and pinned or registered host memory", api, what, a, refused);
  op.at = s.p;
  op.keep = s.r;
  return Errc::success;
}

Errc check_op(const CUstreamBatchMemOpParams& p, size_t i, const char* api, MemOp& op) {
  const std::string what = i == SIZE_MAX ? "addr" : fmt::format("paramArray[{}].address", i);
  op.p = p;
  switch (p.operation) {
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      if (p.writeValue.flags != 0)  // measured: 1 (NO_MEMORY_BARRIER), 2, 3, 0x80000000
        return fail(Errc::invalid_value, "{}: write flags {:#x}: only 0 is accepted on this device", api,
                    p.writeValue.flags);
      return check_address(p.writeValue.address, p.operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8, api, what, op);
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64: {
      const unsigned f = p.waitValue.flags;
      if ((f & ~unsigned{CU_STREAM_WAIT_VALUE_FLUSH}) > CU_STREAM_WAIT_VALUE_NOR)  // measured: before FLUSH
        return fail(Errc::invalid_value, "{}: wait flags {:#x}: the condition must be GEQ 0, EQ 1, AND 2 or NOR 3", api, f);
      if (f & CU_STREAM_WAIT_VALUE_FLUSH)  // measured: the H200 has no CAN_FLUSH_REMOTE_WRITES
        return fail(Errc::not_supported, "{}: CU_STREAM_WAIT_VALUE_FLUSH: this device cannot flush remote writes", api);
      return check_address(p.waitValue.address, p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? 4 : 8, api, what, op);
    }
    case CU_STREAM_MEM_OP_BARRIER:
      if (p.memoryBarrier.flags > 1)  // measured: SYS 0 and GPU 1 pass, 2 and 3 do not
        return fail(Errc::invalid_value, "{}: barrier flags {}: CU_STREAM_MEMORY_BARRIER_TYPE_SYS (0) or _GPU (1)", api,
                    p.memoryBarrier.flags);
      return Errc::success;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      return fail(Errc::not_supported, "{}: CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: this device cannot flush remote writes",
                  api);
    default:
      return fail(Errc::invalid_value, "{}: operation {} is not a CUstreamBatchMemOpType", api,
                  static_cast<int>(p.operation));
  }
}

// Wait conditions (documented): GEQ compares as a signed difference, so it survives wrapping.
template <class T>
bool met(T v, T want, unsigned cond) {
  using S = std::make_signed_t<T>;
  switch (cond) {
    case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<S>(v - want) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return v == want;
    case CU_STREAM_WAIT_VALUE_AND: return (v & want) != 0;
    default: return static_cast<T>(~(v | want)) != 0;  // NOR
  }
}

// The word is guest memory: any agent may write or read it at any time, atomically or not (a
// copy, a fill, a kernel, another process), as on a GPU. These accesses are atomic on the host
// and left out of ThreadSanitizer's view, which would call every such meeting a race.
template <class T>
__attribute__((no_sanitize("thread"))) T load_word(const char* at) {
  return __atomic_load_n(reinterpret_cast<const T*>(at), __ATOMIC_ACQUIRE);
}
template <class T>
__attribute__((no_sanitize("thread"))) void store_word(char* at, T v) {
  __atomic_store_n(reinterpret_cast<T*>(at), v, __ATOMIC_RELEASE);
}

template <class T>
void wait_word(const char* at, T want, unsigned cond, const Context* ctx) {
  // Spin briefly, then sleep in growing steps: a wait may last as long as its writer takes.
  auto pause = std::chrono::microseconds(0);
  while (!met(load_word<T>(at), want, cond)) {
    if (ctx && ctx->faulted()) return;  // the context is dead: the stream's work is void
    if (pause.count() == 0) {
      std::this_thread::yield();
      pause = std::chrono::microseconds(1);
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

void run(const MemOp& op, const Context* ctx) {
  const CUstreamBatchMemOpParams& p = op.p;
  switch (p.operation) {
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      store_word<uint32_t>(op.at, p.writeValue.value);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      store_word<uint64_t>(op.at, p.writeValue.value64);
      break;
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      wait_word<uint32_t>(op.at, p.waitValue.value, p.waitValue.flags, ctx);
      break;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      wait_word<uint64_t>(op.at, p.waitValue.value64, p.waitValue.flags, ctx);
      break;
    default:  // a barrier: the stream's operations already complete in order
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

Errc batch(CUstream h, bool pt, unsigned count, CUstreamBatchMemOpParams* params, unsigned flags, const char* api);

// Checked operations go to the stream as one operation, or (capturing) as one node.
Errc submit(CUstream h, bool pt, std::vector<MemOp> ops, const CUstreamBatchMemOpParams* params, unsigned count,
            const char* api) {
  std::shared_ptr<Stream> st;
  TRY(resolve_stream(h, pt, api, st));
  if (cap::g_open.load(std::memory_order_acquire) != 0) [[unlikely]] {
    std::shared_ptr<cap::Sequence> seq;
    TRY(cap::intercept(*st, api, seq));
    if (seq) {
      cap::Spec sp;
      sp.kind = cap::Kind::batch_mem_op;
      auto kept = std::make_shared<std::vector<CUstreamBatchMemOpParams>>(params, params + count);
      sp.keep = kept;
      sp.issue = [kept](CUstream s) {
        return batch(s, false, static_cast<unsigned>(kept->size()), kept->data(), 0, "cuGraphLaunch");
      };
      return seq->add(*st, std::move(sp), api);
    }
  }
  if (ops.empty()) return Errc::success;
  const Context* ctx = st->ctx();
  // A wait never runs on the caller's thread: it may need the caller to write its word.
  const bool waits = std::any_of(ops.begin(), ops.end(), [](const MemOp& op) {
    return op.p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 || op.p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
  });
  st->enqueue([ops = std::move(ops), ctx] {
    for (const MemOp& op : ops) run(op, ctx);
  }, {}, /*inline_ok=*/!waits);
  return Errc::success;
}

Errc one(CUstream h, bool pt, const CUstreamBatchMemOpParams& p, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::vector<MemOp> ops(1);
  TRY(check_op(p, SIZE_MAX, api, ops[0]));
  return submit(h, pt, std::move(ops), &p, 1, api);
}

CUstreamBatchMemOpParams value_op(CUstreamBatchMemOpType t, CUdeviceptr a, uint64_t v, unsigned flags) {
  CUstreamBatchMemOpParams p;
  std::memset(&p, 0, sizeof p);
  p.writeValue.operation = t;
  p.writeValue.address = a;
  p.writeValue.value64 = v;
  p.writeValue.flags = flags;
  return p;
}

Errc batch(CUstream h, bool pt, unsigned count, CUstreamBatchMemOpParams* params, unsigned flags, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (count == 0) return Errc::success;  // measured
  // A NULL array crashes NVIDIA's driver (measured); the documented error here.
  if (!params) return fail(Errc::invalid_value, "{}: paramArray is NULL and count is {}", api, count);
  if (count > kMaxBatch) return fail(Errc::invalid_value, "{}: count {} is more than {}", api, count, kMaxBatch);
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags = {:#x} must be 0", api, flags);
  std::vector<MemOp> ops(count);
  for (unsigned i = 0; i < count; ++i) TRY(check_op(params[i], i, api, ops[i]));
  return submit(h, pt, std::move(ops), params, count, api);
}

}  // namespace

Errc cuStreamWriteValue32_v2(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) noexcept {
  return one(s, false, value_op(CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags), "cuStreamWriteValue32");
}
Errc cuStreamWriteValue32_v2_ptsz(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) noexcept {
  return one(s, true, value_op(CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags), "cuStreamWriteValue32");
}
Errc cuStreamWriteValue64_v2(CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags) noexcept {
  return one(s, false, value_op(CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags), "cuStreamWriteValue64");
}
Errc cuStreamWriteValue64_v2_ptsz(CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags) noexcept {
  return one(s, true, value_op(CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags), "cuStreamWriteValue64");
}
Errc cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) noexcept {
  return one(s, false, value_op(CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags), "cuStreamWaitValue32");
}
Errc cuStreamWaitValue32_v2_ptsz(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) noexcept {
  return one(s, true, value_op(CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags), "cuStreamWaitValue32");
}
Errc cuStreamWaitValue64_v2(CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags) noexcept {
  return one(s, false, value_op(CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags), "cuStreamWaitValue64");
}
Errc cuStreamWaitValue64_v2_ptsz(CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags) noexcept {
  return one(s, true, value_op(CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags), "cuStreamWaitValue64");
}
Errc cuStreamBatchMemOp_v2(CUstream s, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                           unsigned int flags) noexcept {
  return batch(s, false, count, paramArray, flags, "cuStreamBatchMemOp");
}
Errc cuStreamBatchMemOp_v2_ptsz(CUstream s, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                                unsigned int flags) noexcept {
  return batch(s, true, count, paramArray, flags, "cuStreamBatchMemOp");
}

}  // namespace cuda_shim::api
