// A small pool of persistent helper threads for work that one thread cannot finish at the
// machine's memory bandwidth (large copies and fills). It is sized to the hardware threads this
// process may run on, created on first use, and never grows: no thread is created per operation.
// The caller always takes part, so a job finishes even while every helper is busy elsewhere.
#pragma once
#include <cstddef>
#include <type_traits>

namespace cuda_shim::par {

// Threads a job may use, the caller included (>= 1).
unsigned threads() noexcept;

// One pause of a spin-wait (the CPU's hint that this thread is polling).
void relax() noexcept;

// Runs part(ctx, i) for every i in [0, parts), spread over the pool and the calling thread,
// and returns when every part has returned (their writes are visible to the caller then).
// Parts must not throw. parts <= 1 runs inline, with no handoff.
void run(size_t parts, void (*part)(void* ctx, size_t i), void* ctx) noexcept;

template <class F>
void run(size_t parts, F&& f) noexcept {
  using T = std::remove_reference_t<F>;
  run(parts, [](void* c, size_t i) { (*static_cast<T*>(c))(i); }, const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace cuda_shim::par
