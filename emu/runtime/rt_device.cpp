// Runtime entries: versions, devices, device properties, limits, flags, entry points.
#include <atomic>
#include <cstddef>
#include <cstring>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "runtime/rt_hooks.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {
using rt::need;

// The runtime version cuda-shim's libcudart.so.13 implements: the CUDA 13.0 runtime API
// (its signatures, struct layouts and error texts). Bump only with a new API level.
constexpr int kRuntimeVersion = 13000;

// Flag sets the runtime accepts.
constexpr unsigned kDeviceFlagsMask = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
                                      cudaDeviceSyncMemops;

bool valid_device_flags(unsigned f) {
  unsigned sched = f & cudaDeviceScheduleMask;
  return (f & ~kDeviceFlagsMask) == 0 && (sched == 0 || sched == 1 || sched == 2 || sched == 4);
}

Errc check_device(int dev, const char* api) {
  Device* d = nullptr;
  return Driver::get().device(dev, d, api);
}

}  // namespace

Errc cudaDriverGetVersion(int* driverVersion) noexcept {
  RT_TRY(need(driverVersion, "cudaDriverGetVersion", "driverVersion"));
  *driverVersion = driver_version_reported();
  return Errc::success;
}

Errc cudaRuntimeGetVersion(int* runtimeVersion) noexcept {
  RT_TRY(need(runtimeVersion, "cudaRuntimeGetVersion", "runtimeVersion"));
  *runtimeVersion = kRuntimeVersion;
  return Errc::success;
}

Errc cudaGetDeviceCount(int* count) noexcept {
  RT_TRY(need(count, "cudaGetDeviceCount", "count"));
  // No context is created; no devices answers cudaErrorNoDevice with a count of 0.
  if (Errc e = rt::init(); e != Errc::success) {
    *count = 0;
    return e;
  }
  return api::cuDeviceGetCount(count);
}

Errc cudaGetDevice(int* device) noexcept {
  RT_TRY(need(device, "cudaGetDevice", "device"));
  RT_TRY(rt::init());
  *device = rt::current_device();
  return Errc::success;
}

Errc cudaSetDevice(int device) noexcept {
  // CUDA 12+: initializes the device's primary context at once and makes it current.
  return rt::select_device(device, "cudaSetDevice");
}

Errc cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) noexcept {
  RT_TRY(rt::init());
  RT_TRY(check_device(device, "cudaInitDevice"));
  if (flags & ~static_cast<unsigned>(cudaInitDeviceFlagsAreValid))
    return fail(Errc::invalid_value, "cudaInitDevice: flags {:#x}: only cudaInitDeviceFlagsAreValid (1) exists", flags);
  if (flags & cudaInitDeviceFlagsAreValid) {
    if (!valid_device_flags(deviceFlags))
      return fail(Errc::invalid_value, "cudaInitDevice: deviceFlags {:#x} contain unknown bits or an invalid "
                  "scheduling mode", deviceFlags);
    RT_TRY(api::cuDevicePrimaryCtxSetFlags_v2(device, deviceFlags));
  }
  CUcontext h = nullptr;
  return rt::primary(device, h, "cudaInitDevice");  // initialized, not made current
}

Errc cudaSetDeviceFlags(unsigned int flags) noexcept {
  RT_TRY(rt::init());
  if (!valid_device_flags(flags))
    return fail(Errc::invalid_value, "cudaSetDeviceFlags: flags {:#x} contain unknown bits or an invalid "
                "scheduling mode", flags);
  // Applies to the current device's primary context, active or not (CUDA 12+).
  return api::cuDevicePrimaryCtxSetFlags_v2(rt::current_device(), flags);
}

Errc cudaGetDeviceFlags(unsigned int* flags) noexcept {
  RT_TRY(need(flags, "cudaGetDeviceFlags", "flags"));
  RT_TRY(rt::init());
  if (auto c = current_context()) {
    *flags = c->flags();
    return Errc::success;
  }
  unsigned f = 0;
  int active = 0;
  RT_TRY(api::cuDevicePrimaryCtxGetState(rt::current_device(), &f, &active));
  *flags = f | cudaDeviceMapHost;  // host mapping is always on
  return Errc::success;
}

