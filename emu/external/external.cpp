#include "external/external.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/context.hpp"
#include "ipc/identity.hpp"
#include "platform/shareable.hpp"

namespace cuda_shim::ext {
namespace {

constexpr size_t kSemaphoreObjectSize = 4096;

template <class T>
std::atomic_ref<T> at(T& v) {
  return std::atomic_ref<T>(v);
}

// Shared (not PRIVATE) futex ops: the word lives in a MAP_SHARED page other processes map too.
void futex_wake_all(uint32_t* w) { ::syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0); }
void futex_wait(uint32_t* w, uint32_t seen, long ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1000000
  };
  ::syscall(SYS_futex, w, FUTEX_WAIT, seen, &ts, nullptr, 0);
}

}  // namespace

ExternalMemory::~ExternalMemory() {
  if (fd >= 0) ::close(fd);
}

ExternalSemaphore::~ExternalSemaphore() {
  if (fd >= 0) ::close(fd);
}

std::shared_ptr<SharedSemaphore> SharedSemaphore::map(int fd) noexcept {
  void* p = ipc::map_object(fd, 0, kSemaphoreObjectSize);
  if (!p) return nullptr;
  auto* w = static_cast<SemaphoreWords*>(p);
  if (at(w->magic).load() != kSemaphoreMagic) {
    ::munmap(p, kSemaphoreObjectSize);
    return nullptr;
  }
  std::shared_ptr<SharedSemaphore> s(new (std::nothrow) SharedSemaphore());
  if (!s) {
    ::munmap(p, kSemaphoreObjectSize);
    return nullptr;
  }
  s->words_ = w;
  return s;
}

std::shared_ptr<SharedSemaphore> SharedSemaphore::make_private() noexcept {
  std::shared_ptr<SharedSemaphore> s(new (std::nothrow) SharedSemaphore());
  auto* w = new (std::nothrow) SemaphoreWords{};
  if (!s || !w) {
    delete w;
    return nullptr;
  }
  w->magic = kSemaphoreMagic;
  s->words_ = w;
  s->shared_ = false;
  return s;
}

SharedSemaphore::~SharedSemaphore() {
  if (!words_) return;
  if (shared_) ::munmap(words_, kSemaphoreObjectSize);
  else delete words_;
}

uint64_t SharedSemaphore::value() const { return at(words_->value).load(); }

void SharedSemaphore::signal(uint64_t v, bool as_timeline) {
  at(words_->value).store(as_timeline ? v : 1);
  at(words_->futex).fetch_add(1);
  futex_wake_all(&words_->futex);
}

bool SharedSemaphore::wait(uint64_t v, bool as_timeline, long timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  for (;;) {
    const uint32_t seen = at(words_->futex).load();
    if (as_timeline) {
      if (at(words_->value).load() >= v) return true;
    } else {
      uint64_t one = 1;
      if (at(words_->value).compare_exchange_strong(one, 0)) return true;
    }
    long slice = 50;  // re-check now and then: a peer killed mid-signal must not hang us
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      slice = std::min<long>(slice, left);
    }
    futex_wait(&words_->futex, seen, slice);
  }
}

Errc create_semaphore_object(bool timeline, uint64_t initial, const char* api, int& fd_out) {
  int fd = ipc::create_object(ipc::ObjectKind::semaphore, ipc::random_token(), {timeline ? 1u : 0u},
                              kSemaphoreObjectSize);
  if (fd < 0)
    return fail(Errc::out_of_memory, "{}: cannot create the semaphore object ({})", api, std::strerror(errno));
  void* p = ipc::map_object(fd, 0, kSemaphoreObjectSize);
  if (!p) {
    ::close(fd);
    return fail(Errc::out_of_memory, "{}: cannot map the semaphore object ({})", api, std::strerror(errno));
  }
  auto* w = static_cast<SemaphoreWords*>(p);
  w->timeline = timeline ? 1 : 0;
  w->value = timeline ? initial : (initial ? 1 : 0);
  at(w->magic).store(kSemaphoreMagic);
  ::munmap(p, kSemaphoreObjectSize);
  // The descriptor is the export: importers prove that what they are handed is this object.
  if (Errc e = ipc::vouch(fd, api); e != Errc::success) {
    ::close(fd);
    return e;
  }
  fd_out = fd;
  return Errc::success;
}

}  // namespace cuda_shim::ext
