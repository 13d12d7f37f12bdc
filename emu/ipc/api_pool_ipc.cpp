// Driver entries: sharing memory pools between processes. A pool's memory is one memfd
// named for the pool (platform/shareable.hpp): the POSIX-fd handle is a new descriptor of it,
// which the importer maps whole; cuMemPoolExportPointer publishes one allocation in the
// shared registry (ipc/registry.hpp), and the importer finds it there by the 64 bytes.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "abi/driver_api.hpp"
#include "core/driver.hpp"
#include "ipc/identity.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::api {
namespace {

using mem::Pool;
using mem::PoolPtr;
using mem::pool_arg;

const char* handle_type_name(unsigned t) {
  switch (t) {
    case CU_MEM_HANDLE_TYPE_NONE: return "CU_MEM_HANDLE_TYPE_NONE";
    case CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: return "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR";
    case CU_MEM_HANDLE_TYPE_WIN32: return "CU_MEM_HANDLE_TYPE_WIN32";
    case CU_MEM_HANDLE_TYPE_WIN32_KMT: return "CU_MEM_HANDLE_TYPE_WIN32_KMT";
    case CU_MEM_HANDLE_TYPE_FABRIC: return "CU_MEM_HANDLE_TYPE_FABRIC";
    default: return "an unknown CUmemAllocationHandleType";
  }
}

// The properties an exported pool descriptor carries (Pool::reserve_window names them).
bool props_from(const ipc::FdInfo& info, Pool::Props& p, uint64_t& capacity) {
  if (info.what != ipc::FdInfo::What::ours || info.kind != ipc::ObjectKind::pool || info.fields.size() < 5)
    return false;
  p = Pool::Props{};
  p.type = static_cast<CUmemAllocationType>(info.fields[0]);
  p.loc_type = static_cast<CUmemLocationType>(info.fields[1]);
  p.loc_id = static_cast<int>(static_cast<uint32_t>(info.fields[2]));
  p.handle_types = static_cast<unsigned>(info.fields[3]);
  capacity = info.fields[4];
  return p.loc_type != CU_MEM_LOCATION_TYPE_DEVICE || p.loc_id < Driver::get().device_count();
}

// Why an fd is not an exported pool, in the words a user needs. Measured: the driver answers
// any descriptor it did not export with CUDA_ERROR_UNKNOWN (-1, closed, /dev/null, a memfd),
// and one of its own of another kind with CUDA_ERROR_NOT_SUPPORTED.
Errc not_a_pool_fd(int fd, const ipc::FdInfo& info, const char* api) {
  using W = ipc::FdInfo::What;
  switch (info.what) {
    case W::bad_fd:
      return fail(Errc::unknown, "{}: {} is not an open file descriptor", api, fd);
    case W::not_memfd:
      return fail(Errc::unknown, "{}: descriptor {} is not a memory pool's shareable handle (it is no memory "
                  "object at all: a socket, device or file)", api, fd);
    case W::foreign_memfd:
      if (info.forged)
        return fail(Errc::unknown, "{}: descriptor {} is a memfd named '{}' like an exported pool, but {}", api, fd,
                    info.name, info.forged_why);
      return fail(Errc::unknown, "{}: descriptor {} is a memfd named '{}', which no cuMemPoolExportToShareable"
                  "Handle produced", api, fd, info.name);
    case W::ours:
      return fail(Errc::not_supported, "{}: descriptor {} holds a {}, not a memory pool (import it with the API "
                  "that exported it)", api, fd, ipc::object_kind_name(info.kind));
  }
  return Errc::unknown;
}

}  // namespace