Errc cudaDeviceReset() noexcept {
  RT_TRY(rt::init());
  int dev = rt::current_device();
  RT_TRY(api::cuDevicePrimaryCtxReset_v2(dev));
  rt::forget_primary(dev);
  return Errc::success;
}

// No profiler is attached; the runtime makes its context current first, so both succeed.
Errc cudaProfilerStart() noexcept {
  RT_TRY(rt::context("cudaProfilerStart"));
  return api::cuProfilerStart();
}
Errc cudaProfilerStop() noexcept {
  RT_TRY(rt::context("cudaProfilerStop"));
  return api::cuProfilerStop();
}

Errc cudaDeviceSynchronize() noexcept {
  std::shared_ptr<Context> ctx;
  RT_TRY(rt::context("cudaDeviceSynchronize", &ctx));
  RT_TRY(not_in_host_function("cudaDeviceSynchronize"));
  ctx->synchronize();
  if (ctx->faulted()) return ctx->fault_error("cudaDeviceSynchronize");  // a kernel faulted: sticky
  return Errc::success;
}

Errc cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) noexcept {
  RT_TRY(rt::init());
  RT_TRY(need(value, "cudaDeviceGetAttribute", "value"));
  RT_TRY(check_device(device, "cudaDeviceGetAttribute"));
  // cudaDeviceAttr values are CUdevice_attribute values.
  return api::cuDeviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), device);
}

