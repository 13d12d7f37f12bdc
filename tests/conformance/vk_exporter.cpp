// See vk_exporter.hpp. Vulkan 1.1 core (1.2 for timeline semaphores) through function
// pointers from a dlopen'ed loader: VK_NO_PROTOTYPES keeps every vk* symbol out of the
// link.
#define VK_NO_PROTOTYPES
#include "vk_exporter.hpp"

#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <vector>

namespace vkx {

namespace {
// Non-dispatchable handles travel through the header as 64-bit integers.
template <class H>
H h(std::uint64_t v) {
  H r;
  static_assert(sizeof r == sizeof v, "64-bit non-dispatchable handles");
  std::memcpy(&r, &v, sizeof r);
  return r;
}
template <class H>
std::uint64_t u(H v) {
  std::uint64_t r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

std::string vk_name(VkResult r) {
  switch (r) {
#define N(x) \
  case x:    \
    return #x;
    N(VK_SUCCESS) N(VK_NOT_READY) N(VK_TIMEOUT) N(VK_INCOMPLETE) N(VK_ERROR_OUT_OF_HOST_MEMORY)
    N(VK_ERROR_OUT_OF_DEVICE_MEMORY) N(VK_ERROR_INITIALIZATION_FAILED) N(VK_ERROR_DEVICE_LOST)
    N(VK_ERROR_MEMORY_MAP_FAILED) N(VK_ERROR_LAYER_NOT_PRESENT) N(VK_ERROR_EXTENSION_NOT_PRESENT)
    N(VK_ERROR_FEATURE_NOT_PRESENT) N(VK_ERROR_INCOMPATIBLE_DRIVER) N(VK_ERROR_TOO_MANY_OBJECTS)
    N(VK_ERROR_FORMAT_NOT_SUPPORTED) N(VK_ERROR_INVALID_EXTERNAL_HANDLE) N(VK_ERROR_UNKNOWN)
#undef N
    default:
      return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

bool has_ext(const std::vector<VkExtensionProperties>& v, const char* name) {
  for (auto& e : v)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}
}  // namespace

// Every entry point used, loaded once per Exporter.
#define VKX_INSTANCE_FNS(X)                                                                             \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                  \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkEnumerateDeviceExtensionProperties) \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)                    \
  X(vkGetPhysicalDeviceExternalBufferProperties) X(vkGetPhysicalDeviceExternalSemaphoreProperties)     \
  X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define VKX_DEVICE_FNS(X)                                                                                 \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkCreateBuffer) X(vkDestroyBuffer)        \
  X(vkGetBufferMemoryRequirements) X(vkGetBufferMemoryRequirements2) X(vkAllocateMemory) X(vkFreeMemory) \
  X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkFlushMappedMemoryRanges)                     \
  X(vkInvalidateMappedMemoryRanges) X(vkCreateCommandPool) X(vkDestroyCommandPool)                       \
  X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) X(vkBeginCommandBuffer) X(vkEndCommandBuffer)      \
  X(vkCmdCopyBuffer) X(vkCmdPipelineBarrier) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences)         \
  X(vkWaitForFences) X(vkQueueSubmit) X(vkQueueWaitIdle) X(vkCreateSemaphore) X(vkDestroySemaphore)
// Extension or 1.2 entries: may stay null.
#define VKX_OPTIONAL_DEVICE_FNS(X) \
  X(vkGetMemoryFdKHR) X(vkGetSemaphoreFdKHR) X(vkSignalSemaphore) X(vkWaitSemaphores) X(vkGetSemaphoreCounterValue)

struct Instance {
  void* lib = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem{};
  std::string driver;
  VkDevice dev = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
#define X(f) PFN_##f f = nullptr;
  VKX_INSTANCE_FNS(X) VKX_DEVICE_FNS(X) VKX_OPTIONAL_DEVICE_FNS(X)
#undef X

