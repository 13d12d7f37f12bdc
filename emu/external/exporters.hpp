// Who made an fd handed to cuImportExternalMemory / cuImportExternalSemaphore, and where its
// bytes are: the one place that knows other drivers' object layouts. The real driver accepts
// only what an NVIDIA exporter produced (its own VMM allocations, Vulkan or OpenGL memory
// exported by NVIDIA's driver); the emulator accepts the memory its own APIs export and the
// memory a software Vulkan driver on the same machine exports, and explains every other fd.
#pragma once
#include <cstdint>
#include <string>

#include "platform/shareable.hpp"

namespace cuda_shim::ext {

enum class Exporter {
  unknown,          // not an exporter's object (info.what says what it is instead)
  shim_vmm,         // cuMemExportToShareableHandle of a cuMemCreate allocation
  shim_pool,        // cuMemPoolExportToShareableHandle (a pool, not memory: refused)
  shim_semaphore,   // cuShimExportableSemaphoreCreate (stands in for Vulkan's semaphores)
  lavapipe,         // Mesa's software Vulkan driver (VK_KHR_external_memory_fd, opaque fd)
};

struct ExportedObject {
  Exporter exporter = Exporter::unknown;
  ipc::FdInfo info;
  uint64_t data_offset = 0;  // file offset of the memory's byte 0
  uint64_t data_size = 0;    // bytes of memory behind the fd
  bool timeline = false;     // shim_semaphore: a timeline (counting) semaphore
  // "a cuMemCreate allocation of 2097152 bytes (memfd \"cuda-shim:vmm:...\")", for explanations.
  std::string describe() const;
};

// Reads what fd is (never takes ownership, never changes it).
ExportedObject identify(int fd) noexcept;

// lavapipe (Mesa 22.3, Debian bookworm, measured): the exported opaque fd is a memfd named
// "llvmpipe memory fd"; the allocation's byte 0 is at file offset 4096 and the file is the
// allocation size + 4136 bytes long.
constexpr const char kLavapipeMemfdName[] = "llvmpipe memory fd";
constexpr uint64_t kLavapipeDataOffset = 4096;
constexpr uint64_t kLavapipeOverhead = 4136;

}  // namespace cuda_shim::ext
