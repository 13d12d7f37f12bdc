#include "memory/pool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "core/context.hpp"
#include "core/driver.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"

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
struct PoolBlock {
  uintptr_t off = 0;
  size_t size = 0;  // multiple of kPoolAlign
  PoolBlock* prev = nullptr;  // address order
  PoolBlock* next = nullptr;
  PoolBlock* l = nullptr;  // treap
  PoolBlock* r = nullptr;
  PoolBlock* up = nullptr;
  uint32_t prio = 0;
  // Summary of this subtree's blocks in address order: total bytes, free run at its start,
  // free run at its end, longest free run, and bytes before its first free byte (== total
  // when it has none).
  size_t total = 0, pre = 0, suf = 0, best = 0, lead = 0;
  bool used = false;
  // A pending free the treap still counts as used (pool_index.hpp, ParkedFrees): the
  // summaries are always those of "used or parked".
  bool parked = false;
  size_t req = 0;          // used: bytes requested
  uint64_t buffer_id = 0;  // used
  // Free and pending: the freeing stream's Pool::StreamEntry, and the free's position.
  void* tag = nullptr;
  uint64_t seq = 0;
  PoolBlock* pprev = nullptr;  // the entry's list of pending blocks
  PoolBlock* pnext = nullptr;
};

struct Pool::StreamEntry {
  std::shared_ptr<Stream> s;  // kept alive while frees wait on it
  PoolBlock* head = nullptr;
  size_t count = 0;
};

