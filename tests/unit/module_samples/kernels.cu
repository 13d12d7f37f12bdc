// Device code for test_module_image: parameter layouts, per-kernel resources and global
// variables of every kind. Built for sm_75 and sm_90 (machine code) and compute_90 (PTX).
struct alignas(16) Vec4 { float v[4]; };
struct Odd { char c[3]; };

__device__ int dvar[4] = {1, 2, 3, 4};
__device__ int zvar[8];                       // no initializer: .nv.global, zeros
__constant__ float cvar[2] = {1.5f, 2.0f};
__managed__ int mvar = 7;
__managed__ int mzero;                        // managed, no initializer
static __device__ int svar = 3;               // internal linkage: a LOCAL symbol
__device__ int* ptrvar = &dvar[1];            // initializer names another symbol
__device__ double dbl = 0.25;

extern "C" __global__ void k_simple(int* p, int n) { if (n) p[0] = dvar[0] + svar + *ptrvar + (int)dbl; }
extern "C" __global__ void __launch_bounds__(256) k_bounds(float* a, double b, char c) { a[threadIdx.x] = b + c + cvar[1]; }
extern "C" __global__ void k_struct(char c, Vec4 s, int* p, Odd o) { p[0] = c + s.v[3] + o.c[2] + mvar + mzero + zvar[2]; }
extern "C" __global__ void k_shared(int* p) {
  __shared__ int sh[128];
  sh[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = sh[127 - threadIdx.x];
}
// A local array whose address escapes into a call: a 400-byte stack frame.
__noinline__ __device__ int pick(int* a, int i) { return a[i]; }
extern "C" __global__ void k_local(int* p, int i) {
  int loc[100];
  for (int j = 0; j < 100; ++j) loc[j] = p[j] * j;
  p[1] = pick(loc, i);
}
__global__ void k_cpp(int x) { (void)x; }
template <class T> __global__ void k_tmpl(T* x) { *x = T(1); }
template __global__ void k_tmpl<float>(float*);
extern "C" __global__ void k_noparams() {}
