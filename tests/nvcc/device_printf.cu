// Device-side printf (vprintf): the program runs itself as a child with stdout and stderr in a
// pipe; the child launches kernels that print, and the parent checks that every line arrived,
// once, with each conversion (%d %u %ld %lld %x %c %s %f %e %g; no %p, pointers differ by run),
// and that the lines of a launch came out between the host's "before" marker and its "after"
// marker printed after cudaDeviceSynchronize (the driver flushes the device's buffer at
// synchronization points). Thread order within a launch is not defined: the parent compares sets.
#include "kernel_test.h"

#include <algorithm>
#include <set>

__global__ void say(int base) {
  const int t = threadIdx.x, b = blockIdx.x;
  printf("dev block %d thread %d: %u %ld %lld 0x%x '%c' %s %.3f %.2e %g\n", b, t, 40000u + t, -100L * t,
         1234567890123LL + b, 0xbeef0000 + t, 'a' + t, t % 2 ? "odd" : "even", 1.5 * t + base, 2.5e-3 * (b + 1),
         0.25f * t);
}

__global__ void once(const char* tag) {
  if (threadIdx.x == 0 && blockIdx.x == 0) printf("dev once: %s %d\n", tag, gridDim.x * blockDim.x);
}

__device__ char g_tag[] = "from a __device__ string";

static std::string expected_line(int base, int b, int t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "dev block %d thread %d: %u %ld %lld 0x%x '%c' %s %.3f %.2e %g", b, t, 40000u + t,
                -100L * t, 1234567890123LL + b, 0xbeef0000 + t, 'a' + t, t % 2 ? "odd" : "even", 1.5 * t + base,
                2.5e-3 * (b + 1), static_cast<double>(0.25f * t));
  return buf;
}

static int child() {
  g_prog = "device_printf[child]";
  std::printf("host: before launch\n");
  std::fflush(stdout);
  say<<<3, 8>>>(100);
  bool ok = LAUNCHED("say");
  char* tag = nullptr;
  OK(cudaGetSymbolAddress(reinterpret_cast<void**>(&tag), g_tag));
  once<<<2, 32>>>(tag);
  ok = LAUNCHED("once") && ok;
  OK(cudaDeviceSynchronize());
  std::fflush(stdout);
  std::printf("host: after sync\n");
  std::fflush(stdout);
  return ok && !g_failures ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--child") == 0) return child();
  g_prog = "device_printf";
  require_shim_if_asked();
  int status = -1;
  std::string out = run_self_captured("--child", &status);
  if (status != 0) {
    std::fprintf(stderr, "%s: FAILED: the child exited with %d\n", g_prog, status);
    ++g_failures;
  }
  // Split into lines; find the markers.
  std::vector<std::string> lines;
  for (size_t s = 0; s < out.size();) {
    size_t e = out.find('\n', s);
    if (e == std::string::npos) e = out.size();
    lines.push_back(out.substr(s, e - s));
    s = e + 1;
  }
  auto at = [&](const std::string& l) {
    return static_cast<long>(std::find(lines.begin(), lines.end(), l) - lines.begin());
  };
  long before = at("host: before launch"), after = at("host: after sync"), n = static_cast<long>(lines.size());
  CHECK(before < n);
  CHECK(after < n);
  std::multiset<std::string> want;
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 8; ++t) want.insert(expected_line(100, b, t));
  want.insert("dev once: from a __device__ string 64");
  std::multiset<std::string> got;
  for (long i = 0; i < n; ++i)
    if (lines[i].rfind("dev ", 0) == 0) {
      got.insert(lines[i]);
      if (i < before || i > after) {
        std::fprintf(stderr, "%s: FAILED: '%s' came out at line %ld, outside the markers (%ld..%ld)\n", g_prog,
                     lines[i].c_str(), i, before, after);
        ++g_failures;
      }
    }
  if (got.empty()) {
    std::fprintf(stderr, "%s: FAILED: none of the %zu device lines came out\n", g_prog, want.size());
    ++g_failures;
  } else {
    for (const auto& w : want)
      if (got.count(w) != 1) {
        std::fprintf(stderr, "%s: FAILED: '%s' came out %zu times, want once\n", g_prog, w.c_str(), got.count(w));
        ++g_failures;
      }
  }
  for (const auto& g : got)
    if (!want.count(g)) {
      std::fprintf(stderr, "%s: FAILED: unexpected device line '%s'\n", g_prog, g.c_str());
      ++g_failures;
    }
  if (g_failures) show_child_output(out);
  return finish("device printf lines, every conversion, flushed by the synchronization");
}
