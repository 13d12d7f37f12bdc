// Pool internals shared by pool*.cpp: the block records, the address-ordered treap over
// them, and the pool lock helper. Not for other rooms: they see Pool (pool.hpp) only.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/pool.hpp"

namespace cuda_shim::mem {

// ---- blocks and the address-ordered treap ---------------------------------------------
// The window is tiled by blocks: live allocations and free blocks. A free block is either
// settled (reusable by every stream) or pending: a stream-ordered free the host has not
// observed, tagged with its stream and position; it is reusable only by streams the reuse
// policies allow. Freed blocks keep their identity (a free flips the block in place); free
// blocks merge when they settle or when an allocation spans them. Placement is first fit
// over runs of adjacent free blocks (measured: a stream allocates across its own pending
// free and the settled space next to it), so the treap of all blocks, keyed by offset,
// carries a segment-tree summary of free runs per subtree: first fit and "which block
// holds p" are O(log n), and the common alloc/free pair touches one block.
// Fields an allocation or a free touches come first, in the record's first cache line; the
// treap's links and summaries follow (placement and merges only). Measured: with the fields
// in declaration order a scrambled free or reallocation wrote two lines of a cold block.
struct alignas(64) PoolBlock {
  uintptr_t off = 0;
  size_t size = 0;  // multiple of kPoolAlign
  size_t req = 0;          // used: bytes requested
  uint64_t buffer_id = 0;  // used
  // Free and pending: the freeing stream's Pool::StreamEntry, and the free's position.
  void* tag = nullptr;
  uint64_t seq = 0;
  uint32_t pidx = 0;  // pending: its slot in the entry's list
  bool used = false;
  // A pending free the treap still counts as used (pool_index.hpp, ParkedFrees): the
  // summaries are always those of "used or parked".
  bool parked = false;
  uint32_t prio = 0;
  PoolBlock* prev = nullptr;  // address order
  PoolBlock* next = nullptr;
  PoolBlock* l = nullptr;  // treap
  PoolBlock* r = nullptr;
  PoolBlock* up = nullptr;
  // Summary of this subtree's blocks in address order: total bytes, free run at its start,
  // free run at its end, longest free run, and bytes before its first free byte (== total
  // when it has none).
  size_t total = 0, pre = 0, suf = 0, best = 0, lead = 0;
};
static_assert(offsetof(PoolBlock, prio) + sizeof(uint32_t) <= 64, "the hot fields share one cache line");

struct Pool::StreamEntry {
  std::shared_ptr<Stream> s;  // kept alive while frees wait on it
  // The blocks pending on s, in the order they were freed. A block taken back (reused, or
  // settled) leaves a null slot: it writes that slot alone, where a linked list would write
  // both its neighbours, two blocks freed at unrelated times (cache misses when a batch of
  // frees is taken back in address order). Compacted when mostly null.
  std::vector<PoolBlock*> list;
  size_t count = 0;  // non-null slots
};

namespace pool_detail {


inline bool blocked(const PoolBlock* n) { return n->used || n->parked; }

// Recomputes n's summary from its children; returns whether it changed.
inline bool pull(PoolBlock* n) {
  const size_t f = blocked(n) ? 0 : n->size;
  size_t t = n->size, pre = f, suf = f, best = f, lead = blocked(n) ? n->size : 0;
  if (const PoolBlock* L = n->l) {
    best = std::max({L->best, best, L->suf + pre});
    pre = L->pre == L->total ? L->total + pre : L->pre;
    suf = suf == t ? t + L->suf : suf;
    lead = L->lead < L->total ? L->lead : L->total + lead;
    t += L->total;
  }
  if (const PoolBlock* R = n->r) {
    best = std::max({best, R->best, suf + R->pre});
    pre = pre == t ? t + R->pre : pre;
    suf = R->suf == R->total ? R->total + suf : R->suf;
    lead = lead < t ? lead : t + R->lead;
    t += R->total;
  }
  if (t == n->total && pre == n->pre && suf == n->suf && best == n->best && lead == n->lead) return false;
  n->total = t;
  n->pre = pre;
  n->suf = suf;
  n->best = best;
  n->lead = lead;
  return true;
}

// Recomputes n's summary and its ancestors', stopping where nothing changes. Sound as long
// as every other node was consistent: call it right after changing one node.
inline void fix_up(PoolBlock* n) {
  while (n && pull(n)) n = n->up;
}

inline PoolBlock* leftmost(PoolBlock* n);

inline void set_child(PoolBlock*& root, PoolBlock* parent, PoolBlock* old, PoolBlock* now) {
  if (!parent) root = now;
  else if (parent->l == old) parent->l = now;
  else parent->r = now;
  if (now) now->up = parent;
}

// Rotates x above its parent.
inline void rotate_up(PoolBlock*& root, PoolBlock* x) {
  PoolBlock* p = x->up;
  PoolBlock* g = p->up;
  if (p->l == x) {
    p->l = x->r;
    if (x->r) x->r->up = p;
    x->r = p;
  } else {
    p->r = x->l;
    if (x->l) x->l->up = p;
    x->l = p;
  }
  p->up = x;
  set_child(root, g, p, x);
  pull(p);
  pull(x);
}

inline void t_insert(PoolBlock*& root, PoolBlock* b) {
  b->l = b->r = nullptr;
  b->total = b->pre = b->suf = b->best = b->lead = ~size_t(0);  // force the first pull to write
  pull(b);
  PoolBlock* parent = nullptr;
  PoolBlock** link = &root;
  while (*link) {
    parent = *link;
    link = b->off < parent->off ? &parent->l : &parent->r;
  }
  *link = b;
  b->up = parent;
  while (b->up && b->up->prio < b->prio) rotate_up(root, b);
  fix_up(b->up);
}

// Inserts b as the in-order successor of a (its key is the next one): a local descent
// instead of one from the root.
inline void t_insert_after(PoolBlock*& root, PoolBlock* a, PoolBlock* b) {
  b->l = b->r = nullptr;
  b->total = b->pre = b->suf = b->best = b->lead = ~size_t(0);
  pull(b);
  if (!a->r) {
    a->r = b;
    b->up = a;
  } else {
    PoolBlock* p = leftmost(a->r);
    p->l = b;
    b->up = p;
  }
  while (b->up && b->up->prio < b->prio) rotate_up(root, b);
  fix_up(b->up);
}

inline void t_erase(PoolBlock*& root, PoolBlock* b) {
  while (b->l && b->r) rotate_up(root, b->l->prio > b->r->prio ? b->l : b->r);
  PoolBlock* child = b->l ? b->l : b->r;
  PoolBlock* parent = b->up;
  set_child(root, parent, b, child);
  b->l = b->r = b->up = nullptr;
  fix_up(parent);
}

inline PoolBlock* t_find_le(PoolBlock* n, uintptr_t off) {
  PoolBlock* best = nullptr;
  while (n) {
    if (n->off <= off) {
      best = n;
      n = n->r;
    } else {
      n = n->l;
    }
  }
  return best;
}

// The block where the lowest run of free blocks of at least r bytes starts, at an offset
// >= from, in the subtree n whose first byte is at `base`; null if there is none. Runs
// start at block boundaries, and `from` is one.
inline PoolBlock* leftmost(PoolBlock* n) {
  while (n->l) n = n->l;
  return n;
}
// The first block of the free run that ends subtree n (n->suf > 0).
inline PoolBlock* suffix_start(PoolBlock* n) {
  for (;;) {
    if (n->r && n->r->suf < n->r->total) {
      n = n->r;  // the run starts inside the right subtree
      continue;
    }
    if (blocked(n)) return leftmost(n->r);  // the right subtree is all free
    if (n->l && n->l->suf > 0) {
      n = n->l;  // ... and continues into the left subtree
      continue;
    }
    return n;
  }
}
inline PoolBlock* t_find_run(PoolBlock* n, uintptr_t base, size_t r, uintptr_t from) {
  while (n && n->best >= r && base + n->total > from) {
    PoolBlock* L = n->l;
    PoolBlock* R = n->r;
    const size_t lt = L ? L->total : 0;
    const uintptr_t noff = base + lt;
    if (L && L->best >= r && noff > from) {
      // The left subtree may hold it; if it starts before `from` it must be searched
      // with the bound, else without.
      if (PoolBlock* x = t_find_run(L, base, r, std::max(base, from))) return x;
    }
    if (!blocked(n)) {
      // A run through this block: from the free suffix of the left subtree (not before
      // `from`) on into the free prefix of the right one.
      const size_t lsuf = L ? L->suf : 0;
      const uintptr_t start = std::max<uintptr_t>(from, noff - lsuf);
      if (start <= noff) {
        const size_t run = (noff - start) + n->size + (R ? R->pre : 0);
        if (run >= r) {
          if (start == noff) return n;
          // It starts in the left subtree's free suffix, at or after `from`.
          PoolBlock* b = suffix_start(L);
          while (b->off < start) b = b->next;
          return b;
        }
      }
    }
    base = noff + n->size;
    n = R;
  }
  return nullptr;
}

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// CUDA_SHIM_CHECK_POOLS=1 re-derives every pool's books after each change (tests, fuzzing).
extern const bool g_checking;
inline bool checking() { return g_checking; }

}  // namespace pool_detail

}  // namespace cuda_shim::mem
