#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "memory/pool_blocks.hpp"

// CUDA_SHIM_CHECK_POOLS=1: every invariant of a pool's books, re-derived from its blocks.
namespace cuda_shim::mem {

using namespace pool_detail;

void Pool::verify(const char* where) const {
  auto bad = [&](const std::string& what) {
    std::fprintf(stderr, "cuda-shim: %s: pool invariant broken after %s: %s\n", describe().c_str(), where,
                 what.c_str());
    std::abort();
  };
  if (!window_) return;
  std::vector<uint64_t> busy_bytes(chunk_busy_.size(), 0);
  auto add = [&](uintptr_t off, size_t len) {
    for (uintptr_t o = off; o < off + len;) {
      size_t c = o / kPoolChunk;
      if (c >= busy_bytes.size()) bad(fmt::format("busy bytes in chunk {}, beyond the chunks ever committed", c));
      uintptr_t hi = std::min<uintptr_t>(off + len, (c + 1) * kPoolChunk);
      busy_bytes[c] += hi - o;
      o = hi;
    }
  };
  const PoolBlock* b = t_find_le(root_, 0);
  if (!b || b->off != 0 || b->prev) bad("the first block does not start the window");
  uintptr_t expect = 0;
  size_t live = 0, pend = 0, nodes = 0, parked = 0;
  uint64_t used = 0;
  for (; b; b = b->next) {
    ++nodes;
    if (b->off != expect) bad(fmt::format("gap or overlap at offset {:#x}", expect));
    if (b->size == 0 || b->size % kPoolAlign) bad(fmt::format("block at {:#x} has size {}", b->off, b->size));
    if (b->next && b->next->prev != b) bad("address links disagree");
    if (b->used) {
      ++live;
      used += b->req;
      if (b->req == 0 || b->req > b->size) bad("a live block's requested size does not fit it");
      if (b->tag || b->parked) bad("a live block is tagged pending or parked");
      if (find_live(b->off) != b || (b == hot_) == (hash_.find(b->off) == b)) bad(fmt::format("live block at {:#x} missing from the base-address hash", b->off));
      add(b->off, b->size);
    } else if (b->tag) {
      ++pend;
      parked += b->parked;
      add(b->off, b->size);
    } else if (b->parked) {
      bad(fmt::format("settled free block at {:#x} is parked", b->off));
    } else if (b->next && !b->next->used && !b->next->tag) {
      bad(fmt::format("settled free blocks at {:#x} and {:#x} not merged", b->off, b->next->off));
    }
    expect = b->off + b->size;
  }
  if (expect != window_size_) bad("the blocks do not cover the window");
  std::function<size_t(const PoolBlock*)> count = [&](const PoolBlock* n) -> size_t {
    if (!n) return 0;
    size_t c = 1 + count(n->l) + count(n->r);
    PoolBlock copy = *n;
    if (pull(&copy)) bad(fmt::format("stale run summary at {:#x}", n->off));
    if ((n->l && (n->l->off >= n->off || n->l->up != n)) || (n->r && (n->r->off <= n->off || n->r->up != n)))
      bad("treap order or parent links broken");
    if ((n->l && n->l->prio > n->prio) || (n->r && n->r->prio > n->prio)) bad("treap heap order broken");
    return c;
  };
  if (count(root_) != nodes) bad("the treap and the address list hold different blocks");
  if (parked != parked_.size()) bad(fmt::format("{} parked blocks, {} in the parked set", parked, parked_.size()));
  parked_.each([&](const PoolBlock* v) {
    if (!v->parked) bad("the parked set holds a block that is not parked");
  });
  if (hash_.size() + (hot_ ? 1 : 0) != live) bad("the base-address hash and the live blocks disagree");
  if (live + imports_.size() != live_) bad(fmt::format("{} live blocks and {} imports, counter says {}", live,
                                                        imports_.size(), live_));
  if (pend != pending_) bad(fmt::format("{} pending frees, counter says {}", pend, pending_));
  size_t listed = 0;
  for (auto& e : streams_) {
    size_t n = 0;
    for (size_t i = 0; i < e->list.size(); ++i) {
      const PoolBlock* v = e->list[i];
      if (!v) continue;
      if (v->tag != e.get() || v->used) bad("a stream's pending list holds a block that is not pending on it");
      if (v->pidx != i) bad("a pending block's slot in its stream's list is wrong");
      ++n;
    }
    if (n != e->count) bad("a stream's pending list and its count disagree");
    listed += n;
  }
  if (listed != pending_) bad("pending frees missing from their streams' lists");
  if (used > used_) bad(fmt::format("live blocks hold {} bytes, UsedMemCurrent says {}", used, used_));
  size_t committed = 0, idle = 0;
  for (size_t c = 0; c < chunk_busy_.size(); ++c) {
    if (busy_bytes[c] != chunk_busy_[c])
      bad(fmt::format("chunk {} busy {} bytes, counter says {}", c, busy_bytes[c], chunk_busy_[c]));
    if (busy_bytes[c] && !chunk_committed_[c]) bad(fmt::format("chunk {} in use but not committed", c));
    committed += chunk_committed_[c];
    idle += chunk_committed_[c] && !busy_bytes[c];
  }
  if (committed != committed_ || idle != idle_committed_) bad("committed-chunk counters drifted");
}

}  // namespace cuda_shim::mem
