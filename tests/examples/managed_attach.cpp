// Managed memory's stream association: GLOBAL (every stream may use it), HOST or SINGLE (one
// stream). cudaStreamAttachMemAsync changes it in stream order: when the stream reaches the
// attach, not when the call returns. cuShimGetManagedAttachment (cuda-shim only) shows it.
// Then two mistakes the driver refuses: a partial length, and SINGLE on the NULL stream.
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

static std::atomic<bool> g_go{false};

// Stands in for a kernel: keeps the stream busy until the host lets it go.
static void CUDART_CB busy(void*) {
  while (!g_go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

static void show(const char* call, cudaError_t e) {
  std::printf("%s -> %s\n", call, cudaGetErrorName(e));
#ifdef CUDA_SHIM_EXT
  char why[512];
  if (e != cudaSuccess && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
#endif
}

static unsigned long long g_sid;  // stream s's id (cudaStreamGetId)

static void association(const char* when, void* p) {
#ifdef CUDA_SHIM_EXT
  unsigned int flags = 0;
  unsigned long long id = 0;
  cuShimGetManagedAttachment(reinterpret_cast<unsigned long long>(p), &flags, &id);
  const char* name = flags == cudaMemAttachGlobal ? "GLOBAL" : flags == cudaMemAttachHost ? "HOST" : "SINGLE";
  std::printf("  %s: %s%s\n", when, name, flags == cudaMemAttachSingle && id == g_sid ? " (stream s)" : "");
#endif
}

int main() {
  float* data = nullptr;
  cudaStream_t s;
  show("cudaMallocManaged(4 KiB, cudaMemAttachGlobal)",
       cudaMallocManaged(reinterpret_cast<void**>(&data), 4096, cudaMemAttachGlobal));
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaStreamGetId(s, &g_sid);
  association("after the allocation", data);

  cudaLaunchHostFunc(s, busy, nullptr);  // s is busy: the attach waits behind this
  show("cudaStreamAttachMemAsync(s, data, 0, cudaMemAttachSingle)",
       cudaStreamAttachMemAsync(s, data, 0, cudaMemAttachSingle));
  association("the call returned, s still busy", data);
  g_go = true;
  cudaStreamSynchronize(s);
  association("s reached the attach", data);

  // The mistakes: a length that is neither 0 nor the allocation's size; SINGLE without a stream.
  show("cudaStreamAttachMemAsync(s, data, 1024, cudaMemAttachHost)",
       cudaStreamAttachMemAsync(s, data, 1024, cudaMemAttachHost));
  show("cudaStreamAttachMemAsync(NULL, data, 0, cudaMemAttachSingle)",
       cudaStreamAttachMemAsync(nullptr, data, 0, cudaMemAttachSingle));

  // Destroying the stream returns the memory to the allocation's default once its work is done.
  cudaStreamDestroy(s);
  cudaDeviceSynchronize();
  association("after cudaStreamDestroy(s)", data);
  cudaFree(data);
  return 0;
}
