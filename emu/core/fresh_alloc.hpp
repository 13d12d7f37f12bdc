// Storage for objects whose address is their handle (contexts, streams, modules, functions,
// arrays, pools, external memory...): an address handed out here is never handed out again in
// this process (under LeakSanitizer: not before the heap's quarantine lets it go), so a
// destroyed object's handle stays stale. With the ordinary allocator the next object of its
// size landed at the same address, and a second destroy of the old handle destroyed the new
// object. Freed pages go back to the system; only address space is spent.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace cuda_shim {

// n bytes aligned to `align` (at most a page) at addresses never returned before; throws
// std::bad_alloc when no address space is left.
void* fresh_allocate(size_t n, size_t align);
void fresh_deallocate(void* p, size_t n) noexcept;

template <class T>
struct FreshAllocator {
  using value_type = T;
  FreshAllocator() = default;
  template <class U>
  FreshAllocator(const FreshAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(fresh_allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) noexcept { fresh_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const FreshAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const FreshAllocator<U>&) const noexcept { return false; }
};

// make_shared for objects whose address is a handle.
template <class T, class... A>
std::shared_ptr<T> make_fresh(A&&... a) {
  return std::allocate_shared<T>(FreshAllocator<T>(), std::forward<A>(a)...);
}

}  // namespace cuda_shim
