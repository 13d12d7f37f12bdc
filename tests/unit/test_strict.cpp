// Strict mode (docs/strict.md). The setting is read once per process, so every scenario runs in
// a child run of this binary (a hidden test case, STRICT_CHILD names the scenario) under the
// setting given; the parent checks the child's stderr and how it ended. Each scenario also checks,
// in the child, the result codes its calls return: the same whether strict mode is on or off.
#include <cuda.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "unit_common.hpp"

extern char** environ;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

struct Child {
  int status = 0;
  std::string out;  // stdout and stderr together
  bool exited_ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
  bool signalled(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
};

// Runs scenario `mode` in a child run of this binary with CUDA_SHIM_STRICT=strict ("" unsets it).
Child run(const char* mode, const char* strict) {
  char self[4096];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(k > 0);
  self[k] = '\0';
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_SHIM_STRICT=", 17) != 0 && std::strncmp(*e, "STRICT_CHILD=", 13) != 0) env.push_back(*e);
  env.push_back(std::string("STRICT_CHILD=") + mode);
  if (*strict) env.push_back(std::string("CUDA_SHIM_STRICT=") + strict);
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    char tag[] = "[.strict_child]";
    char* argv[] = {self, tag, nullptr};
    execve(self, argv, envp.data());
    _exit(127);
  }
  close(fds[1]);
  Child c;
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) c.out.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  REQUIRE(waitpid(pid, &c.status, 0) == pid);
  return c;
}

CUmemoryPool host_pool() {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  p.location.id = 0;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  return pool;
}

