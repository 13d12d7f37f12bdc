// cuda-shim-demo: a tour of the CUDA runtime API that runs without a GPU.
//
//   build/bin/cuda-shim run --explain -- build/bin/cuda-shim-demo
//
// It copies a buffer to the device, moves it around on a stream, checks the bytes
// that come back, then makes one mistake on purpose to show what an error looks like.
// Nothing here is emulator-specific: the same source runs on NVIDIA's driver.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Every runtime call returns cudaError_t; stop at the first failure and say which call it was.
#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t err_ = (call);                                                             \
    if (err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,        \
                   cudaGetErrorName(err_), cudaGetErrorString(err_));                      \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

// Runs on a driver thread once everything queued before it on the stream has finished.
void CUDART_CB on_stream_done(void* user_data) {
  static_cast<std::atomic<int>*>(user_data)->fetch_add(1);
}

}  // namespace

int main() {
  // Line-buffered even into a pipe, so our lines and the emulator's explanations (stderr,
  // unbuffered) come out in the order they happen: `cuda-shim-demo 2>&1 | less` reads right.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // 1. Which devices are there?
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  std::printf("devices: %d\n", count);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, i));
    std::printf("  device %d: %s, %zu MiB\n", i, prop.name, prop.totalGlobalMem >> 20);
  }
  if (count == 0) return 1;
  CHECK(cudaSetDevice(0));

  // 2. Two device buffers; fill the first from the host.
  constexpr size_t n = 1 << 20;  // 1 MiB
  std::vector<unsigned char> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7 + 3);

  void* a = nullptr;
  void* b = nullptr;
  CHECK(cudaMalloc(&a, n));
  CHECK(cudaMalloc(&b, n));
  CHECK(cudaMemcpy(a, host.data(), n, cudaMemcpyHostToDevice));

  // 3. Work on a stream: queued in order, run asynchronously, timed with events.
  cudaStream_t stream;
  cudaEvent_t start, stop;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::atomic<int> callbacks{0};

  CHECK(cudaEventRecord(start, stream));
  CHECK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, stream));  // b = a
  CHECK(cudaMemsetAsync(b, 0xAB, 4096, stream));                      // then overwrite 4 KiB
  CHECK(cudaLaunchHostFunc(stream, on_stream_done, &callbacks));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));  // waits for everything before `stop`

  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("stream: copy + memset + host callback took %.3f ms, callback ran %d time(s)\n", ms,
              callbacks.load());

  // 4. Bring b back and check every byte.
  std::vector<unsigned char> back(n);
  CHECK(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned char want = i < 4096 ? 0xAB : host[i];
    if (back[i] != want && bad++ < 5)
      std::fprintf(stderr, "mismatch at byte %zu: got 0x%02x, want 0x%02x\n", i, back[i], want);
  }
  std::printf("verify: %s (%zu of %zu bytes wrong)\n", bad ? "FAILED" : "ok", bad, n);

  // 5. A deliberate mistake: 42 is not a cudaMemcpyKind. The call fails and says why;
  //    with CUDA_SHIM_EXPLAIN=1 (cuda-shim run --explain) the emulator also prints the reason.
  cudaError_t err = cudaMemcpy(b, a, 16, static_cast<cudaMemcpyKind>(42));
  std::printf("deliberate error: cudaMemcpy(kind = 42) -> %s: %s\n", cudaGetErrorName(err),
              cudaGetErrorString(err));
  bool error_ok = err == cudaErrorInvalidMemcpyDirection;
  // A failed call is also remembered until cudaGetLastError reads and clears it.
  bool last_ok = cudaGetLastError() == err && cudaGetLastError() == cudaSuccess;

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));

  bool pass = bad == 0 && callbacks.load() == 1 && ms >= 0 && error_ok && last_ok;
  if (!error_ok) std::fprintf(stderr, "expected cudaErrorInvalidMemcpyDirection\n");
  if (!last_ok) std::fprintf(stderr, "cudaGetLastError did not report the error once\n");
  std::printf("%s\n", pass ? "demo: PASS" : "demo: FAIL");
  return pass ? 0 : 1;
}
