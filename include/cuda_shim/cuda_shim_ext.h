/* cuda-shim extensions: emulator-only knobs. Not part of NVIDIA's API; a program
 * that uses them should guard the calls with CUDA_SHIM_EXT (defined here) or look
 * the functions up with dlsym so that it still runs on the real driver. */
#ifndef CUDA_SHIM_EXT_H
#define CUDA_SHIM_EXT_H

#include <stddef.h>

#define CUDA_SHIM_EXT 1

#ifdef __cplusplus
extern "C" {
#endif

/* Why the most recent failing driver or runtime call on this thread failed: which rule,
 * which object. Copies at most len-1 bytes plus a terminator into buf and returns
 * the full length of the message (0 when no call on this thread has failed). */
size_t cuShimGetLastExplanation(char *buf, size_t len);

/* The CUresult code that the explanation belongs to (0 when none). */
int cuShimGetLastExplanationCode(void);

/* The shared IPC registry as text: its segment, the processes attached, every live export
 * (legacy IPC handles, fabric handles, exported pool pointers). Same copy rules as above. */
size_t cuShimIpcState(char *buf, size_t len);

/* Removes this user's registry segments left by crashed runs (no live process attached);
 * writes one line per segment removed. Same copy rules as above. */
size_t cuShimCollectGarbage(char *buf, size_t len);

/* cuda-shim's version as MAJOR*10000 + MINOR*100 + PATCH. */
int cuShimGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SHIM_EXT_H */
