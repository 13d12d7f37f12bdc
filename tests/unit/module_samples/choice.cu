// Which entry of a fat binary was chosen: each target leaves its own mark, static shared
// memory of TAG ints (arch-specific "a" targets add 1, family "f" targets 2).
#if defined(__CUDA_ARCH_SPECIFIC__)
#define TAG (__CUDA_ARCH__ + 1)
#elif defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define TAG (__CUDA_ARCH__ + 2)
#elif defined(__CUDA_ARCH__)
#define TAG __CUDA_ARCH__
#else
#define TAG 1
#endif
extern "C" __global__ void k_which(int* p) {
  __shared__ int tag[TAG];
  tag[threadIdx.x % TAG] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = tag[(threadIdx.x + 1) % TAG];
}
