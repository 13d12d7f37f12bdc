// What each call may return besides success. The hand-written calls (fuzz_steps.cpp) have
// their own lists: the codes NVIDIA's documentation gives, plus the ones measured on driver
// 580 where it crashes or answers otherwise (INVALID_HANDLE for dead handles, UNKNOWN for
// foreign descriptors; README). Table entries share a base of argument-checking codes every
// driver entry documents, plus the codes of their family (allocations, queries, images,
// launches, sharing). A code outside its call's list breaks the run.
#include <cstdio>
#include <cstdlib>
#include <map>

#include "fuzz.hpp"
#include "nvml/nvml_api.h"

namespace fz {
namespace {

std::set<std::pair<std::string, int>> g_seen;  // (call, code) pairs, for CUDA_SHIM_FUZZ_CODES

constexpr int V = CUDA_ERROR_INVALID_VALUE, H = CUDA_ERROR_INVALID_HANDLE, M = CUDA_ERROR_OUT_OF_MEMORY,
              NS = CUDA_ERROR_NOT_SUPPORTED, UNK = CUDA_ERROR_UNKNOWN, DEV = CUDA_ERROR_INVALID_DEVICE,
              NP = CUDA_ERROR_NOT_PERMITTED, NF = CUDA_ERROR_NOT_FOUND, CTX = CUDA_ERROR_INVALID_CONTEXT,
              MAP = CUDA_ERROR_MAP_FAILED, AM = CUDA_ERROR_ALREADY_MAPPED, NR = CUDA_ERROR_NOT_READY,
              PEER = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, SNR = CUDA_ERROR_SYSTEM_NOT_READY;
const std::map<std::string, std::vector<int>> kAllowed = {
    {"cuMemAlloc", {V, M}},
    {"cuMemFree", {V}},
    {"cuMemAllocHost", {V, M}},
    {"cuMemFreeHost", {V}},
    {"cuMemAllocManaged", {V, M, NS}},
    {"cuStreamAttachMemAsync", {V, H, NS}},
    {"cuStreamCreate", {V}},
    {"cuStreamDestroy", {V, H}},
    {"cuStreamSynchronize/Query", {H, NR}},
    {"cuEventCreate", {V}},
    {"cuEventDestroy", {V, H}},
    {"cuEventRecord", {V, H}},
    {"cuEventQuery/ElapsedTime", {V, H, NR}},
    {"cuStreamWaitEvent", {V, H}},
    {"cuMemPoolCreate", {V, M, NS, DEV, NP}},
    {"cuMemPoolDestroy", {V, H}},
    {"cuMemPoolGet/SetAttribute", {V, H}},
    {"cuMemPoolTrimTo", {V, H}},
    {"cuMemAllocAsync/FromPoolAsync", {V, H, M, NS}},
    {"cuMemFreeAsync", {V, H, NS}},
    {"cuMemcpyHtoD", {V, H}},
    {"cuMemcpyDtoH", {V, H}},
    {"cuMemcpyDtoDAsync", {V, H}},
    {"cuMemsetD8Async", {V, H}},
    {"cuMemCreate", {V, M, NS, DEV, NP}},
    {"cuMemRelease", {V, H}},
    {"cuMemAddressReserve", {V, M}},
    {"cuMemAddressFree", {V}},
    {"cuMemMap", {V, H, M, NS, AM}},
    {"cuMemUnmap", {V, H}},
    {"cuMemSetAccess", {V, NS, DEV}},
    {"cuMemExportToShareableHandle", {V, H, NS, NP, SNR}},
    {"cuMemImportFromShareableHandle", {V, NS, NP, UNK, SNR}},
    {"cuMemGetAllocationPropertiesFromHandle", {V}},
    {"cuMemPoolExportToShareableHandle", {V, H, NS, NP, SNR}},
    {"cuMemPoolImportFromShareableHandle", {V, NS, NP, UNK, M, SNR}},
    {"cuMemPoolExportPointer", {V}},
    {"cuMemPoolImportPointer", {V, H, M, AM, NS}},
    {"cuIpcGetMemHandle", {V}},
    {"cuIpcOpenMemHandle", {V, H, M, MAP, PEER, CTX}},
    {"cuIpcGetEventHandle/OpenEventHandle", {V, H, CTX, MAP, M}},
    {"cuImportExternalMemory", {V, M, NS, UNK}},
    {"cuExternalMemoryGetMappedBuffer", {V, H, M}},
    {"cuDestroyExternalMemory", {V, H}},
    {"cuImportExternalSemaphore", {V, NS, UNK}},
    {"cuSignal/WaitExternalSemaphoresAsync", {V, H, NS}},
    {"cuDestroyExternalSemaphore", {V, H}},
    {"cuPointerGetAttribute/cuMemGetAddressRange", {V, NF}},
    // a graph built, instantiated and launched (fuzz_steps.cpp): a node's bad argument or
    // dependency, a dead event or child graph, a stream of another context
    {"graph", {V, H}},
    {"cudaMalloc", {cudaErrorInvalidValue, cudaErrorMemoryAllocation}},
    {"cudaFree", {cudaErrorInvalidValue}},
    {"cudaStreamCreateWithFlags", {cudaErrorInvalidValue}},
    {"cudaStreamDestroy", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle}},
    {"cudaEventCreateWithFlags", {cudaErrorInvalidValue}},
    {"cudaEventDestroy", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle}},
    {"cudaMallocAsync", {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorInvalidResourceHandle, cudaErrorNotSupported}},
    {"cudaFreeAsync", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle, cudaErrorNotSupported}},
    // NVML (its own codes): bad handles and NULLs, short buffers, wrong struct versions (measured:
    // FUNCTION_NOT_FOUND for the memory struct, ARGUMENT_VERSION_MISMATCH for PCI info).
    {"nvmlDeviceGetHandleByIndex_v2", {NVML_ERROR_INVALID_ARGUMENT}},
    {"nvmlDeviceGetName/UUID/Serial", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INSUFFICIENT_SIZE}},
    {"nvmlDeviceGetMemoryInfo", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_FUNCTION_NOT_FOUND}},
    {"nvmlDeviceGetPciInfoExt", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_ARGUMENT_VERSION_MISMATCH}},
    {"nvmlDeviceGetComputeRunningProcesses_v3", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INSUFFICIENT_SIZE}},
};

