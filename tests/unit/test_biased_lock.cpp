// BiasedLock (emu/core/biased_lock.cpp), compiled in from source: the owner's plain-store
// path, revocation by a second thread (while the owner is inside and while it is not),
// mutual exclusion under contention, and a forked child that must register for membarrier
// again before it can revoke.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "core/biased_lock.hpp"

using cuda_shim::BiasedLock;
namespace bd = cuda_shim::biased_detail;

TEST_CASE("biased_lock: the first thread to lock holds the bias") {
  BiasedLock m;
  CHECK_FALSE(m.biased());
  m.lock();
  m.unlock();
  CHECK(m.biased() == bd::enabled());  // no bias under TSan or without membarrier
  for (int i = 0; i < 1000; ++i) {
    m.lock();
    m.unlock();
  }
  CHECK(m.biased() == bd::enabled());
}

TEST_CASE("biased_lock: a second thread waits for the owner inside, then revokes the bias") {
  BiasedLock m;
  m.lock();  // this thread owns the bias, and is inside
  std::atomic<bool> got{false};
  std::thread t([&] {
    m.lock();
    got = true;
    m.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(got.load());  // still held through the bias
  m.unlock();
  t.join();
  CHECK(got.load());
  CHECK_FALSE(m.biased());
  m.lock();  // the former owner now takes the plain lock
  m.unlock();
}

TEST_CASE("biased_lock: two threads counting under it lose no increment") {
  constexpr int kPerThread = 200000;
  for (int round = 0; round < 4; ++round) {
    BiasedLock m;
    long counter = 0;  // plain: only the lock orders it
    auto work = [&] {
      for (int i = 0; i < kPerThread; ++i) {
        m.lock();
        ++counter;
        m.unlock();
      }
    };
    std::thread a(work);
    if (round % 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a may own the bias alone first
    std::thread b(work);
    a.join();
    b.join();
    m.lock();
    CHECK(counter == 2L * kPerThread);
    m.unlock();
    CHECK_FALSE(m.biased());
  }
}

TEST_CASE("biased_lock: a forked child revokes a bias its parent's thread held") {
  BiasedLock m;
  std::thread owner([&] {
    m.lock();
    m.unlock();
  });
  owner.join();
  CHECK(m.biased() == bd::enabled());
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    m.lock();  // revokes: membarrier needs this address space's own registration
    m.unlock();
    _exit(m.biased() ? 1 : 0);
  }
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
}
