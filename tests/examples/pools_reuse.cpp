// Stream-ordered reuse: when may memory freed with cudaFreeAsync serve the next allocation?
// Its own stream may reuse it at once (the free and the allocation are ordered by the stream);
// another stream only once the host has seen the free complete (here: cudaStreamSynchronize).
// The two policies that would let the pool reuse it earlier are turned off so the rule shows.
#include <cuda_runtime_api.h>

#include <cstdio>

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("%s: %s\n", what, cudaGetErrorName(e));
}

static unsigned long long attr(cudaMemPool_t pool, cudaMemPoolAttr a) {
  unsigned long long v = 0;
  check(cudaMemPoolGetAttribute(pool, a, &v), "cudaMemPoolGetAttribute");
  return v;
}

int main() {
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  cudaMemPool_t pool;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  int off = 0;  // no opportunistic reuse, no hidden dependencies: only the ordering rule
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &off), "set");
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &off), "set");

  cudaStream_t a, b;
  check(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "cudaStreamCreate");

  void *p1, *p2, *p3, *p4;
  check(cudaMallocFromPoolAsync(&p1, 1 << 20, pool, a), "alloc p1 on a");
  check(cudaFreeAsync(p1, a), "free p1 on a");
  check(cudaMallocFromPoolAsync(&p2, 1 << 20, pool, a), "alloc p2 on a");
  std::printf("same stream:       p2 %s p1\n", p2 == p1 ? "reuses" : "does not reuse");

  check(cudaFreeAsync(p2, a), "free p2 on a");
  check(cudaMallocFromPoolAsync(&p3, 1 << 20, pool, b), "alloc p3 on b");
  std::printf("other stream:      p3 %s p2 (the host has not seen the free)\n", p3 == p2 ? "reuses" : "does not reuse");

  check(cudaStreamSynchronize(a), "cudaStreamSynchronize");
  check(cudaMallocFromPoolAsync(&p4, 1 << 20, pool, b), "alloc p4 on b");
  std::printf("after synchronize: p4 %s p2\n", p4 == p2 ? "reuses" : "does not reuse");

  // UsedMemCurrent counts the live allocations (p3, p4); ReservedMemCurrent the 32 MiB chunk.
  std::printf("UsedMemCurrent = %llu, ReservedMemCurrent = %llu\n", attr(pool, cudaMemPoolAttrUsedMemCurrent),
              attr(pool, cudaMemPoolAttrReservedMemCurrent));
  check(cudaFreeAsync(p3, b), "free p3");
  check(cudaFreeAsync(p4, b), "free p4");
  check(cudaStreamSynchronize(b), "cudaStreamSynchronize");
  std::printf("after freeing both: UsedMemCurrent = %llu\n", attr(pool, cudaMemPoolAttrUsedMemCurrent));
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaMemPoolDestroy(pool);
  return 0;
}