void check_allowed(const char* api, int code, const char* name) {
  auto it = kAllowed.find(api);
  if (it == kAllowed.end()) die(api, "has no list of allowed codes in the harness");
  // The table's calls change the current context (pop it, destroy it, reset a primary): every
  // call needing one may find none, or a destroyed one.
  if (std::strncmp(api, "nvml", 4) != 0 && (code == CTX || code == CUDA_ERROR_CONTEXT_IS_DESTROYED)) return;
  if (std::find(it->second.begin(), it->second.end(), code) == it->second.end())
    die(api, std::string("returned ") + name + ", which is not among the codes it may return");
}

// ---- Table entries ----
// Every driver entry checks its arguments, its handles and the current context
// (CONTEXT_IS_DESTROYED: a primary that was reset while current).
const std::vector<int> kDriverBase = {V, H, CTX, CUDA_ERROR_CONTEXT_IS_DESTROYED, DEV, NS};
// The runtime's forms of the same.
const std::vector<int> kRuntimeBase = {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle, cudaErrorInvalidDevice,
                                       cudaErrorNotSupported, cudaErrorContextIsDestroyed, cudaErrorDeviceUninitialized};

// Families, by a part of the name: the codes their documentation adds.
struct Family {
  const char* part;
  std::vector<int> codes;
};
const std::vector<Family> kFamilies = {
    // allocating anything
    {"Alloc", {M, cudaErrorMemoryAllocation}}, {"Create", {M, cudaErrorMemoryAllocation}},
    {"Reserve", {M}}, {"Import", {M, cudaErrorMemoryAllocation}}, {"Retain", {M}},
    {"Malloc", {cudaErrorMemoryAllocation}}, {"Register", {M, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED}},
    {"Unregister", {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED}}, {"Map", {M, AM}},
    // completion queries
    {"Query", {NR}}, {"ElapsedTime", {NR}},
    // symbols, kernels and images
    {"Module", {NF, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
                CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_FILE_NOT_FOUND, M}},
    {"Library", {NF, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
                 CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_FILE_NOT_FOUND, M}},
    {"Link", {CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
              CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_FILE_NOT_FOUND, M}},
    {"Launch", {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_INVALID_CLUSTER_SIZE,
                CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cudaErrorInvalidConfiguration,
                cudaErrorLaunchOutOfResources, cudaErrorInvalidDeviceFunction}},
    // a registered stub or variable whose name the fat binary lacks: its lookup fails
    {"Func", {cudaErrorInvalidDeviceFunction, cudaErrorSymbolNotFound}},
    {"Kernel", {cudaErrorInvalidDeviceFunction, cudaErrorSymbolNotFound}},
    {"Launch", {cudaErrorSymbolNotFound}},
    {"Symbol", {cudaErrorInvalidSymbol, cudaErrorSymbolNotFound}},
    // copies and fills
    {"cudaMemcpy", {cudaErrorInvalidMemcpyDirection, cudaErrorInvalidPitchValue}},
    {"cudaMemset", {cudaErrorInvalidPitchValue}},
    // CUDA arrays: a channel format no array holds (the runtime's)
    {"Array", {cudaErrorInvalidChannelDescriptor, M, cudaErrorMemoryAllocation}},
    {"TextureObject", {cudaErrorInvalidChannelDescriptor}}, {"SurfaceObject", {cudaErrorInvalidChannelDescriptor}},
    // sharing
    {"Ipc", {MAP, PEER, M, cudaErrorMapBufferObjectFailed, cudaErrorPeerAccessUnsupported}},
    {"Shareable", {NP, SNR, UNK, M, cudaErrorNotPermitted, cudaErrorSystemNotReady, cudaErrorUnknown}},
    {"External", {M, UNK, cudaErrorUnknown}},
    {"LogicalEndpoint", {M, NP, SNR}},
    // limits the device does not have; a name cuGetProcAddress cannot serve (measured)
    {"Limit", {CUDA_ERROR_UNSUPPORTED_LIMIT}}, {"cuGetProcAddress", {NF}},
    // <<<>>>'s configuration popped without one pushed
    {"CallConfiguration", {cudaErrorMissingConfiguration}},
    // an address no allocation holds (measured)
    {"GetAddressRange", {NF}}, {"PointerGetAttribute", {NF}},
    // the current context's stack
    {"cuCtxPopCurrent", {CTX}},
    // stream capture: a stream that is not capturing (ILLEGAL_STATE), a capture's rules
    {"Capture", {CUDA_ERROR_ILLEGAL_STATE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                 CUDA_ERROR_STREAM_CAPTURE_MERGE, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
                 CUDA_ERROR_STREAM_CAPTURE_ISOLATION, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cudaErrorIllegalState,
                 cudaErrorStreamCaptureUnsupported, cudaErrorStreamCaptureInvalidated, cudaErrorStreamCaptureMerge,
                 cudaErrorStreamCaptureUnmatched, cudaErrorStreamCaptureUnjoined, cudaErrorStreamCaptureIsolation,
                 cudaErrorStreamCaptureImplicit}},
    // cluster occupancy: a cluster past the portable size the function allows; a registered stub
    // whose kernel the fat binary lacks
    {"Cluster", {CUDA_ERROR_INVALID_CLUSTER_SIZE, cudaErrorInvalidClusterSize, cudaErrorInvalidDeviceFunction,
                 cudaErrorSymbolNotFound}},
    // occupancy of a registered stub whose kernel the fat binary lacks: its lookup fails, as a
    // launch's would
    {"Occupancy", {cudaErrorInvalidDeviceFunction, cudaErrorSymbolNotFound}},
    // an executable graph that cannot take the graph's parameters
    {"ExecUpdate", {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cudaErrorGraphExecUpdateFailure}},
    // stream memory operations on a capturing stream's neighbours; flushes the device cannot do
    {"Value", {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED}},
    {"BatchMemOp", {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED}},
    // batch copies, prefetches and discards on a capturing stream (measured: refused)
    {"Batch", {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
               cudaErrorStreamCaptureUnsupported, cudaErrorStreamCaptureImplicit}},
    // a graph's copies, as the copies they stand for
    {"MemcpyNode", {cudaErrorInvalidMemcpyDirection}},
    // peer access: enabled or disabled twice, or between a device and itself
    {"Peer", {PEER, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
              cudaErrorPeerAccessUnsupported, cudaErrorPeerAccessAlreadyEnabled, cudaErrorPeerAccessNotEnabled}},
};

}  // namespace

