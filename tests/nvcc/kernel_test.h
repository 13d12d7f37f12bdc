// Shared by the nvcc programs whose kernels must compute (CTest label `kernels`, listed in
// CMakeLists.txt): on NVIDIA's driver and on cuda-shim with its PTX engine alike, every output value
// is checked on the host and a mismatch fails with the first differing element. While cuda-shim
// refuses launches (CUDA_SHIM_KERNELS=refuse, the default before the engine) these fail at their
// first launch, with the driver's message: that is the point of them.
#pragma once

#include "nvcc_test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

extern char** environ;

// After a launch: the launch itself must have been accepted. Returns false (and counts a
// failure) when it was not, so the caller can skip the value checks that would only repeat it.
static inline bool launched(const char* kernel, int line) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: FAILED line %d: launching %s returned %d (%s): %s\n", g_prog, line, kernel,
               static_cast<int>(e), cudaGetErrorName(e), cudaGetErrorString(e));
  ++g_failures;
  return false;
}
#define LAUNCHED(kernel) launched(kernel, __LINE__)

// Compares got with want element by element (==, so NaN never matches); reports how many differ
// and the first few. Returns true when all match.
template <class T, class Show>
static bool expect_equal(const char* what, const T* got, const T* want, size_t n, Show show) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    if (bad < 5) {
      std::string g = show(got[i]), w = show(want[i]);
      std::fprintf(stderr, "%s: FAILED: %s[%zu] = %s, want %s\n", g_prog, what, i, g.c_str(), w.c_str());
    }
    ++bad;
  }
  if (bad) {
    std::fprintf(stderr, "%s: FAILED: %s: %zu of %zu values differ\n", g_prog, what, bad, n);
    ++g_failures;
  }
  return bad == 0;
}
static inline std::string show_int(long long v) { return std::to_string(v); }
static inline std::string show_float(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g (%a)", v, v);
  return b;
}
template <class T>
static bool expect_equal_ints(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    std::fprintf(stderr, "%s: FAILED: %s: %zu values, want %zu\n", g_prog, what, got.size(), want.size());
    ++g_failures;
    return false;
  }
  return expect_equal(what, got.data(), want.data(), got.size(),
                      [](T v) { return show_int(static_cast<long long>(v)); });
}
static inline bool expect_equal_floats(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) {
    std::fprintf(stderr, "%s: FAILED: %s: %zu values, want %zu\n", g_prog, what, got.size(), want.size());
    ++g_failures;
    return false;
  }
  return expect_equal(what, got.data(), want.data(), got.size(), [](float v) { return show_float(v); });
}

// A deterministic pseudo-random sequence (the same on every host): 32-bit LCG.
struct Lcg {
  uint32_t s;
  explicit Lcg(uint32_t seed) : s(seed) {}
  uint32_t next() { return s = s * 1664525u + 1013904223u; }
  // A float in [-1, 1) with a full 24-bit significand range of values.
  float unit() { return static_cast<float>(static_cast<int32_t>(next()) >> 8) / 8388608.0f; }
};

// Runs this program again (/proc/self/exe ARG) with its stdout and stderr both sent into a
// pipe; returns what it wrote and sets *status to its exit code (128+signal; -1 if it had to be
// killed after timeout_s). For what a device writes to the process's own streams (printf,
// assert) and for errors that leave the process's context unusable.
static std::string run_self_captured(const char* arg, int* status, int timeout_s = 60) {
  *status = -1;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "";
  char self[] = "/proc/self/exe";
  std::string a(arg);
  char* argv[] = {self, &a[0], nullptr};
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);  // dup2 clears FD_CLOEXEC on the copies
    ::dup2(fds[1], 2);
    ::execve("/proc/self/exe", argv, environ);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  if (pid < 0) {
    ::close(fds[0]);
    return out;
  }
  char buf[4096];
  auto until = timeout_s * 1000;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, until);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {  // timed out: kill it
      ::kill(pid, SIGKILL);
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int st = 0;
  if (::waitpid(pid, &st, 0) == pid && (WIFEXITED(st) || WIFSIGNALED(st)))
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return out;
}

// What the child wrote, indented, for a failure message.
static inline void show_child_output(const std::string& out) {
  std::fprintf(stderr, "%s: the child wrote:\n", g_prog);
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::fprintf(stderr, "  | %s\n", out.substr(start, end - start).c_str());
    start = end + 1;
  }
}
