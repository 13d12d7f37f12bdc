// CUDA graphs, the way programs use them: a stream captured into a graph (kernels, copies, a
// fill, a host function, a fork and join over two streams, stream-ordered allocation inside the
// capture), a graph built node by node, instantiated and launched again and again, kernel node
// parameters read back and changed in the executable graph, the capture rules a program meets
// (a synchronize inside a capture invalidates it), and the debug dot print. Every value is
// checked on the host.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kernel_test.h"

constexpr int kN = 4096;

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add_one(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

__global__ void iota(int* x, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

static int g_host_runs = 0;
static void CUDART_CB count_run(void*) { ++g_host_runs; }

// A capture of kernel, copy, fill and host function, launched three times.
static void captured_stream() {
  float *x = nullptr, *y = nullptr;
  int* z = nullptr;
  OK(cudaMalloc(&x, kN * sizeof(float)));
  OK(cudaMalloc(&y, kN * sizeof(float)));
  OK(cudaMalloc(&z, kN * sizeof(int)));
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = static_cast<float>(i % 100);
  OK(cudaMemcpy(x, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  OK(cudaStreamIsCapturing(s, &st));
  CHECK(st == cudaStreamCaptureStatusActive);
  scale<<<kN / 256, 256, 0, s>>>(x, kN, 2.0f);
  OK(cudaMemcpyAsync(y, x, kN * sizeof(float), cudaMemcpyDeviceToDevice, s));
  OK(cudaMemsetAsync(z, 0, kN * sizeof(int), s));
  OK(cudaLaunchHostFunc(s, count_run, nullptr));
  cudaGraph_t g = nullptr;
  OK(cudaStreamEndCapture(s, &g));
  OK(cudaStreamIsCapturing(s, &st));
  CHECK(st == cudaStreamCaptureStatusNone);
  CHECK(g_host_runs == 0);  // captured, not run
  size_t n = 0;
  OK(cudaGraphGetNodes(g, nullptr, &n));
  CHECK(n == 4);
  std::vector<cudaGraphNode_t> nodes(n);
  OK(cudaGraphGetNodes(g, nodes.data(), &n));
  int kinds[16] = {};
  for (auto node : nodes) {
    cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(node, &t));
    if (t >= 0 && t < 16) ++kinds[t];
  }
  CHECK(kinds[cudaGraphNodeTypeKernel] == 1 && kinds[cudaGraphNodeTypeMemcpy] == 1 &&
        kinds[cudaGraphNodeTypeMemset] == 1 && kinds[cudaGraphNodeTypeHost] == 1);
  // Captured in one stream: a chain, 3 edges.
  size_t edges = 0;
  OK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  CHECK(edges == 3);
  cudaGraphExec_t ge = nullptr;
  OK(cudaGraphInstantiate(&ge, g, 0));
  for (int r = 0; r < 3; ++r) OK(cudaGraphLaunch(ge, s));
  OK(cudaStreamSynchronize(s));
  CHECK(g_host_runs == 3);
  std::vector<float> got(kN), want(kN);
  OK(cudaMemcpy(got.data(), y, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) want[i] = h[i] * 8.0f;
  expect_equal_floats("x scaled by 2 in each of 3 launches, copied to y", got, want);
  OK(cudaGraphExecDestroy(ge));
  OK(cudaGraphDestroy(g));
  OK(cudaStreamDestroy(s));
  OK(cudaFree(x));
  OK(cudaFree(y));
  OK(cudaFree(z));
}

// Two streams forked from a captured event and joined back: two independent branches.
static void fork_join() {
  int *a = nullptr, *b = nullptr;
  OK(cudaMalloc(&a, kN * sizeof(int)));
  OK(cudaMalloc(&b, kN * sizeof(int)));
  cudaStream_t s1, s2;
  OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  OK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
  iota<<<kN / 256, 256, 0, s1>>>(a, kN, 0);
  OK(cudaEventRecord(fork, s1));
  OK(cudaStreamWaitEvent(s2, fork, 0));
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  OK(cudaStreamIsCapturing(s2, &st));
  CHECK(st == cudaStreamCaptureStatusActive);  // s2 joined the capture
  iota<<<kN / 256, 256, 0, s2>>>(b, kN, 1000);
  add_one<<<kN / 256, 256, 0, s1>>>(a, kN);
  OK(cudaEventRecord(join, s2));
  OK(cudaStreamWaitEvent(s1, join, 0));
  cudaGraph_t g = nullptr;
  OK(cudaStreamEndCapture(s1, &g));
  size_t n = 0, roots = 0, edges = 0;
  OK(cudaGraphGetNodes(g, nullptr, &n));
  OK(cudaGraphGetRootNodes(g, nullptr, &roots));
  OK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  CHECK(n == 3 && roots == 1 && edges == 2);
  cudaGraphExec_t ge = nullptr;
  OK(cudaGraphInstantiate(&ge, g, 0));
  OK(cudaGraphLaunch(ge, s2));  // on another stream than the one captured
  OK(cudaStreamSynchronize(s2));
  std::vector<int> ga(kN), gb(kN), wa(kN), wb(kN);
  OK(cudaMemcpy(ga.data(), a, kN * sizeof(int), cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(gb.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) wa[i] = i + 1, wb[i] = 1000 + i;
  expect_equal_ints("fork branch a", ga, wa);
  expect_equal_ints("fork branch b", gb, wb);
  OK(cudaGraphExecDestroy(ge));
  OK(cudaGraphDestroy(g));
  OK(cudaEventDestroy(fork));
  OK(cudaEventDestroy(join));
  OK(cudaStreamDestroy(s1));
  OK(cudaStreamDestroy(s2));
  OK(cudaFree(a));
  OK(cudaFree(b));
}

// A graph built node by node: kernel -> copy to pinned host memory; then the executable graph's
// kernel node gets new parameters.
static void explicit_graph() {
  int* d = nullptr;
  int* host = nullptr;
  OK(cudaMalloc(&d, kN * sizeof(int)));
  OK(cudaMallocHost(&host, kN * sizeof(int)));
  cudaGraph_t g = nullptr;
  OK(cudaGraphCreate(&g, 0));
  int n = kN, base = 7;
  void* args[] = {&d, &n, &base};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(iota);
  kp.gridDim = dim3(kN / 128);
  kp.blockDim = dim3(128);
  kp.sharedMemBytes = 0;
  kp.kernelParams = args;
  cudaGraphNode_t kn = nullptr, cn = nullptr;
  OK(cudaGraphAddKernelNode(&kn, g, nullptr, 0, &kp));
  OK(cudaGraphAddMemcpyNode1D(&cn, g, &kn, 1, host, d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  base = 99;  // the node copied its arguments when it was added
  cudaKernelNodeParams back{};
  OK(cudaGraphKernelNodeGetParams(kn, &back));
  CHECK(back.gridDim.x == kN / 128 && back.blockDim.x == 128 && back.func == reinterpret_cast<void*>(iota));
  CHECK(*static_cast<int*>(back.kernelParams[2]) == 7);
  cudaGraphExec_t ge = nullptr;
  OK(cudaGraphInstantiate(&ge, g, 0));
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaGraphLaunch(ge, s));
  OK(cudaStreamSynchronize(s));
  std::vector<int> want(kN);
  for (int i = 0; i < kN; ++i) want[i] = 7 + i;
  expect_equal("explicit kernel -> copy", host, want.data(), kN, show_int);
  base = 500;
  kp.kernelParams = args;
  OK(cudaGraphExecKernelNodeSetParams(ge, kn, &kp));
  OK(cudaGraphLaunch(ge, s));
  OK(cudaStreamSynchronize(s));
  for (int i = 0; i < kN; ++i) want[i] = 500 + i;
  expect_equal("after cudaGraphExecKernelNodeSetParams", host, want.data(), kN, show_int);
  // The dot print names the kernel.
  const char* path = "graphs_test.dot";
  OK(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("digraph") != std::string::npos);
  CHECK(text.str().find("iota") != std::string::npos);
  std::remove(path);
  OK(cudaGraphExecDestroy(ge));
  OK(cudaGraphDestroy(g));
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(host));
  OK(cudaFree(d));
}

// cudaMallocAsync / cudaFreeAsync inside a capture: allocation and free nodes, the memory valid
// between them in every launch.
static void alloc_in_capture() {
  int* out = nullptr;
  OK(cudaMallocHost(&out, kN * sizeof(int)));
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  int* tmp = nullptr;
  OK(cudaMallocAsync(&tmp, kN * sizeof(int), s));
  iota<<<kN / 256, 256, 0, s>>>(tmp, kN, 3);
  add_one<<<kN / 256, 256, 0, s>>>(tmp, kN);
  OK(cudaMemcpyAsync(out, tmp, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
  OK(cudaFreeAsync(tmp, s));
  cudaGraph_t g = nullptr;
  OK(cudaStreamEndCapture(s, &g));
  int kinds[16] = {};
  size_t n = 0;
  OK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  OK(cudaGraphGetNodes(g, nodes.data(), &n));
  for (auto node : nodes) {
    cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(node, &t));
    if (t >= 0 && t < 16) ++kinds[t];
  }
  CHECK(n == 5 && kinds[cudaGraphNodeTypeMemAlloc] == 1 && kinds[cudaGraphNodeTypeMemFree] == 1);
  cudaGraphExec_t ge = nullptr;
  OK(cudaGraphInstantiate(&ge, g, 0));
  for (int r = 0; r < 2; ++r) {
    std::memset(out, 0, kN * sizeof(int));
    OK(cudaGraphLaunch(ge, s));
    OK(cudaStreamSynchronize(s));
    std::vector<int> want(kN);
    for (int i = 0; i < kN; ++i) want[i] = 4 + i;
    expect_equal("graph-allocated scratch", out, want.data(), kN, show_int);
  }
  OK(cudaGraphExecDestroy(ge));
  OK(cudaGraphDestroy(g));
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(out));
}

// A synchronize inside a capture is refused and invalidates it; the stream works again after.
static void capture_rules() {
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
  cudaGraph_t g = reinterpret_cast<cudaGraph_t>(0x1);
  CHECK(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated);
  CHECK(g == nullptr);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
  OK(cudaStreamIsCapturing(s, &st));
  CHECK(st == cudaStreamCaptureStatusNone);
  (void)cudaGetLastError();
  OK(cudaStreamSynchronize(s));
  // The legacy default stream cannot capture.
  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  (void)cudaGetLastError();
  OK(cudaStreamDestroy(s));
}

int main() {
  g_prog = "graphs";
  require_shim_if_asked();
  captured_stream();
  fork_join();
  explicit_graph();
  alloc_in_capture();
  capture_rules();
  OK(cudaDeviceSynchronize());
  return finish("graphs: a captured stream launched 3 times, fork/join, a built graph with new kernel parameters, "
                "allocation nodes, the capture rules");
}
