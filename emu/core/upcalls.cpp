#include "core/upcalls.hpp"

namespace cuda_shim::upcalls {
namespace {
std::atomic<const Memory*> g_memory{nullptr};
}
std::atomic<size_t> g_sync_work{0};
void set_memory(const Memory* m) noexcept { g_memory.store(m, std::memory_order_release); }
const Memory* memory() noexcept { return g_memory.load(std::memory_order_acquire); }
}  // namespace cuda_shim::upcalls
