// cuMemGetInfo sees every process's device memory, as on a GPU: a child's allocation lowers the
// parent's free memory, and it comes back when the child exits or is killed. Backend-neutral.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "multiprocess.hpp"

namespace {

constexpr size_t kBytes = 256u << 20;

// The emulator's processes share a per-user registry: this binary and its children use one of
// their own, so tests running beside it (ctest -j) do not move the numbers. The child inherits
// it (no overwrite). A real driver ignores the variable.
const bool kIsolated = [] {
  std::string name = "cuda-shim-meminfo-" + std::to_string(::getpid());
  return setenv("CUDA_SHIM_REGISTRY", name.c_str(), 0) == 0;
}();

size_t free_now() {
  size_t f = 0, t = 0;
  REQUIRE_CU(cuMemGetInfo(&f, &t), CUDA_SUCCESS);
  return f;
}

// Waits (up to 20 s: a real driver frees a dead process's memory shortly after) for free >= want.
size_t wait_free_at_least(size_t want) {
  size_t f = free_now();
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       f < want && std::chrono::steady_clock::now() < until; f = free_now())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return f;
}

}  // namespace

TEST_CASE("cuMemGetInfo counts another process's allocation until it exits or is killed") {
  REQUIRE(kIsolated);
  conformance_primary_ctx();
  const size_t before = free_now();

  SECTION("the child exits") {
    auto c = mp::spawn("device_memory_holder");
    c.ch.send_int(static_cast<int64_t>(kBytes));
    REQUIRE(c.ch.recv_int() == 0);
    size_t during = free_now();
    CHECK(during <= before - kBytes);  // the child's bytes (and, on a GPU, its context) are used
    c.ch.send_int(0);
    CHECK(c.wait() == 0);
    CHECK(wait_free_at_least(before) >= before);
  }
  SECTION("the child is killed") {
    auto c = mp::spawn("device_memory_holder");
    c.ch.send_int(static_cast<int64_t>(kBytes));
    REQUIRE(c.ch.recv_int() == 0);
    CHECK(free_now() <= before - kBytes);
    c.kill(SIGKILL);
    CHECK(c.wait() == 128 + SIGKILL);
    CHECK(wait_free_at_least(before) >= before);
  }
  SECTION("several children, half killed and half exiting") {
    constexpr int kKids = 6;
    constexpr size_t kEach = 64u << 20;
    std::vector<mp::Child> kids;
    for (int i = 0; i < kKids; ++i) {
      kids.push_back(mp::spawn("device_memory_holder"));
      kids.back().ch.send_int(static_cast<int64_t>(kEach));
      REQUIRE(kids.back().ch.recv_int() == 0);
    }
    const size_t all = free_now();  // on a GPU each child's context also takes memory
    CHECK(all <= before - kKids * kEach);
    for (int i = 0; i < kKids; i += 2) {
      kids[i].kill(SIGKILL);
      CHECK(kids[i].wait() == 128 + SIGKILL);
    }
    // The killed half's memory comes back; the half still running keeps holding its own.
    const size_t half = wait_free_at_least(all + (kKids / 2) * kEach);
    CHECK(half >= all + (kKids / 2) * kEach);
    CHECK(half <= before - (kKids / 2) * kEach);
    for (int i = 1; i < kKids; i += 2) {
      kids[i].ch.send_int(0);
      CHECK(kids[i].wait() == 0);
    }
    CHECK(wait_free_at_least(before) >= before);
  }
}
