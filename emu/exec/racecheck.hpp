// Shared-memory races between barriers (CUDA_SHIM_STRICT), as compute-sanitizer's racecheck
// finds them without a GPU: two threads of different warps touch the same shared word between two
// barrier releases of their block, at least one of them writing (read after write, write after
// read, write after write). Atomics are not races. Threads of one warp run in step here, so their
// hazards are not judged. Each hazard is reported once per pair of PTX lines, on stderr when the
// grid ends (the launch's reports), naming kernel, block, both threads and both lines.
#pragma once
#include <cstdint>
#include <vector>

namespace cuda_shim::exec {

struct Warp;

class Racecheck {
 public:
  // A new block with `bytes` of shared memory.
  void reset(uint32_t bytes);
  // A barrier released: what came before no longer races with what follows.
  void barrier() { ++epoch_; }
  // Lane `lane` of `w` reads or writes n bytes at shared offset `a` (in bounds).
  void access(Warp& w, unsigned lane, uint64_t a, unsigned n, bool write);

 private:
  struct Word {  // the last write, and the last read of this barrier interval
    uint32_t w_epoch = 0, r_epoch = 0;
    uint32_t w_thread = 0, r_thread = 0;
    uint32_t w_line = 0, r_line = 0;
  };
  void hazard(Warp& w, unsigned lane, const char* kind, uint64_t a, uint32_t other_thread, uint32_t other_line);
  std::vector<Word> words_;
  uint32_t epoch_ = 1;
  std::vector<uint64_t> reported_;  // line pairs already reported in this launch
};

}  // namespace cuda_shim::exec
