#include "memory/pool_imports.hpp"

#include <algorithm>

namespace cuda_shim::mem {

ImportTable::Entry* ImportTable::find(uintptr_t off) {
  if (t_.empty()) return nullptr;
  const size_t mask = t_.size() - 1;
  for (size_t i = slot(off);; i = (i + 1) & mask) {
    if (!t_[i].size) return nullptr;
    if (t_[i].off == off) return &t_[i];
  }
}

void ImportTable::grow() {
  std::vector<Entry> old(t_.size() ? t_.size() * 2 : 16);
  old.swap(t_);
  shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(t_.size()));
  const size_t mask = t_.size() - 1;
  for (const Entry& e : old)
    if (e.size)
      for (size_t i = slot(e.off);; i = (i + 1) & mask)
        if (!t_[i].size) {
          t_[i] = e;
          break;
        }
}

ImportTable::Entry* ImportTable::emplace(uintptr_t off, size_t size, uint64_t buffer_id, bool& fresh) {
  if ((count_ + 1) * 2 > t_.size()) grow();
  const size_t mask = t_.size() - 1;
  size_t i = slot(off);
  for (;; i = (i + 1) & mask) {
    if (!t_[i].size) break;
    if (t_[i].off == off) {
      fresh = false;
      return &t_[i];
    }
  }
  fresh = true;
  t_[i] = Entry{off, size, buffer_id};
  ++count_;
  if (size > max_size_) max_size_ = size;
  unaligned_ |= (off & ((size_t(1) << kGranule) - 1)) != 0;
  stale_ = true;
  return &t_[i];
}

void ImportTable::insert(uintptr_t off, size_t size, uint64_t buffer_id) {
  bool fresh = false;
  emplace(off, size, buffer_id, fresh);
}

bool ImportTable::erase(uintptr_t off) {
  if (t_.empty()) return false;
  const size_t mask = t_.size() - 1;
  size_t i = slot(off);
  for (;; i = (i + 1) & mask) {
    if (!t_[i].size) return false;
    if (t_[i].off == off) break;
  }
  // Backward-shift deletion: later entries of the probe run move up where they may.
  for (size_t j = (i + 1) & mask; t_[j].size; j = (j + 1) & mask) {
    const size_t home = slot(t_[j].off);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t_[i] = t_[j];
      i = j;
    }
  }
  t_[i] = Entry{};
  --count_;
  stale_ = true;
  return true;
}

const ImportTable::Entry* ImportTable::containing(uintptr_t off) const {
  if (count_ == 0) return nullptr;
  const size_t g = size_t(1) << kGranule;
  if (!unaligned_) {
    // Every start is on a granule: the first import met looking down from off's granule has
    // the greatest start <= off.
    uintptr_t at = off & ~(g - 1);
    for (size_t n = 0; n < kProbeBack; ++n, at -= g) {
      if (const Entry* e = find(at)) return off - e->off < e->size ? e : nullptr;
      if (at == 0 || off - at + g >= max_size_) return nullptr;  // none lower reaches off
    }
  }
  if (stale_) {
    sorted_.clear();
    sorted_.reserve(count_);
    for (const Entry& e : t_)
      if (e.size) sorted_.push_back(e.off);
    std::sort(sorted_.begin(), sorted_.end());
    stale_ = false;
  }
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), off);
  if (it == sorted_.begin()) return nullptr;
  const Entry* e = find(*--it);
  return e && off - e->off < e->size ? e : nullptr;
}

}  // namespace cuda_shim::mem
