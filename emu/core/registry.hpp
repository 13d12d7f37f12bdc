// Handles given to users are pointers to our objects, but a handle is only ever
// dereferenced after this registry has confirmed it names a live object of the
// right kind: garbage and stale handles are answered, never followed.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace cuda_shim {

// Handle values counted up from a base: unique for the process's life across every kind of
// object (an event's handle never equals an allocation's), never an object's address.
inline void* registry_fresh_handle() {
  static std::atomic<uint64_t> next{1};
  return reinterpret_cast<void*>(uintptr_t{0x7c00'0000'0000} + (next.fetch_add(1, std::memory_order_relaxed) << 4));
}

template <class T>
class Registry {
 public:
  Registry() = default;
  // Counts its epoch in `epoch` instead of its own (a constant-initialized global that hot
  // paths read without reaching the registry first). It must start at 1: caches use 0 as empty.
  explicit Registry(std::atomic<uint64_t>& epoch) : epoch_p_(&epoch) {}
  // Takes shared ownership; the handle value is the object's address.
  void* add(std::shared_ptr<T> obj) {
    void* h = obj.get();
    return add_as(h, std::move(obj));
  }
  // Takes shared ownership under a handle value never given before (never the object's address):
  // after the object dies, its handle stays stale forever instead of naming the next object that
  // the allocator places at the same address (a second destroy would destroy that one).
  void* add_fresh(std::shared_ptr<T> obj) { return add_as(registry_fresh_handle(), std::move(obj)); }
  // Takes shared ownership under handle h (its address, or one from registry_fresh_handle given
  // back for the same object).
  void* add_as(void* h, std::shared_ptr<T> obj) {
    std::unique_lock lk(m_);
    map_.insert_or_assign(h, std::move(obj));
    return h;
  }
  std::shared_ptr<T> find(const void* h) const {
    if (!h) return nullptr;
    std::shared_lock lk(m_);
    auto it = map_.find(h);
    return it == map_.end() ? nullptr : it->second;
  }
  // Removes and returns the object (null if it was not live).
  std::shared_ptr<T> remove(const void* h) {
    std::unique_lock lk(m_);
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    auto obj = std::move(it->second);
    map_.erase(it);
    bump();
    return obj;
  }
  // Changes whenever a handle dies (or its object changes state, see bump's callers):
  // per-thread caches of validated handles compare it instead of taking the lock.
  uint64_t epoch() const { return epoch_p_->load(std::memory_order_acquire); }
  void bump() { epoch_p_->fetch_add(1, std::memory_order_acq_rel); }
  template <class F>
  void for_each(F&& f) const {
    std::shared_lock lk(m_);
    for (auto& [h, o] : map_) f(o);
  }
  size_t size() const {
    std::shared_lock lk(m_);
    return map_.size();
  }

 private:
  mutable std::shared_mutex m_;
  std::unordered_map<const void*, std::shared_ptr<T>> map_;
  std::atomic<uint64_t> epoch_{1};
  std::atomic<uint64_t>* epoch_p_ = &epoch_;
};

}  // namespace cuda_shim
