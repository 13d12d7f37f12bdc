// The per-thread default stream variant: the API macros pick the _ptds/_ptsz entry points.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <type_traits>

static_assert(std::is_same_v<decltype(&cuMemcpyHtoD), decltype(&cuMemcpyHtoD_v2_ptds)>);
static_assert(std::is_same_v<decltype(&cuMemcpyAsync), PFN_cuMemcpyAsync_v7000_ptsz>);

[[maybe_unused]] static cudaError_t ptds_path(cudaStream_t s, void *d, const void *h) {
    cudaMemcpyAsync(d, h, 16, cudaMemcpyHostToDevice, s);
    cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(d), h, 16, s);
    cuStreamQuery(s);
    return cudaStreamSynchronize(s);
}

int per_thread_stream_tu_marker() { return 1; }
