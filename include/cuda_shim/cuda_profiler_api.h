/* cuda-shim: the runtime's profiler control (cuda_profiler_api.h). Written for cuda-shim; the
 * signatures match NVIDIA's CUDA 13 header. Both answer as NVIDIA's runtime does with no
 * profiler attached: success once the runtime has its context. */
#ifndef CUDA_SHIM_CUDA_PROFILER_API_H
#define CUDA_SHIM_CUDA_PROFILER_API_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

extern __host__ cudaError_t CUDARTAPI cudaProfilerStart(void);
extern __host__ cudaError_t CUDARTAPI cudaProfilerStop(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SHIM_CUDA_PROFILER_API_H */
