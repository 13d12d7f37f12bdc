// A few large memfds from which cuMemAlloc, cuMemAllocHost and cuMemAllocManaged carve their
// allocations, so a live allocation costs no file descriptor: under the common `ulimit -n 1024`
// a descriptor per allocation stopped programs at about a thousand live allocations and starved
// their own open() calls, where a GPU has no such limit.
//
// An arena is one sealed memfd of kArenaBytes (sparse: only touched pages cost memory), mapped
// once as the user's view (PROT_NONE for device memory, so host dereferences fault as on a GPU)
// and, for device memory, once more as the read-write shadow the emulator copies through.
// Extents are page multiples; the next allocation in a freed extent reads zeros: its resident
// pages are zeroed in place and kept, up to a bound over all arenas (device and pinned memory),
// so a copy into a reallocated extent does not fault every page in again; past the bound (and
// for managed memory) they are punched out of the file and the memory returns to the system.
// An arena lives while any extent of it does; the newest one of each class is kept as a spare
// so that alloc/free loops do not create and destroy arenas.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace cuda_shim::mem {

enum class ArenaClass { device, host, managed };

// Virtual size of an arena; an allocation larger than this gets an arena of its own size.
constexpr size_t kArenaBytes = size_t(4) << 30;

class Arena;

struct ArenaExtent {
  std::shared_ptr<Arena> arena;
  size_t offset = 0;  // in the arena's file and views
  size_t len = 0;     // page multiple
  char* user = nullptr;
  char* shadow = nullptr;  // == user for host memory
};

// Carves len bytes (a page multiple) whose user address is a multiple of align (a power of two,
// at least a page). False with errno set when no arena can be made or mapped.
bool carve(ArenaClass c, size_t len, size_t align, ArenaExtent& out) noexcept;
// Returns an extent: its pages are zeroed (kept) or punched out, its views restored to the
// class's defaults.
void release(const ArenaExtent& e) noexcept;
// Maps the arena's own pages back under both views of e (after they were given to another
// file, see Backing::shareable_fd). False (errno set) if a view could not be restored.
bool remap_home(const ArenaExtent& e) noexcept;
// The arena's descriptor (owned by the arena).
int arena_fd(const ArenaExtent& e) noexcept;

// How many arenas are alive (diagnostics and tests).
size_t live_arenas() noexcept;

}  // namespace cuda_shim::mem
