// Address space for cuMemAddressReserve ranges and their shadows, kept reserved by the emulator
// as NVIDIA's driver keeps its own VA reservation: a reservation (or shadow) is carved from a few
// large PROT_NONE chunks, and a freed one goes back to the heap instead of to the kernel. A
// reserve + free cycle then costs no system call (it cost four to six: mmap, trims, munmap).
//
// A user range handed back must be anonymous PROT_NONE pages again (cuMemUnmap restores them),
// so the next reservation finds nothing of the last one's.
// Ranges too large for a chunk, and hints outside the heap, are mapped directly as before.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cuda_shim::vmm {

// User ranges and shadows come from separate heaps: a shadow may keep read-write views of arena
// memory where a mapping was (vmm.hpp, Mapping), which a user range must never show.
enum class VaUse { user, shadow };

struct VaRange {
  void* base = nullptr;  // null: no address space was found
  size_t len = 0;
  bool heap = false;  // from the heap (given back) or mapped directly (unmapped)
  VaUse use = VaUse::user;
};

// len bytes of PROT_NONE address space at a multiple of align (a power of two, >= a page); at
// hint when hint is aligned and free there, as the driver honours a free hint.
VaRange va_take(VaUse use, size_t len, size_t align, uintptr_t hint) noexcept;
// Returns a range from va_take. With reset, its pages are first made anonymous PROT_NONE again
// (a user range: when something may still be mapped there; a shadow: when a view that holds
// memory alive, an own memfd's, may be left).
void va_give(const VaRange& r, bool reset) noexcept;

}  // namespace cuda_shim::vmm
