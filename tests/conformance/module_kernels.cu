// Device code for the module conformance test (test_module.cpp) and the module probe
// (tools/probe/module/runtime.cu, which #includes it so the runtime API sees the same kernels and
// variables): tests/CMakeLists.txt and tools/probe/run_module_probe.sh build it with nvcc into a
// fat binary, an sm_90 cubin, an sm_100 cubin and PTX.
// Names (Itanium mangling) as the probe enumerates them:
//   _Z7k_plaincid3S24Pi   _Z9k_boundedPi   _Z8k_sharedPi   _Z6k_tmplIiEvPT_S0_
//   _Z6k_tmplIfEvPT_S0_   k_extern_c   _Z9k_globalsPi   _Z7k_emptyv
struct S24 {  // 24 bytes, 8-byte aligned
  double a;
  int b;
  char c[12];
};

__device__ int dvar[4] = {1, 2, 3, 4};
__constant__ float cvar[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
__managed__ int mvar = 42;

// Parameters of mixed sizes and alignments: offsets 0 (char), 4 (int), 8 (double),
// 16 (S24), 40 (pointer); 48 bytes in all.
__global__ void k_plain(char c, int i, double d, S24 s, int* out) {
  if (out && threadIdx.x == 0 && blockIdx.x == 0) out[0] = c + i + static_cast<int>(d) + s.b + s.c[0];
}

__global__ void __launch_bounds__(256) k_bounded(int* out) {
  if (out) atomicAdd(out, 1);
}

__global__ void k_shared(int* out) {
  __shared__ int tile[1024];  // 4096 bytes of static shared memory
  tile[threadIdx.x % 1024] = threadIdx.x;
  __syncthreads();
  if (out && threadIdx.x == 0) out[blockIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

template <typename T>
__global__ void k_tmpl(T* out, T v) {
  if (out) out[threadIdx.x] = v;
}
template __global__ void k_tmpl<int>(int*, int);
template __global__ void k_tmpl<float>(float*, float);

extern "C" __global__ void k_extern_c(int* out, int n) {
  if (out && threadIdx.x == 0 && blockIdx.x == 0) out[0] = n;
}

// Uses the three variables, so no compilation mode drops them.
__global__ void k_globals(int* out) {
  if (out) {
    out[0] = dvar[0] + dvar[3];
    out[1] = static_cast<int>(cvar[7] * 2.0f);
    out[2] = mvar;
  }
}

__global__ void k_empty() {}
