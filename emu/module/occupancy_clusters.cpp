// Cluster occupancy: cuOccupancyMaxActiveClusters and cuOccupancyMaxPotentialClusterSize.
// A thread block cluster runs inside one GPC, its blocks on distinct SMs of it. Measured on an H200
// (../shared/REAL_DRIVER.md, "Cluster occupancy"): the answers for cluster sizes 1 to 17 and 1, 2
// and 8 blocks per SM all equal the sum over GPCs of floor(SMs x blocks per SM / cluster size),
// counting only GPCs with at least as many SMs as the cluster has blocks, with the 132 SMs in GPCs
// of 18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2 and 2 SMs, and at most 8 blocks of a cluster
// kernel on one SM (blocks of 1 or 128 threads, which hold 32 and 16 a SM otherwise, gave 8).
#include <algorithm>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "module/attributes.hpp"
#include "module/occupancy.hpp"

namespace cuda_shim::module {
namespace {

constexpr int kClusterBlocksPerSm = 8;

// The device's SMs by GPC: the H100/H200 layout for their 132 SMs; for other SM counts, GPCs of
// 16 SMs and the rest (not measured).
std::vector<int> gpcs(int sms) {
  if (sms == 132) return {18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2};
  std::vector<int> v(static_cast<size_t>(sms / 16), 16);
  if (sms % 16) v.push_back(sms % 16);
  return v;
}

}  // namespace

int active_clusters(const KernelDesc& k, const FuncSettings& s, const Device& d, int threads, size_t dyn,
                    unsigned cluster) {
  const int per_sm = std::min(active_blocks(k, s, d, threads, dyn), kClusterBlocksPerSm);
  int n = 0;
  for (int g : gpcs(d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)))
    if (static_cast<unsigned>(g) >= cluster) n += g * per_sm / static_cast<int>(cluster);
  return n;
}

}  // namespace cuda_shim::module

namespace cuda_shim::api {
namespace {

// The function (a CUfunction or a CUkernel) and the cluster size the config asks for (0: none).
// Measured: a NULL output, config or function is INVALID_VALUE.
template <class F>
Errc with_config(void* out, CUfunction h, const CUlaunchConfig* c, const char* api, F&& f) {
  TRY(Driver::get().require_init(api));
  if (!out || !c || !h) return fail(Errc::invalid_value, "{}: {} is NULL", api, !out ? "the output" : !c ? "config" : "func");
  if (c->numAttrs && !c->attrs)
    return fail(Errc::invalid_value, "{}: config->numAttrs is {} but config->attrs is NULL", api, c->numAttrs);
  unsigned cluster = 0;
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& cd = c->attrs[i].value.clusterDim;
      cluster = cd.x * cd.y * cd.z;
    }
  const uint64_t threads = uint64_t{c->blockDimX} * c->blockDimY * c->blockDimZ;
  if (threads == 0 || threads > 1024)
    return fail(Errc::invalid_value, "{}: config's block of {}x{}x{} threads is empty or larger than a block can be",
                api, c->blockDimX, c->blockDimY, c->blockDimZ);
  std::shared_ptr<module::Function> fn;
  TRY(module::resolve_function(h, api, fn, /*accept_kernel=*/true));
  auto m = fn->module.lock();
  if (!m) return fail(Errc::invalid_handle, "{}: the function's module was unloaded", api);
  std::lock_guard lk(fn->m);
  return f(*fn->desc, fn->settings, *m->ctx->device(), static_cast<int>(threads), cluster);
}

}  // namespace

Errc cuOccupancyMaxActiveClusters(int* n, CUfunction h, const CUlaunchConfig* c) noexcept {
  const char* api = "cuOccupancyMaxActiveClusters";
  return with_config(n, h, c, api, [&](const module::KernelDesc& k, const module::FuncSettings& s, const Device& d,
                                       int threads, unsigned cluster) {
    if (cluster == 0) {  // measured: no cluster dimension, no clusters
      *n = 0;
      return Errc::success;
    }
    if (cluster > 8 && !s.non_portable_cluster)
      return fail(Errc::invalid_cluster_size, "{}: kernel '{}': a cluster of {} blocks exceeds the portable 8 "
                  "(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED allows more)", api, k.name, cluster);
    *n = module::active_clusters(k, s, d, threads, c->sharedMemBytes, cluster);
    return Errc::success;
  });
}

// Measured: 16 where the function allows non-portable cluster sizes, else the portable 8.
Errc cuOccupancyMaxPotentialClusterSize(int* n, CUfunction h, const CUlaunchConfig* c) noexcept {
  const char* api = "cuOccupancyMaxPotentialClusterSize";
  return with_config(n, h, c, api, [&](const module::KernelDesc& k, const module::FuncSettings& s, const Device& d,
                                       int threads, unsigned) {
    *n = module::active_blocks(k, s, d, threads, c->sharedMemBytes) > 0 ? (s.non_portable_cluster ? 16 : 8) : 0;
    return Errc::success;
  });
}

}  // namespace cuda_shim::api
