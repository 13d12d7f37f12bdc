// How kernels see memory. Global addresses are the emulator's device pointers: every access is
// resolved through the address space (device, pinned, registered, managed, pool and VMM ranges,
// IPC-imported and external memory alike), so a kernel reads and writes what copies and other
// processes see, and an address outside every allocation faults as on a GPU. Generic addresses
// of shared and local memory fall in two windows reserved here (never mapped), as a GPU's
// generic space has shared and local windows.
#pragma once
#include <cstdint>
#include <string>

namespace cuda_shim::exec {

// The generic windows. Addresses inside them are never valid global addresses.
struct Windows {
  uintptr_t shared = 0;
  uintptr_t shared_size = 0;
  uintptr_t local = 0;
  uintptr_t local_size = 0;
};
const Windows& windows();

class MemView {
 public:
  // A new launch: cached translations of an earlier one are dropped (allocations may have
  // changed in between) the next time each host thread resolves.
  MemView();
  ~MemView();
  MemView(const MemView&) = delete;
  MemView& operator=(const MemView&) = delete;

  // The host address of [a, a + n) of global memory, or null with `why` filled (the fault's
  // explanation: what lies nearest). `write`: a store or an atomic.
  uint8_t* global(uintptr_t a, unsigned n, bool write, std::string& why) {
    Entry& e = cache_[(a >> 21) & (kWays - 1)];
    if (e.epoch == epoch_ && a - e.lo < e.len && n <= e.len - (a - e.lo) && (!write || e.writable)) [[likely]]
      return reinterpret_cast<uint8_t*>(a + e.delta);
    return slow(a, n, write, why);
  }
  // Reports collected during the launch (use of memory freed in stream order, ...), one line each.
  std::string take_reports();

 private:
  static constexpr unsigned kWays = 16;
  struct Entry {
    uint64_t epoch = 0;
    uintptr_t lo = 0, len = 0;
    intptr_t delta = 0;
    bool writable = false;
  };
  uint8_t* slow(uintptr_t a, unsigned n, bool write, std::string& why);
  // One MemView per host thread and launch (interp's block runner owns it).
  Entry cache_[kWays];
  uint64_t epoch_;
  struct Keep;
  Keep* keep_;  // ranges this view translated: kept mapped while the view lives
};

}  // namespace cuda_shim::exec
