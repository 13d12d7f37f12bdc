// Pools across processes (the Pool members that export and import; beside the rest of pool IPC
// in ipc/): the exporter's side (its descriptor, cuMemPoolExportPointer) and the
// importer's (mapping the exporter's memory, cuMemPoolImportPointer and the imports' frees).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ipc/registry.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"
#include "memory/strict.hpp"

namespace cuda_shim::mem {

namespace {
// cuMemPoolExportPointer's 64 bytes: which pool (its token), where the allocation lies in the
// pool's memory, and a check word keyed by the pool's token. The real driver does not ask
// whether the allocation is still live (measured: importing the data of an allocation the
// exporter freed succeeds), so neither does this: the data is self-contained and checked.
struct PtrExport {
  uint32_t magic;  // "CSPX"
  uint32_t version;
  ipc::Token pool;
  uint64_t offset;
  uint64_t size;
  uint64_t buffer_id;
  uint64_t check;
};
static_assert(sizeof(PtrExport) <= sizeof(CUmemPoolPtrExportData));
constexpr uint32_t kPtrMagic = 0x58505343u;

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Keyed by the pool's token. Three independent products and one finalizer (splitmix64's): the
// check costs a few cycles on the import path, and any change to one field changes the word.
uint64_t check_word(const ipc::Token& pool, uint64_t off, uint64_t size, uint64_t id) {
  uint64_t x = ((off ^ pool.lo) * 0x9E3779B97F4A7C15ull) ^ rotl((size ^ pool.hi) * 0xC2B2AE3D27D4EB4Full, 21) ^
               rotl((id ^ rotl(pool.lo, 32)) * 0x165667B19E3779F9ull, 42) ^ pool.hi;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

Errc Pool::backing_fd(int& fd, uint64_t& offset, const char* api) {
  std::lock_guard lk(m_);
  const bool exportable = props_.handle_types != 0 && !imported_;
  if (!window_) {
    if (Errc e = reserve_window(api, exportable); e != Errc::success) return e;
  } else if (exportable && !owns_file()) {
    // Past the budget of files (pool_backing.hpp): the export hands out a memfd of its own.
    if (Errc e = move_to_own_file(api); e != Errc::success) return e;
  }
  // A shared file's range handed out stays as it is when the pool goes (pool_backing.hpp).
  if (!owns_file()) span_kept_ = true;
  fd = span_.file->fd();
  offset = span_.offset;
  return Errc::success;
}

void Pool::mark_exported() {
  const bool first = !exported_.exchange(true, std::memory_order_acq_rel);
  if (strict::maybe()) [[unlikely]]
    if (first) strict::on_export(*this);
}

Errc Pool::export_fd(int& fd, const char* api) {
  if (!imported_ && props_.handle_types == 0)  // callers check the handle types first
    return fail(Errc::invalid_value, "{}: {} was created without shareable handle types", api, describe());
  int own = -1;
  uint64_t offset = 0;
  TRY(backing_fd(own, offset, api));
  // Measured: the driver's exported descriptor does not have FD_CLOEXEC set.
  fd = ::fcntl(own, F_DUPFD, 0);
  if (fd < 0)
    return fail(Errc::out_of_memory, "{}: cannot duplicate the descriptor of {} ({})", api, describe(),
                std::strerror(errno));
  mark_exported();
  return Errc::success;
}

Errc Pool::export_pointer(uintptr_t p, unsigned char out[64], const char* api) {
  PtrExport x{};
  {
    std::lock_guard lk(m_);
    size_t req = 0;
    uint64_t id = 0;
    if (!live_start(p, req, id)) return not_live(p, api, "export", true);
    // Measured (H200): pointers are exportable only once the pool itself was exported.
    if (!exported_.load(std::memory_order_acquire))
      return fail(Errc::invalid_value, "{}: {} has not been exported yet; export the pool with "
                  "cuMemPoolExportToShareableHandle before exporting its pointers", api, describe());
    x.magic = kPtrMagic;
    x.version = ipc::kLayoutVersion;
    x.pool = token_;
    x.offset = p - window_;
    x.size = req;
    x.buffer_id = id;
    x.check = check_word(token_, x.offset, x.size, x.buffer_id);
  }
  std::memset(out, 0, sizeof(CUmemPoolPtrExportData));
  std::memcpy(out, &x, sizeof x);
  return Errc::success;
}

Errc Pool::attach_import(int fd, const ipc::Token& token, const char* api) {
  std::lock_guard lk(m_);
  imported_ = true;
  token_ = token;
  size_t len = static_cast<size_t>(std::min<uint64_t>(capacity_, pool_window_cap()));
  // Every byte of the window must exist in the object: a shorter one (made to look like an
  // export) would kill this process with SIGBUS at the first access beyond its end.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < len)
    return fail(Errc::unknown, "{}: the descriptor's object holds {} bytes, fewer than the {} of {}'s window: no "
                "driver exported it", api, static_cast<long long>(st.st_size), len, describe());
  PoolSpan span;
  if (!(span.file = own_pool_file(fd)))
    return fail(Errc::out_of_memory, "{}: out of memory importing {}", api, describe());
  Errc e = map_window(span, len, api);
  if (e != Errc::success) span.file->release();  // the caller still closes fd
  else own_span_ = true;
  return e;
}

Errc Pool::import_pointer(const unsigned char data[64], uintptr_t& out, const char* api) {
  PtrExport x;
  std::memcpy(&x, data, sizeof x);
  if (x.magic != kPtrMagic || x.version != ipc::kLayoutVersion)
    return fail(Errc::invalid_value, "{}: shareData is not what cuMemPoolExportPointer produced", api);
  if (!(x.pool == token_))
    return fail(Errc::invalid_value, "{}: shareData was exported from another pool than {}; import it into the pool "
                "imported from that pool's handle", api, describe());
  if (x.check != check_word(token_, x.offset, x.size, x.buffer_id))
    return fail(Errc::invalid_value, "{}: shareData was altered after cuMemPoolExportPointer produced it", api);
  std::lock_guard lk(m_);
  if (x.offset >= window_size_ || x.size == 0 || x.size > window_size_ - x.offset)
    return fail(Errc::invalid_value, "{}: shareData names bytes beyond {}", api, describe());
  bool fresh = false;
  ImportTable::Entry* e = imports_.emplace(x.offset, x.size, 0, fresh);
  if (!fresh) {
    // Measured: a device pool's pointer imported again is the same mapping (one free frees
    // it); a host-located pool's is refused.
    if (host_located())
      return fail(Errc::already_mapped, "{}: the allocation at {:#x} of {} is imported already", api,
                  window_ + x.offset, describe());
    out = window_ + x.offset;
    return Errc::success;
  }
  e->buffer_id = (uint64_t(1) << 62) | ((handle_ >> 8) << 36) | ++next_buffer_;
  ++live_;
  out = window_ + x.offset;
  if (strict::maybe()) [[unlikely]]
    strict::on_import(*this, out, x.size);
  return Errc::success;
}

Errc Pool::free_imported(uintptr_t p, const char* api, bool& retire) {
  std::lock_guard lk(m_);
  if (!window_ || p - window_ >= window_size_ || !imports_.erase(p - window_))
    return fail(Errc::invalid_value, "{}: {:#x} lies in {} but is not an imported allocation's start (freed already, "
                "or never imported)", api, p, describe());
  --live_;
  if (strict::maybe()) [[unlikely]]
    strict::on_free_now(p);
  retire = destroyed() && live_ == 0;
  return Errc::success;
}

bool Pool::lookup_imported(uintptr_t p, PoolAlloc& out) const {
  uintptr_t off = p - window_;
  const ImportTable::Entry* e = imports_.containing(off);
  if (!e) return false;
  size_t c = off / kPoolChunk;
  out.base = window_ + e->off;
  out.size = e->size;
  out.buffer_id = e->buffer_id;
  out.chunk_base = window_ + c * kPoolChunk;
  out.chunk_id = 0;
  out.host = shadow_ + e->off;
  return true;
}

}  // namespace cuda_shim::mem
