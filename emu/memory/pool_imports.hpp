// An imported pool's allocations (cuMemPoolImportPointer), by offset in the pool's memory.
// Imports and frees name an allocation's start, so the table is an open-addressing hash
// keyed by offset: no node allocation, no tree walk. Pointer queries may name any byte of
// an import; those look backwards granule by granule from the byte (allocations start on
// 512-byte boundaries), and only where imports are large fall back to an offset-sorted copy
// of the keys rebuilt after changes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuda_shim::mem {

class ImportTable {
 public:
  struct Entry {
    uintptr_t off = 0;
    size_t size = 0;  // 0: empty slot (imports are never empty)
    uint64_t buffer_id = 0;
  };
  Entry* find(uintptr_t off);
  const Entry* find(uintptr_t off) const { return const_cast<ImportTable*>(this)->find(off); }
  // Adds an import at off (not present); size > 0.
  void insert(uintptr_t off, size_t size, uint64_t buffer_id);
  // The import at off if there is one (fresh = false); else adds it with one probe.
  Entry* emplace(uintptr_t off, size_t size, uint64_t buffer_id, bool& fresh);
  bool erase(uintptr_t off);
  // The import with the greatest start <= off, when it holds off; null otherwise.
  const Entry* containing(uintptr_t off) const;
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  template <class F>
  void for_each(F&& f) const {  // every import, in no order
    for (const Entry& e : t_)
      if (e.size) f(e);
  }

 private:
  static constexpr unsigned kGranule = 9;   // 512-byte allocation granularity
  static constexpr size_t kProbeBack = 64;  // granules looked at before the sorted keys
  size_t slot(uintptr_t off) const { return ((off >> kGranule) * 0x9E3779B97F4A7C15ull) >> shift_; }
  void grow();
  std::vector<Entry> t_;
  size_t count_ = 0;
  unsigned shift_ = 64;
  size_t max_size_ = 0;     // largest import ever (bounds the backward look)
  bool unaligned_ = false;  // an import started off a granule (never from our exporter)
  mutable std::vector<uintptr_t> sorted_;  // keys, rebuilt when stale
  mutable bool stale_ = true;
};

}  // namespace cuda_shim::mem
