#include "memory/pool_index.hpp"

namespace cuda_shim::mem {

void BlockHash::insert(uintptr_t off, PoolBlock* b) {
  if ((count_ + 1) * 2 > t_.size()) {
    std::vector<Slot> old(t_.size() ? t_.size() * 2 : 16, Slot{0, nullptr});
    old.swap(t_);
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(t_.size()));
    count_ = 0;
    for (const Slot& s : old)
      if (s.b) insert(s.off, s.b);
  }
  const size_t mask = t_.size() - 1;
  for (size_t i = slot(off);; i = (i + 1) & mask)
    if (!t_[i].b) {
      t_[i] = Slot{off, b};
      ++count_;
      return;
    }
}

PoolBlock* BlockHash::find(uintptr_t off) const {
  if (t_.empty()) return nullptr;
  const size_t mask = t_.size() - 1;
  for (size_t i = slot(off);; i = (i + 1) & mask)
    if (!t_[i].b || t_[i].off == off) return t_[i].b;
}

PoolBlock* BlockHash::take(uintptr_t off) {
  if (t_.empty()) return nullptr;
  const size_t mask = t_.size() - 1;
  size_t i = slot(off);
  for (;; i = (i + 1) & mask) {
    if (!t_[i].b) return nullptr;
    if (t_[i].off == off) break;
  }
  PoolBlock* b = t_[i].b;
  // Backward-shift deletion: later entries of the probe run move up where they may.
  for (size_t j = (i + 1) & mask; t_[j].b; j = (j + 1) & mask) {
    const size_t home = slot(t_[j].off);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t_[i] = t_[j];
      i = j;
    }
  }
  t_[i] = Slot{0, nullptr};
  --count_;
  return b;
}

void ParkedFrees::heap_pop() {
  Entry last = h_.back();
  h_.pop_back();
  const size_t n = h_.size();
  if (n == 0) return;
  // Floyd's pop: walk the hole down to a leaf along the smaller children (one comparison a
  // level, no early exit to mispredict), then let the last entry rise from there. The entry
  // taken from the back is among the largest, so it rarely rises far.
  size_t i = 0;
  for (size_t c = 1; c < n; c = 2 * i + 1) {
    c += (c + 1 < n && h_[c + 1].off < h_[c].off);
    h_[i] = h_[c];
    i = c;
  }
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h_[p].off <= last.off) break;
    h_[i] = h_[p];
    i = p;
  }
  h_[i] = last;
}

void ParkedFrees::consolidate() {
  run_.insert(run_.end(), h_.begin(), h_.end());
  h_.clear();
  // LSD radix sort, a byte of the offset at a time above the 512-byte granule (parked blocks
  // start on granules, and any order within one granule would do), highest offset first.
  uintptr_t all = 0;
  for (const Entry& e : run_) all |= e.off;
  tmp_.resize(run_.size());
  for (unsigned shift = 9; shift < 64 && (all >> shift); shift += 8) {
    size_t count[257] = {};
    for (const Entry& e : run_) ++count[256 - ((e.off >> shift) & 255)];
    for (size_t d = 1; d < 257; ++d) count[d] += count[d - 1];
    for (const Entry& e : run_) tmp_[count[255 - ((e.off >> shift) & 255)]++] = e;
    run_.swap(tmp_);
  }
}

}  // namespace cuda_shim::mem
