// The memory room's side of core/upcalls.hpp, registered when the library loads.
#include "core/upcalls.hpp"

#include "memory/address_space.hpp"
#include "memory/managed.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::mem {
namespace {

const char* object_kind(const void* h) {
  if (find_pool(h)) return "a memory pool";
  RangePtr r = AddressSpace::get().find(reinterpret_cast<uintptr_t>(h));
  if (r && (r->kind == Kind::host_pinned || r->kind == Kind::managed)) return "host memory";
  return nullptr;
}

constexpr upcalls::Memory kMemory{
    .after_sync_slow = pools_after_sync_slow,
    .stream_destroyed = stream_destroyed,
    .release_context = release_context,
    .object_kind = object_kind,
};

[[maybe_unused]] const bool g_registered = (upcalls::set_memory(&kMemory), true);

}  // namespace
}  // namespace cuda_shim::mem
