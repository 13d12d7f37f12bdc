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
  uintptr_t grid_ws = 0;  // a cooperative launch's grid workspace (kGridWorkspace bytes)
};
constexpr unsigned kGridWorkspace = 256;
const Windows& windows();

class MemView {
 public:
  // One per host thread and launch: translations never outlive the launch (allocations may
  // change between launches).
  // stream_id: the launch's stream (cuStreamAttachMemAsync associations are checked against it).
  // grid_ws: the launch's grid workspace, which the workspace window's addresses reach.
  explicit MemView(uint64_t stream_id = 0, uint8_t* grid_ws = nullptr);
  ~MemView();
  MemView(const MemView&) = delete;
  MemView& operator=(const MemView&) = delete;

  // The host address of [a, a + n) of global memory, or null with `why` filled (the fault's
  // explanation: what lies nearest). `write`: a store or an atomic.
  uint8_t* global(uintptr_t a, unsigned n, bool write, std::string& why) {
    // A few whole allocations, searched in order: a kernel streams through a handful of arrays,
    // and keying entries by address bits made arrays a power of two apart evict each other on
    // every access (measured: a vector add's three 64 MiB arrays).
    for (unsigned i = 0; i < kWays; ++i) {
      const Entry& e = cache_[i];
      if (a - e.lo < e.len && n <= e.len - (a - e.lo) && (!write || e.writable)) [[likely]]
        return reinterpret_cast<uint8_t*>(a + e.delta);
    }
    return slow(a, n, write, why);
  }
  // Reports collected during the launch (use of memory freed in stream order, ...), one line each.
  std::string take_reports();
  // Adds one (at most 8 per view: a kernel repeats its mistakes in every thread).
  void report(const std::string& line);

 private:
  static constexpr unsigned kWays = 8;
  struct Entry {
    uintptr_t lo = 0, len = 0;  // len 0: empty
    intptr_t delta = 0;
    bool writable = false;
  };
  uint8_t* slow(uintptr_t a, unsigned n, bool write, std::string& why);
  // One MemView per host thread and launch (interp's block runner owns it).
  Entry cache_[kWays];
  unsigned next_ = 0;  // the entry the next miss replaces (round robin)
  uint64_t stream_id_ = 0;
  uint8_t* grid_ws_ = nullptr;
  struct Keep;
  Keep* keep_;  // ranges this view translated: kept mapped while the view lives
};

}  // namespace cuda_shim::exec
