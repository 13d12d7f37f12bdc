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

/* `cuda-shim gc`: checks what this user's registry may be, without attaching it, and removes
 * what cannot be trusted or serves nobody. In /dev/shm: segments whose processes all died;
 * segments of another layout, corrupt, not regular files or open to other users (not mode
 * 0600), once unchanged for a minute (a creator may be half-way). In the private directories
 * ($XDG_RUNTIME_DIR/cuda-shim, ~/.cache/cuda-shim): a mode open to others (made 0700 again), a
 * kept name that is malformed or not this user's alone, files a dead process half wrote. A
 * file of another user under a name this user would use (squatted) is reported, not removed.
 * Call it once: it acts as it reports. Writes one line per finding, "<path>: <what it is>;
 * <what was done>". Same copy rules as above. */
size_t cuShimCollectGarbage(char *buf, size_t len);

/* Verifies the shared IPC registry of this process (CUDA_SHIM_REGISTRY or the per-user one):
 * attaches to it if this process has not yet (creating it when there is none, as any sharing
 * call does), takes its lock, sweeps the processes that died, then checks every invariant of
 * the shared layout: the header (magic, layout version, size), that the name still names the
 * segment attached, the record counters, that every live export is found by its token (open
 * addressing intact) and has a live exporter, unique tokens, a live and unique process table,
 * live exporters of IPC events, and the logical endpoint tables (every id and binding names a
 * live endpoint; no endpoint without an id). Returns the number of problems found (0: sound),
 * and writes one line per problem into buf (at most len-1 bytes plus a terminator; an empty
 * string when there are none). Returns -1 when the registry cannot be attached at all, with
 * the reason in buf (e.g. a segment of another user, or of a mode other than 0600). */
int cuShimRegistryCheck(char *buf, size_t len);

/* Exportable semaphores: the other API's side of an external semaphore. A program importing
 * a semaphore (cuImportExternalSemaphore) gets its fd from another API, e.g. Vulkan's
 * vkGetSemaphoreFdKHR; without such a driver, these make, signal and wait on one:
 *   create: *fd receives a new semaphore object's fd (binary when timeline is 0: value 1 means
 *           signaled), which cuImportExternalSemaphore takes as OPAQUE_FD (binary) or
 *           TIMELINE_SEMAPHORE_FD (timeline) and which crosses processes over SCM_RIGHTS;
 *   signal: binary: becomes signaled; timeline: the counter becomes value;
 *   value:  the current value (binary: 1 signaled, 0 not);
 *   wait:   binary: waits until signaled and unsignals; timeline: until the counter >= value;
 *           gives up after timeoutMs (CUDA_ERROR_TIMEOUT is not a driver code: it returns
 *           CUDA_ERROR_NOT_READY, 600).
 * Each returns a CUresult value; the fd stays the caller's (close it when done). */
int cuShimExportableSemaphoreCreate(int *fd, int timeline, unsigned long long initialValue);
int cuShimExportableSemaphoreSignal(int fd, unsigned long long value);
int cuShimExportableSemaphoreGetValue(int fd, unsigned long long *value);
int cuShimExportableSemaphoreWait(int fd, unsigned long long value, unsigned int timeoutMs);

/* Managed memory. The stream association of the managed allocation holding ptr, as it stands
 * now (cuStreamAttachMemAsync changes it in stream order): *flags gets CU_MEM_ATTACH_GLOBAL,
 * _HOST or _SINGLE, *streamId the stream's id (cuStreamGetId) for SINGLE, else 0. Returns a
 * CUresult value (CUDA_ERROR_INVALID_VALUE when ptr is not managed memory). */
int cuShimGetManagedAttachment(unsigned long long ptr, unsigned int *flags, unsigned long long *streamId);

/* On a device profile without concurrent managed access (CUDA_SHIM_CONCURRENT_MANAGED_ACCESS=0),
 * host code touching managed memory while the device may use it is a violation: it is reported
 * on stderr (CUDA_SHIM_MANAGED_FAULT=quiet: not printed; =abort: the process dies of SIGSEGV, as
 * on a real GPU) and counted. How many so far, and the last one's explanation (same copy rules as
 * cuShimGetLastExplanation). */
unsigned long long cuShimManagedViolations(void);
size_t cuShimGetLastManagedViolation(char *buf, size_t len);

/* Logical endpoints (CUDA 13.3). Every endpoint of the emulated fabric as text: its ids in each
 * process (created or imported, ready or not), type, owner or multicast team, construction state
 * and the memory bound per device (`cuda-shim endpoints`). Same copy rules as above. */
size_t cuShimLogicalEndpointState(char *buf, size_t len);

/* What a kernel's fabric put/get through logical endpoint id leId would reach: writes (write != 0)
 * or reads [offset, offset + size) of the memory bound on device dev, in whichever process bound
 * it. dev -1 names a unicast endpoint's owner; a write with dev -1 to a multicast endpoint stores
 * into every team device's replica. The id must have been seen ready by cuLogicalEndpointQuery and
 * the range must be bound entirely, else CUDA_ERROR_INVALID_VALUE (undefined behaviour on a GPU).
 * Returns a CUresult value. */
