// An nvcc-built program's __device__, __constant__ and __managed__ variables: their initial values
// from the device image, copies to and from symbols (offsets, async, device to device), symbol
// addresses and sizes, what cudaPointerGetAttributes says about each, the managed variable used
// straight from the host (also after cudaStreamAttachMemAsync), the errors for things that are not
// symbols or ranges past one's end, and cudaFuncGetAttributes (__launch_bounds__, static shared
// memory, which image of the fat binary was chosen). No kernel is launched.
//
// The SASS built in: sm_90, or with -DNVCC_TEST_GENCODE sm_75, sm_90 and sm_100 (CMakeLists.txt);
// when the device's compute capability is one of them, cudaFuncGetAttributes' binaryVersion must
// name it: the fat binary's image for this device was chosen.
#include "nvcc_test.h"

#include <cstdint>

__device__ int dvar[4] = {1, 2, 3, 4};
__constant__ float cvar[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
__managed__ int mvar = 42;
namespace ns {
__device__ double nvar[2] = {3.25, -1.0};
}
static __device__ short svar[3] = {7, 8, 9};

int notsym[4] = {9, 9, 9, 9};  // a host array: not a symbol
static void host_only() {}

__global__ void __launch_bounds__(256) bounded(int* out) {
  out[threadIdx.x] = dvar[threadIdx.x & 3] + mvar + svar[threadIdx.x % 3] + static_cast<int>(cvar[threadIdx.x & 7]) +
                     static_cast<int>(ns::nvar[threadIdx.x & 1]);
}

__global__ void tiled(float* out) {
  __shared__ float tile[256];  // 1024 bytes of static shared memory
  tile[threadIdx.x & 255] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[255 - (threadIdx.x & 255)];
}

#ifdef NVCC_TEST_GENCODE
static const int kSass[] = {75, 90, 100};
#else
static const int kSass[] = {90};
#endif

template <class T, size_t N>
static bool same(const T (&a)[N], const T (&b)[N]) {
  return std::memcmp(a, b, sizeof a) == 0;
}

static void initial_values() {
  int d[4] = {};
  float c[8] = {};
  int m = 0;
  double nv[2] = {};
  short sv[3] = {};
  OK(cudaMemcpyFromSymbol(d, dvar, sizeof d));
  OK(cudaMemcpyFromSymbol(c, cvar, sizeof c));
  OK(cudaMemcpyFromSymbol(&m, mvar, sizeof m));
  OK(cudaMemcpyFromSymbol(nv, ns::nvar, sizeof nv));
  OK(cudaMemcpyFromSymbol(sv, svar, sizeof sv));
  const int wd[4] = {1, 2, 3, 4};
  const float wc[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
  const double wn[2] = {3.25, -1.0};
  const short ws[3] = {7, 8, 9};
  CHECK(same(d, wd));
  CHECK(same(c, wc));
  CHECK(m == 42);
  CHECK(same(nv, wn));
  CHECK(same(sv, ws));
  CHECK(mvar == 42);  // the host's own view of the managed variable
}

static void sizes_addresses_attributes() {
  size_t n = 0;
  OK(cudaGetSymbolSize(&n, dvar));
  CHECK(n == sizeof(int) * 4);
  OK(cudaGetSymbolSize(&n, cvar));
  CHECK(n == sizeof(float) * 8);
  OK(cudaGetSymbolSize(&n, mvar));
  CHECK(n == sizeof(int));
  OK(cudaGetSymbolSize(&n, ns::nvar));
  CHECK(n == sizeof(double) * 2);
  OK(cudaGetSymbolSize(&n, svar));
  CHECK(n == sizeof(short) * 3);

  struct {
    const char* name;
    const void* symbol;
    cudaMemoryType type;
    size_t bytes;
  } syms[] = {
      {"dvar", &dvar, cudaMemoryTypeDevice, sizeof(int) * 4},
      {"cvar", &cvar, cudaMemoryTypeDevice, sizeof(float) * 8},
      {"mvar", &mvar, cudaMemoryTypeManaged, sizeof(int)},
      {"ns::nvar", &ns::nvar, cudaMemoryTypeDevice, sizeof(double) * 2},
      {"svar", &svar, cudaMemoryTypeDevice, sizeof(short) * 3},
  };
  void* addr[5] = {};
  for (int i = 0; i < 5; ++i) {
    OK(cudaGetSymbolAddress(&addr[i], syms[i].symbol));
    CHECK(addr[i] != nullptr);
    if (!addr[i]) continue;
    cudaPointerAttributes a;
    std::memset(&a, 0, sizeof a);
    OK(cudaPointerGetAttributes(&a, addr[i]));
    if (a.type != syms[i].type)
      std::fprintf(stderr, "symbols: %s at %p: cudaPointerGetAttributes type %d, want %d\n", syms[i].name, addr[i],
                   static_cast<int>(a.type), static_cast<int>(syms[i].type));
    CHECK(a.type == syms[i].type);
    CHECK(a.device == 0);
    CHECK(a.devicePointer == addr[i]);
    if (syms[i].type == cudaMemoryTypeManaged) CHECK(a.hostPointer == addr[i]);
    // The address is ordinary device memory: plain copies read what the symbol copies read.
    unsigned char via_addr[64] = {}, via_sym[64] = {};
    OK(cudaMemcpy(via_addr, addr[i], syms[i].bytes, cudaMemcpyDeviceToHost));
    OK(cudaMemcpyFromSymbol(via_sym, syms[i].symbol, syms[i].bytes));
    CHECK(std::memcmp(via_addr, via_sym, syms[i].bytes) == 0);
  }
  // A managed variable's host name is its managed address.
  CHECK(addr[2] == static_cast<void*>(&mvar));

  // Written through the address, seen through the symbol.
  if (addr[4]) {
    short v = 100;
    OK(cudaMemcpy(static_cast<short*>(addr[4]) + 1, &v, sizeof v, cudaMemcpyHostToDevice));
    short sv[3] = {};
    OK(cudaMemcpyFromSymbol(sv, svar, sizeof sv));
    const short ws[3] = {7, 100, 9};
    CHECK(same(sv, ws));
  }
}

static void copies_with_offsets(cudaStream_t s) {
  int v = 40;
  OK(cudaMemcpyToSymbol(dvar, &v, sizeof v, 2 * sizeof(int)));
  int d[4] = {};
  OK(cudaMemcpyFromSymbol(d, dvar, sizeof d));
  const int w1[4] = {1, 2, 40, 4};
  CHECK(same(d, w1));
  int last = 0;
  OK(cudaMemcpyFromSymbol(&last, dvar, sizeof last, 3 * sizeof(int)));
  CHECK(last == 4);

  const float two[2] = {10.f, 11.f};
  OK(cudaMemcpyToSymbol(cvar, two, sizeof two, 4 * sizeof(float)));
  float back[2] = {};
  OK(cudaMemcpyFromSymbol(back, cvar, sizeof back, 4 * sizeof(float)));
  CHECK(same(back, two));
  float c[8] = {};
  OK(cudaMemcpyFromSymbol(c, cvar, sizeof c));
  const float wc[8] = {0.5f, 1.5f, 2.5f, 3.5f, 10.f, 11.f, 6.5f, 7.5f};
  CHECK(same(c, wc));

  const double nv = 6.5;
  OK(cudaMemcpyToSymbol(ns::nvar, &nv, sizeof nv, sizeof(double)));
  double n2[2] = {};
  OK(cudaMemcpyFromSymbol(n2, ns::nvar, sizeof n2));
  CHECK(n2[0] == 3.25 && n2[1] == 6.5);

  // Device to device, both ways, through a cudaMalloc buffer.
  int* buf = nullptr;
  OK(cudaMalloc(&buf, 4 * sizeof(int)));
  if (buf) {
    const int h[4] = {5, 6, 7, 8};
    OK(cudaMemcpy(buf, h, sizeof h, cudaMemcpyHostToDevice));
    OK(cudaMemcpyToSymbol(dvar, buf, sizeof h, 0, cudaMemcpyDeviceToDevice));
    OK(cudaMemcpyFromSymbol(d, dvar, sizeof d));
    CHECK(same(d, h));
    OK(cudaMemcpyFromSymbol(buf + 1, cvar, sizeof(float), 5 * sizeof(float), cudaMemcpyDeviceToDevice));
    float f = 0;
    OK(cudaMemcpy(&f, buf + 1, sizeof f, cudaMemcpyDeviceToHost));
    CHECK(f == 11.f);
    OK(cudaFree(buf));
  }

  // Stream-ordered: to and from the symbol on a stream, then synchronized.
  static int pinned_src[2] = {21, 22};
  int got[4] = {};
  OK(cudaMemcpyToSymbolAsync(dvar, pinned_src, sizeof pinned_src, sizeof(int), cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyFromSymbolAsync(got, dvar, sizeof got, 0, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  const int w2[4] = {5, 21, 22, 8};
  CHECK(same(got, w2));
}

static void managed_from_host(cudaStream_t s) {
  mvar = 7;  // a host store to the managed variable
  int m = 0;
  OK(cudaMemcpyFromSymbol(&m, mvar, sizeof m));
  CHECK(m == 7);
  m = 99;
  OK(cudaMemcpyToSymbol(mvar, &m, sizeof m));
  OK(cudaDeviceSynchronize());
  CHECK(mvar == 99);
  int* pm = &mvar;
  CHECK(*pm == 99);

  // Attached to the host on a stream, then used from the host; then back to global.
  OK(cudaStreamAttachMemAsync(s, &mvar, 0, cudaMemAttachHost));
  OK(cudaStreamSynchronize(s));
  mvar = 5;
  CHECK(mvar == 5);
  OK(cudaMemcpyFromSymbol(&m, mvar, sizeof m));
  CHECK(m == 5);
  OK(cudaStreamAttachMemAsync(s, &mvar, 0, cudaMemAttachGlobal));
  OK(cudaStreamSynchronize(s));
  mvar += 1;
  CHECK(mvar == 6);
}

static void bad_input() {
  int h[4] = {};
  // Not a symbol: a host array, and a pointer inside a symbol's host shadow.
  EXPECT_ERR(cudaMemcpyFromSymbol(h, notsym, sizeof(int)), cudaErrorInvalidSymbol);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidSymbol);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  EXPECT_ERR(cudaMemcpyToSymbol(notsym, h, sizeof(int)), cudaErrorInvalidSymbol);
  // (the C entry point: the C++ template would pass the address of a temporary pointer)
  EXPECT_ERR(cudaMemcpyFromSymbol(h, static_cast<const void*>(&dvar[1]), sizeof(int)), cudaErrorInvalidSymbol);
  void* p = nullptr;
  EXPECT_ERR(cudaGetSymbolAddress(&p, notsym), cudaErrorInvalidSymbol);
  size_t n = 0;
  EXPECT_ERR(cudaGetSymbolSize(&n, notsym), cudaErrorInvalidSymbol);
  // Past the end: offset + count beyond the variable.
  EXPECT_ERR(cudaMemcpyToSymbol(dvar, h, 2 * sizeof(int), 3 * sizeof(int)), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemcpyFromSymbol(h, dvar, sizeof(int) * 4 + 1), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemcpyFromSymbol(h, svar, 1, sizeof(short) * 3), cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  // Nothing was written by the refused copies.
  int d[4] = {};
  OK(cudaMemcpyFromSymbol(d, dvar, sizeof d));
  const int w[4] = {5, 21, 22, 8};
  CHECK(same(d, w));
  OK(cudaDeviceSynchronize());  // none of that is sticky
}

static void function_attributes() {
  int major = 0, minor = 0;
  OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  const int cc = major * 10 + minor;

  cudaFuncAttributes fa;
  std::memset(&fa, 0, sizeof fa);
  OK(cudaFuncGetAttributes(&fa, bounded));
  if (fa.maxThreadsPerBlock != 256)
    std::fprintf(stderr, "symbols: bounded: maxThreadsPerBlock %d, want 256 (__launch_bounds__)\n", fa.maxThreadsPerBlock);
  CHECK(fa.maxThreadsPerBlock == 256);
  CHECK(fa.sharedSizeBytes == 0);
  bool built_for_device = false;
  for (int v : kSass) built_for_device |= v == cc;
  if (built_for_device) {
    if (fa.binaryVersion != cc)
      std::fprintf(stderr, "symbols: bounded: binaryVersion %d, want %d (the image for this device)\n", fa.binaryVersion, cc);
    CHECK(fa.binaryVersion == cc);
  }

  std::memset(&fa, 0, sizeof fa);
  OK(cudaFuncGetAttributes(&fa, tiled));
  CHECK(fa.maxThreadsPerBlock == 1024);
  if (fa.sharedSizeBytes != 1024)
    std::fprintf(stderr, "symbols: tiled: sharedSizeBytes %zu, want 1024\n", fa.sharedSizeBytes);
  CHECK(fa.sharedSizeBytes == 1024);
  if (built_for_device) CHECK(fa.binaryVersion == cc);

  // NVIDIA's runtime 13 on a real H100: a pointer that is no registered kernel is an invalid
  // resource handle (not cudaErrorInvalidDeviceFunction, as older documentation has it).
  EXPECT_ERR(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(notsym)), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(&host_only)), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
}

int main() {
  g_prog = "symbols";
  require_shim_if_asked();
  OK(cudaSetDevice(0));
  initial_values();
  sizes_addresses_attributes();
  cudaStream_t s = nullptr;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  copies_with_offsets(s);
  managed_from_host(s);
  bad_input();
  function_attributes();
  OK(cudaStreamDestroy(s));
  // On cuda-shim: no host access above broke the managed-memory rules.
  if (auto violations = shim_fn<unsigned long long (*)()>("cuShimManagedViolations")) CHECK(violations() == 0);
  return finish("device, constant and managed variables; function attributes");
}
