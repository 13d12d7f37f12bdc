#include "core/events.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuda_shim::ev {

void too_many_listeners() noexcept {
  std::fprintf(stderr, "cuda-shim: more than %u listeners on one event; raise ev::kMaxListeners\n",
               kMaxListeners);
  std::abort();
}

namespace {
// process_exit is emitted by an exit handler registered when the library loads; the handler
// costs a load when nobody listens.
[[maybe_unused]] const int kExitRegistered = std::atexit([] { process_exit.emit(); });
}  // namespace

}  // namespace cuda_shim::ev
