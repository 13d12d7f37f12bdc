#include "external/exporters.hpp"

#include <fmt/format.h>

#include "ipc/identity.hpp"

namespace cuda_shim::ext {

ExportedObject identify(int fd) noexcept {
  ExportedObject o;
  o.info = ipc::describe_import(fd);  // one of cuda-shim's own only when it proves it
  const auto& i = o.info;
  if (i.what == ipc::FdInfo::What::ours) {
    switch (i.kind) {
      case ipc::ObjectKind::vmm:
        // fields: location type, id, handle types, size, allocFlags (vmm/api_vmm.cpp)
        if (i.fields.size() >= 4 && i.fields[3] <= i.size) {
          o.exporter = Exporter::shim_vmm;
          o.data_size = i.fields[3];
        }
        break;
      case ipc::ObjectKind::pool:
        o.exporter = Exporter::shim_pool;
        o.data_size = i.size;
        break;
      case ipc::ObjectKind::semaphore:
        o.exporter = Exporter::shim_semaphore;
        o.timeline = !i.fields.empty() && i.fields[0] != 0;
        break;
    }
  } else if (i.what == ipc::FdInfo::What::foreign_memfd && i.name == kLavapipeMemfdName &&
             i.size >= kLavapipeOverhead) {
    o.exporter = Exporter::lavapipe;
    o.data_offset = kLavapipeDataOffset;
    o.data_size = i.size - kLavapipeOverhead;
  }
  return o;
}

std::string ExportedObject::describe() const {
  try {
    switch (exporter) {
      case Exporter::shim_vmm:
        return fmt::format("a cuMemCreate allocation of {} bytes exported by cuMemExportToShareableHandle", data_size);
      case Exporter::shim_pool: return "a memory pool exported by cuMemPoolExportToShareableHandle";
      case Exporter::shim_semaphore:
        return fmt::format("an exportable {} semaphore (cuShimExportableSemaphoreCreate)",
                           timeline ? "timeline" : "binary");
      case Exporter::lavapipe:
        return fmt::format("{} bytes of Vulkan memory exported by Mesa's lavapipe (memfd \"{}\")", data_size,
                           info.name);
      case Exporter::unknown: break;
    }
    switch (info.what) {
      case ipc::FdInfo::What::bad_fd: return "not an open file descriptor";
      case ipc::FdInfo::What::not_memfd: return "an open file descriptor that is not a memory object (a socket, a "
                                                "device, a pipe or a regular file)";
      case ipc::FdInfo::What::foreign_memfd:
        if (info.forged)
          return fmt::format("a memfd (\"{}\", {} bytes) named like a cuda-shim export, but {}", info.name, info.size,
                             info.forged_why);
        return fmt::format("a memfd (\"{}\", {} bytes) that no exporter made", info.name, info.size);
      case ipc::FdInfo::What::ours: return fmt::format("a damaged {} object", ipc::object_kind_name(info.kind));
    }
  } catch (...) {
  }
  return "an fd";
}

}  // namespace cuda_shim::ext
