#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/driver.hpp"
#include "memory/address_space.hpp"
#include "memory/pool_blocks.hpp"
#include "memory/strict.hpp"

// A pool's window: its address range, the memory behind it (pool_backing.hpp), and the pool's
// construction and teardown around them.
namespace cuda_shim::mem {

using namespace pool_detail;

const bool pool_detail::g_checking = [] {
  const char* e = std::getenv("CUDA_SHIM_CHECK_POOLS");
  return e && *e && *e != '0';
}();

namespace {

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

size_t pool_window_cap() { return window_cap(); }

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
  if (strict::maybe()) [[unlikely]]
    strict::on_pool_gone(*this);
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
  if (own_counted_) give_own_file();
  for (auto& e : streams_) e->s.reset();
}

std::shared_ptr<PoolFile> Pool::create_own_file(size_t len) const {
  // The memfd is named for the pool, so an exported descriptor describes the pool by itself.
  const int fd = ipc::create_object(ipc::ObjectKind::pool, token_,
                                    {uint64_t(props_.type), uint64_t(props_.loc_type),
                                     uint64_t(uint32_t(props_.loc_id)), props_.handle_types, capacity_},
                                    len);
  if (fd < 0) return nullptr;
  std::shared_ptr<PoolFile> f = own_pool_file(fd);
  if (!f) ::close(fd);  // errno stays ENOMEM
  return f;
}

Errc Pool::reserve_window(const char* api, bool for_export) {
  size_t len = static_cast<size_t>(std::min<uint64_t>(capacity_, window_cap()));
  PoolSpan span;
  bool own = false, counted = false;
  if (props_.handle_types != 0) {
    // Strict mode closes freed pages, which a later move would open again: its own file now.
    own = for_export || (strict::maybe() && strict::on());  // maybe(): also before the setting is read
    if (!own) own = counted = take_own_file();
  }
  if (own) {
    if (!(span.file = create_own_file(len))) {
      if (counted) give_own_file();
      return fail(Errc::out_of_memory, "{}: cannot create the {}-byte backing of {} ({})", api, len, describe(),
                  std::strerror(errno));
    }
  } else if (!carve_pool_span(len, span)) {
    return fail(Errc::out_of_memory, "{}: cannot create the {}-byte backing of {} ({})", api, len, describe(),
                std::strerror(errno));
  }
  if (Errc e = map_window(std::move(span), len, api); e != Errc::success) {
    if (counted) give_own_file();
    return e;
  }
  own_span_ = own;
  own_counted_ = counted;
  return Errc::success;
}

Errc Pool::map_window(PoolSpan span, size_t len, const char* api) {
  const int fd = span.file->fd();
  const off_t at = static_cast<off_t>(span.offset);
  void* w = reserve_aligned(len, kPoolChunk);
  if (!w) return fail(Errc::out_of_memory, "{}: cannot reserve {} bytes of address space for {}", api, len, describe());
  char* shadow = nullptr;
  // Strict mode closes freed pages of host-accessible pools to host code: copies then go
  // through a shadow of their own, as for device pools (strict.hpp).
  const bool own_shadow = device_located() || (strict::maybe() && strict::separate_shadow());
  if (own_shadow) {
    void* s = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, at);
    if (s == MAP_FAILED) {
      ::munmap(w, len);
      return fail(Errc::out_of_memory, "{}: cannot map the shadow of {} ({})", api, describe(), std::strerror(errno));
    }
    shadow = static_cast<char*>(s);
  }
  if (!device_located()) {
    // Host-accessible pools: the user's address is the memory itself.
    void* s = ::mmap(w, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, at);
    if (s == MAP_FAILED) {
      if (shadow) ::munmap(shadow, len);
      ::munmap(w, len);
      return fail(Errc::out_of_memory, "{}: cannot map {} ({})", api, describe(), std::strerror(errno));
    }
    if (!shadow) shadow = static_cast<char*>(s);
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

}  // namespace cuda_shim::mem
