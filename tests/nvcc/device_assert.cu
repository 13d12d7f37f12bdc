// assert in device code. A kernel whose asserts all hold runs and computes; then one whose
// assert fails in one thread: the next synchronization returns cudaErrorAssert, and the error
// is sticky, as NVIDIA documents it ("The device cannot be used again. All existing allocations
// are invalid. To continue using CUDA, the process must be terminated and relaunched."): every
// later call that does CUDA work returns it, launches included, and cudaGetLastError returns it
// without clearing it. The program runs itself as a child (the context does not survive) and
// checks the child's result and that the assertion's message (file, expression) was printed.
#include "kernel_test.h"

#include <cassert>

__global__ void check_values(const int* v, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    assert(v[i] != 42);
    out[i] = v[i] * 2;
  }
}

static int child() {
  g_prog = "device_assert[child]";
  const int n = 1000;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i < 42 ? i : i + 1;  // no 42 yet
  int *v = nullptr, *out = nullptr;
  OK(cudaMalloc(&v, n * sizeof(int)));
  OK(cudaMalloc(&out, n * sizeof(int)));
  if (!v || !out) return 1;
  OK(cudaMemcpy(v, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  check_values<<<(n + 127) / 128, 128>>>(v, out, n);
  if (!LAUNCHED("check_values (asserts hold)")) return 1;
  OK(cudaDeviceSynchronize());
  std::vector<int> got(n), want(n);
  OK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = h[i] * 2;
  expect_equal_ints("out (asserts hold)", got, want);

  // One 42, in block 5 thread 17 (element 657).
  h[657] = 42;
  OK(cudaMemcpy(v, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  check_values<<<(n + 127) / 128, 128>>>(v, out, n);
  // Accepted; the assert may already have fired by the time cudaGetLastError looks (it reports
  // errors of earlier asynchronous work too), so that is the only other answer allowed.
  cudaError_t launched_as = cudaGetLastError();
  if (launched_as != cudaSuccess && launched_as != cudaErrorAssert) {
    std::fprintf(stderr, "%s: FAILED: launching check_values (one assert fails) returned %d (%s)\n", g_prog,
                 static_cast<int>(launched_as), cudaGetErrorName(launched_as));
    return 1;
  }
  EXPECT_ERR(cudaDeviceSynchronize(), cudaErrorAssert);
  // cudaGetLastError reads the error once, then resets it, sticky or not: on an H200 (driver 580,
  // runtime 13.0) the second read is cudaSuccess. Every call that needs the context fails anew.
  EXPECT_ERR(cudaGetLastError(), cudaErrorAssert);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  EXPECT_ERR(cudaDeviceSynchronize(), cudaErrorAssert);
  void* more = nullptr;
  EXPECT_ERR(cudaMalloc(&more, 4096), cudaErrorAssert);
  EXPECT_ERR(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorAssert);
  check_values<<<1, 1>>>(v, out, 1);
  EXPECT_ERR(cudaGetLastError(), cudaErrorAssert);
  EXPECT_ERR(cudaStreamSynchronize(nullptr), cudaErrorAssert);
  std::fflush(nullptr);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--child") == 0) return child();
  g_prog = "device_assert";
  require_shim_if_asked();
  int status = -1;
  std::string out = run_self_captured("--child", &status);
  if (status != 0) {
    std::fprintf(stderr, "%s: FAILED: the child exited with %d\n", g_prog, status);
    ++g_failures;
  }
  // NVIDIA's form: "FILE:LINE: FUNCTION: block: [5,0,0], thread: [17,0,0] Assertion `v[i] != 42` failed."
  for (const char* part : {"device_assert.cu", "Assertion", "v[i] != 42", "failed"})
    if (out.find(part) == std::string::npos) {
      std::fprintf(stderr, "%s: FAILED: the assertion's message lacks '%s'\n", g_prog, part);
      ++g_failures;
    }
  if (out.find("block: [5,0,0], thread: [17,0,0]") == std::string::npos) {
    std::fprintf(stderr, "%s: FAILED: the assertion's message does not name block [5,0,0] thread [17,0,0]\n", g_prog);
    ++g_failures;
  }
  if (g_failures) show_child_output(out);
  return finish("a failed device assert is cudaErrorAssert, sticky, with its message");
}