namespace {

inline bool blocked(const PoolBlock* n) { return n->used || n->parked; }

// Recomputes n's summary from its children; returns whether it changed.
bool pull(PoolBlock* n) {
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
void fix_up(PoolBlock* n) {
  while (n && pull(n)) n = n->up;
}

PoolBlock* leftmost(PoolBlock* n);

void set_child(PoolBlock*& root, PoolBlock* parent, PoolBlock* old, PoolBlock* now) {
  if (!parent) root = now;
  else if (parent->l == old) parent->l = now;
  else parent->r = now;
  if (now) now->up = parent;
}

// Rotates x above its parent.
void rotate_up(PoolBlock*& root, PoolBlock* x) {
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

void t_insert(PoolBlock*& root, PoolBlock* b) {
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
void t_insert_after(PoolBlock*& root, PoolBlock* a, PoolBlock* b) {
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

void t_erase(PoolBlock*& root, PoolBlock* b) {
  while (b->l && b->r) rotate_up(root, b->l->prio > b->r->prio ? b->l : b->r);
  PoolBlock* child = b->l ? b->l : b->r;
  PoolBlock* parent = b->up;
  set_child(root, parent, b, child);
  b->l = b->r = b->up = nullptr;
  fix_up(parent);
}

PoolBlock* t_find_le(PoolBlock* n, uintptr_t off) {
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
PoolBlock* leftmost(PoolBlock* n) {
  while (n->l) n = n->l;
  return n;
}
// The first block of the free run that ends subtree n (n->suf > 0).
PoolBlock* suffix_start(PoolBlock* n) {
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
PoolBlock* t_find_run(PoolBlock* n, uintptr_t base, size_t r, uintptr_t from) {
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

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The pool's lock on the allocation paths: the uncontended exchange inline, the spinning
// SpinLock::lock only when another thread holds it.
class Held {
 public:
  explicit Held(SpinLock& m) : m_(m) {
    if (!m_.try_lock()) [[unlikely]]
      m_.lock();
  }
  ~Held() { m_.unlock(); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;

 private:
  SpinLock& m_;
};

std::atomic<uint64_t> g_next_chunk_id{1};

// How much address space one pool's window may take. The real driver reserves the whole
// capacity (the device's memory by default); so do we, up to this cap (sanitizer runtimes
// have small application address ranges). CUDA_SHIM_POOL_VA_MAX overrides it (bytes).
size_t window_cap() {
  static const size_t cap = [] {
#if defined(__SANITIZE_THREAD__)
    size_t c = size_t(8) << 30;
#else
    size_t c = size_t(1) << 40;
#endif
    if (const char* e = std::getenv("CUDA_SHIM_POOL_VA_MAX"))
      if (unsigned long long v = std::strtoull(e, nullptr, 0); v >= kPoolChunk) c = round_up(v, kPoolChunk);
    return c;
  }();
  return cap;
}

}  // namespace

size_t pool_window_cap() { return window_cap(); }

namespace {

// CUDA_SHIM_CHECK_POOLS=1 re-derives every pool's books after each change (tests, fuzzing).
const bool g_checking = [] {
  const char* e = std::getenv("CUDA_SHIM_CHECK_POOLS");
  return e && *e && *e != '0';
}();
inline bool checking() { return g_checking; }

// An address range of `len` bytes aligned to `align`, reserved (PROT_NONE) and not backed.
void* reserve_aligned(size_t len, size_t align) {
  size_t span = len + align;
  void* p = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto a = reinterpret_cast<uintptr_t>(p);
  uintptr_t b = round_up(a, align);
  if (b > a) ::munmap(p, b - a);
  if (uintptr_t end = b + len; end < a + span) ::munmap(reinterpret_cast<void*>(end), a + span - end);
  return reinterpret_cast<void*>(b);
}

}  // namespace

// ---- Pool ------------------------------------------------------------------------------
Pool::Pool(const Props& p, uint64_t capacity, int ndev, bool is_default)
    : props_(p), capacity_(capacity), default_(is_default), access_(static_cast<size_t>(ndev), 0) {
  // Default access (measured): a device pool is read-write for its device only; host and
  // host-NUMA pools for the host only; managed pools report no access anywhere.
  if (device_located() && p.loc_id >= 0 && p.loc_id < ndev) access_[p.loc_id] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (host_located()) host_access_ = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  rng_ ^= static_cast<uint32_t>(reinterpret_cast<uintptr_t>(this) >> 4);
  token_ = ipc::random_token();
}

Pool::~Pool() {
  if (attn_.listed()) attention_remove(attn_);
  // Committed chunks of a device pool were charged to the device.
  if (device_located())
    for (size_t c = 0; c < chunk_committed_.size(); ++c)
      if (chunk_committed_[c]) uncharge(props_.loc_id, kPoolChunk);
  if (shadow_ && reinterpret_cast<uintptr_t>(shadow_) != window_) ::munmap(shadow_, window_size_);
  if (window_) ::munmap(reinterpret_cast<void*>(window_), window_size_);
  // A range of a shared file outlives the pool unless given back: its written pages lie in
  // the committed chunks (decommitted ones were punched already).
  if (span_.file && !owns_file() && !span_kept_)
    for (size_t c = 0; c < chunk_committed_.size(); ++c)
      if (chunk_committed_[c]) punch_pool_span(*span_.file, span_.offset + c * kPoolChunk, kPoolChunk);
  for (auto& e : streams_) e->s.reset();
}

std::string Pool::describe() const {
  std::string where;
  switch (props_.loc_type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: where = fmt::format("device {}", props_.loc_id); break;
    case CU_MEM_LOCATION_TYPE_HOST: where = "host"; break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: where = fmt::format("host NUMA node {}", props_.loc_id); break;
    default: where = "no preferred location"; break;
  }
  return fmt::format("pool {:#x} ({}, {}{}{})", handle_, where, managed() ? "managed" : "pinned",
                     default_ ? ", default pool" : "", destroyed() ? ", destroyed" : "");
}

Errc Pool::reserve_window(const char* api) {
  size_t len = static_cast<size_t>(std::min<uint64_t>(capacity_, window_cap()));
  PoolSpan span;
  if (props_.handle_types != 0) {
    // The memfd is named for the pool, so an exported descriptor describes the pool by itself.
    int fd = ipc::create_object(ipc::ObjectKind::pool, token_,
                                {uint64_t(props_.type), uint64_t(props_.loc_type), uint64_t(uint32_t(props_.loc_id)),
                                 props_.handle_types, capacity_},
                                len);
    if (fd >= 0 && !(span.file = own_pool_file(fd))) {
      ::close(fd);
      fd = -1;
    }
    if (fd < 0)
      return fail(Errc::out_of_memory, "{}: cannot create the {}-byte backing of {} ({})", api, len, describe(),
                  std::strerror(errno));
  } else if (!carve_pool_span(len, span)) {
    return fail(Errc::out_of_memory, "{}: cannot create the {}-byte backing of {} ({})", api, len, describe(),
                std::strerror(errno));
  }
  return map_window(std::move(span), len, api);
}

Errc Pool::map_window(PoolSpan span, size_t len, const char* api) {
  const int fd = span.file->fd();
  const off_t at = static_cast<off_t>(span.offset);
  void* w = reserve_aligned(len, kPoolChunk);
  if (!w) return fail(Errc::out_of_memory, "{}: cannot reserve {} bytes of address space for {}", api, len, describe());
  char* shadow = nullptr;
  if (device_located()) {
    void* s = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, at);
    if (s == MAP_FAILED) {
      ::munmap(w, len);
      return fail(Errc::out_of_memory, "{}: cannot map the shadow of {} ({})", api, describe(), std::strerror(errno));
    }
    shadow = static_cast<char*>(s);
  } else {
    // Host-accessible pools: the user's address is the memory itself.
    void* s = ::mmap(w, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, at);
    if (s == MAP_FAILED) {
      ::munmap(w, len);
      return fail(Errc::out_of_memory, "{}: cannot map {} ({})", api, describe(), std::strerror(errno));
    }
    shadow = static_cast<char*>(s);
  }
  auto r = std::make_shared<Range>();
  r->kind = Kind::pool;
  r->ordinal = device() >= 0 ? device() : 0;
  r->base = reinterpret_cast<uintptr_t>(w);
  r->size = len;
  r->host = shadow;
  r->pool = shared_from_this();
  if (!AddressSpace::get().insert(r)) {
    if (reinterpret_cast<void*>(shadow) != w) ::munmap(shadow, len);
    ::munmap(w, len);
    return fail(Errc::out_of_memory, "{}: the window of {} overlaps a range the driver already knows", api, describe());
  }
  span_ = std::move(span);
  window_ = reinterpret_cast<uintptr_t>(w);
  window_size_ = len;
  shadow_ = shadow;
  PoolBlock* b = new_block();
  b->off = 0;
  b->size = len;
  t_insert(root_, b);
  return Errc::success;
}

PoolBlock* Pool::new_block() {
  if (!spare_) {
    // Small first: most pools hold a handful of allocations.
    const size_t kSlab = std::min<size_t>(256, size_t(8) << std::min<size_t>(slabs_.size(), 5));
    slabs_.emplace_back(new PoolBlock[kSlab]);
    PoolBlock* s = slabs_.back().get();
    for (size_t i = 0; i < kSlab; ++i) {
      s[i].next = spare_;
      spare_ = &s[i];
    }
  }
  PoolBlock* b = spare_;
  spare_ = b->next;
  *b = PoolBlock{};
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 17;
  rng_ ^= rng_ << 5;
  b->prio = rng_;
  return b;
}

void Pool::drop_block(PoolBlock* b) {
  b->tag = nullptr;
  b->next = spare_;
  spare_ = b;
}

inline Pool::StreamEntry& Pool::entry_for(Stream& s) {
  if (last_entry_ && last_entry_->s.get() == &s) [[likely]]
    return *last_entry_;
  return entry_slow(s);
}

Pool::StreamEntry& Pool::entry_slow(Stream& s) {
  for (auto& e : streams_)
    if (e->s.get() == &s) return *(last_entry_ = e.get());
  for (auto& e : streams_)  // reuse an entry nothing waits on
    if (e->count == 0) {
      e->s = s.shared_from_this();
      return *(last_entry_ = e.get());
    }
  streams_.push_back(std::make_unique<StreamEntry>());
  streams_.back()->s = s.shared_from_this();
  return *(last_entry_ = streams_.back().get());
}

void Pool::grow_chunks(size_t n) {
  if (n <= chunk_busy_.size()) return;
  chunk_busy_.resize(n, 0);
  chunk_committed_.resize(n, 0);
  chunk_id_.resize(n, 0);
}

// Folds every parked free into the treap: placement then sees every free byte.
void Pool::unpark_all() {
  parked_.drain([](PoolBlock* b) {
    b->parked = false;
    fix_up(b);
  });
}

// Tags free block b as pending on entry e at position seq.
inline void Pool::pend(PoolBlock* b, StreamEntry& e, uint64_t seq) {
  b->tag = &e;
  b->seq = seq;
  b->pprev = nullptr;
  b->pnext = e.head;
  if (e.head) e.head->pprev = b;
  e.head = b;
  ++e.count;
  ++pending_;
}

inline void Pool::unpend(PoolBlock* b) {
  auto* e = static_cast<StreamEntry*>(b->tag);
  if (b->pprev) b->pprev->pnext = b->pnext;
  else e->head = b->pnext;
  if (b->pnext) b->pnext->pprev = b->pprev;
  b->pprev = b->pnext = nullptr;
  b->tag = nullptr;
  --e->count;
  --pending_;
}

// Adds or removes [off, off+len) from the chunks' busy bytes.
void Pool::busy(uintptr_t off, size_t len, bool add) {
  if (len == 0) return;
  size_t first = off / kPoolChunk, last = (off + len - 1) / kPoolChunk;
  for (size_t c = first; c <= last; ++c) {
    uintptr_t lo = std::max<uintptr_t>(off, c * kPoolChunk);
    uintptr_t hi = std::min<uintptr_t>(off + len, (c + 1) * kPoolChunk);
    uint64_t n = hi - lo;
    if (add) {
      if (chunk_busy_[c] == 0 && chunk_committed_[c]) --idle_committed_;
      chunk_busy_[c] += n;
    } else {
      chunk_busy_[c] -= n;
      if (chunk_busy_[c] == 0 && chunk_committed_[c]) ++idle_committed_;
    }
  }
}

// Commits the chunks [off, off+len) touches. False (nothing changed) when the device
// has no memory left for them.
bool Pool::commit_range(uintptr_t off, size_t len) {
  size_t first = off / kPoolChunk, last = (off + len - 1) / kPoolChunk;
  if (first == last && first < chunk_committed_.size() && chunk_committed_[first]) return true;
  grow_chunks(last + 1);
  size_t need = 0;
  for (size_t c = first; c <= last; ++c) need += chunk_committed_[c] ? 0 : 1;
  if (need == 0) return true;
  if (device_located()) {
    Device& d = Driver::get().dev(props_.loc_id);
    if (!charge(props_.loc_id, need * kPoolChunk, d.cfg.total_mem)) return false;
  }
  for (size_t c = first; c <= last; ++c)
    if (!chunk_committed_[c]) {
      chunk_committed_[c] = 1;
      chunk_id_[c] = g_next_chunk_id.fetch_add(1, std::memory_order_relaxed);
      ++committed_;
      if (chunk_busy_[c] == 0) ++idle_committed_;
    }
  reserved_high_ = std::max<uint64_t>(reserved_high_, committed_ * kPoolChunk);
  return true;
}

void Pool::decommit(size_t c) {
  // Give the pages back (the mapping stays; it reads zeros until written again).
  punch_pool_span(*span_.file, span_.offset + c * kPoolChunk, kPoolChunk);
  chunk_committed_[c] = 0;
  --committed_;
  --idle_committed_;
  if (device_located()) uncharge(props_.loc_id, kPoolChunk);
}

// Releases idle chunks, highest first. Synchronization (trim=false) goes while more than
// `target` bytes are reserved; cuMemPoolTrimTo (trim=true) while at least `target` bytes
// would remain.
void Pool::release_idle(uint64_t target, bool trim) {
  for (size_t c = chunk_committed_.size(); c-- > 0 && idle_committed_ > 0;) {
    uint64_t reserved = committed_ * kPoolChunk;
    if (trim ? reserved < target + kPoolChunk : reserved <= target) break;
    if (chunk_committed_[c] && chunk_busy_[c] == 0) decommit(c);
  }
}

// Merges settled free block b with its settled free neighbours (keeps the tree small;
// placement does not depend on it). Returns the surviving block.
PoolBlock* Pool::merge_settled(PoolBlock* b) {
  auto settled_free = [](const PoolBlock* x) { return x && !x->used && !x->tag; };
  while (settled_free(b->next)) {
    PoolBlock* c = b->next;
    b->next = c->next;
    if (c->next) c->next->prev = b;
    t_erase(root_, c);
    b->size += c->size;
    fix_up(b);
    drop_block(c);
  }
  while (settled_free(b->prev)) {
    PoolBlock* a = b->prev;
    a->next = b->next;
    if (b->next) b->next->prev = a;
    t_erase(root_, b);
    a->size += b->size;
    fix_up(a);
    drop_block(b);
    b = a;
  }
  return b;
}

void Pool::settle(PoolBlock* b) {
  unpend(b);
  busy(b->off, b->size, false);
  merge_settled(b);
}

void Pool::settle_observed() {
  if (pending_ == 0) return;
  unpark_all();
  for (auto& e : streams_) {
    if (!e->count) continue;
    uint64_t seen = e->s->observed();
    for (PoolBlock* b = e->head; b;) {
      PoolBlock* nx = b->pnext;
      if (b->seq <= seen) settle(b);
      b = nx;
    }
  }
}

void Pool::refresh_attention() {
  bool want = pending_ > 0 || (idle_committed_ > 0 && committed_ * kPoolChunk > release_threshold());
  attention_ = want;
  if (want != attn_.listed()) {
    if (want) attention_add(weak_from_this(), attn_);
    else attention_remove(attn_);
  }
  if (!want) {
    last_entry_ = nullptr;
    for (auto& e : streams_)
      if (e->count == 0) e->s.reset();  // let finished streams go
  }
}

// May stream s reuse free block b without a new dependency?
inline bool Pool::eligible(const PoolBlock& b, Stream& s) const {
  if (!b.tag) return true;
  Stream& x = *static_cast<const StreamEntry*>(b.tag)->s;
  if (&x == &s || x.observed() >= b.seq) return true;
  if (reuse_follow() && s.depends_on(x, b.seq)) return true;
  return reuse_opportunistic() && x.completed() >= b.seq;
}

// The block where r bytes fit for stream s at the lowest address: the start of a run of
// free blocks that are all reusable by s (internal_ok: every free block counts).
PoolBlock* Pool::first_fit(size_t r, Stream& s, bool internal_ok) {
  uintptr_t from = 0;
  for (;;) {
    PoolBlock* start = t_find_run(root_, 0, r, from);
    if (!start || internal_ok) return start;
    // Check the run for frees s may not reuse yet; past such a barrier, search again.
    PoolBlock* b = start;
    size_t got = 0;
    while (b && got < r && !blocked(b) && eligible(*b, s)) {
      got += b->size;
      b = b->next;
    }
    if (got >= r) return start;
    from = b->off + b->size;  // b is a live block or a barrier
  }
}

// Carves the first r bytes of the run of free blocks starting at block u into one live
// allocation, held by u.
PoolBlock* Pool::take(PoolBlock* u, size_t r, size_t req) {
  // Bytes of settled blocks become busy; bytes of pending blocks were busy already.
  size_t need = r;
  for (PoolBlock* b = u; need; b = b->next) {
    size_t n = std::min(need, b->size);
    if (!b->tag) busy(b->off, n, true);
    need -= n;
  }
  if (u->size > r) {
    // Split: the rest stays free, and pending where u was pending.
    PoolBlock* rest = new_block();
    rest->off = u->off + r;
    rest->size = u->size - r;
    rest->prev = u;
    rest->next = u->next;
    if (u->next) u->next->prev = rest;
    u->next = rest;
    if (u->tag) pend(rest, *static_cast<StreamEntry*>(u->tag), u->seq);
    u->size = r;
    fix_up(u);
    t_insert_after(root_, u, rest);
  } else {
    // Absorb the following blocks of the run; the last may be taken only in part.
    while (u->size < r) {
      PoolBlock* c = u->next;
      size_t n = std::min(r - u->size, c->size);
      if (n == c->size) {
        if (c->tag) unpend(c);
        u->next = c->next;
        if (c->next) c->next->prev = u;
        t_erase(root_, c);
        u->size += n;
        fix_up(u);
        drop_block(c);
      } else {
        c->off += n;  // keeps its place in the order: only bytes before it changed hands
        c->size -= n;
        fix_up(c);
        u->size += n;
        fix_up(u);
      }
    }
  }
  if (u->tag) unpend(u);
  claim(u, req, true);
  return u;
}

// Free block u (the right size, no longer pending) becomes a live allocation of req bytes.
// fix: u's treap summary changes (false when u was parked: the treap counted it as used).
void Pool::claim(PoolBlock* u, size_t req, bool fix) {
  u->used = true;
  u->req = req;
  // Unique per allocation: this pool's range (its handle number) above every id that
  // cuMemAlloc hands out.
  u->buffer_id = (uint64_t(1) << 62) | ((handle_ >> 8) << 36) | ++next_buffer_;
  if (fix) fix_up(u);
  if (hot_) hash_.insert(hot_->off, hot_);
  hot_ = u;
  ++live_;
  used_ += req;
  used_high_ = std::max(used_high_, used_);
}

PoolBlock* Pool::find_live(uintptr_t off) const {
  if (hot_ && hot_->off == off) return hot_;
  return hash_.find(off);
}

PoolBlock* Pool::take_live(uintptr_t off) {
  if (hot_ && hot_->off == off) {
    PoolBlock* b = hot_;
    hot_ = nullptr;
    return b;
  }
  return hash_.take(off);
}

bool Pool::live_start(uintptr_t p, size_t& req, uint64_t& id) const {
  const PoolBlock* b = window_ && p - window_ < window_size_ ? find_live(p - window_) : nullptr;
  if (!b || !b->used) return false;
  req = b->req;
  id = b->buffer_id;
  return true;
}

Errc Pool::not_live(uintptr_t p, const char* api, const char* verb, bool within_req) const {
  const PoolBlock* in = window_ && p - window_ < window_size_ ? t_find_le(root_, p - window_) : nullptr;
  if (in && in->used && p - window_ - in->off < (within_req ? in->req : in->size))
    return fail(Errc::invalid_value, "{}: {:#x} is {} bytes into the allocation at {:#x} of {}; {} the address the "
                "allocation returned", api, p, p - window_ - in->off, window_ + in->off, describe(), verb);
  return fail(Errc::invalid_value, "{}: {:#x} lies in {} but is not a live allocation (freed already, or never "
              "allocated)", api, p, describe());
}

Errc Pool::alloc(size_t bytes, Stream& s, const char* api, uintptr_t& out) {
  // The common case first, before anything the general path sets up: the lowest parked free
  // fits exactly and s may reuse it (the same conditions as the fast path below).
  if (!imported_ && bytes <= capacity_ && bytes <= SIZE_MAX - kPoolAlign) [[likely]] {
    Held lk(m_);
    if (window_ && !parked_.empty()) {
      PoolBlock* h = parked_.top();
      if (h->size == round_up(bytes, kPoolAlign) && h->off < root_->lead &&
          (!h->tag || static_cast<const StreamEntry*>(h->tag)->s.get() == &s || eligible(*h, s))) {
        parked_.pop();
        h->parked = false;
        unpend(h);
        out = window_ + h->off;
        claim(h, bytes, false);
        if (checking()) verify("alloc");
        return Errc::success;
      }
    }
  }
  return alloc_slow(bytes, s, api, out);
}

Errc Pool::alloc_slow(size_t bytes, Stream& s, const char* api, uintptr_t& out) {
  if (imported_)
    return fail(Errc::invalid_value, "{}: {} was imported from another process; imported pools only hold pointers "
                "brought in with cuMemPoolImportPointer and never allocate", api, describe());
  std::vector<Dep> deps;  // pending frees of other streams this allocation reuses
  {
    Held lk(m_);
    if (bytes > capacity_ || bytes > SIZE_MAX - kPoolAlign)
      return fail(Errc::out_of_memory, "{}: {} bytes requested from {}, whose capacity is {} bytes{}", api, bytes,
                  describe(), capacity_, props_.max_size ? " (its maxSize rounded up to 32 MiB)" : "");
    if (!window_)
      if (Errc e = reserve_window(api); e != Errc::success) return e;
    const size_t r = round_up(bytes, kPoolAlign);
    // Fast path, exact: the lowest parked free has exactly r bytes, no free byte lies below
    // it (the treap's first free byte is above it) and s may reuse it, so it is the first
    // fit; it is reused without a search and without touching the treap.
    if (!parked_.empty()) {
      PoolBlock* h = parked_.top();
      if (h->size == r && h->off < root_->lead && eligible(*h, s)) {
        parked_.pop();
        h->parked = false;
        unpend(h);  // pending bytes become live ones: the chunks stay busy and committed
        out = window_ + h->off;
        claim(h, bytes, false);
        if (checking()) verify("alloc");
        return Errc::success;
      }
      unpark_all();
    }
    PoolBlock* at = first_fit(r, s, false);
    if (!at && reuse_internal()) {
      // Nothing fits without a new dependency: reuse other streams' pending frees and
      // make the allocating stream wait for them.
      at = first_fit(r, s, true);
      if (at) {
        size_t got = 0;
        for (PoolBlock* b = at; got < r; b = b->next) {
          if (!eligible(*b, s)) deps.push_back(Dep{static_cast<StreamEntry*>(b->tag)->s, b->seq});
          got += b->size;
        }
      }
    }
    bool device_full = false;  // a range was free, but the device could not back its chunks
    if (at && !commit_range(at->off, r)) {
      at = nullptr;
      deps.clear();
      device_full = device_located();
    }
    if (!at) {
      if (device_full || (device_located() && charged(props_.loc_id) + r > Driver::get().dev(props_.loc_id).cfg.total_mem))
        return fail(Errc::out_of_memory, "{}: {} bytes requested from {}: device {} has no memory left for the pool to "
                    "grow by ({} of {} bytes in use; pools take device memory {} MiB at a time)", api, bytes,
                    describe(), props_.loc_id, charged(props_.loc_id), Driver::get().dev(props_.loc_id).cfg.total_mem,
                    kPoolChunk >> 20);
      if (window_size_ < capacity_ && r <= capacity_)
        return fail(Errc::out_of_memory, "{}: {} bytes do not fit in the {} bytes of address space cuda-shim reserved "
                    "for {} (raise CUDA_SHIM_POOL_VA_MAX)", api, bytes, window_size_, describe());
      return fail(Errc::out_of_memory, "{}: {} bytes requested from {}: no free range of {} bytes within its capacity "
                  "of {} bytes ({} bytes in live allocations; frees other streams have not finished count as in use{})",
                  api, bytes, describe(), r, capacity_, used_,
                  reuse_internal() ? "" : ", and CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES is off");
    }
    out = window_ + at->off;
    take(at, r, bytes);
    if (checking()) verify("alloc");
  }
  // Stream order: the allocating stream now waits for the frees it reuses.
  for (auto& d : deps) s.add_dep(d.stream, d.seq, d.stream->clock());
  if (!deps.empty()) s.enqueue(nullptr, std::move(deps), true);
  return Errc::success;
}

Errc Pool::free_async(uintptr_t p, Stream& s, const char* api) {
  bool retire = false;
  if (imported_) {
    Errc e = free_imported(p, api, retire);
    if (retire) AddressSpace::get().remove_base(window_, [&](const Range& r) { return r.pool.get() == this; });
    return e;
  }
  {
    Held lk(m_);
    PoolBlock* b = window_ && p - window_ < window_size_ ? take_live(p - window_) : nullptr;
    if (!b) return not_live(p, api, "free", false);
    used_ -= b->req;
    --live_;
    b->used = false;
    b->req = 0;
    // The free takes a position in the stream; until the host observes it, the bytes
    // stay busy (ReservedMemCurrent keeps them) and only some streams may reuse them.
    pend(b, entry_for(s), s.mark());
    // Parked: the treap keeps counting it as used (its summaries stand as they are).
    b->parked = true;
    parked_.push(b->off, b);
    if (!attention_ || !attn_.listed()) refresh_attention();  // listed already: nothing changes
    if (checking()) verify("free_async");
    retire = destroyed() && live_ == 0;
  }
  if (retire) AddressSpace::get().remove_base(window_, [&](const Range& r) { return r.pool.get() == this; });
  return Errc::success;
}

Errc Pool::free_now(uintptr_t p, const char* api) {
  bool retire = false;
  if (imported_) {
    Errc e = free_imported(p, api, retire);
    if (retire) AddressSpace::get().remove_base(window_, [&](const Range& r) { return r.pool.get() == this; });
    return e;
  }
  {
    std::lock_guard lk(m_);
    PoolBlock* b = window_ && p - window_ < window_size_ ? take_live(p - window_) : nullptr;
    if (!b)
      return fail(Errc::invalid_value, "{}: {:#x} lies in {} but is not the start of a live allocation", api, p,
                  describe());
    // Measured: cuMemFree of a stream-ordered allocation frees it, but UsedMemCurrent keeps
    // counting its bytes.
    --live_;
    b->used = false;
    b->req = 0;
    busy(b->off, b->size, false);
    fix_up(b);
    merge_settled(b);
    release_idle(release_threshold(), false);
    refresh_attention();
    if (checking()) verify("free_now");
    retire = destroyed() && live_ == 0;
  }
  if (retire) AddressSpace::get().remove_base(window_, [&](const Range& r) { return r.pool.get() == this; });
  return Errc::success;
}

bool Pool::lookup(uintptr_t p, PoolAlloc& out) const {
  std::lock_guard lk(m_);
  if (!window_ || p - window_ >= window_size_) return false;
  if (imported_) return lookup_imported(p, out);
  uintptr_t off = p - window_;
  const PoolBlock* b = t_find_le(root_, off);
  if (!b || !b->used || off - b->off >= b->req) return false;
  size_t c = off / kPoolChunk;
  out.base = window_ + b->off;
  out.size = b->req;
  out.buffer_id = b->buffer_id;
  out.chunk_base = window_ + c * kPoolChunk;
  out.chunk_id = chunk_id_[c];
  out.host = shadow_ + b->off;
  return true;
}

unsigned Pool::access(int dev) const {
  std::lock_guard lk(m_);
  if (dev < 0) return host_access_;
  return static_cast<size_t>(dev) < access_.size() ? access_[dev] : 0;
}

void Pool::set_access(int dev, unsigned flags) {
  std::lock_guard lk(m_);
  if (dev < 0) host_access_ = static_cast<uint8_t>(flags);
  else if (static_cast<size_t>(dev) < access_.size()) access_[dev] = static_cast<uint8_t>(flags);
}

uint64_t Pool::reserved_current() const {
  std::lock_guard lk(m_);
  return committed_ * kPoolChunk;
}
uint64_t Pool::reserved_high() const {
  std::lock_guard lk(m_);
  return reserved_high_;
}
uint64_t Pool::used_current() const {
  std::lock_guard lk(m_);
  return used_;
}
uint64_t Pool::used_high() const {
  std::lock_guard lk(m_);
  return used_high_;
}
void Pool::reset_reserved_high() {
  std::lock_guard lk(m_);
  reserved_high_ = committed_ * kPoolChunk;
}
void Pool::reset_used_high() {
  std::lock_guard lk(m_);
  used_high_ = used_;
}
void Pool::set_release_threshold(uint64_t v) {
  std::lock_guard lk(m_);
  threshold_.store(v, std::memory_order_relaxed);
  refresh_attention();
}

void Pool::trim_to(uint64_t keep) {
  std::lock_guard lk(m_);
  settle_observed();
  release_idle(keep, true);
  refresh_attention();
  if (checking()) verify("trim_to");
}

void Pool::after_sync() {
  std::lock_guard lk(m_);
  if (!attention_) return;
  settle_observed();
  release_idle(release_threshold(), false);
  refresh_attention();
  if (checking()) verify("after_sync");
}

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
    for (const PoolBlock* v = e->head; v; v = v->pnext) {
      if (v->tag != e.get() || v->used) bad("a stream's pending list holds a block that is not pending on it");
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

void Pool::mark_destroyed() {
  uintptr_t window = 0;
  {
    std::lock_guard lk(m_);
    destroyed_.store(true, std::memory_order_release);
    if (live_ == 0) window = window_;
  }
  if (window) AddressSpace::get().remove_base(window, [&](const Range& r) { return r.pool.get() == this; });
}

}  // namespace cuda_shim::mem
