// The pools that may have work at the next host synchronization (pending frees to settle,
// idle chunks above the release threshold). A synchronization visits these, not every pool:
// its cost does not grow with the number of pools that have nothing to do.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>


namespace cuda_shim::mem {

class Pool;

// A pool's place in the list: npos while not listed. Moves only under the list's lock.
struct AttentionSlot {
  static constexpr size_t npos = ~size_t(0);
  std::atomic<size_t> index{npos};
  bool listed() const { return index.load(std::memory_order_relaxed) != npos; }
};

// Called with the pool's own lock held (the pool lock comes before the list's).
void attention_add(std::weak_ptr<Pool> pool, AttentionSlot& slot);
void attention_remove(AttentionSlot& slot);
// How many pools are listed. While any is, memory wants ev::host_synchronised emitted.
inline constinit std::atomic<size_t> g_attention{0};
inline bool attention_any() noexcept { return g_attention.load(std::memory_order_acquire) != 0; }
// The listed pools still alive.
void attention_snapshot(std::vector<std::shared_ptr<Pool>>& out);

}  // namespace cuda_shim::mem
