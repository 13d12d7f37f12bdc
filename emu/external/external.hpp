// External memory and semaphores (cuImportExternalMemory, cuImportExternalSemaphore ...):
// objects another API exported, imported by file descriptor.
//  - An ExternalMemory holds its own descriptor of the exported object and where the memory's
//    bytes sit in it (exporters.hpp). Each mapped buffer is a fresh device-view mapping of a
//    byte range of that object, registered in the AddressSpace like a cuMemAlloc block, so
//    writes through either side are the same memory.
//  - A semaphore object is one page of shared memory holding the semaphore's value and a
//    futex word; signals and waits run in stream order on the stream's worker and work across
//    processes, as a semaphore shared with another API must.
#pragma once
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/capture.hpp"
#include "core/errc.hpp"
#include "external/exporters.hpp"

namespace cuda_shim {
class Context;
}

namespace cuda_shim::ext {

struct ExternalMemory {
  CUexternalMemoryHandleType type{};
  uint64_t size = 0;         // as imported (desc.size; the driver does not check it against the object)
  uint64_t object_size = 0;  // bytes really behind the fd: mappings must end inside them
  bool dedicated = false;    // CUDA_EXTERNAL_MEMORY_DEDICATED
  int fd = -1;               // the emulator's own descriptor of the object (close-on-exec)
  uint64_t data_offset = 0;  // where the memory's byte 0 sits in the object
  std::string source;        // what was imported, for explanations
  int ordinal = 0;
  std::shared_ptr<Context> ctx;
  std::atomic<int> buffers{0};  // mapped buffers and mipmapped arrays not freed yet

  ExternalMemory() = default;
  ExternalMemory(const ExternalMemory&) = delete;
  ExternalMemory& operator=(const ExternalMemory&) = delete;
  ~ExternalMemory();
};

// The shared page behind a semaphore object (trivially copyable words, lock-free atomics).
struct SemaphoreWords {
  uint64_t magic;
  uint64_t timeline;  // 0: binary, 1: timeline
  uint64_t value;     // binary: 1 signaled, 0 not; timeline: the counter
  uint32_t futex;     // bumped by every signal; waiters sleep on it
  uint32_t pad;
};
constexpr uint64_t kSemaphoreMagic = 0x6d6573'6d696873ULL;  // "shimsem"

// A mapped semaphore object: the same page in every process that holds the fd.
class SharedSemaphore {
 public:
  // Maps fd's page (fd stays the caller's). Null when fd is not a semaphore object.
  static std::shared_ptr<SharedSemaphore> map(int fd) noexcept;
  ~SharedSemaphore();
  // A semaphore nobody else sees (what importing an object that is no semaphore yields).
  static std::shared_ptr<SharedSemaphore> make_private() noexcept;
  bool timeline() const { return words_->timeline != 0; }
  uint64_t value() const;
  // Binary: becomes signaled (value ignored). Timeline: the counter becomes `value`, also a
  // lower one (measured). `as_timeline` is how the importer treats it (its import type).
  void signal(uint64_t value, bool as_timeline);
  // Binary: waits until signaled, then unsignals. Timeline: waits until the counter >= value.
  // timeout_ms < 0 waits for ever; returns false on timeout.
  bool wait(uint64_t value, bool as_timeline, long timeout_ms);

 private:
  SharedSemaphore() = default;
  SemaphoreWords* words_ = nullptr;
  bool shared_ = true;  // words_ is a mapping of an object (else owned heap memory)
};

// Creates an exportable semaphore object (the stand-in for Vulkan's exported semaphores).
Errc create_semaphore_object(bool timeline, uint64_t initial, const char* api, int& fd_out);

struct ExternalSemaphore {
  CUexternalSemaphoreHandleType type{};
  bool timeline = false;  // imported as TIMELINE_SEMAPHORE_FD: signals set values, waits compare
  std::shared_ptr<SharedSemaphore> sem;
  int fd = -1;  // the object, owned (ownership passed in at import)
  std::string source;
  ExternalSemaphore() = default;
  ExternalSemaphore(const ExternalSemaphore&) = delete;
  ExternalSemaphore& operator=(const ExternalSemaphore&) = delete;
  ~ExternalSemaphore();
};

// Live external memory and semaphore handles (cuShimGetObjectCounts).
size_t live_memory_count();
size_t live_semaphore_count();

// External-semaphore signal and wait nodes (cuGraphAddExternalSemaphores*Node, cuGraphAddNode, a
// signal or wait on a capturing stream): the arrays copied into the node, the handles checked.
Errc signal_node(const CUexternalSemaphore* sems, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* params, unsigned n,
                 cap::Spec& out, const char* api);
Errc wait_node(const CUexternalSemaphore* sems, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* params, unsigned n,
               cap::Spec& out, const char* api);

}  // namespace cuda_shim::ext