  // Runs cmd (already recorded) on the queue and waits for it.
  VkResult submit_and_wait() {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    VkResult r = vkResetFences(dev, 1, &fence);
    if (r == VK_SUCCESS) r = vkQueueSubmit(queue, 1, &si, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(dev, 1, &fence, VK_TRUE, 10ull * 1000 * 1000 * 1000);
    return r;
  }
  // A memory type in bits with all of want; prefer_flags first, avoid_flags last.
  int32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer,
                      VkMemoryPropertyFlags avoid) const {
    int32_t best = -1, best_score = -1;
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
      VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
      if (!(bits & (1u << i)) || (f & want) != want) continue;
      if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT)) continue;
      int32_t score = ((f & prefer) == prefer ? 2 : 0) + ((f & avoid) == 0 ? 1 : 0);
      if (score > best_score) best = static_cast<int32_t>(i), best_score = score;
    }
    return best;
  }
};

Exporter::Exporter(const unsigned char* prefer_uuid) : in_(new Instance) {
  Instance& v = *in_;
  // The loader is never dlclose'd: ICDs (LLVM in lavapipe, NVIDIA's) dislike unloading.
  v.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!v.lib) {
    why_ = std::string("no Vulkan loader: dlopen(libvulkan.so.1): ") + dlerror();
    return;
  }
  v.gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(v.lib, "vkGetInstanceProcAddr"));
  if (!v.gipa) {
    why_ = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return;
  }
  auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(v.gipa(nullptr, "vkCreateInstance"));
  auto enum_version =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(v.gipa(nullptr, "vkEnumerateInstanceVersion"));
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (enum_version) enum_version(&loader_version);
  if (!create_instance || loader_version < VK_API_VERSION_1_1) {
    why_ = "Vulkan loader older than 1.1";
    return;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "cuda-shim conformance";
  app.apiVersion = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = create_instance(&ici, nullptr, &v.instance);
  if (r != VK_SUCCESS) {
    why_ = "vkCreateInstance: " + vk_name(r) + " (no ICD? see VK_DRIVER_FILES / VK_ICD_FILENAMES)";
    return;
  }
#define X(f)                                                                  \
  v.f = reinterpret_cast<PFN_##f>(v.gipa(v.instance, #f));                    \
  if (!v.f) {                                                                 \
    why_ = "vkGetInstanceProcAddr(" #f ") is null";                           \
    return;                                                                   \
  }
  VKX_INSTANCE_FNS(X)
#undef X

  uint32_t n = 0;
  v.vkEnumeratePhysicalDevices(v.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  if (n) v.vkEnumeratePhysicalDevices(v.instance, &n, pds.data());
  if (pds.empty()) {
    why_ = "no Vulkan physical device";
    return;
  }
  // Candidates: Vulkan >= 1.1 with VK_KHR_external_memory_fd and exportable opaque-fd buffers.
  int best = -1, best_score = -1;
  std::string rejected;
  for (size_t i = 0; i < pds.size(); ++i) {
    VkPhysicalDeviceProperties p;
    v.vkGetPhysicalDeviceProperties(pds[i], &p);
    uint32_t ne = 0;
    v.vkEnumerateDeviceExtensionProperties(pds[i], nullptr, &ne, nullptr);
    std::vector<VkExtensionProperties> exts(ne);
    if (ne) v.vkEnumerateDeviceExtensionProperties(pds[i], nullptr, &ne, exts.data());
    if (p.apiVersion < VK_API_VERSION_1_1 || !has_ext(exts, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
      rejected += std::string(rejected.empty() ? "" : "; ") + p.deviceName + ": no VK_KHR_external_memory_fd";
      continue;
    }
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &id;
    v.vkGetPhysicalDeviceProperties2(pds[i], &p2);
    bool match = prefer_uuid && std::memcmp(id.deviceUUID, prefer_uuid, VK_UUID_SIZE) == 0;
    int score = (match ? 4 : 0) + (p.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU ? 2 : 0);
    if (score > best_score) best = static_cast<int>(i), best_score = score, uuid_match_ = match;
  }
  if (best < 0) {
    why_ = "no Vulkan device with VK_KHR_external_memory_fd (" + rejected + ")";
    return;
  }
  v.pd = pds[best];
  v.vkGetPhysicalDeviceProperties(v.pd, &v.props);
  v.vkGetPhysicalDeviceMemoryProperties(v.pd, &v.mem);
  if (v.props.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceDriverProperties dp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &dp;
    v.vkGetPhysicalDeviceProperties2(v.pd, &p2);
    v.driver = std::string(dp.driverName) + " " + dp.driverInfo;
  }

  VkPhysicalDeviceExternalBufferInfo bi{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkExternalBufferProperties ebp{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  v.vkGetPhysicalDeviceExternalBufferProperties(v.pd, &bi, &ebp);
  if (!(ebp.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT)) {
    why_ = std::string(v.props.deviceName) + ": opaque-fd buffers are not exportable";
    return;
  }

  uint32_t ne = 0;
  v.vkEnumerateDeviceExtensionProperties(v.pd, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  if (ne) v.vkEnumerateDeviceExtensionProperties(v.pd, nullptr, &ne, exts.data());
  std::vector<const char*> enable{VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
  if (has_ext(exts, VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME)) enable.push_back(VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME);

  // Semaphores: the extension, exportable opaque fds, and for timelines Vulkan 1.2's feature.
  bool sem_ext = has_ext(exts, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  VkPhysicalDeviceTimelineSemaphoreFeatures tf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  if (v.props.apiVersion >= VK_API_VERSION_1_2 && app.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &tf;
    v.vkGetPhysicalDeviceFeatures2(v.pd, &f2);
  }
  auto exportable_sem = [&](bool timeline) {
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkPhysicalDeviceExternalSemaphoreInfo si{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
    si.pNext = timeline ? &ti : nullptr;
    si.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties sp{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    v.vkGetPhysicalDeviceExternalSemaphoreProperties(v.pd, &si, &sp);
    return (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
  };
  if (!sem_ext) {
    sem_why_ = std::string(v.props.deviceName) + " has no VK_KHR_external_semaphore_fd";
  } else if (!exportable_sem(false)) {
    sem_why_ = std::string(v.props.deviceName) + ": opaque-fd binary semaphores are not exportable";
  } else {
    sem_ok_ = true;
    enable.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    if (has_ext(exts, VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME))
      enable.push_back(VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME);
    timeline_ok_ = tf.timelineSemaphore && exportable_sem(true);
    if (!timeline_ok_) sem_why_ = std::string(v.props.deviceName) + ": no exportable timeline semaphores";
  }

  uint32_t nq = 0;
  v.vkGetPhysicalDeviceQueueFamilyProperties(v.pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  if (nq) v.vkGetPhysicalDeviceQueueFamilyProperties(v.pd, &nq, qf.data());
  bool found = false;
  for (uint32_t i = 0; i < nq && !found; ++i)
    if (qf[i].queueCount &&
        (qf[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)))
      v.family = i, found = true;
  if (!found) {
    why_ = std::string(v.props.deviceName) + ": no queue family with transfer";
    return;
  }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = v.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkPhysicalDeviceTimelineSemaphoreFeatures enable_tf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  enable_tf.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = timeline_ok_ ? &enable_tf : nullptr;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  r = v.vkCreateDevice(v.pd, &dci, nullptr, &v.dev);
  if (r != VK_SUCCESS) {
    why_ = std::string(v.props.deviceName) + ": vkCreateDevice: " + vk_name(r);
    return;
  }
#define X(f)                                                                  \
  v.f = reinterpret_cast<PFN_##f>(v.vkGetDeviceProcAddr(v.dev, #f));          \
  if (!v.f) {                                                                 \
    why_ = "vkGetDeviceProcAddr(" #f ") is null";                             \
    return;                                                                   \
  }
  VKX_DEVICE_FNS(X)
#undef X
#define X(f) v.f = reinterpret_cast<PFN_##f>(v.vkGetDeviceProcAddr(v.dev, #f));
  VKX_OPTIONAL_DEVICE_FNS(X)
#undef X
  if (!v.vkGetMemoryFdKHR) {
    why_ = "vkGetMemoryFdKHR is null";
    return;
  }
  if (sem_ok_ && !v.vkGetSemaphoreFdKHR) sem_ok_ = timeline_ok_ = false, sem_why_ = "vkGetSemaphoreFdKHR is null";
  if (timeline_ok_ && !(v.vkSignalSemaphore && v.vkWaitSemaphores && v.vkGetSemaphoreCounterValue))
    timeline_ok_ = false, sem_why_ = "no vkSignalSemaphore/vkWaitSemaphores";

  v.vkGetDeviceQueue(v.dev, v.family, 0, &v.queue);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = v.family;
  if ((r = v.vkCreateCommandPool(v.dev, &pci, nullptr, &v.pool)) != VK_SUCCESS) {
    why_ = "vkCreateCommandPool: " + vk_name(r);
    return;
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = v.pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  if ((r = v.vkAllocateCommandBuffers(v.dev, &cai, &v.cmd)) != VK_SUCCESS) {
    why_ = "vkAllocateCommandBuffers: " + vk_name(r);
    return;
  }
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((r = v.vkCreateFence(v.dev, &fci, nullptr, &v.fence)) != VK_SUCCESS) {
    why_ = "vkCreateFence: " + vk_name(r);
    return;
  }
  ok_ = true;
}

Exporter::~Exporter() {
  Instance& v = *in_;
  if (v.dev) {
    v.vkDeviceWaitIdle(v.dev);
    if (v.fence) v.vkDestroyFence(v.dev, v.fence, nullptr);
    if (v.pool) v.vkDestroyCommandPool(v.dev, v.pool, nullptr);
    v.vkDestroyDevice(v.dev, nullptr);
  }
  if (v.instance && v.vkDestroyInstance) v.vkDestroyInstance(v.instance, nullptr);
}

std::string Exporter::device_name() const { return in_->pd ? in_->props.deviceName : ""; }
bool Exporter::is_cpu() const { return in_->pd && in_->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }
bool Exporter::is_llvmpipe() const { return device_name().rfind("llvmpipe", 0) == 0; }
bool Exporter::uuid_matches() const { return uuid_match_; }
std::string Exporter::driver_info() const { return in_->driver; }

std::unique_ptr<Memory> Exporter::allocate(std::size_t size, bool dedicated, bool force_staging) {
  Instance& v = *in_;
  err_.clear();
  if (!ok_) {
    err_ = why_;
    return nullptr;
  }
  std::unique_ptr<Memory> m(new Memory(*this));
  VkExternalMemoryBufferCreateInfo ebi{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ebi.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.pNext = &ebi;
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buf = VK_NULL_HANDLE;
  VkResult r = v.vkCreateBuffer(v.dev, &bci, nullptr, &buf);
  if (r != VK_SUCCESS) {
    err_ = "vkCreateBuffer: " + vk_name(r);
    return nullptr;
  }
  m->buffer_ = u(buf);

  VkMemoryDedicatedRequirements dr{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
  VkMemoryRequirements2 mr{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
  mr.pNext = &dr;
  VkBufferMemoryRequirementsInfo2 mri{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
  mri.buffer = buf;
  v.vkGetBufferMemoryRequirements2(v.dev, &mri, &mr);

  VkPhysicalDeviceExternalBufferInfo bi{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  bi.usage = bci.usage;
  bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkExternalBufferProperties ebp{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  v.vkGetPhysicalDeviceExternalBufferProperties(v.pd, &bi, &ebp);
  bool dedicated_only =
      (ebp.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
  m->dedicated_ = dedicated || dedicated_only || dr.requiresDedicatedAllocation;

  // Device-local and not host-visible first (GPU memory, what CUDA imports on NVIDIA);
  // lavapipe's only type is DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT|HOST_CACHED.
  int32_t type = v.memory_type(mr.memoryRequirements.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  if (type < 0) {
    err_ = "no memory type for the buffer";
    return nullptr;
  }
  m->type_index_ = static_cast<uint32_t>(type);
  m->flags_ = v.mem.memoryTypes[type].propertyFlags;
  m->coherent_ = (m->flags_ & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  m->size_ = mr.memoryRequirements.size;

  VkMemoryDedicatedAllocateInfo dai{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dai.buffer = buf;
  VkExportMemoryAllocateInfo emi{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  emi.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  emi.pNext = m->dedicated_ ? &dai : nullptr;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.pNext = &emi;
  mai.allocationSize = m->size_;
  mai.memoryTypeIndex = m->type_index_;
  VkDeviceMemory dm = VK_NULL_HANDLE;
  if ((r = v.vkAllocateMemory(v.dev, &mai, nullptr, &dm)) != VK_SUCCESS) {
    err_ = "vkAllocateMemory(" + std::to_string(m->size_) + "): " + vk_name(r);
    return nullptr;
  }
  m->memory_ = u(dm);
  if ((r = v.vkBindBufferMemory(v.dev, buf, dm, 0)) != VK_SUCCESS) {
    err_ = "vkBindBufferMemory: " + vk_name(r);
    return nullptr;
  }
  if ((m->flags_ & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && !force_staging) {
    if ((r = v.vkMapMemory(v.dev, dm, 0, VK_WHOLE_SIZE, 0, &m->mapped_)) != VK_SUCCESS) {
      err_ = "vkMapMemory: " + vk_name(r);
      return nullptr;
    }
  }
  return m;
}

std::unique_ptr<Semaphore> Exporter::create_semaphore(bool timeline, std::uint64_t initial) {
  Instance& v = *in_;
  err_.clear();
  if (!sem_ok_ || (timeline && !timeline_ok_)) {
    err_ = ok_ ? sem_why_ : why_;
    return nullptr;
  }
  std::unique_ptr<Semaphore> s(new Semaphore(*this));
  s->timeline_ = timeline;
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  ti.initialValue = initial;
  VkExportSemaphoreCreateInfo esi{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
  esi.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  esi.pNext = timeline ? &ti : nullptr;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &esi;
  VkSemaphore sem = VK_NULL_HANDLE;
  VkResult r = v.vkCreateSemaphore(v.dev, &sci, nullptr, &sem);
  if (r != VK_SUCCESS) {
    err_ = "vkCreateSemaphore: " + vk_name(r);
    return nullptr;
  }
  s->sem_ = u(sem);
  return s;
}

// ---- Memory

Memory::~Memory() {
  Instance& v = *x_.in_;
  if (!v.dev) return;
  if (mapped_) v.vkUnmapMemory(v.dev, h<VkDeviceMemory>(memory_));
  if (buffer_) v.vkDestroyBuffer(v.dev, h<VkBuffer>(buffer_), nullptr);
  if (memory_) v.vkFreeMemory(v.dev, h<VkDeviceMemory>(memory_), nullptr);
}

int Memory::export_fd() {
  Instance& v = *x_.in_;
  VkMemoryGetFdInfoKHR gi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
  gi.memory = h<VkDeviceMemory>(memory_);
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  VkResult r = v.vkGetMemoryFdKHR(v.dev, &gi, &fd);
  if (r != VK_SUCCESS) {
    err_ = "vkGetMemoryFdKHR: " + vk_name(r);
    return -1;
  }
  return fd;
}

bool Memory::write(std::size_t offset, const void* src, std::size_t n) {
  if (offset > size_ || n > size_ - offset) {
    err_ = "write beyond the allocation";
    return false;
  }
  if (!mapped_) return staged_copy(true, offset, const_cast<void*>(src), n);
  std::memcpy(static_cast<char*>(mapped_) + offset, src, n);
  if (!coherent_) {
    Instance& v = *x_.in_;
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = h<VkDeviceMemory>(memory_);
    range.size = VK_WHOLE_SIZE;
    v.vkFlushMappedMemoryRanges(v.dev, 1, &range);
  }
  return true;
}

bool Memory::read(std::size_t offset, void* dst, std::size_t n) {
  if (offset > size_ || n > size_ - offset) {
    err_ = "read beyond the allocation";
    return false;
  }
  if (!mapped_) return staged_copy(false, offset, dst, n);
  if (!coherent_) {
    Instance& v = *x_.in_;
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = h<VkDeviceMemory>(memory_);
    range.size = VK_WHOLE_SIZE;
    v.vkInvalidateMappedMemoryRanges(v.dev, 1, &range);
  }
  std::memcpy(dst, static_cast<const char*>(mapped_) + offset, n);
  return true;
}

bool Memory::fill(std::size_t offset, std::size_t n, unsigned char byte) {
  std::vector<unsigned char> v(n, byte);
  return write(offset, v.data(), n);
}

// vkCmdCopyBuffer between the exported buffer and a host-visible staging buffer. The
// exported buffer is acquired from and released to VK_QUEUE_FAMILY_EXTERNAL around the
// copy (the other user, CUDA, is outside Vulkan); a fence makes it synchronous.
bool Memory::staged_copy(bool to_device, std::size_t offset, void* host, std::size_t n) {
  Instance& v = *x_.in_;
  if (n == 0) return true;
  struct Staging {
    Instance& v;
    VkBuffer buf = VK_NULL_HANDLE;
    VkDeviceMemory mem = VK_NULL_HANDLE;
    ~Staging() {
      if (buf) v.vkDestroyBuffer(v.dev, buf, nullptr);
      if (mem) v.vkFreeMemory(v.dev, mem, nullptr);
    }
  } st{v};
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = n;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkResult r = v.vkCreateBuffer(v.dev, &bci, nullptr, &st.buf);
  if (r != VK_SUCCESS) {
    err_ = "staging vkCreateBuffer: " + vk_name(r);
    return false;
  }
  VkMemoryRequirements req;
  v.vkGetBufferMemoryRequirements(v.dev, st.buf, &req);
  int32_t type = v.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
  if (type < 0) {
    err_ = "no host-visible coherent memory type for staging";
    return false;
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  if ((r = v.vkAllocateMemory(v.dev, &mai, nullptr, &st.mem)) != VK_SUCCESS ||
      (r = v.vkBindBufferMemory(v.dev, st.buf, st.mem, 0)) != VK_SUCCESS) {
    err_ = "staging memory: " + vk_name(r);
    return false;
  }
  void* p = nullptr;
  if ((r = v.vkMapMemory(v.dev, st.mem, 0, VK_WHOLE_SIZE, 0, &p)) != VK_SUCCESS) {
    err_ = "staging vkMapMemory: " + vk_name(r);
    return false;
  }
  if (to_device) std::memcpy(p, host, n);

  VkBuffer ext = h<VkBuffer>(buffer_);
  VkBufferMemoryBarrier acquire{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  acquire.srcAccessMask = 0;
  acquire.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  acquire.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  acquire.dstQueueFamilyIndex = v.family;
  acquire.buffer = ext;
  acquire.offset = 0;
  acquire.size = VK_WHOLE_SIZE;
  VkBufferMemoryBarrier release = acquire;
  release.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  release.dstAccessMask = 0;
  release.srcQueueFamilyIndex = v.family;
  release.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;

  VkCommandBufferBeginInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  cbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  v.vkResetCommandBuffer(v.cmd, 0);
  v.vkBeginCommandBuffer(v.cmd, &cbi);
  v.vkCmdPipelineBarrier(v.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 1,
                         &acquire, 0, nullptr);
  VkBufferCopy region{};
  region.size = n;
  if (to_device) {
    region.dstOffset = offset;
    v.vkCmdCopyBuffer(v.cmd, st.buf, ext, 1, &region);
  } else {
    region.srcOffset = offset;
    v.vkCmdCopyBuffer(v.cmd, ext, st.buf, 1, &region);
  }
  v.vkCmdPipelineBarrier(v.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, to_device ? 0 : 1,
                         &to_host, 1, &release, 0, nullptr);
  v.vkEndCommandBuffer(v.cmd);
  r = v.submit_and_wait();
  if (r != VK_SUCCESS) {
    err_ = "staged copy: " + vk_name(r);
    return false;
  }
  if (!to_device) std::memcpy(host, p, n);
  return true;
}

// ---- Semaphore

Semaphore::~Semaphore() {
  Instance& v = *x_.in_;
  if (!v.dev || !sem_ || stuck_) return;
  v.vkQueueWaitIdle(v.queue);  // no pending signal/wait may use it
  v.vkDestroySemaphore(v.dev, h<VkSemaphore>(sem_), nullptr);
}

int Semaphore::export_fd() {
  Instance& v = *x_.in_;
  VkSemaphoreGetFdInfoKHR gi{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
  gi.semaphore = h<VkSemaphore>(sem_);
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  VkResult r = v.vkGetSemaphoreFdKHR(v.dev, &gi, &fd);
  if (r != VK_SUCCESS) {
    err_ = "vkGetSemaphoreFdKHR: " + vk_name(r);
    return -1;
  }
  return fd;
}

bool Semaphore::signal(std::uint64_t value) {
  Instance& v = *x_.in_;
  VkSemaphore sem = h<VkSemaphore>(sem_);
  VkResult r;
  if (timeline_) {
    VkSemaphoreSignalInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = sem;
    si.value = value;
    r = v.vkSignalSemaphore(v.dev, &si);
  } else {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &sem;
    r = v.vkQueueSubmit(v.queue, 1, &si, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) err_ = std::string(timeline_ ? "vkSignalSemaphore: " : "vkQueueSubmit(signal): ") + vk_name(r);
  return r == VK_SUCCESS;
}

bool Semaphore::wait(std::uint64_t value, std::uint64_t timeout_ns) {
  Instance& v = *x_.in_;
  VkSemaphore sem = h<VkSemaphore>(sem_);
  VkResult r;
  if (timeline_) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &value;
    r = v.vkWaitSemaphores(v.dev, &wi, timeout_ns);
  } else {
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &sem;
    si.pWaitDstStageMask = &stage;
    r = v.vkResetFences(v.dev, 1, &v.fence);
    if (r == VK_SUCCESS) r = v.vkQueueSubmit(v.queue, 1, &si, v.fence);
    if (r == VK_SUCCESS) r = v.vkWaitForFences(v.dev, 1, &v.fence, VK_TRUE, timeout_ns);
    // The submission still waits: the queue and the fence are stuck. Nothing more works.
    if (r == VK_TIMEOUT) stuck_ = true;
  }
  if (r != VK_SUCCESS) err_ = std::string(timeline_ ? "vkWaitSemaphores: " : "binary wait: ") + vk_name(r);
  return r == VK_SUCCESS;
}

std::uint64_t Semaphore::value() {
  Instance& v = *x_.in_;
  std::uint64_t val = UINT64_MAX;
  if (!timeline_) {
    err_ = "value() of a binary semaphore";
    return val;
  }
  VkResult r = v.vkGetSemaphoreCounterValue(v.dev, h<VkSemaphore>(sem_), &val);
  if (r != VK_SUCCESS) err_ = "vkGetSemaphoreCounterValue: " + vk_name(r), val = UINT64_MAX;
  return val;
}

}  // namespace vkx
