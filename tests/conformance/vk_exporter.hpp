// A small Vulkan exporter for the external memory/semaphore conformance test: the
// other side of cudaImportExternalMemory / cudaImportExternalSemaphore. It needs
// Vulkan's headers at build time only; the loader (libvulkan.so.1) is dlopen'ed, so
// the test links nothing of Vulkan and says why when no Vulkan is there.
// Devices: Mesa's lavapipe (llvmpipe, a CPU device) on CI, NVIDIA's ICD on a GPU
// machine. Nothing here includes CUDA.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace vkx {

struct Instance;  // loader, instance, device, queue, function pointers
class Memory;
class Semaphore;

// One Vulkan device that can export memory as an opaque fd (VK_KHR_external_memory_fd).
class Exporter {
 public:
  // Loads the loader and picks a device: the one whose deviceUUID is prefer_uuid
  // (16 bytes, e.g. cudaDeviceProp::uuid) if any, else the first non-CPU device, else
  // the first (llvmpipe). ok() false: why() says why (no loader, no device, no extension).
  explicit Exporter(const unsigned char* prefer_uuid = nullptr);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  std::string device_name() const;
  bool is_cpu() const;             // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe)
  bool is_llvmpipe() const;        // deviceName starts with "llvmpipe"
  bool uuid_matches() const;       // the device is the prefer_uuid one
  std::string driver_info() const; // "driverName driverInfo" (VkPhysicalDeviceDriverProperties)

  // Exportable memory of at least size bytes. dedicated: a dedicated allocation for its
  // buffer (VkMemoryDedicatedAllocateInfo); forced where the device says dedicated-only.
  // force_staging: read/write through a staging buffer even if the memory is host-visible.
  // nullptr on failure; error() says why.
  std::unique_ptr<Memory> allocate(std::size_t size, bool dedicated = false, bool force_staging = false);

  // Semaphores: only with VK_KHR_external_semaphore_fd (lavapipe of Mesa 22.3 lacks it).
  bool has_semaphores() const { return sem_ok_; }
  bool has_timeline_semaphores() const { return timeline_ok_; }
  const std::string& semaphore_why() const { return sem_why_; }
  // An exportable (OPAQUE_FD) semaphore; timeline with initial value, or binary.
  std::unique_ptr<Semaphore> create_semaphore(bool timeline, std::uint64_t initial = 0);

  const std::string& error() const { return err_; }

 private:
  friend class Memory;
  friend class Semaphore;
  std::unique_ptr<Instance> in_;
  bool ok_ = false, sem_ok_ = false, timeline_ok_ = false, uuid_match_ = false;
  std::string why_, sem_why_, err_;
};

// One exportable VkDeviceMemory with a VkBuffer bound over all of it.
class Memory {
 public:
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // A new fd (vkGetMemoryFdKHR) each call; the caller owns it (hand it to CUDA, or
  // close it). -1 on failure.
  int export_fd();
  std::uint64_t allocation_size() const { return size_; }  // what CUDA's import wants
  bool dedicated() const { return dedicated_; }
  bool host_visible() const { return mapped_ != nullptr; }  // read/write use vkMapMemory
  std::uint32_t memory_type_flags() const { return flags_; }  // VkMemoryPropertyFlags
  std::uint32_t memory_type_index() const { return type_index_; }
  // The persistent vkMapMemory pointer (host-visible memory only), else nullptr.
  void* mapping() const { return mapped_; }

  // Bytes [offset, offset+n) from the Vulkan side: vkMapMemory (+flush/invalidate when
  // not coherent) or vkCmdCopyBuffer through a host-visible staging buffer and a fence.
  bool write(std::size_t offset, const void* src, std::size_t n);
  bool read(std::size_t offset, void* dst, std::size_t n);
  bool fill(std::size_t offset, std::size_t n, unsigned char byte);  // write of n copies
  const std::string& error() const { return err_; }

 private:
  friend class Exporter;
  explicit Memory(Exporter& x) : x_(x) {}
  bool staged_copy(bool to_device, std::size_t offset, void* host, std::size_t n);
  Exporter& x_;
  std::uint64_t buffer_ = 0, memory_ = 0;  // VkBuffer, VkDeviceMemory (non-dispatchable)
  std::uint64_t size_ = 0;
  std::uint32_t flags_ = 0, type_index_ = 0;
  bool dedicated_ = false, coherent_ = false;
  void* mapped_ = nullptr;
  std::string err_;
};

// One exportable VkSemaphore (OPAQUE_FD), binary or timeline.
class Semaphore {
 public:
  ~Semaphore();
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  bool timeline() const { return timeline_; }
  int export_fd();  // a new fd each call; the caller owns it. -1 on failure.
  // Timeline: vkSignalSemaphore(value) from the host. Binary: an empty vkQueueSubmit
  // that signals it (value ignored).
  bool signal(std::uint64_t value = 0);
  // Timeline: vkWaitSemaphores(value). Binary: an empty vkQueueSubmit waiting on it
  // with a fence, then vkWaitForFences. false on timeout or error (error() says which).
  bool wait(std::uint64_t value, std::uint64_t timeout_ns);
  // Timeline only: vkGetSemaphoreCounterValue; UINT64_MAX on error.
  std::uint64_t value();
  const std::string& error() const { return err_; }

 private:
  friend class Exporter;
  explicit Semaphore(Exporter& x) : x_(x) {}
  Exporter& x_;
  std::uint64_t sem_ = 0;  // VkSemaphore
  bool timeline_ = false;
  bool stuck_ = false;  // a binary wait timed out: its submission still waits, leak it
  std::string err_;
};

}  // namespace vkx
