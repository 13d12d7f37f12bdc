// Kernel launches from an nvcc-built program: <<<>>> and cudaLaunchKernel (C and C++ forms),
// a template and a namespaced kernel, on the default stream and on created streams.
//
// What a launch does depends on where it runs:
//   NVIDIA's driver, and cuda-shim with CUDA_SHIM_KERNELS unset or "run": launches succeed and
//     the kernels run (their results are checked; cuda-shim runs the PTX nvcc keeps);
//   cuda-shim, CUDA_SHIM_KERNELS=refuse: every valid launch fails with cudaErrorNotSupported,
//     once (cudaGetLastError then says cudaSuccess: not sticky), and everything else keeps working;
//   cuda-shim, CUDA_SHIM_KERNELS=skip: launches succeed as no-ops in stream order.
// Either way cuda-shim records each launch that passed the checks (cuShimGetLaunchCount /
// cuShimGetLaunchRecord, looked up with dlsym so this file builds with NVIDIA's headers alone),
// and invalid configurations fail with the real driver's codes before any of that.
#include "nvcc_test.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&p[i], 1);
}

template <int N>
__global__ void scale(float* p) {
  p[threadIdx.x] *= N;
}

namespace app {
__global__ void __launch_bounds__(256) fill(int* p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }
}  // namespace app

// cuda-shim's record of a launch (cuda_shim_ext.h's CUshimLaunchRecord, same layout).
struct LaunchRecord {
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int sharedMemBytes;
  int skipped;
  unsigned long long streamId;
};
using CountFn = unsigned long long (*)();
using RecordFn = int (*)(unsigned long long, LaunchRecord*, char*, size_t);

enum class Mode { Refuse, Skip, Real };
static Mode mode = Mode::Real;
static CountFn launch_count = nullptr;
static RecordFn launch_record = nullptr;

// What a valid launch returns here.
static cudaError_t launch_result() { return mode == Mode::Refuse ? cudaErrorNotSupported : cudaSuccess; }

static unsigned long long count_now() { return launch_count ? launch_count() : 0; }

// cuda-shim only: the launch at `index` was recorded as this kernel, configuration and stream.
static void expect_record(int line, unsigned long long index, const char* name, dim3 grid, dim3 block, unsigned shared,
                          cudaStream_t stream) {
  if (!launch_record) return;
  LaunchRecord r;
  std::memset(&r, 0xff, sizeof r);
  char got[256] = {};
  int rc = launch_record(index, &r, got, sizeof got);
  unsigned long long id = ~0ull;
  OK(cudaStreamGetId(stream, &id));
  bool good = rc == 0 && std::strcmp(got, name) == 0 && r.grid[0] == grid.x && r.grid[1] == grid.y &&
              r.grid[2] == grid.z && r.block[0] == block.x && r.block[1] == block.y && r.block[2] == block.z &&
              r.sharedMemBytes == shared && r.skipped == (mode == Mode::Skip ? 1 : 0) && r.streamId == id;
  if (!good) {
    std::fprintf(stderr,
                 "%s: FAILED line %d: launch record %llu: rc %d name '%s' grid %u,%u,%u block %u,%u,%u shared %u "
                 "skipped %d stream %llu; want rc 0 name '%s' grid %u,%u,%u block %u,%u,%u shared %u skipped %d "
                 "stream %llu\n",
                 g_prog, line, index, rc, got, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2],
                 r.sharedMemBytes, r.skipped, r.streamId, name, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                 shared, mode == Mode::Skip ? 1 : 0, id);
    ++g_failures;
  }
}

static void expect_count(int line, unsigned long long want) {
  if (!launch_count) return;
  unsigned long long got = launch_count();
  if (got != want) {
    std::fprintf(stderr, "%s: FAILED line %d: cuShimGetLaunchCount() %llu, want %llu\n", g_prog, line, got, want);
    ++g_failures;
  }
}

// ---- <<<>>> and cudaLaunchKernel, one by one ---------------------------------------------