void seen(const std::string& api, int code) {
  ++g_ops;
  g_seen.emplace(api, code);
}

void check_cu(const char* api, CUresult r) {
  seen(api, static_cast<int>(r));
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
    die(api, "returned " + std::to_string(r) + ", a code the driver does not define");
  check_allowed(api, r, name);
  if (cuShimGetLastExplanationCode() != static_cast<int>(r))
    die(api, std::string("failed with ") + name + " but recorded no explanation for it");
}

void check_rt(const char* api, cudaError_t r) {
  seen(api, static_cast<int>(r));
  if (r == cudaSuccess) return;
  const char* name = cudaGetErrorName(r);
  if (!name || std::strstr(name, "unrecognized")) die(api, "returned cudaError_t " + std::to_string(r) + ", undefined");
  check_allowed(api, r, name);
  cudaGetLastError();  // the runtime's sticky-until-read error: read it, as programs do
}

void check_nvml(const char* api, nvmlReturn_t r) {
  seen(api, static_cast<int>(r));
  if (r != NVML_SUCCESS) check_allowed(api, r, nvmlErrorString(r));
}

void check_entry(const char* api, bool runtime, int code) {
  seen(api, code);
  if (code == 0) return;
  const char* name = nullptr;
  if (runtime) {
    name = cudaGetErrorName(static_cast<cudaError_t>(code));
    if (!name || std::strstr(name, "unrecognized")) die(api, "returned cudaError_t " + std::to_string(code) + ", undefined");
    cudaGetLastError();
  } else {
    if (cuGetErrorName(static_cast<CUresult>(code), &name) != CUDA_SUCCESS || !name)
      die(api, "returned " + std::to_string(code) + ", a code the driver does not define");
    if (cuShimGetLastExplanationCode() != code)
      die(api, std::string("failed with ") + name + " but recorded no explanation for it");
  }
  const std::vector<int>& base = runtime ? kRuntimeBase : kDriverBase;
  if (std::find(base.begin(), base.end(), code) != base.end()) return;
  for (const Family& f : kFamilies)
    if (std::strstr(api, f.part) && std::find(f.codes.begin(), f.codes.end(), code) != f.codes.end()) return;
  // CUDA_SHIM_FUZZ_LEARN=1: report codes outside the lists instead of stopping (to review them).
  static const bool learn = std::getenv("CUDA_SHIM_FUZZ_LEARN") != nullptr;
  if (learn) {
    static std::set<std::pair<std::string, int>> told;
    if (told.emplace(api, code).second) std::fprintf(stderr, "fuzz_api: learn: %s returned %s (%d)\n", api, name, code);
    return;
  }
  die(api, std::string("returned ") + name + ", which is not among the codes its family may return");
}

void dump_codes() {
  // Which codes each call returned: CUDA_SHIM_FUZZ_CODES=file appends "call code name" lines.
  const char* f = std::getenv("CUDA_SHIM_FUZZ_CODES");
  if (!f) return;
  FILE* o = std::fopen(f, "a");
  if (!o) return;
  for (auto& [api, code] : g_seen) {
    const char* name = nullptr;
    if (!std::strncmp(api.c_str(), "nvml", 4)) name = nvmlErrorString(static_cast<nvmlReturn_t>(code));
    else if (!std::strncmp(api.c_str(), "cuda", 4) || !std::strncmp(api.c_str(), "__cuda", 6))
      name = cudaGetErrorName(static_cast<cudaError_t>(code));
    else cuGetErrorName(static_cast<CUresult>(code), &name);
    std::fprintf(o, "%s %d %s\n", api.c_str(), code, name ? name : "?");
  }
  std::fclose(o);
}

}  // namespace fz
