// Where emulated memory lives. Device memory is memfd pages (lazily backed: a 140 GB
// device costs nothing until its pages are touched) mapped twice: a PROT_NONE view whose
// address is the "device pointer" (host code that dereferences it faults, as on a GPU), and
// a read-write shadow view through which the emulator copies. Pinned host memory is one
// read-write mapping: host and device see the same address (UVA). Allocations are carved
// from shared arenas (memory/arena.hpp); memory of other processes is adopted whole.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/errc.hpp"
#include "memory/arena.hpp"

namespace cuda_shim::mem {

class Backing {
 public:
  enum class View { device, host };

  // `size` bytes (rounded up to whole pages) carved from this process's arenas, at a user
  // address aligned to `align` (a page at least). On failure records why with fail()
  // (CUDA_ERROR_OUT_OF_MEMORY) and returns null.
  static std::shared_ptr<Backing> create(size_t size, View view, const char* api, Errc& err);
  static std::shared_ptr<Backing> carve(ArenaClass c, size_t size, size_t align, const char* api, Errc& err);
  // Maps `size` bytes of an existing object (another process's memory); takes fd.
  static std::shared_ptr<Backing> adopt(int fd, size_t size, View view, const char* api, Errc& err);
  // Maps bytes [offset, offset + size) of an existing object (external memory); takes fd.
  // offset need not be page-aligned: the views start at the byte itself.
  // With va_align (a power of two, device view), the user address is congruent to va_phase
  // modulo va_align, as the real driver places external buffers (2 MiB-aligned ranges).
  static std::shared_ptr<Backing> adopt_range(int fd, uint64_t offset, size_t size, View view, const char* api,
                                              Errc& err, size_t va_align = 0, size_t va_phase = 0);
  ~Backing();
  Backing(const Backing&) = delete;
  Backing& operator=(const Backing&) = delete;

  // A descriptor of exactly this memory, for another process to map (legacy IPC). Memory carved
  // from an arena first moves to a sealed memfd of its own, so an importer sees none of its
  // neighbours and keeps its pages after this process frees them. Nothing may write the memory
  // while it moves (the caller synchronizes its context). The descriptor stays owned here.
  Errc shareable_fd(int& fd, const char* api);
  // Whether shareable_fd has nothing to move.
  bool shareable() const { return fd_ >= 0; }
  size_t mapped_size() const { return size_; }
  // The file that holds the bytes (an arena's, or the memory's own) and where they start in it,
  // for mapping them at more addresses (VMM mappings) or handing them to a binding.
  int object_fd() const { return fd_ >= 0 ? fd_ : extent_.arena ? arena_fd(extent_) : -1; }
  uint64_t object_offset() const { return fd_ >= 0 ? file_off_ : extent_.offset; }
  // The address handed to the user (device view: PROT_NONE; host view: read-write).
  uintptr_t user_address() const { return reinterpret_cast<uintptr_t>(user_) + delta_; }
  // The address the emulator reads and writes through.
  char* shadow() const { return static_cast<char*>(shadow_) + delta_; }

 private:
  Backing() = default;
  int fd_ = -1;
  size_t size_ = 0;
  void* user_ = nullptr;
  void* shadow_ = nullptr;  // == user_ for host views
  size_t delta_ = 0;        // adopt_range: the first byte's distance from the page boundary
  uint64_t file_off_ = 0;   // adopt_range: the first page's offset in fd_
  ArenaExtent extent_;           // carved memory: where in which arena (fd_ >= 0 once moved out)
};

size_t page_size() noexcept;
// The host's RAM in bytes (UINT64_MAX when unknown): what pinned, host-located and managed
// allocations cannot exceed.
uint64_t physical_memory() noexcept;

}  // namespace cuda_shim::mem
