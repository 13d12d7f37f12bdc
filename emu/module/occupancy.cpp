// The occupancy calculator: cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags),
// cuOccupancyMaxPotentialBlockSize(WithFlags) and cuOccupancyAvailableDynamicSMemPerBlock, from
// the kernel's registers, shared memory and bounds and the device's per-SM limits. The rules
// were fitted to an H200's answers (driver 580) for kernels of known registers and shared memory:
// all 560 block counts of tools/probe-style sweeps (block sizes 1-1025, dynamic shared memory
// 0-228 KiB, five kernels), every potential block size, the carveout and opt-in cases:
//  - a block needs ceil(threads / 32) warps, each of ceil(regs * 32 / 256) * 256 registers from one
//    of the SM's 4 register partitions, and static + dynamic shared memory + the reserved 1 KiB;
//  - blocks per SM: the least of the warp limit (64 warps), the block limit (32), the register
//    limit and the shared-memory limit, where the SM's shared memory is its largest configuration,
//    or with a preferred carveout the smallest configuration holding the carveout and one block;
//  - more dynamic shared memory than the kernel may use, or more threads than the device's block
//    limit (not the kernel's own bound), gives 0 blocks, not an error.
// A PTX kernel's registers are estimated (ptx_regs.hpp), so its answers are as close as that.
#include <cuda.h>

#include <algorithm>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "module/attributes.hpp"
#include "module/module.hpp"
#include "module/occupancy.hpp"

namespace cuda_shim::module {
namespace {

constexpr int kRegisterUnit = 256;   // registers are allocated per warp in units of 256
constexpr int kRegisterPartitions = 4;
constexpr int kSharedUnit = 128;     // shared memory is allocated in units of 128 bytes

struct Sm {  // what one SM of the device holds
  int warps, blocks, regs, shared, reserved, block_threads, count;
  explicit Sm(const Device& d)
      : warps(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / 32),
        blocks(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)),
        regs(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)),
        shared(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)),
        reserved(d.attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)),
        block_threads(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)),
        count(d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)) {}
};

int64_t round_up(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

// The SM's shared memory for this kernel: its largest configuration, or with a preferred carveout
// (percent of the largest) the smallest configuration that holds the carveout and one block.
int64_t shared_config(const Sm& sm, int carveout, int64_t per_block) {
  if (carveout < 0) return sm.shared;
  static const int kConfigsKiB[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  const int64_t want = std::max<int64_t>(int64_t{sm.shared} * carveout / 100, per_block);
  for (int kib : kConfigsKiB)
    if (int64_t{kib} * 1024 >= want && int64_t{kib} * 1024 <= sm.shared) return int64_t{kib} * 1024;
  return sm.shared;
}

// Blocks of the kernel by warps, blocks and registers alone (shared memory apart).
int blocks_without_shared(const KernelDesc& k, const Sm& sm, int warps) {
  int n = std::min(sm.blocks, sm.warps / warps);
  if (k.num_regs > 0) {
    const int64_t per_warp = round_up(int64_t{k.num_regs} * 32, kRegisterUnit);
    const int64_t warps_by_regs = (sm.regs / kRegisterPartitions / per_warp) * kRegisterPartitions;
    n = std::min<int64_t>(n, warps_by_regs / warps);
  }
  return n;
}

}  // namespace

int active_blocks(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn) {
  const Sm sm(d);
  if (threads > sm.block_threads) return 0;
  if (dyn > static_cast<size_t>(max_dynamic_shared(k, s, d))) return 0;
  const int warps = (threads + 31) / 32;
  int n = blocks_without_shared(k, sm, warps);
  const int64_t per_block = round_up(int64_t{k.shared_bytes} + static_cast<int64_t>(dyn) + sm.reserved, kSharedUnit);
  n = std::min<int64_t>(n, shared_config(sm, s.carveout, per_block) / per_block);
  return std::max(n, 0);
}

uint64_t resident_blocks(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn) {
  return uint64_t(active_blocks(k, s, d, threads, dyn)) * Sm(d).count;
}

// The block size with the most resident threads per SM (the largest such, searching down from
// the limit in warp steps, the limit itself first), and the grid that fills the device with it.
void potential_block_size(const KernelDesc& k, const FuncSettings& s, const Device& d, CUoccupancyB2DSize b2d,
                          size_t dyn, int limit, int& grid, int& block) {
  const Sm sm(d);
  int most = std::min(sm.block_threads, max_threads(k, d));
  if (limit > 0) most = std::min(most, limit);
  int best_threads = 0, best_blocks = 0;
  block = 0;
  for (int aligned = static_cast<int>(round_up(most, 32)); aligned > 0; aligned -= 32) {
    const int t = std::min(most, aligned);
    const int n = active_blocks(k, s, d, t, b2d ? b2d(t) : dyn);
    if (n * t > best_threads) best_threads = n * t, best_blocks = n, block = t;
    if (best_threads >= sm.warps * 32) break;  // the SM is full: no smaller block does better
  }
  grid = best_blocks * sm.count;
}

// Dynamic shared memory each of `blocks` blocks of `threads` may have with all of them resident:
// the SM's share per block less static shared memory (the reserved 1 KiB is not taken off: the
// driver's answer), within the kernel's maximum. INVALID_VALUE when the blocks cannot be resident.
Errc available_dynamic_shared(const KernelDesc& k, const FuncSettings& s, const Device& d, int blocks, int threads,
                              size_t& out, const char* api) {
  const Sm sm(d);
  if (blocks <= 0 || threads <= 0 || threads > sm.block_threads)
    return fail(Errc::invalid_value, "{}: {} blocks of {} threads: both must be positive, at most {} threads a block",
                api, blocks, threads, sm.block_threads);
  const int warps = (threads + 31) / 32;
  const int64_t static_need = round_up(int64_t{k.shared_bytes} + sm.reserved, kSharedUnit);
  if (blocks > blocks_without_shared(k, sm, warps) || int64_t{blocks} * static_need > sm.shared)
    return fail(Errc::invalid_value, "{}: {} blocks of {} threads of kernel '{}' cannot be resident on one SM at once",
                api, blocks, threads, k.name);
  const int64_t share = int64_t{sm.shared} / blocks - k.shared_bytes;
  out = static_cast<size_t>(std::clamp<int64_t>(share, 0, max_dynamic_shared(k, s, d)));
  return Errc::success;
}

}  // namespace cuda_shim::module

