/* cuda-shim: the nvJitLink 13 C API (nvJitLink.h), as our libnvJitLink.so.13 implements it
 * (emu/nvjitlink/, docs/kernels.md "Linking"). Written for cuda-shim; the interface facts (names,
 * enumerator values, signatures, the exported __nvJitLink*_13_0 aliases) match NVIDIA's
 * nvJitLink 13.0 so that programs built against either header run on either library.
 *
 * What differs from NVIDIA's library: the kernel engine runs PTX, so a link joins the PTX of its
 * inputs and nvJitLinkGetLinkedCubin returns a fat binary holding that PTX (what
 * cuModuleLoadData / cuLibraryLoadData take); nvJitLinkGetLinkedPtx returns the joined PTX
 * without -lto. Machine code inputs are refused with an error log saying why; LTO-IR inputs
 * (-lto) are compiled to PTX by NVIDIA's nvJitLink where one is found (docs/kernels.md). */
#ifndef CUDA_SHIM_NVJITLINK_H
#define CUDA_SHIM_NVJITLINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes, in NVIDIA's order. */
typedef enum {
  NVJITLINK_SUCCESS = 0,
  NVJITLINK_ERROR_UNRECOGNIZED_OPTION = 1,
  NVJITLINK_ERROR_MISSING_ARCH = 2,
  NVJITLINK_ERROR_INVALID_INPUT = 3,
  NVJITLINK_ERROR_PTX_COMPILE = 4,
  NVJITLINK_ERROR_NVVM_COMPILE = 5,
  NVJITLINK_ERROR_INTERNAL = 6,
  NVJITLINK_ERROR_THREADPOOL = 7,
  NVJITLINK_ERROR_UNRECOGNIZED_INPUT = 8,
  NVJITLINK_ERROR_FINALIZE = 9,
  NVJITLINK_ERROR_NULL_INPUT = 10,
  NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS = 11,
  NVJITLINK_ERROR_INCORRECT_INPUT_TYPE = 12,
  NVJITLINK_ERROR_ARCH_MISMATCH = 13,
  NVJITLINK_ERROR_OUTDATED_LIBRARY = 14,
  NVJITLINK_ERROR_MISSING_FATBIN = 15,
  NVJITLINK_ERROR_UNRECOGNIZED_ARCH = 16,
  NVJITLINK_ERROR_UNSUPPORTED_ARCH = 17,
  NVJITLINK_ERROR_LTO_NOT_ENABLED = 18
} nvJitLinkResult;

/* What an input is. */
typedef enum {
  NVJITLINK_INPUT_NONE = 0,
  NVJITLINK_INPUT_CUBIN = 1,
  NVJITLINK_INPUT_PTX = 2,
  NVJITLINK_INPUT_LTOIR = 3,
  NVJITLINK_INPUT_FATBIN = 4,
  NVJITLINK_INPUT_OBJECT = 5,
  NVJITLINK_INPUT_LIBRARY = 6,
  NVJITLINK_INPUT_INDEX = 7,
  NVJITLINK_INPUT_ANY = 10
} nvJitLinkInputType;

/* One link in progress. */
typedef struct nvJitLink *nvJitLinkHandle;

/* nvJitLinkCreate: options as NVIDIA's header passes them, under both names. */
nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions, const char **options);
nvJitLinkResult __nvJitLinkCreate_13_0(nvJitLinkHandle *handle, uint32_t numOptions, const char *const *options);

/* The other entry points, each under its plain name and under the versioned name NVIDIA's
 * header calls (__nvJitLinkDestroy_13_0, ...): the same function. */
#define CUDA_SHIM_NVJITLINK_API(name, params) \
  nvJitLinkResult name params;                \
  nvJitLinkResult __##name##_13_0 params;
CUDA_SHIM_NVJITLINK_API(nvJitLinkDestroy, (nvJitLinkHandle *handle))
CUDA_SHIM_NVJITLINK_API(nvJitLinkAddData, (nvJitLinkHandle handle, nvJitLinkInputType inputType, const void *data,
                                           size_t size, const char *name))
CUDA_SHIM_NVJITLINK_API(nvJitLinkAddFile, (nvJitLinkHandle handle, nvJitLinkInputType inputType, const char *fileName))
CUDA_SHIM_NVJITLINK_API(nvJitLinkComplete, (nvJitLinkHandle handle))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetLinkedCubinSize, (nvJitLinkHandle handle, size_t *size))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetLinkedCubin, (nvJitLinkHandle handle, void *cubin))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetLinkedPtxSize, (nvJitLinkHandle handle, size_t *size))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetLinkedPtx, (nvJitLinkHandle handle, char *ptx))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetErrorLogSize, (nvJitLinkHandle handle, size_t *size))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetErrorLog, (nvJitLinkHandle handle, char *log))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetInfoLogSize, (nvJitLinkHandle handle, size_t *size))
CUDA_SHIM_NVJITLINK_API(nvJitLinkGetInfoLog, (nvJitLinkHandle handle, char *log))
#undef CUDA_SHIM_NVJITLINK_API

/* Plain names only. */
nvJitLinkResult nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle handle, size_t *size);
nvJitLinkResult nvJitLinkGetLinkedLTOIR(nvJitLinkHandle handle, void *ltoir);
nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SHIM_NVJITLINK_H */
