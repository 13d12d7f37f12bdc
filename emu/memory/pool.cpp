// The stream-ordered allocator: placement, reuse across streams, chunk accounting, frees.
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
#include "memory/address_space.hpp"
#include "memory/pool_blocks.hpp"
#include "memory/strict.hpp"

namespace cuda_shim::mem {

using namespace pool_detail;

namespace {

std::atomic<uint64_t> g_next_chunk_id{1};

}  // namespace

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
// May throw (the list grows) before it changes anything; free_async makes room first.
inline void Pool::pend(PoolBlock* b, StreamEntry& e, uint64_t seq) {
  if (e.list.size() >= 2 * e.count + 64) [[unlikely]]
    compact(e);
  e.list.push_back(b);
  b->tag = &e;
  b->seq = seq;
  b->pidx = static_cast<uint32_t>(e.list.size() - 1);  // a list of 2^32 blocks cannot exist
  ++e.count;
  ++pending_;
}

inline void Pool::unpend(PoolBlock* b) {
  auto* e = static_cast<StreamEntry*>(b->tag);
  e->list[b->pidx] = nullptr;
  b->tag = nullptr;
  if (--e->count == 0) e->list.clear();
  --pending_;
}

// Drops the null slots (never while settle_observed walks the list: only pend compacts).
void Pool::compact(StreamEntry& e) {
  size_t n = 0;
  for (PoolBlock* b : e.list)
    if (b) {
      b->pidx = static_cast<uint32_t>(n);
      e.list[n++] = b;
    }
  e.list.resize(n);
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
    for (size_t i = 0; i < e->list.size(); ++i)  // settling clears the list with its last block
      if (PoolBlock* b = e->list[i]; b && b->seq <= seen) settle(b);
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
  if (strict::maybe()) [[unlikely]] {
    // The general path places exactly as the fast one below; strict mode books the result.
    Errc e = alloc_slow(bytes, s, api, out);
    if (e == Errc::success) strict::on_alloc(*this, out, bytes, round_up(bytes, kPoolAlign), s);
    return e;
  }
  // The common case first, before anything the general path sets up: the lowest parked free
  // fits exactly and s may reuse it (the same conditions as the fast path below).
  if (!imported_ && bytes <= capacity_ && bytes <= SIZE_MAX - kPoolAlign) [[likely]] {
    std::lock_guard lk(m_);
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
    std::lock_guard lk(m_);
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
    std::lock_guard lk(m_);
    StreamEntry& e = entry_for(s);
    if (e.list.size() == e.list.capacity()) [[unlikely]]  // pend below cannot throw
      e.list.reserve(std::max<size_t>(16, 2 * e.list.size()));
    PoolBlock* b = window_ && p - window_ < window_size_ ? take_live(p - window_) : nullptr;
    if (!b) return not_live(p, api, "free", false);
    used_ -= b->req;
    --live_;
    b->used = false;
    b->req = 0;
    // The free takes a position in the stream; until the host observes it, the bytes
    // stay busy (ReservedMemCurrent keeps them) and only some streams may reuse them.
    // Watched: the host observing this position makes the bytes reusable by any stream.
    pend(b, e, s.mark(/*watch=*/true));
    // Parked: the treap keeps counting it as used (its summaries stand as they are).
    b->parked = true;
    parked_.push(p - window_, b);  // == b->off
    // Under the lock: no other thread can reuse the range before strict mode has it on record.
    if (strict::maybe()) [[unlikely]]
      strict::on_free(*this, p, shadow_ + b->off, b->size, s, b->seq);
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
    if (strict::maybe()) [[unlikely]]
      strict::on_free_now(p);
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

void Pool::mark_destroyed() {
  uintptr_t window = 0;
  {
    std::lock_guard lk(m_);
    destroyed_.store(true, std::memory_order_release);
    if (strict::maybe()) [[unlikely]]
      strict::on_destroy(*this);
    if (live_ == 0) window = window_;
  }
  if (window) AddressSpace::get().remove_base(window, [&](const Range& r) { return r.pool.get() == this; });
}

}  // namespace cuda_shim::mem
