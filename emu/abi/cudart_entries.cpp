// libcudart.so.13: every cuda* entry forwards to the runtime inside libcuda.so.1
// through the private table. Exported under version node libcudart.so.13.
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "abi/rt_table.hpp"

namespace cuda_shim::rt_bridge {
namespace {
const RuntimeTable* load() noexcept {
  const void* t = nullptr;
  if (cuGetExportTable(&t, &kRuntimeTableId) != CUDA_SUCCESS || !t ||
      static_cast<const RuntimeTable*>(t)->size != sizeof(RuntimeTable) ||
      static_cast<const RuntimeTable*>(t)->version != kRuntimeTableVersion) {
    // Mixed installs (our libcudart with another libcuda) cannot work; say so plainly.
    std::fprintf(stderr, "cuda-shim: libcudart.so.13 needs cuda-shim's libcuda.so.1 (found another driver)\n");
    std::abort();
  }
  return static_cast<const RuntimeTable*>(t);
}
}  // namespace

// A plain global rather than a function-local static: every cuda* call reads it, and the
// static's guard cost a call's worth. Threads racing the first load all store the same table.
std::atomic<const RuntimeTable*> g_table{nullptr};

const RuntimeTable& rt() noexcept {
  const RuntimeTable* t = g_table.load(std::memory_order_acquire);
  if (!t) [[unlikely]] {
    t = load();
    g_table.store(t, std::memory_order_release);
  }
  return *t;
}

int not_supported(const char* api) noexcept { return rt().not_supported(api); }

}  // namespace cuda_shim::rt_bridge

using cuda_shim::rt_bridge::rt;

#define RT_ENTRY(name, params, args) \
  extern "C" __attribute__((visibility("default"))) cudaError_t CUDARTAPI name params { return rt().name args; }
#include "abi/runtime_entries.def"
#undef RT_ENTRY
#define RT_HOST(ret, name, params, args) \
  extern "C" __attribute__((visibility("default"))) ret CUDARTAPI name params { return rt().name args; }
#include "abi/runtime_hosting.def"
#undef RT_HOST

extern "C" __attribute__((visibility("default"))) const char* CUDARTAPI cudaGetErrorName(cudaError_t e) {
  return rt().cudaGetErrorName(e);
}
extern "C" __attribute__((visibility("default"))) const char* CUDARTAPI cudaGetErrorString(cudaError_t e) {
  return rt().cudaGetErrorString(e);
}
extern "C" __attribute__((visibility("default"))) cudaError_t CUDARTAPI cudaGetLastError(void) {
  return rt().cudaGetLastError();
}
extern "C" __attribute__((visibility("default"))) cudaError_t CUDARTAPI cudaPeekAtLastError(void) {
  return rt().cudaPeekAtLastError();
}
// A pure constructor (returns its struct by value, so it cannot be a generic stub).
extern "C" __attribute__((visibility("default"))) cudaChannelFormatDesc CUDARTAPI
cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  cudaChannelFormatDesc d;
  d.x = x;
  d.y = y;
  d.z = z;
  d.w = w;
  d.f = f;
  return d;
}
