// What the memory room hears from core and answers it (core/events.hpp), registered when the
// library loads.
#include "core/events.hpp"

#include "memory/address_space.hpp"
#include "memory/managed.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::mem {
namespace {

const char* object_kind(const void* h) noexcept {
  if (find_pool(h)) return "a memory pool";
  RangePtr r = AddressSpace::get().find(reinterpret_cast<uintptr_t>(h));
  if (r && (r->kind == Kind::host_pinned || r->kind == Kind::managed)) return "host memory";
  return nullptr;
}

// Pools settle what the host observed; emitted only while a pool waits for it (pool_attention).
[[maybe_unused]] const ev::Registration kOnSync{ev::host_synchronised, &pools_after_sync_slow};
// Managed memory attached to a destroyed stream reverts to its default association.
[[maybe_unused]] const ev::Registration kOnStream{ev::stream_destroyed, &stream_destroyed};
// A context's allocations die with it.
[[maybe_unused]] const ev::Registration kOnContext{ev::context_released, &release_context};
[[maybe_unused]] const ev::Registration kObjectKind{ev::object_kind, &object_kind};

}  // namespace
}  // namespace cuda_shim::mem