int cuShimLogicalEndpointAccess(unsigned int leId, int dev, unsigned long long offset, void *buf,
                                unsigned long long size, int write);

/* What this process holds now, for leak checks in tests and fuzzing: live handles of each kind,
 * address ranges (allocations, registrations, mappings, pool windows, opened IPC memory) and
 * the device memory charged to all devices (cuMemGetInfo's "used"). Returns 0, or -1 when
 * counts is NULL or size is smaller than the structure. */
typedef struct CUshimObjectCounts_st {
  unsigned long long contexts;
  unsigned long long streams;
  unsigned long long events;
  unsigned long long memPools;
  unsigned long long vmmHandles;
  unsigned long long vmmReservations;
  unsigned long long externalMemories;
  unsigned long long externalSemaphores;
  unsigned long long arrays;
  unsigned long long addressRanges;
  unsigned long long deviceBytesCharged;
} CUshimObjectCounts;
int cuShimGetObjectCounts(CUshimObjectCounts *counts, size_t size);

/* Kernel launches. Device code never runs here. CUDA_SHIM_KERNELS chooses what a launch does
 * (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel, cudaLaunchKernel, <<<>>>):
 *   refuse (default): after the checks the real driver makes, the launch fails with
 *          CUDA_ERROR_NOT_SUPPORTED / cudaErrorNotSupported (not sticky), explained;
 *   skip:  the launch completes as a no-op in stream order (work before and after it, events,
 *          host functions and waits keep their order) and is recorded.
 * Every launch that passed the checks (refused or skipped) is recorded: how many so far in
 * this process, and the one at `index` (0 = the first; only the most recent 4096 are kept):
 * its kernel's name (same copy rules as cuShimGetLastExplanation, in name/len), grid and block
 * dimensions, dynamic shared memory, the stream's id (cuStreamGetId) and whether it was
 * skipped (1) or refused (0). Returns a CUresult value (CUDA_ERROR_INVALID_VALUE when index
 * is not kept or rec is NULL). */
typedef struct CUshimLaunchRecord_st {
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int sharedMemBytes;
  int skipped;
  unsigned long long streamId;
} CUshimLaunchRecord;
unsigned long long cuShimGetLaunchCount(void);
int cuShimGetLaunchRecord(unsigned long long index, CUshimLaunchRecord *rec, char *name, size_t len);

/* Fault injection (docs/faults.md): replaces every rule in force (CUDA_SHIM_FAULTS's, the
 * CUDA_SHIM_LE_FAULT alias's, an earlier call's) with `spec`, in CUDA_SHIM_FAULTS's grammar
 * (e.g. "cuMemCreate:CUDA_ERROR_NOT_PERMITTED@2"); every entry's call count restarts at 0.
 * NULL or "" removes every rule. Returns 0 (CUDA_SUCCESS), or CUDA_ERROR_INVALID_VALUE (1) for a
 * malformed spec, which changes nothing; cuShimGetLastExplanation then names the rule and its
 * position. */
int cuShimSetFaults(const char *spec);

/* The JIT linker's PTX joining, for our libnvJitLink.so.13 (emu/nvjitlink/): one definition with
 * the driver's cuLink*. The kernel engine runs PTX, so a link joins its inputs' PTX into one module
 * held by a fat binary that every loader takes (docs/kernels.md, "Linking"). Neither needs cuInit
 * or a context; cc is the target's compute capability, major*10+minor (90 for sm_90).
 *   cuShimLinkInputPtx: one input's PTX. type is a CUjitInputType: CU_JIT_INPUT_PTX (text, size
 *     bytes or up to its NUL; checked by the PTX parser) or CU_JIT_INPUT_FATBINARY (the PTX entry
 *     the loaders would choose for cc); cubin, object and library inputs are machine code, refused
 *     with CUDA_ERROR_NOT_SUPPORTED, except the device runtime library (libcudadevrt.a), whose
 *     cooperative groups entry points (cudaCGGetIntrinsicHandle, cudaCGSynchronize) come as PTX. *ptx receives malloc'ed NUL-terminated text (free() it), *ptxSize
 *     its length without the NUL.
 *   cuShimLinkPtx: n PTX texts (each NUL-terminated) joined into one module, every kernel limited
 *     to maxRegisters registers when it is > 0 (a .maxnreg directive): *joined the text,
 *     *image the fat binary holding it (both malloc'ed, free() them; sizes without / with every
 *     byte). CUDA_ERROR_INVALID_VALUE when n is 0.
 * Each returns a CUresult value; cuShimGetLastExplanation says why one failed. */
int cuShimLinkInputPtx(int type, const void *data, size_t size, const char *name, int cc, char **ptx,
                       size_t *ptxSize);
int cuShimLinkPtx(const char *const *ptx, unsigned int n, int cc, int maxRegisters, char **joined,
                  size_t *joinedSize, void **image, size_t *imageSize);

/* cuda-shim's version as MAJOR*10000 + MINOR*100 + PATCH. */
int cuShimGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SHIM_EXT_H */