static void single_launches() {
  const int n = 512;
  int *d = nullptr, *e = nullptr;
  float* f = nullptr;
  OK(cudaMalloc(&d, n * sizeof(int)));
  OK(cudaMalloc(&e, n * sizeof(int)));
  OK(cudaMalloc(&f, 64 * sizeof(float)));
  if (!d || !e || !f) return;
  std::vector<int> h(n, 10), back(n, 0), eback(n, 0);
  std::vector<float> fh(64, 1.5f), fback(64, 0.f);
  OK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  OK(cudaMemcpy(e, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  OK(cudaMemcpy(f, fh.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s = nullptr;
  OK(cudaStreamCreate(&s));

  // <<<>>> on the default stream: the result comes from cudaGetLastError, once.
  unsigned long long c0 = count_now();
  add_one<<<dim3(3, 2, 1), dim3(64, 2, 1), 128>>>(d, n);
  EXPECT_ERR(cudaGetLastError(), launch_result());
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  expect_count(__LINE__, c0 + 1);
  expect_record(__LINE__, c0, "_Z7add_onePii", dim3(3, 2, 1), dim3(64, 2, 1), 128, 0);
  OK(cudaDeviceSynchronize());  // not sticky

  // cudaLaunchKernel, the C form, on a stream: the result is returned, and is the last error.
  int count = n;
  void* args[] = {&d, &count};
  EXPECT_ERR(cudaLaunchKernel(reinterpret_cast<const void*>(add_one), dim3(3), dim3(128), args, 0, s),
             launch_result());
  EXPECT_ERR(cudaGetLastError(), launch_result());
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  expect_count(__LINE__, c0 + 2);
  expect_record(__LINE__, c0 + 1, "_Z7add_onePii", dim3(3), dim3(128), 0, s);
  OK(cudaStreamSynchronize(s));

  // The C++ form with a template kernel, then a namespaced kernel with <<<>>> on a stream.
  void* fargs[] = {&f};
  EXPECT_ERR(cudaLaunchKernel(scale<4>, dim3(1), dim3(64), fargs, 256, s), launch_result());
  EXPECT_ERR(cudaGetLastError(), launch_result());
  expect_record(__LINE__, c0 + 2, "_Z5scaleILi4EEvPf", dim3(1), dim3(64), 256, s);
  app::fill<<<2, 256, 0, s>>>(e, 3);
  EXPECT_ERR(cudaGetLastError(), launch_result());
  expect_count(__LINE__, c0 + 4);
  expect_record(__LINE__, c0 + 3, "_ZN3app4fillEPii", dim3(2), dim3(256), 0, s);
  OK(cudaStreamSynchronize(s));
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);

  // Memory calls keep working after the launches, whatever those did.
  OK(cudaMemcpy(back.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(eback.data(), e, n * sizeof(int), cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(fback.data(), f, 64 * sizeof(float), cudaMemcpyDeviceToHost));
  if (mode == Mode::Real) {
    // add_one: x covers 0..191 four times (grid.y * block.y), then 0..383 once.
    std::vector<int> want(n, 10);
    for (int i = 0; i < n; ++i) want[i] += (i < 192 ? 4 : 0) + (i < 384 ? 1 : 0);
    CHECK(back == want);
    CHECK(eback == std::vector<int>(n, 3));
    CHECK(fback == std::vector<float>(64, 6.f));
  } else {
    CHECK(back == h);  // no device code ran
    CHECK(eback == h);
    CHECK(fback == fh);
  }
  int* d2 = nullptr;
  OK(cudaMalloc(&d2, 4096));
  if (d2) {
    OK(cudaMemset(d2, 0x7f, 4096));
    unsigned char bytes[4096];
    OK(cudaMemcpy(bytes, d2, sizeof bytes, cudaMemcpyDeviceToHost));
    CHECK(bytes[0] == 0x7f && bytes[4095] == 0x7f);
    OK(cudaFree(d2));
  }
  OK(cudaFree(f));
  OK(cudaFree(e));
  OK(cudaFree(d));
  OK(cudaStreamDestroy(s));
}

// ---- invalid configurations ------------------------------------------------------------------

static void bad_configurations() {
  int* d = nullptr;
  OK(cudaMalloc(&d, 4096 * sizeof(int)));
  unsigned long long c0 = count_now();
  // 2048 threads in a block, in one dimension and in two.
  add_one<<<1, 2048>>>(d, 4096);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  add_one<<<1, dim3(32, 64)>>>(d, 4096);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  int count = 4096;
  void* args[] = {&d, &count};
  EXPECT_ERR(cudaLaunchKernel(reinterpret_cast<const void*>(add_one), dim3(1), dim3(2048), args, 0, nullptr),
             cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  // An empty grid; a host function where a kernel belongs.
  add_one<<<0, 32>>>(d, 4096);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERR(cudaLaunchKernel(reinterpret_cast<const void*>(&bad_configurations), dim3(1), dim3(1), args, 0, nullptr),
             cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  expect_count(__LINE__, c0);  // refused before the policy: not recorded
  OK(cudaDeviceSynchronize());
  OK(cudaFree(d));
}

// ---- stream order around a launch ------------------------------------------------------------
//
// s1: [gate, a host function that waits to be released] [the launch] [event ev] [host fn "after"]
// s2: [wait for ev] [host fn "s2"]
// While the gate holds nothing behind it may finish; once released, "gate" < "after", and "s2"
// runs only after ev, which is after the launch.

static std::mutex log_mu;
static std::vector<std::string> order_log;
static std::atomic<bool> released{false};
static std::atomic<bool> gate_timed_out{false};

static void log_tag(const char* tag) {
  std::lock_guard<std::mutex> lock(log_mu);
  order_log.emplace_back(tag);
}
static void CUDART_CB gate_fn(void*) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!released.load()) {
    if (std::chrono::steady_clock::now() > until) {
      gate_timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  log_tag("gate");
}
static void CUDART_CB tag_fn(void* tag) { log_tag(static_cast<const char*>(tag)); }

static void stream_order() {
  cudaStream_t s1 = nullptr, s2 = nullptr;
  OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t ev = nullptr;
  OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  int* d = nullptr;
  OK(cudaMalloc(&d, 256 * sizeof(int)));
  OK(cudaMemset(d, 0, 256 * sizeof(int)));
  static char after[] = "after", on_s2[] = "s2";

  unsigned long long c0 = count_now();
  OK(cudaLaunchHostFunc(s1, gate_fn, nullptr));
  add_one<<<2, 128, 64, s1>>>(d, 256);
  EXPECT_ERR(cudaGetLastError(), launch_result());
  OK(cudaEventRecord(ev, s1));
  OK(cudaLaunchHostFunc(s1, tag_fn, after));
  OK(cudaStreamWaitEvent(s2, ev, 0));
  OK(cudaLaunchHostFunc(s2, tag_fn, on_s2));

  // Held by the gate: the event, both streams and the functions behind them wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_ERR(cudaEventQuery(ev), cudaErrorNotReady);
  EXPECT_ERR(cudaStreamQuery(s1), cudaErrorNotReady);
  EXPECT_ERR(cudaStreamQuery(s2), cudaErrorNotReady);
  {
    std::lock_guard<std::mutex> lock(log_mu);
    CHECK(order_log.empty());
  }
  released = true;
  OK(cudaStreamSynchronize(s2));
  OK(cudaStreamSynchronize(s1));
  CHECK(!gate_timed_out);
  OK(cudaEventQuery(ev));
  std::vector<std::string> got;
  {
    std::lock_guard<std::mutex> lock(log_mu);
    got = order_log;
  }
  CHECK(got.size() == 3);
  if (got.size() == 3) {
    CHECK(got[0] == "gate");
    CHECK((got[1] == "after" && got[2] == "s2") || (got[1] == "s2" && got[2] == "after"));
  }
  if (got.size() != 3 || got[0] != "gate") {
    std::string all;
    for (auto& t : got) all += " " + t;
    std::fprintf(stderr, "%s: host functions ran in the order:%s\n", g_prog, all.c_str());
  }
  expect_count(__LINE__, c0 + 1);
  expect_record(__LINE__, c0, "_Z7add_onePii", dim3(2), dim3(128), 64, s1);
  int h[256];
  OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h[0] == (mode == Mode::Real ? 1 : 0) && h[255] == (mode == Mode::Real ? 1 : 0));
  OK(cudaFree(d));
  OK(cudaEventDestroy(ev));
  OK(cudaStreamDestroy(s2));
  OK(cudaStreamDestroy(s1));
}

int main() {
  g_prog = "launch";
  require_shim_if_asked();  // loads the driver: on_cuda_shim() can tell from here on
  const char* policy = std::getenv("CUDA_SHIM_KERNELS");
  if (on_cuda_shim()) {
    if (!policy || !*policy || std::strcmp(policy, "run") == 0) {
      mode = Mode::Real;
    } else if (std::strcmp(policy, "refuse") == 0) {
      mode = Mode::Refuse;
    } else if (std::strcmp(policy, "skip") == 0) {
      mode = Mode::Skip;
    } else {
      std::fprintf(stderr, "launch: CUDA_SHIM_KERNELS=%s: this test knows run, refuse and skip\n", policy);
      return 2;
    }
    launch_count = shim_fn<CountFn>("cuShimGetLaunchCount");
    launch_record = shim_fn<RecordFn>("cuShimGetLaunchRecord");
    CHECK(launch_count != nullptr);
    CHECK(launch_record != nullptr);
  }
  OK(cudaSetDevice(0));
  OK(cudaFree(nullptr));
  single_launches();
  bad_configurations();
  stream_order();
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  OK(cudaDeviceSynchronize());
  const char* what = mode == Mode::Refuse ? "launches refused (CUDA_SHIM_KERNELS=refuse)"
                     : mode == Mode::Skip ? "launches skipped in stream order (CUDA_SHIM_KERNELS=skip)"
                                          : on_cuda_shim() ? "launches ran on cuda-shim's kernel engine" : "launches ran on the GPU";
  return finish(what);
}