namespace cuda_shim::api {
namespace {

// The function and its module's device, or the driver's error (measured: NULL is INVALID_HANDLE).
// A CUkernel stands for its function in the current context, as at launch (cuBLAS passes one).
template <class F>
Errc with_function(CUfunction h, const char* api, F&& f) {
  TRY(Driver::get().require_init(api));
  std::shared_ptr<module::Function> fn;
  TRY(module::resolve_function(h, api, fn, /*accept_kernel=*/true));
  auto m = fn->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  std::lock_guard lk(fn->m);
  return f(*fn->desc, fn->settings, *m->ctx->device());
}

Errc check_flags(unsigned flags, const char* api) {
  if (flags & ~unsigned{CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE})
    return fail(Errc::invalid_value, "{}: flags {:#x}: only CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE (1) is defined", api, flags);
  return Errc::success;
}

}  // namespace

Errc cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, CUfunction h, int threads, size_t dyn,
                                                          unsigned flags) noexcept {
  const char* api = "cuOccupancyMaxActiveBlocksPerMultiprocessor";
  TRY(need(n, api, "numBlocks"));
  TRY(check_flags(flags, api));
  return with_function(h, api, [&](const module::KernelDesc& k, const module::FuncSettings& s, const Device& d) {
    if (threads <= 0) return fail(Errc::invalid_value, "{}: blockSize {} is not positive", api, threads);
    *n = module::active_blocks(k, s, d, threads, dyn);
    return Errc::success;
  });
}
Errc cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, CUfunction h, int threads, size_t dyn) noexcept {
  return api::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, h, threads, dyn, 0u);
}

Errc cuOccupancyMaxPotentialBlockSizeWithFlags(int* grid, int* block, CUfunction h, CUoccupancyB2DSize b2d, size_t dyn,
                                               int limit, unsigned flags) noexcept {
  const char* api = "cuOccupancyMaxPotentialBlockSize";
  TRY(need(grid, api, "minGridSize"));
  TRY(need(block, api, "blockSize"));
  TRY(check_flags(flags, api));
  return with_function(h, api, [&](const module::KernelDesc& k, const module::FuncSettings& s, const Device& d) {
    if (limit < 0) return fail(Errc::invalid_value, "{}: blockSizeLimit {} is negative", api, limit);
    // A limit past the kernel's bound is only a bound (NVIDIA's driver crashes there).
    module::potential_block_size(k, s, d, b2d, dyn, limit, *grid, *block);
    return Errc::success;
  });
}
Errc cuOccupancyMaxPotentialBlockSize(int* grid, int* block, CUfunction h, CUoccupancyB2DSize b2d, size_t dyn,
                                      int limit) noexcept {
  return api::cuOccupancyMaxPotentialBlockSizeWithFlags(grid, block, h, b2d, dyn, limit, 0u);
}

Errc cuOccupancyAvailableDynamicSMemPerBlock(size_t* out, CUfunction h, int blocks, int threads) noexcept {
  const char* api = "cuOccupancyAvailableDynamicSMemPerBlock";
  TRY(need(out, api, "dynamicSmemSize"));  // NVIDIA's driver crashes on NULL
  return with_function(h, api, [&](const module::KernelDesc& k, const module::FuncSettings& s, const Device& d) {
    return module::available_dynamic_shared(k, s, d, blocks, threads, *out, api);
  });
}

}  // namespace cuda_shim::api
