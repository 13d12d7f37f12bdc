/* cuda-shim: host-side qualifier macros.
 *
 * A host compiler (no nvcc) sees CUDA's execution-space qualifiers as nothing,
 * so code written for nvcc's headers still parses. Each macro is defined only if
 * absent, which lets these headers share a translation unit with NVIDIA's ones
 * (the ABI test does exactly that). */
#ifndef CUDA_SHIM_HOST_DEFINES_H
#define CUDA_SHIM_HOST_DEFINES_H

#if defined(__GNUC__) || defined(__clang__)
#  ifndef __align__
#    define __align__(n) __attribute__((aligned(n)))
#  endif
#  ifndef CUDARTAPI
#    define CUDARTAPI
#  endif
#  ifndef CUDARTAPI_CDECL
#    define CUDARTAPI_CDECL
#  endif
#  ifndef __forceinline__
#    define __forceinline__ __inline__ __attribute__((always_inline))
#  endif
#  ifndef __no_return__
#    define __no_return__ __attribute__((noreturn))
#  endif
#elif defined(_MSC_VER)
#  ifndef __align__
#    define __align__(n) __declspec(align(n))
#  endif
#  ifndef CUDARTAPI
#    define CUDARTAPI __stdcall
#  endif
#  ifndef CUDARTAPI_CDECL
#    define CUDARTAPI_CDECL __cdecl
#  endif
#  ifndef __inline__
#    define __inline__ __inline
#  endif
#  ifndef __forceinline__
#    define __forceinline__ __forceinline
#  endif
#else
#  error "cuda-shim: unsupported compiler (need __align__ and CUDARTAPI definitions)"
#endif

/* Vector types carry their natural alignment on every host compiler we support. */
#ifndef __builtin_align__
#  define __builtin_align__(a) __align__(a)
#endif

#ifndef __specialization_static
#  define __specialization_static
#endif

/* Qualifiers that only mean something to a device compiler. */
#ifndef __annotate__
#  define __annotate__(a)
#endif
#ifndef __location__
#  define __location__(a)
#endif
#ifndef __host__
#  define __host__
#endif
#ifndef __device__
#  define __device__
#endif
#ifndef __global__
#  define __global__
#endif
#ifndef __shared__
#  define __shared__
#endif
#ifndef __constant__
#  define __constant__
#endif
#ifndef __managed__
#  define __managed__
#endif
#ifndef __grid_constant__
#  define __grid_constant__
#endif
#ifndef __launch_bounds__
#  define __launch_bounds__(...)
#endif
#ifndef __device_builtin__
#  define __device_builtin__
#endif
#ifndef __device_builtin_texture_type__
#  define __device_builtin_texture_type__
#endif
#ifndef __device_builtin_surface_type__
#  define __device_builtin_surface_type__
#endif
#ifndef __cudart_builtin__
#  define __cudart_builtin__
#endif

#endif /* CUDA_SHIM_HOST_DEFINES_H */
