// The indexes a pool keeps beside its address-ordered treap of blocks (pool.cpp):
//  - BlockHash: live allocations by base offset, so a free finds its block in O(1). Keys sit
//    in the table itself, so a probe reads no block (at a million live allocations each block
//    read is a cache miss). The requested size is not kept here: the free writes the block's
//    first line anyway (pool_blocks.hpp), and 16-byte slots keep the table a third smaller
//    (measured against 24-byte slots with the size: neutral on a 2-core host, ahead in two of
//    three alternating rounds of 10k scrambled frees on a loaded 16-core H200 host).
//  - ParkedFrees: pending stream-ordered frees the treap has not been told about yet, lowest
//    offset first. A free parks its block instead of updating the treap's summaries (O(log n)
//    cache misses); the next allocation of the same size takes the lowest parked block back
//    when it is the first fit, without touching the treap. Anything else unparks them all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuda_shim::mem {

struct PoolBlock;

class BlockHash {
 public:
  void insert(uintptr_t off, PoolBlock* b);
  PoolBlock* find(uintptr_t off) const;
  // Finds and removes the block at `off` in one probe sequence; null if none.
  PoolBlock* take(uintptr_t off);
  size_t size() const { return count_; }

 private:
  struct Slot {
    uintptr_t off;
    PoolBlock* b;  // null: empty
  };
  size_t slot(uintptr_t off) const { return ((off >> 9) * 0x9E3779B97F4A7C15ull) >> shift_; }
  std::vector<Slot> t_;
  size_t count_ = 0;
  unsigned shift_ = 64;
};

class ParkedFrees {
 public:
  bool empty() const { return h_.empty() && run_.empty(); }
  size_t size() const { return h_.size() + run_.size(); }
  // The lowest parked block (not empty). Many frees in a row (a batch freed before the next
  // allocation) are sorted into a run once, so that taking them back in order costs O(1)
  // each instead of a heap pop's O(log n) chain of dependent loads.
  PoolBlock* top() {
    if (h_.size() >= kBulk && h_.size() * 4 >= run_.size()) [[unlikely]]
      consolidate();
    return from_run() ? run_.back().b : h_.front().b;
  }
  void push(uintptr_t off, PoolBlock* b) {  // inline: the common free parks into an empty set
    size_t i = h_.size();
    h_.push_back(Entry{off, b});
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (h_[p].off <= off) break;
      h_[i] = h_[p];
      i = p;
    }
    h_[i] = Entry{off, b};
  }
  // Removes the block top() returned.
  void pop() {
    if (from_run()) run_.pop_back();
    else heap_pop();
  }
  // Hands every parked block to f (any order) and empties the set.
  template <class F>
  void drain(F&& f) {
    for (auto& e : h_) f(e.b);
    for (auto& e : run_) f(e.b);
    h_.clear();
    run_.clear();
  }
  template <class F>
  void each(F&& f) const {
    for (auto& e : h_) f(e.b);
    for (auto& e : run_) f(e.b);
  }

 private:
  struct Entry {
    uintptr_t off;
    PoolBlock* b;
  };
  static constexpr size_t kBulk = 64;
  bool from_run() const { return !run_.empty() && (h_.empty() || run_.back().off < h_.front().off); }
  void heap_pop();
  void consolidate();  // moves the heap's entries into the run, sorted (radix, by granule)
  std::vector<Entry> h_;    // binary min-heap by offset
  std::vector<Entry> run_;  // sorted by offset, highest first: the lowest is at the back
  std::vector<Entry> tmp_;  // scratch of the sort
};

}  // namespace cuda_shim::mem
