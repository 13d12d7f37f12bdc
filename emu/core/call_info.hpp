// Which API call a thread is inside, for the features that observe calls (trace, strict mode,
// fault injection). The abi door (abi/call.hpp) sets it only while one of them is on, so a
// finding or a trace event can name "cuMemFreeAsync #42" and the other can find the same call.
#pragma once
#include <cstdint>

namespace cuda_shim {

struct CallInfo {
  const char* api = nullptr;  // the entry's name, e.g. "cudaMallocAsync"; null outside a call
  std::uint64_t id = 0;       // the process's call number, from 1; 0 outside a call
};

// The outermost door call this thread is running; {} outside one, or when no observing feature
// is on (the door then skips the bookkeeping).
CallInfo current_call() noexcept;

namespace detail {
// The door's side: enter() numbers the call and returns the previous one (restored by leave()).
// Nested door calls (the emulator calling itself through an exported symbol) keep the outer one.
CallInfo enter_call(const char* api) noexcept;
void leave_call(CallInfo previous) noexcept;
}  // namespace detail

}  // namespace cuda_shim