// A host function that holds its stream busy until released.
struct Gate {
  std::atomic<bool> open{false}, entered{false};
  static void CUDA_CB run(void* p) {
    auto* g = static_cast<Gate*>(p);
    g->entered = true;
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

void say(const char* s) {
  std::fprintf(stderr, "%s\n", s);
  std::fflush(stderr);
}

}  // namespace

// ---- the scenarios, run in the child --------------------------------------------------------
TEST_CASE("strict child", "[.strict_child]") {
  const std::string mode = std::getenv("STRICT_CHILD") ? std::getenv("STRICT_CHILD") : "";
  primary();
  CUstream a = nullptr, b = nullptr;
  REQUIRE(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  if (mode == "uaf") {
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocAsync(&d, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemsetD8Async(d, 1, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(d, a) == CUDA_SUCCESS);
    char buf[64];
    CHECK(cuMemcpyDtoHAsync(buf, d + 128, sizeof buf, a) == CUDA_ERROR_INVALID_VALUE);
    say("after-first");
    CHECK(cuMemsetD8Async(d, 0, 16, a) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
  } else if (mode == "reuse") {
    // Freed bytes are poisoned; a reallocation of the range is usable again (and not reported).
    CUmemoryPool pool = host_pool();
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, 8192, pool, a) == CUDA_SUCCESS);
    std::memset(reinterpret_cast<void*>(d), 0x11, 8192);
    CHECK(cuMemFreeAsync(d, a) == CUDA_SUCCESS);  // the stream is idle: it takes effect at once
    CUdeviceptr e = 0;  // the same stream reuses it at once (a synchronization would give it back)
    REQUIRE(cuMemAllocFromPoolAsync(&e, 8192, pool, a) == CUDA_SUCCESS);
    CHECK(e == d);
    const auto* q = reinterpret_cast<const volatile unsigned char*>(e);
    std::fprintf(stderr, "first byte %#x last byte %#x\n", q[0], q[8191]);
    char buf[16];
    CHECK(cuMemcpyDtoHAsync(buf, e, sizeof buf, a) == CUDA_ERROR_INVALID_VALUE);  // host pool: not device memory
    CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(buf), e, sizeof buf, a) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(e, a) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  } else if (mode == "host_touch") {
    CUmemoryPool pool = host_pool();
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, 8192, pool, a) == CUDA_SUCCESS);
    std::memset(reinterpret_cast<void*>(d), 0x11, 8192);
    CHECK(cuMemFreeAsync(d, a) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    say("before-touch");
    reinterpret_cast<volatile char*>(d)[4100] = 7;  // strict mode: the page is closed
    say("after-touch");
    CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  } else if (mode == "order") {
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocAsync(&d, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemsetD8Async(d, 1, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(d, b) == CUDA_SUCCESS);  // nothing orders b after a's memset
    CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
    say("--ordered--");
    CUevent ev = nullptr;
    REQUIRE(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocAsync(&d, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemsetD8Async(d, 1, 4096, a) == CUDA_SUCCESS);
    CHECK(cuEventRecord(ev, a) == CUDA_SUCCESS);
    CHECK(cuStreamWaitEvent(b, ev, 0) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(d, b) == CUDA_SUCCESS);  // ordered by the event
    REQUIRE(cuMemAllocAsync(&d, 4096, a) == CUDA_SUCCESS);
    CHECK(cuMemsetD8Async(d, 1, 4096, a) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(d, b) == CUDA_SUCCESS);  // ordered by the host's synchronization
    CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
    CHECK(cuEventDestroy(ev) == CUDA_SUCCESS);
  } else if (mode == "leak") {
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocAsync(&d, 4096, a) == CUDA_SUCCESS);
    CUdeviceptr gone = 0;
    REQUIRE(cuMemAllocAsync(&gone, 1024, a) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(gone, a) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    say("leaving");
    // d stays live: the exit report names it
  } else if (mode == "managed") {
    CUdeviceptr p = 0;
    REQUIRE(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CHECK(cuStreamAttachMemAsync(a, p, 0, CU_MEM_ATTACH_SINGLE) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    Gate g;
    REQUIRE(cuLaunchHostFunc(a, &Gate::run, &g) == CUDA_SUCCESS);
    while (!g.entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    reinterpret_cast<volatile int*>(p)[0] = 5;  // the stream owns it now
    say("touched");
    g.open = true;
    CHECK(cuStreamSynchronize(a) == CUDA_SUCCESS);
    CHECK(reinterpret_cast<volatile int*>(p)[0] == 5);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);
  } else {
    FAIL("STRICT_CHILD names no scenario");
  }
  CHECK(cuStreamDestroy(a) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(b) == CUDA_SUCCESS);
}

// ---- the checks -----------------------------------------------------------------------------
TEST_CASE("strict: a copy and a memset of memory freed in stream order name the free", "[strict]") {
  Child c = run("uaf", "1");
  INFO(c.out);
  CHECK(c.exited_ok());
  CHECK(count(c.out, "cuda-shim strict: ") == 2);
  CHECK(has(c.out, "cuda-shim strict: cuMemcpyDtoHAsync_v2 #"));
  CHECK(has(c.out, "reads srcDevice = 0x"));
  CHECK(has(c.out, "128 bytes into the 4096-byte allocation at"));
  CHECK(has(c.out, "that cuMemFreeAsync #"));
  CHECK(has(c.out, "allocated by cuMemAllocAsync #"));
  CHECK(has(c.out, "cuda-shim strict: cuMemsetD8Async #"));
  CHECK(has(c.out, "writes dstDevice = 0x"));
}

TEST_CASE("strict: abort mode stops at the first finding", "[strict]") {
  Child c = run("uaf", "abort");
  INFO(c.out);
  CHECK(c.signalled(SIGABRT));
  CHECK(count(c.out, "cuda-shim strict: ") == 1);
  CHECK(has(c.out, "cuda-shim strict: cuMemcpyDtoHAsync_v2 #"));
  CHECK(!has(c.out, "after-first"));
}

TEST_CASE("strict: off, nothing is reported and every call returns the same", "[strict]") {
  for (const char* mode : {"uaf", "order", "leak", "managed"}) {
    Child c = run(mode, "");
    INFO(mode << "\n" << c.out);
    CHECK(c.exited_ok());  // the child checks each call's result code, as with strict mode on
    CHECK(!has(c.out, "cuda-shim strict"));
    CHECK(!has(c.out, "cuda-shim:"));
  }
  Child c = run("uaf", "0");
  INFO(c.out);
  CHECK(c.exited_ok());
  CHECK(!has(c.out, "cuda-shim strict"));
}

TEST_CASE("strict: freed pool bytes are poisoned, and usable again once reallocated", "[strict]") {
  Child on = run("reuse", "1");
  INFO(on.out);
  CHECK(on.exited_ok());
  CHECK(has(on.out, "first byte 0xdd last byte 0xdd"));
  CHECK(!has(on.out, "cuda-shim strict"));
  Child off = run("reuse", "");
  INFO(off.out);
  CHECK(off.exited_ok());
  CHECK(has(off.out, "first byte 0x11 last byte 0x11"));
}

TEST_CASE("strict: host code touching a freed page of a host pool faults with a report", "[strict]") {
  Child c = run("host_touch", "1");
  INFO(c.out);
  CHECK(c.signalled(SIGSEGV));
  CHECK(has(c.out, "before-touch"));
  CHECK(!has(c.out, "after-touch"));
  CHECK(has(c.out, "cuda-shim strict: host code touched 0x"));
  CHECK(has(c.out, "4100 bytes into the 8192-byte allocation at 0x"));
  CHECK(has(c.out, "(allocated by cuMemAllocFromPoolAsync #"));
  CHECK(has(c.out, "which cuMemFreeAsync #"));
  Child off = run("host_touch", "");
  INFO(off.out);
  CHECK(off.exited_ok());  // without strict mode the freed page stays open, as on NVIDIA's driver
  CHECK(has(off.out, "after-touch"));
}

TEST_CASE("strict: a free on a stream not ordered after the last use is reported; an ordered one is not",
          "[strict]") {
  Child c = run("order", "1");
  INFO(c.out);
  CHECK(c.exited_ok());
  const size_t mark = c.out.find("--ordered--");
  REQUIRE(mark != std::string::npos);
  const std::string before = c.out.substr(0, mark), after = c.out.substr(mark);
  CHECK(count(before, "cuda-shim strict: ") == 1);
  CHECK(has(before, "cuda-shim strict: cuMemFreeAsync #"));
  CHECK(has(before, "frees the 4096-byte allocation at 0x"));
  CHECK(has(before, "but cuMemsetD8Async #"));
  CHECK(has(before, "nothing orders the free after that work"));
  CHECK(!has(after, "cuda-shim strict"));
}

TEST_CASE("strict: pool allocations still live at exit are reported", "[strict]") {
  Child c = run("leak", "1");
  INFO(c.out);
  CHECK(c.exited_ok());
  const size_t at = c.out.find("leaving");
  REQUIRE(at != std::string::npos);
  const std::string tail = c.out.substr(at);
  CHECK(count(c.out, "cuda-shim strict: ") == 1);
  CHECK(has(tail, "cuda-shim strict: leak: the 4096-byte allocation at 0x"));
  CHECK(has(tail, "made by cuMemAllocAsync #"));
  CHECK(!has(c.out, "1024-byte"));
}

TEST_CASE("strict: host code touching managed memory its stream owns is reported", "[strict]") {
  Child c = run("managed", "1");
  INFO(c.out);
  CHECK(c.exited_ok());  // with concurrent managed access the access goes through
  CHECK(count(c.out, "cuda-shim strict: ") == 1);
  CHECK(has(c.out, "cuda-shim strict: host code touched managed memory at 0x"));
  CHECK(has(c.out, "made by cuMemAllocManaged #"));
  CHECK(has(c.out, "attached SINGLE to stream id"));
  CHECK(has(c.out, "(queued by cuLaunchHostFunc #"));
  CHECK(has(c.out, "has concurrent managed access"));
  CHECK(has(c.out, "touched"));
}
