/* cuda-shim: device-side runtime API (cuda_device_runtime_api.h).
 * Everything NVIDIA's header declares is for device code compiled by nvcc; a
 * host compiler sees nothing from it, and neither does it from ours. */
#ifndef CUDA_SHIM_CUDA_DEVICE_RUNTIME_API_H
#define CUDA_SHIM_CUDA_DEVICE_RUNTIME_API_H
#endif /* CUDA_SHIM_CUDA_DEVICE_RUNTIME_API_H */
