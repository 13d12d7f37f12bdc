/* cuda-shim: the driver's profiler control (cudaProfiler.h). Written for cuda-shim; names,
 * enumerator values and signatures match NVIDIA's CUDA 13 header. No profiler collects anything
 * here: cuProfilerStart and cuProfilerStop answer as NVIDIA's driver does with none attached
 * (docs/kernels.md lists the measured codes). */
#ifndef CUDA_SHIM_CUDA_PROFILER_H
#define CUDA_SHIM_CUDA_PROFILER_H

#include "cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output formats of the legacy command-line profiler (cuProfilerInitialize). */
typedef enum CUoutput_mode_enum {
  CU_OUT_KEY_VALUE_PAIR = 0x00,
  CU_OUT_CSV = 0x01
} CUoutput_mode;

CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode);
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);

typedef CUresult(CUDAAPI *PFN_cuProfilerInitialize_v4000)(const char *configFile, const char *outputFile,
                                                          CUoutput_mode outputMode);
typedef CUresult(CUDAAPI *PFN_cuProfilerStart_v4000)(void);
typedef CUresult(CUDAAPI *PFN_cuProfilerStop_v4000)(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SHIM_CUDA_PROFILER_H */
