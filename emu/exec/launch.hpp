// Kernel launches (the launch policy) and the record of launches for cuShimGetLaunchRecord.
#pragma once
#include <cuda.h>
#include <cuda_shim_ext.h>

#include <cstdint>
#include <string>

#include "core/capture.hpp"
#include "core/errc.hpp"

namespace cuda_shim::module {

struct LaunchArgs {
  unsigned grid[3];
  unsigned block[3];
  unsigned shared;
  CUstream stream;
  void** params;
  void** extra;
  bool per_thread;  // _ptsz: a NULL stream is the per-thread default stream
  unsigned cluster[3] = {0, 0, 0};  // cuLaunchKernelEx's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
  bool has_cluster = false;
  bool cooperative = false;  // cuLaunchCooperativeKernel, or CU_LAUNCH_ATTRIBUTE_COOPERATIVE
};

// Checks a launch of h as the driver does, then runs, refuses or skips it (Config::kernels).
Errc launch(CUfunction h, const LaunchArgs& a, const char* api);
// A kernel node (cuGraphAddKernelNode): checked as a launch is, the arguments copied, and a Spec
// whose issue launches it on the graph's launch stream.
Errc kernel_node(const CUDA_KERNEL_NODE_PARAMS& p, cap::Spec& out, const char* api);

uint64_t launch_count() noexcept;
// Launch `index` (0 = the process's first), if still kept.
bool launch_record(uint64_t index, CUshimLaunchRecord& out, std::string& name);

}  // namespace cuda_shim::module
