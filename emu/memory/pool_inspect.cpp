// What `cuda-shim smi` shows of one pool (emu/inspect): its figures and its live allocations,
// read under the pool's lock. Only the inspector thread calls it, when asked: no allocation or
// free pays for it.
#include <algorithm>

#include "memory/pool_blocks.hpp"

namespace cuda_shim::mem {

using namespace pool_detail;

void Pool::inspect(View& out) const {
  std::lock_guard lk(m_);
  out.reserved = committed_ * kPoolChunk;
  out.reserved_high = reserved_high_;
  out.used = used_;
  out.used_high = used_high_;
  out.pending = pending_;
  out.window = window_;
  out.live = out.live_bytes = out.largest = 0;
  if (imported_) {
    // An importer's allocations are the pointers it imported.
    imports_.for_each([&](const ImportTable::Entry& e) {
      ++out.live;
      out.live_bytes += e.size;
      out.largest = std::max<uint64_t>(out.largest, e.size);
    });
    return;
  }
  // The blocks in address order; a walk costs the application's threads this pool's lock for
  // as long as it takes (microseconds for thousands of allocations).
  for (const PoolBlock* b = root_ ? t_find_le(root_, 0) : nullptr; b; b = b->next)
    if (b->used) {
      ++out.live;
      out.live_bytes += b->req;
      out.largest = std::max<uint64_t>(out.largest, b->req);
    }
}

}  // namespace cuda_shim::mem
