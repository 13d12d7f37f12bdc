// Where emulated memory lives. Device memory is a memfd (lazily backed: a 140 GB
// device costs nothing until its pages are touched, and a later IPC layer can hand the
// fd to another process) mapped twice: a PROT_NONE view whose address is the "device
// pointer" (host code that dereferences it faults, as on a GPU), and a read-write
// shadow view through which the emulator copies. Pinned host memory is one read-write
// memfd mapping: host and device see the same address (UVA).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/errc.hpp"

namespace cuda_shim::mem {

class Backing {
 public:
  enum class View { device, host };

  // Maps `size` bytes (rounded up to whole pages). On failure records why with fail()
  // (CUDA_ERROR_OUT_OF_MEMORY) and returns null.
  static std::shared_ptr<Backing> create(size_t size, View view, const char* api, Errc& err);
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

  int fd() const { return fd_; }
  size_t mapped_size() const { return size_; }
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
};

size_t page_size() noexcept;
// The host's RAM in bytes (UINT64_MAX when unknown): what pinned, host-located and managed
// allocations cannot exceed.
uint64_t physical_memory() noexcept;

}  // namespace cuda_shim::mem
