// Streams overlapping copies and kernels, the pattern of the CUDA samples' simpleStreams and
// simpleCallback: four non-blocking streams each copy their chunk in from pinned memory, run a
// kernel, record an event; then each waits (cudaStreamWaitEvent) for its neighbour's event and
// runs a kernel that reads the neighbour's output, copies its result out and queues a host
// function that checks, in the callback, the pinned bytes that copy produced.
//
// Each stream starts with a host function that sleeps, 40 ms longer for each stream up, so the
// neighbour (s + 1) is later than stream s that waits on it (but for the last, whose neighbour
// is stream 0): a wait that does not hold, a kernel that
// runs before its copy, or a callback that runs before the copy out, reads the zeros (or NaNs)
// put there first and fails. Timing events bracket the work (elapsed time >= 0), and
// cudaStreamAddCallback (the older form, with its status argument) closes each stream.
#include "kernel_test.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

constexpr int kStreams = 4;
constexpr int kChunk = (1 << 18) + 17;

__global__ void scale_add(const float* in, float* out, int n, float scale, float add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * scale + add;  // may contract to one fma: the host checks with fmaf
}

__global__ void combine(const float* mine, const float* neighbour, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mine[i] - neighbour[n - 1 - i];
}

static float input(int s, int i) { return static_cast<float>((i % 1000) + s * 1000); }
static float stage1(int s, int i) {
  // scale_add with scale = s + 2, add = 0.5: exact in float either way (integers below 2^24,
  // plus 0.5), so a fused or an unfused multiply-add give the same value.
  return input(s, i) * static_cast<float>(s + 2) + 0.5f;
}
static float expected(int s, int i) { return stage1(s, i) - stage1((s + 1) % kStreams, kChunk - 1 - i); }

struct Chunk {
  int s;
  const float* host_out;  // pinned: written by the copy out before the callback
  std::atomic<int> bad{-1};
  std::atomic<int> checked{0};
};

static void CUDART_CB sleep_fn(void* ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<intptr_t>(ms)));
}
static void CUDART_CB check_fn(void* p) {
  auto* c = static_cast<Chunk*>(p);
  int bad = 0;
  for (int i = 0; i < kChunk; ++i) bad += c->host_out[i] != expected(c->s, i);
  c->bad = bad;
}
static std::mutex order_mu;
static std::vector<int> order;  // stream indices, as their cudaStreamAddCallback ran
static void CUDART_CB status_fn(cudaStream_t, cudaError_t status, void* p) {
  auto* c = static_cast<Chunk*>(p);
  std::lock_guard<std::mutex> lock(order_mu);
  // The check of this stream ran before it (same stream, queued earlier).
  c->checked = status == cudaSuccess && c->bad.load() >= 0 ? 1 : 2;
  order.push_back(c->s);
}

