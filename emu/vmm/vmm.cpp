#include "vmm/vmm.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/context.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::vmm {

Allocation::~Allocation() {
  // A fabric export names this object (by our fd's number) in the shared registry: it dies with
  // the memory, before the number is closed and free to name something else.
  if (!imported && (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC)) ipc::fabric_withdraw(token);
  if (fd >= 0) ::close(fd);
  if (charged_dev >= 0) mem::uncharge(charged_dev, size);
}

std::string Allocation::describe() const {
  std::string where;
  switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: where = fmt::format("device {}", prop.location.id); break;
    case CU_MEM_LOCATION_TYPE_HOST: where = "host"; break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: where = fmt::format("host NUMA node {}", prop.location.id); break;
    default: where = "?"; break;
  }
  return fmt::format("the {}{}-byte allocation {:#x} ({})", imported ? "imported " : "", size, handle(), where);
}

namespace {

// What an importer needs, in the memfd's name: location, handle types, size, allocFlags.
std::vector<uint64_t> object_fields(const CUmemAllocationProp& p, size_t size) {
  uint64_t flags = uint64_t(p.allocFlags.compressionType) | uint64_t(p.allocFlags.gpuDirectRDMACapable) << 8 |
                   uint64_t(p.allocFlags.usage) << 16;
  return {static_cast<uint64_t>(p.location.type), static_cast<uint64_t>(static_cast<uint32_t>(p.location.id)),
          static_cast<uint64_t>(static_cast<unsigned>(p.requestedHandleTypes)), size, flags};
}

}  // namespace

Errc create_bytes(Allocation& a, const char* api) {
  const unsigned shareable = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;
  if (!(static_cast<unsigned>(a.prop.requestedHandleTypes) & shareable)) {
    // Never exported: arena memory, zero when carved (freed extents are punched out).
    Errc err = Errc::success;
    a.carved = mem::Backing::carve(mem::ArenaClass::device, a.size, mem::page_size(), api, err);
    return err;
  }
  try {
    a.token = ipc::random_token();
    a.fd = ipc::create_object(ipc::ObjectKind::vmm, a.token, object_fields(a.prop, a.size), a.size);
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
  }
  if (a.fd < 0)
    return fail(Errc::out_of_memory, "{}: cannot create the {}-byte backing object ({})", api, a.size,
                std::strerror(errno));
  return Errc::success;
}

Shadow::~Shadow() {
  // Every mapping restored its own pages when it died, unless one was replaced first.
  va_give(va, stale);
}

Mapping::~Mapping() {
  if (!shadow) return;
  std::lock_guard lk(shadow->m);
  auto it = shadow->owner.find(base - res_base);
  if (it == shadow->owner.end() || it->second != this) {
    shadow->stale |= alloc->fd >= 0;
    return;
  }
  shadow->owner.erase(it);
  // A view of an own memfd holds its memory: restored now. A view of arena memory holds
  // nothing (a freed extent's pages are punched out under every view) and is left for the next
  // mapping there to replace: nothing reads a shadow where no mapping is, and shadows never
  // become user ranges (address_heap.hpp).
  if (alloc->fd >= 0)
    ::mmap(host(), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

bool Mapping::any_access() const {
  if (host_access.load(std::memory_order_acquire)) return true;
  for (const auto& a : dev_access)
    if (a.load(std::memory_order_acquire)) return true;
  return false;
}

Errc check_copy_access(const Mapping& m, uintptr_t p, bool write, const char* api, const char* what) {
  Context* ctx = current_context_raw();
  const int dev = ctx ? ctx->ordinal() : -1;
  unsigned f = m.device_access(dev);
  // Measured: host-located memory is copied to and from once anything (the host, or any
  // device) was given access; device memory needs the copying device's own access.
  if (m.alloc->host_located() && f == 0 && m.any_access()) f = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (f == 0)
    return fail(Errc::invalid_value, "{}: {} = {:#x} lies in the mapping [{:#x}, +{:#x}) of {}, which device {} has "
                "no access to (grant it with cuMemSetAccess after cuMemMap)", api, what, p, m.base, m.size,
                m.alloc->describe(), dev);
  if (write && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    return fail(Errc::invalid_value, "{}: {} = {:#x} lies in the mapping [{:#x}, +{:#x}) of {}, which device {} may "
                "only read (CU_MEM_ACCESS_FLAGS_PROT_READ)", api, what, p, m.base, m.size, m.alloc->describe(), dev);
  return Errc::success;
}

}  // namespace cuda_shim::vmm
