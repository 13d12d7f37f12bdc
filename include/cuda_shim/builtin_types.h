/* cuda-shim: umbrella for the types the runtime API uses (builtin_types.h). */
#ifndef CUDA_SHIM_BUILTIN_TYPES_H
#define CUDA_SHIM_BUILTIN_TYPES_H

#include "device_types.h"
#if !defined(__CUDACC_RTC__)
#  define EXCLUDE_FROM_RTC
#  include "driver_types.h"
#  undef EXCLUDE_FROM_RTC
#endif
#include "surface_types.h"
#include "texture_types.h"
#include "vector_types.h"

#endif /* CUDA_SHIM_BUILTIN_TYPES_H */
