// What core needs from the memory room above it, reached through functions that room registers
// when the library loads (a static initializer in emu/memory/upcalls.cpp): core includes none of
// memory's headers, and a lower room never has to know how a higher one keeps its state.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>

namespace cuda_shim {

class Context;
class Stream;

namespace upcalls {

struct Memory {
  void (*after_sync_slow)() noexcept;                        // pools settle what the host observed
  void (*stream_destroyed)(const std::shared_ptr<Stream>&);  // managed attachments revert
  void (*release_context)(const Context*) noexcept;          // a context's allocations die with it
  // What a handle of another kind is, if memory knows it ("a memory pool", "host memory"), or null.
  const char* (*object_kind)(const void* h);
};

// Nonzero while after_sync_slow has work (the memory room's count of pools needing attention):
// every host synchronization reads it, so it is a constant-initialized global (one load).
extern std::atomic<size_t> g_sync_work;

void set_memory(const Memory* m) noexcept;
const Memory* memory() noexcept;  // null only before the library finished loading

// After every host synchronization (stream, event, context): one load unless a pool has work.
inline void after_sync() noexcept {
  if (g_sync_work.load(std::memory_order_acquire) != 0) [[unlikely]]
    if (const Memory* m = memory()) m->after_sync_slow();
}

}  // namespace upcalls
}  // namespace cuda_shim
