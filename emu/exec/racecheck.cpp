#include "exec/racecheck.hpp"

#include <algorithm>

#include "exec/interp.hpp"

namespace cuda_shim::exec {

void Racecheck::reset(uint32_t bytes) {
  words_.assign((bytes + 3) / 4, Word{});
  epoch_ = 1;
}

void Racecheck::access(Warp& w, unsigned lane, uint64_t a, unsigned n, bool write) {
  const uint32_t thread = w.index * kLanes + lane;
  const uint32_t warp = w.index, line = w.cur ? w.cur->line : 0;
  for (uint64_t i = a / 4; i <= (a + n - 1) / 4 && i < words_.size(); ++i) {
    Word& x = words_[i];
    const bool wrote = x.w_epoch == epoch_ && x.w_thread / kLanes != warp;
    const bool read = x.r_epoch == epoch_ && x.r_thread / kLanes != warp;
    if (wrote) hazard(w, lane, write ? "write after write" : "read after write", i * 4, x.w_thread, x.w_line);
    else if (write && read) hazard(w, lane, "write after read", i * 4, x.r_thread, x.r_line);
    if (write) x.w_epoch = epoch_, x.w_thread = thread, x.w_line = line;
    else x.r_epoch = epoch_, x.r_thread = thread, x.r_line = line;
  }
}

void Racecheck::hazard(Warp& w, unsigned lane, const char* kind, uint64_t a, uint32_t other, uint32_t other_line) {
  const uint32_t line = w.cur ? w.cur->line : 0;
  const uint64_t key = uint64_t{std::min(line, other_line)} << 32 | std::max(line, other_line);
  if (std::find(reported_.begin(), reported_.end(), key) != reported_.end()) return;
  reported_.push_back(key);
  const Launch& L = *w.launch;
  const Block& b = *w.block;
  auto tid = [&](uint32_t t) {
    return fmt::format("({},{},{})", t % L.block[0], (t / L.block[0]) % L.block[1], t / (L.block[0] * L.block[1]));
  };
  b.mem->report(fmt::format("shared-memory race ({}) at shared offset {:#x}, block ({},{},{}): thread {} at PTX line {} "
                            "and thread {} at PTX line {}, with no barrier between them (CUDA_SHIM_STRICT)",
                            kind, a, b.ctaid[0], b.ctaid[1], b.ctaid[2], tid(w.index * kLanes + lane), line, tid(other),
                            other_line));
}

}  // namespace cuda_shim::exec