Errc cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) noexcept {
  RT_TRY(rt::init());
  RT_TRY(need(prop, "cudaGetDeviceProperties", "prop"));
  RT_TRY(check_device(device, "cudaGetDeviceProperties"));
  cudaDeviceProp p;
  std::memset(&p, 0, sizeof p);
  // Attributes the profile does not define read as 0, as for a device lacking the feature.
  auto A = [&](int a) {
    int v = 0;
    if (api::cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(a), device) != Errc::success) v = 0;
    return v;
  };
  RT_TRY(api::cuDeviceGetName(p.name, sizeof p.name, device));
  CUuuid u;
  RT_TRY(api::cuDeviceGetUuid_v2(&u, device));
  std::memcpy(&p.uuid, &u, sizeof u);
  size_t total = 0;
  RT_TRY(api::cuDeviceTotalMem_v2(&total, device));
  p.totalGlobalMem = total;  // luid / luidDeviceNodeMask: Windows only, zero here
  p.sharedMemPerBlock = A(8);
  p.regsPerBlock = A(12);
  p.warpSize = A(10);
  p.memPitch = static_cast<unsigned>(A(11));
  p.maxThreadsPerBlock = A(1);
  p.maxThreadsDim[0] = A(2), p.maxThreadsDim[1] = A(3), p.maxThreadsDim[2] = A(4);
  p.maxGridSize[0] = A(5), p.maxGridSize[1] = A(6), p.maxGridSize[2] = A(7);
  p.totalConstMem = A(9);
  p.major = A(75);
  p.minor = A(76);
  p.textureAlignment = A(14);
  p.texturePitchAlignment = A(51);
  p.multiProcessorCount = A(16);
  p.integrated = A(18);
  p.canMapHostMemory = A(19);
  p.maxTexture1D = A(21);
  p.maxTexture1DMipmap = A(77);
  p.maxTexture2D[0] = A(22), p.maxTexture2D[1] = A(23);
  p.maxTexture2DMipmap[0] = A(73), p.maxTexture2DMipmap[1] = A(74);
  p.maxTexture2DLinear[0] = A(70), p.maxTexture2DLinear[1] = A(71), p.maxTexture2DLinear[2] = A(72);
  p.maxTexture2DGather[0] = A(45), p.maxTexture2DGather[1] = A(46);
  p.maxTexture3D[0] = A(24), p.maxTexture3D[1] = A(25), p.maxTexture3D[2] = A(26);
  p.maxTexture3DAlt[0] = A(47), p.maxTexture3DAlt[1] = A(48), p.maxTexture3DAlt[2] = A(49);
  p.maxTextureCubemap = A(52);
  p.maxTexture1DLayered[0] = A(42), p.maxTexture1DLayered[1] = A(43);
  p.maxTexture2DLayered[0] = A(27), p.maxTexture2DLayered[1] = A(28), p.maxTexture2DLayered[2] = A(29);
  p.maxTextureCubemapLayered[0] = A(53), p.maxTextureCubemapLayered[1] = A(54);
  p.maxSurface1D = A(55);
  p.maxSurface2D[0] = A(56), p.maxSurface2D[1] = A(57);
  p.maxSurface3D[0] = A(58), p.maxSurface3D[1] = A(59), p.maxSurface3D[2] = A(60);
  p.maxSurface1DLayered[0] = A(61), p.maxSurface1DLayered[1] = A(62);
  p.maxSurface2DLayered[0] = A(63), p.maxSurface2DLayered[1] = A(64), p.maxSurface2DLayered[2] = A(65);
  p.maxSurfaceCubemap = A(66);
  p.maxSurfaceCubemapLayered[0] = A(67), p.maxSurfaceCubemapLayered[1] = A(68);
  p.surfaceAlignment = A(30);
  p.concurrentKernels = A(31);
  p.ECCEnabled = A(32);
  p.pciBusID = A(33);
  p.pciDeviceID = A(34);
  p.pciDomainID = A(50);
  p.tccDriver = A(35);
  p.asyncEngineCount = A(40);
  p.unifiedAddressing = A(41);
  p.memoryBusWidth = A(37);
  p.l2CacheSize = A(38);
  p.persistingL2CacheMaxSize = A(108);
  p.maxThreadsPerMultiProcessor = A(39);
  p.streamPrioritiesSupported = A(78);
  p.globalL1CacheSupported = A(79);
  p.localL1CacheSupported = A(80);
  p.sharedMemPerMultiprocessor = A(81);
  p.regsPerMultiprocessor = A(82);
  p.managedMemory = A(83);
  p.isMultiGpuBoard = A(84);
  p.multiGpuBoardGroupID = A(85);
  p.hostNativeAtomicSupported = A(86);
  p.pageableMemoryAccess = A(88);
  p.concurrentManagedAccess = A(89);
  p.computePreemptionSupported = A(90);
  p.canUseHostPointerForRegisteredMem = A(91);
  p.cooperativeLaunch = A(95);
  p.sharedMemPerBlockOptin = A(97);
  p.pageableMemoryAccessUsesHostPageTables = A(100);
  p.directManagedMemAccessFromHost = A(101);
  p.maxBlocksPerMultiProcessor = A(106);
  p.accessPolicyMaxWindowSize = A(109);
  p.reservedSharedMemPerBlock = A(111);
  p.hostRegisterSupported = A(99);
  p.sparseCudaArraySupported = A(112);
  p.hostRegisterReadOnlySupported = A(113);
  p.timelineSemaphoreInteropSupported = A(114);
  p.memoryPoolsSupported = A(115);
  p.gpuDirectRDMASupported = A(116);
  p.gpuDirectRDMAFlushWritesOptions = A(117);
  p.gpuDirectRDMAWritesOrdering = A(118);
  p.memoryPoolSupportedHandleTypes = A(119);
  p.deferredMappingCudaArraySupported = A(121);
  p.ipcEventSupported = A(125);
  p.clusterLaunch = A(120);
  p.unifiedFunctionPointers = A(129);
  p.deviceNumaConfig = A(130);
  p.deviceNumaId = A(131);
  p.mpsEnabled = A(133);
  p.hostNumaId = A(134);
  p.gpuPciDeviceID = static_cast<unsigned>(A(139));
  p.gpuPciSubsystemID = static_cast<unsigned>(A(140));
  p.hostNumaMultinodeIpcSupported = A(143);
  // Measured: the real runtime leaves `reserved` (the struct's tail) as the caller had it.
  static_assert(offsetof(cudaDeviceProp, reserved) + sizeof p.reserved == sizeof p);
  std::memcpy(prop, &p, offsetof(cudaDeviceProp, reserved));
  return Errc::success;
}

Errc cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceGetPCIBusId(pciBusId, len, device);
}

Errc cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceGetByPCIBusId(device, pciBusId);
}

Errc cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceCanAccessPeer(canAccessPeer, device, peerDevice);
}