int main() {
  g_prog = "streams";
  require_shim_if_asked();
  const size_t bytes = kChunk * sizeof(float);
  float *h_in = nullptr, *h_out = nullptr;
  OK(cudaMallocHost(&h_in, kStreams * bytes));
  OK(cudaMallocHost(&h_out, kStreams * bytes));
  float *d_in = nullptr, *d_mid = nullptr, *d_out = nullptr;
  OK(cudaMalloc(&d_in, kStreams * bytes));
  OK(cudaMalloc(&d_mid, kStreams * bytes));
  OK(cudaMalloc(&d_out, kStreams * bytes));
  if (!h_in || !h_out || !d_in || !d_mid || !d_out) return finish("no memory");
  for (int s = 0; s < kStreams; ++s)
    for (int i = 0; i < kChunk; ++i) h_in[s * kChunk + i] = input(s, i);
  std::memset(h_out, 0, kStreams * bytes);
  OK(cudaMemset(d_in, 0, kStreams * bytes));
  OK(cudaMemset(d_mid, 0xff, kStreams * bytes));  // NaN until scale_add writes
  OK(cudaMemset(d_out, 0, kStreams * bytes));
  OK(cudaDeviceSynchronize());

  cudaStream_t st[kStreams];
  cudaEvent_t done[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    OK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    OK(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
  }
  cudaEvent_t t0, t1;
  OK(cudaEventCreate(&t0));
  OK(cudaEventCreate(&t1));
  Chunk chunks[kStreams];
  const int threads = 256, blocks = (kChunk + threads - 1) / threads;

  OK(cudaEventRecord(t0, st[0]));
  bool all_launched = true;
  for (int s = 0; s < kStreams; ++s) {
    const size_t off = static_cast<size_t>(s) * kChunk;
    OK(cudaLaunchHostFunc(st[s], sleep_fn, reinterpret_cast<void*>(static_cast<intptr_t>(40 * (s + 1)))));
    OK(cudaMemcpyAsync(d_in + off, h_in + off, bytes, cudaMemcpyHostToDevice, st[s]));
    scale_add<<<blocks, threads, 0, st[s]>>>(d_in + off, d_mid + off, kChunk, static_cast<float>(s + 2), 0.5f);
    all_launched &= LAUNCHED("scale_add");
    OK(cudaEventRecord(done[s], st[s]));
  }
  for (int s = 0; s < kStreams; ++s) {
    const int nb = (s + 1) % kStreams;
    const size_t off = static_cast<size_t>(s) * kChunk, noff = static_cast<size_t>(nb) * kChunk;
    OK(cudaStreamWaitEvent(st[s], done[nb], 0));
    combine<<<blocks, threads, 0, st[s]>>>(d_mid + off, d_mid + noff, d_out + off, kChunk);
    all_launched &= LAUNCHED("combine");
    OK(cudaMemcpyAsync(h_out + off, d_out + off, bytes, cudaMemcpyDeviceToHost, st[s]));
    chunks[s].s = s;
    chunks[s].host_out = h_out + off;
    OK(cudaLaunchHostFunc(st[s], check_fn, &chunks[s]));
    OK(cudaStreamAddCallback(st[s], status_fn, &chunks[s], 0));
  }
  // t1 on stream 0 after every stream's work: join them all into stream 0 first.
  cudaEvent_t joined[kStreams];
  for (int s = 1; s < kStreams; ++s) {
    OK(cudaEventCreateWithFlags(&joined[s], cudaEventDisableTiming));
    OK(cudaEventRecord(joined[s], st[s]));
    OK(cudaStreamWaitEvent(st[0], joined[s], 0));
  }
  OK(cudaEventRecord(t1, st[0]));
  // The last stream is held by its 160 ms sleep, and t1 waits for it: not done yet.
  EXPECT_ERR(cudaEventQuery(t1), cudaErrorNotReady);
  OK(cudaEventSynchronize(t1));
  for (int s = 0; s < kStreams; ++s) OK(cudaStreamQuery(st[s]));  // all joined before t1
  float ms = -1;
  OK(cudaEventElapsedTime(&ms, t0, t1));
  CHECK(ms >= 0);

  if (all_launched) {
    for (int s = 0; s < kStreams; ++s) {
      if (chunks[s].bad != 0)
        std::fprintf(stderr, "%s: FAILED: stream %d: its callback saw %d wrong values in the copied-out chunk\n", g_prog,
                     s, chunks[s].bad.load());
      CHECK(chunks[s].bad == 0);
      CHECK(chunks[s].checked == 1);
    }
    {
      std::lock_guard<std::mutex> lock(order_mu);
      CHECK(order.size() == kStreams);
    }
    // And the host's own look, after everything: every element of every chunk.
    std::vector<float> got(h_out, h_out + kStreams * kChunk), want(kStreams * kChunk);
    for (int s = 0; s < kStreams; ++s)
      for (int i = 0; i < kChunk; ++i) want[s * kChunk + i] = expected(s, i);
    expect_equal_floats("h_out", got, want);
  }
  for (int s = 0; s < kStreams; ++s) {
    if (s) OK(cudaEventDestroy(joined[s]));
    OK(cudaEventDestroy(done[s]));
    OK(cudaStreamDestroy(st[s]));
  }
  OK(cudaEventDestroy(t0));
  OK(cudaEventDestroy(t1));
  OK(cudaFree(d_in));
  OK(cudaFree(d_mid));
  OK(cudaFree(d_out));
  OK(cudaFreeHost(h_in));
  OK(cudaFreeHost(h_out));
  return finish("4 streams: copies, kernels, cross-stream event waits and callbacks in order");
}