Errc cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool, CUmemAllocationHandleType handleType,
                                      unsigned long long flags) noexcept {
  const char* api = "cuMemPoolExportToShareableHandle";
  TRY(Driver::get().require_init(api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(need(handle_out, api, "handle_out"));
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  if (p->imported())
    return fail(Errc::invalid_value, "{}: {} was imported from another process; only the pool's creator exports it",
                api, p->describe());
  const unsigned ht = static_cast<unsigned>(handleType);
  if ((ht != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && ht != CU_MEM_HANDLE_TYPE_FABRIC) ||
      !(p->props().handle_types & ht))
    return fail(Errc::invalid_value, "{}: {} ({}) is not a handle type {} was created with (handleTypes {:#x}); "
                "a pool is exportable only as the types named in CUmemPoolProps::handleTypes", api,
                handle_type_name(ht), ht, p->describe(), p->props().handle_types);
  if (ht == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    // Measured on a machine without IMEX: a pool that is also fabric-shareable cannot be
    // exported as a descriptor either.
    if (p->props().handle_types & CU_MEM_HANDLE_TYPE_FABRIC) {
      int ch = -1;
      if (ipc::imex_channel(api, ch) != Errc::success)
        return fail(Errc::operating_system, "{}: {} is fabric-shareable (handleTypes {:#x}) and this process has no "
                    "IMEX channel, so its memory cannot be exported at all; grant a channel "
                    "(CUDA_SHIM_IMEX_CHANNEL=<n>) or create the pool with POSIX_FILE_DESCRIPTOR only", api,
                    p->describe(), p->props().handle_types);
    }
    // Importers prove that what they are handed is this pool's memory (ipc/identity.hpp).
    int own = -1, fd = -1;
    uint64_t offset = 0;  // 0: an exportable pool's memfd is its own
    TRY(p->backing_fd(own, offset, api));
    TRY(ipc::vouch(own, api));
    TRY(p->export_fd(fd, api));
    *static_cast<int*>(handle_out) = fd;
    return Errc::success;
  }
  int own = -1;
  uint64_t offset = 0;
  TRY(p->backing_fd(own, offset, api));
  ipc::FdInfo info = ipc::describe_fd(own);
  unsigned char h[64];
  TRY(ipc::fabric_export(own, info, p->device() >= 0 ? p->device() : 0, h, api));
  p->mark_exported();
  std::memcpy(handle_out, h, sizeof h);
  return Errc::success;
}

Errc cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle, CUmemAllocationHandleType handleType,
                                        unsigned long long flags) noexcept {
  const char* api = "cuMemPoolImportFromShareableHandle";
  TRY(Driver::get().require_init(api));
  TRY(need(pool_out, api, "pool_out"));
  // Measured: a NULL handle (descriptor 0: the value is the pointer-sized handle) or nonzero
  // flags are refused with pool_out untouched; past that, pool_out is cleared first, so a later
  // failure leaves NULL.
  if (!handle && handleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return fail(Errc::invalid_value, "{}: handle is 0 (NULL); pass the exported descriptor's value", api);
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  *pool_out = nullptr;
  const unsigned ht = static_cast<unsigned>(handleType);
  Pool::Props props;
  uint64_t cap = 0;
  // What the object is, and whether its pool was made shareable as this type.
  auto check = [&](int fd, const ipc::FdInfo& info) {
    if (!props_from(info, props, cap)) return not_a_pool_fd(fd, info, api);
    if (!(props.handle_types & ht))
      return fail(Errc::invalid_value, "{}: the pool was not created shareable as {} (its handleTypes are {:#x})",
                  api, handle_type_name(ht), props.handle_types);
    return Errc::success;
  };
  int fd = -1;
  ipc::FdInfo info;
  if (ht == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    // The handle is the descriptor's value; the driver takes its own reference and the
    // caller keeps (and closes) the one it passed.
    int in = static_cast<int>(reinterpret_cast<intptr_t>(handle));
    info = ipc::describe_import(in);
    TRY(check(in, info));
    fd = ::fcntl(in, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return fail(Errc::out_of_memory, "{}: cannot duplicate descriptor {}", api, in);
  } else if (ht == CU_MEM_HANDLE_TYPE_FABRIC) {
    TRY(need(handle, api, "handle"));
    TRY(ipc::fabric_import(static_cast<const unsigned char*>(handle), fd, info, api));
    if (Errc e = check(fd, info); e != Errc::success) {
      ::close(fd);
      return e;
    }
  } else {
    // Measured: the Windows types are NOT_SUPPORTED here; NONE and unknown values INVALID_VALUE.
    const bool windows = ht == CU_MEM_HANDLE_TYPE_WIN32 || ht == CU_MEM_HANDLE_TYPE_WIN32_KMT;
    return fail(windows ? Errc::not_supported : Errc::invalid_value,
                "{}: handleType {} ({}) cannot carry a pool between processes on Linux (use "
                "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_FABRIC)", api, handle_type_name(ht), ht);
  }
  PoolPtr p;
  if (Errc e = mem::import_pool(props, cap, fd, info.token, api, p); e != Errc::success) {
    ::close(fd);
    return e;
  }
  *pool_out = reinterpret_cast<CUmemoryPool>(p->handle());
  return Errc::success;
}

Errc cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) noexcept {
  const char* api = "cuMemPoolExportPointer";
  TRY(Driver::get().require_init(api));
  TRY(need(shareData_out, api, "shareData_out"));
  mem::RangePtr r = mem::AddressSpace::get().find(ptr);
  if (!r || r->kind != mem::Kind::pool)
    return fail(Errc::invalid_value, "{}: {:#x} is not memory from a memory pool{}", api, ptr,
                r ? fmt::format(" (it is {} memory)", mem::kind_name(r->kind)) : "");
  Pool& p = *r->pool;
  if (p.imported())
    return fail(Errc::invalid_value, "{}: {:#x} was imported from another process ({}); only its owner exports it",
                api, ptr, p.describe());
  if (p.props().handle_types == 0)
    return fail(Errc::invalid_value, "{}: {:#x} belongs to {}, which was created with handleTypes 0: pointers of a "
                "pool are exportable only when the pool is", api, ptr, p.describe());
  return p.export_pointer(ptr, shareData_out->reserved, api);
}

Errc cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData* shareData) noexcept {
  const char* api = "cuMemPoolImportPointer";
  TRY(Driver::get().require_init(api));
  TRY(need(ptr_out, api, "ptr_out"));
  // Measured: a NULL pool or NULL shareData leaves ptr_out untouched; past those it is cleared
  // first, so a later failure leaves 0.
  if (!pool) return fail(Errc::invalid_value, "{}: pool is NULL", api);
  TRY(need(shareData, api, "shareData"));
  *ptr_out = 0;
  mem::Pool* p = nullptr;
  TRY(pool_arg(pool, api, p));
  if (!p->imported())
    return fail(Errc::invalid_value, "{}: {} is not an imported pool; import the exporter's pool with "
                "cuMemPoolImportFromShareableHandle and import pointers into that", api, p->describe());
  uintptr_t out = 0;
  TRY(p->import_pointer(shareData->reserved, out, api));
  *ptr_out = out;
  return Errc::success;
}

}  // namespace cuda_shim::api
