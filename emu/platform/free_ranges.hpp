// A free list of address or offset ranges kept as start -> length, merged with its neighbours
// when a range comes back: the pinned/device arenas (memory/) and the VMM address heap (vmm/)
// both give ranges back this way.
#pragma once
#include <cstddef>
#include <iterator>
#include <map>

namespace cuda_shim::platform {

// Returns [at, at + len) to `free`, joining a free range that ends at `at` or starts at its end.
template <class K>
void give_back_range(std::map<K, size_t>& free, K at, size_t len) {
  auto next = free.lower_bound(at);
  if (next != free.end() && next->first == at + len) {
    len += next->second;
    next = free.erase(next);
  }
  if (next != free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      prev->second += len;
      return;
    }
  }
  free.emplace(at, len);
}

}  // namespace cuda_shim::platform