// Peer access between the devices' primary contexts (the driver's rules, core/api_peer.cpp); the
// peer's primary context is initialized as the runtime initializes any device it addresses.
Errc cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) noexcept {
  const char* api = "cudaDeviceEnablePeerAccess";
  RT_TRY(rt::context(api));
  CUcontext peer = nullptr;
  RT_TRY(rt::primary(peerDevice, peer, api));
  return api::cuCtxEnablePeerAccess(peer, flags);
}

Errc cudaDeviceDisablePeerAccess(int peerDevice) noexcept {
  const char* api = "cudaDeviceDisablePeerAccess";
  RT_TRY(rt::context(api));
  CUcontext peer = nullptr;
  RT_TRY(rt::primary(peerDevice, peer, api));
  return api::cuCtxDisablePeerAccess(peer);
}

Errc cudaDeviceGetP2PAttribute(int* value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceGetP2PAttribute(value, static_cast<CUdevice_P2PAttribute>(attr), srcDevice, dstDevice);
}

Errc cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) noexcept {
  RT_TRY(rt::context("cudaDeviceGetStreamPriorityRange"));
  return api::cuCtxGetStreamPriorityRange(leastPriority, greatestPriority);
}

Errc cudaDeviceGetLimit(size_t* pValue, enum cudaLimit limit) noexcept {
  RT_TRY(rt::context("cudaDeviceGetLimit"));
  return api::cuCtxGetLimit(pValue, static_cast<CUlimit>(limit));  // cudaLimit values are CUlimit values
}

Errc cudaDeviceSetLimit(enum cudaLimit limit, size_t value) noexcept {
  RT_TRY(rt::context("cudaDeviceSetLimit"));
  return api::cuCtxSetLimit(static_cast<CUlimit>(limit), value);
}

// ---- driver entry points ----------------------------------------------------------------
}  // namespace cuda_shim::rtapi

cuda_shim::Errc cuda_shim::rt::no_proc_lookup(const char*, void**, int, unsigned long long, int*, int) {
  return fail(Errc::not_initialized, "cudaGetDriverEntryPoint: the driver's entry table is not loaded yet");
}

namespace cuda_shim::rtapi {
namespace {
Errc entry_point(const char* symbol, void** funcPtr, int cudaVersion, unsigned long long flags,
                 cudaDriverEntryPointQueryResult* driverStatus, bool per_thread, const char* api) {
  RT_TRY(need(symbol, api, "symbol"));
  RT_TRY(need(funcPtr, api, "funcPtr"));
  if (flags & ~static_cast<unsigned long long>(cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream))
    return fail(Errc::invalid_value, "{}: flags {:#x}: only cudaEnableDefault, cudaEnableLegacyStream and "
                "cudaEnablePerThreadDefaultStream exist", api, flags);
  // cudaEnable* values are CU_GET_PROC_ADDRESS_* values. The _ptsz entry (code built with
  // per-thread default streams) makes "default" mean per-thread.
  if (flags == cudaEnableDefault && per_thread) flags = cudaEnablePerThreadDefaultStream;
  RT_TRY(rt::init());
  int status = 0;
  RT_TRY(rt::proc_lookup.get()(symbol, funcPtr, cudaVersion, flags, &status, driver_version_reported()));
  // Measured: on failure (e.g. a version newer than the runtime) the status is left untouched.
  if (driverStatus) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
  return Errc::success;
}
}  // namespace

Errc cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                             enum cudaDriverEntryPointQueryResult* driverStatus) noexcept {
  return entry_point(symbol, funcPtr, kRuntimeVersion, flags, driverStatus, false, "cudaGetDriverEntryPoint");
}
Errc cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags,
                                  enum cudaDriverEntryPointQueryResult* driverStatus) noexcept {
  return entry_point(symbol, funcPtr, kRuntimeVersion, flags, driverStatus, true, "cudaGetDriverEntryPoint");
}
Errc cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                      unsigned long long flags,
                                      enum cudaDriverEntryPointQueryResult* driverStatus) noexcept {
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, false,
                     "cudaGetDriverEntryPointByVersion");
}
Errc cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                           unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult* driverStatus) noexcept {
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, true,
                     "cudaGetDriverEntryPointByVersion");
}

}  // namespace cuda_shim::rtapi
