// A realistic host program written for NVIDIA's headers, compiled against ours
// only: driver API, PFN types from cudaTypedefs.h, the C++ runtime templates.
// Nothing is called at run time; compiling and linking is the test.
// (Set CUDA_SHIM_SAMPLE_LINK_LIBS in CMake to also link it against the emulator.)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include <cstring>

namespace {

// Driver entry points the way CCCL / cuda.bindings resolve them.
struct DriverTable {
    PFN_cuGetProcAddress_v12000 getProcAddress = nullptr;
    PFN_cuMemAlloc_v3020 memAlloc = nullptr;
    PFN_cuMemFree_v3020 pfnFree = nullptr;
    PFN_cuStreamCreate_v2000 streamCreate = nullptr;
    PFN_cuMemCreate_v10020 memCreate = nullptr;
    PFN_cuMemPoolCreate_v11020 poolCreate = nullptr;
    PFN_cuGetErrorName_v6000 errorName = nullptr;
};

[[maybe_unused]] CUresult resolve(DriverTable &t) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = t.getProcAddress("cuMemAlloc", reinterpret_cast<void **>(&t.memAlloc), CUDA_VERSION,
                                  CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) return r;
    return cuGetProcAddress("cuMemFree", reinterpret_cast<void **>(&t.pfnFree), 13000, CU_GET_PROC_ADDRESS_DEFAULT,
                            nullptr);
}

[[maybe_unused]] CUresult driver_path() {
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) return r;
    CUdevice dev = CU_DEVICE_INVALID;
    cuDeviceGet(&dev, 0);
    int vmm = 0;
    cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
    CUcontext ctx = nullptr;
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    CUstream s = nullptr;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = 0;
    cuMemAlloc(&p, 1 << 20);
    cuMemsetD8Async(p, 0, 1 << 20, s);
    cuMemcpyHtoDAsync(p, &vmm, sizeof vmm, CU_STREAM_PER_THREAD);
    CUmemAllocationProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    CUmemGenericAllocationHandle h = 0;
    cuMemCreate(&h, gran, &prop, 0);
    CUdeviceptr va = 0;
    cuMemAddressReserve(&va, gran, 0, 0, 0);
    cuMemMap(va, gran, 0, h, 0);
    CUmemAccessDesc acc{};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(va, gran, &acc, 1);
    int fd = -1;
    cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    cuMemUnmap(va, gran);
    cuMemAddressFree(va, gran);
    cuMemRelease(h);
    CUmemPoolProps pp{};
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location = prop.location;
    CUmemoryPool pool = nullptr;
    cuMemPoolCreate(&pool, &pp);
    CUdeviceptr ap = 0;
    cuMemAllocFromPoolAsync(&ap, 256, pool, s);
    cuMemFreeAsync(ap, s);
    CUipcMemHandle ipc;
    cuIpcGetMemHandle(&ipc, p);
    CUevent e = nullptr;
    cuEventCreate(&e, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
    cuEventRecord(e, s);
    cuStreamWaitEvent(CU_STREAM_LEGACY, e, CU_EVENT_WAIT_DEFAULT);
    cuLaunchHostFunc(s, [](void *) {}, nullptr);
    cuMemFree(p);
    cuEventDestroy(e);
    cuStreamDestroy(s);
    const char *name = nullptr;
    cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &name);
    return cuDevicePrimaryCtxRelease(dev);
}

[[maybe_unused]] cudaError_t runtime_path() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    float *d = nullptr;
    cudaMalloc(&d, 16 * sizeof(float));  // template overload
    double *h = nullptr;
    cudaMallocHost(&h, 64);               // template overload
    cudaMallocHost(reinterpret_cast<void **>(&h), 64, cudaHostAllocPortable);
    int *m = nullptr;
    cudaMallocManaged(&m, 64);
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t e = nullptr;
    cudaEventCreate(&e, cudaEventDisableTiming);  // C++ overload with flags
    cudaMemPool_t pool = nullptr;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    char *a = nullptr;
    cudaMallocAsync(&a, 128, s);
    cudaMallocAsync(&a, 128, pool, s);
    cudaMallocFromPoolAsync(&a, 128, pool, s);
    cudaFreeAsync(a, s);
    cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, cudaStreamPerThread);
    cudaMemsetAsync(d, 0, 64, cudaStreamLegacy);
    cudaPointerAttributes attrs;
    cudaPointerGetAttributes(&attrs, d);
    cudaIpcMemHandle_t ipc;
    cudaIpcGetMemHandle(&ipc, d);
    cudaLaunchHostFunc(s, [](void *) {}, nullptr);
    cudaEventRecord(e, s);
    cudaStreamSynchronize(s);
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 13000, cudaEnableDefault, &q);
    dim3 grid(2, 2), block;
    (void)grid;
    (void)block;
    cudaFree(d);
    cudaFreeHost(h);
    return cudaGetLastError();
}

}  // namespace

int per_thread_stream_tu_marker();

TEST_CASE("sample host program compiles against our headers", "[abi]") {
    CHECK(CUDA_VERSION == 13000);
    CHECK(per_thread_stream_tu_marker() == 1);
    // driver_path/runtime_path/resolve are never referenced, so the executable
    // needs no CUDA library: the compiler drops them after checking them.
}
