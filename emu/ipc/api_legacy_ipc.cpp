// Driver entries: legacy CUDA IPC (cuIpcGetMemHandle / OpenMemHandle / CloseMemHandle and the
// event forms). A 64-byte handle names a record in the shared registry; the importer opens
// the exporter's memfd through /proc/<pid>/fd and checks its inode (platform/shareable.hpp), so a
// handle of freed memory or of an exited process can never open anything else.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/events.hpp"
#include "platform/memfd.hpp"
#include "core/stream.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Kind;
using mem::RangePtr;

constexpr uint32_t kMemMagic = 0x4d495343u;    // "CSIM"
constexpr uint32_t kEventMagic = 0x45495343u;  // "CSIE"

// Measured: a handle taken from an interior pointer is the allocation's handle (identical
// bytes) and opens at the allocation's base.
struct MemHandle {
  uint32_t magic, version;
  ipc::Token record;
  uint64_t size;
  // The exporter: measured on driver 580 (conformance test_ipc_kill_stress), a handle whose
  // exporter exited or was killed is CUDA_ERROR_INVALID_HANDLE, while one whose memory a live
  // exporter freed is CUDA_ERROR_INVALID_VALUE. The record may be swept already, so the handle
  // itself says who exported it.
  int32_t pid;
  uint32_t pad;
  uint64_t start;  // the exporter's start time (a reused pid is another process)
};
struct EventHandle {
  uint32_t magic, version;
  ipc::Token token;
};
static_assert(sizeof(MemHandle) <= sizeof(CUipcMemHandle) && sizeof(EventHandle) <= sizeof(CUipcEventHandle));
// Where a memory handle's fields sit in its 64 bytes. Measured (probe cases ipc.mem.
// peer_open_flipped_byte*): NVIDIA's driver ignores a flipped byte 0, 8 or 63 and refuses a
// flipped byte 32: the handle sits at its end, so byte 32 is the record that names the memory
// and nothing is read from the first bytes.
constexpr size_t kMemHandleAt = sizeof(CUipcMemHandle) - sizeof(MemHandle);
constexpr size_t kRecordAt = kMemHandleAt + offsetof(MemHandle, record);
static_assert(kMemHandleAt > 8 && kRecordAt <= 32 && 32 < kRecordAt + sizeof(ipc::Token), "byte 32 is the record's");

// This process's opened handles: opening one handle again returns the same mapping.
struct Opened {
  std::mutex m;
  std::unordered_map<uintptr_t, std::pair<ipc::Token, int>> by_base;  // base -> (record, opens)
};
Opened& opened() {
  static auto* o = new Opened();  // never destroyed: other threads may outlive main()
  return *o;
}
std::mutex g_export_m;  // one record per allocation, however many threads export it

// A legacy export's record goes with its allocation (mem::Range's destructor).
void withdraw_legacy(const ipc::Token& t) noexcept { ipc::withdraw(ipc::RecordKind::legacy_mem, t); }
[[maybe_unused]] const ev::Registration kWithdraw{mem::withdraw_export, &withdraw_legacy};
// An IPC event's registry slot goes back when its owner destroys it.
void unshare_event(uint64_t hi, uint64_t lo) noexcept { ipc::event_unshare(ipc::Token{hi, lo}); }
[[maybe_unused]] const ev::Registration kUnshare{ev::shared_event_destroyed, &unshare_event};

}  // namespace

Errc cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) noexcept {
  const char* api = "cuIpcGetMemHandle";
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));
  TRY(need(pHandle, api, "pHandle"));
  RangePtr r = AddressSpace::get().find(dptr);
  if (!r || r->kind != Kind::device || r->ipc_opened || r->external || !r->backing)
    return fail(Errc::invalid_value, "{}: {:#x} is {}; legacy IPC shares only cuMemAlloc/cudaMalloc memory (use "
                "cuMemPoolExportPointer for pool memory and cuMemExportToShareableHandle for cuMemCreate memory)",
                api, dptr,
                !r ? "not an allocation the driver knows" : r->ipc_opened ? "memory opened from another process's "
                "handle" : r->external ? "a buffer mapped from external memory (share the exporter's handle instead)"
                : fmt::format("{}", mem::kind_name(r->kind)));
  MemHandle h{kMemMagic, ipc::kLayoutVersion, {}, r->size, ::getpid(), 0, ipc::process_start(::getpid())};
  {
    std::lock_guard lk(g_export_m);
    if (r->ipc_export.zero()) {
      // Its first export moves the allocation out of the shared arena into a memfd of its own;
      // work in flight on its context must land first, or the move would lose it.
      if (!r->backing->shareable() && r->ctx) r->ctx->synchronize();
      int fd = -1;
      TRY(r->backing->shareable_fd(fd, api));
      ipc::FdInfo info = ipc::describe_fd(fd);
      ipc::Record rec;
      rec.kind = ipc::RecordKind::legacy_mem;
      rec.token = ipc::random_token();
      rec.fd = fd;
      rec.dev = info.dev;
      rec.ino = info.ino;
      rec.size = r->size;
      rec.device = r->ordinal;
      TRY(ipc::publish(rec, api));
      r->ipc_export = rec.token;
    }
    h.record = r->ipc_export;
  }
  std::memset(pHandle, 0, sizeof *pHandle);
  std::memcpy(reinterpret_cast<char*>(pHandle) + kMemHandleAt, &h, sizeof h);
  return Errc::success;
}

Errc cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) noexcept {
  const char* api = "cuIpcOpenMemHandle";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pdptr, api, "pdptr"));
  // Measured: 0 and 2 are refused, 3 is taken: the one flag there is must be among them.
  if (!(Flags & CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
    return fail(Errc::invalid_value, "{}: Flags {:#x}: must include CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS (0x1)", api,
                Flags);
  MemHandle h;
  std::memcpy(static_cast<void*>(&h), reinterpret_cast<const char*>(&handle) + kMemHandleAt, sizeof h);
  ipc::Record rec;
  const bool ours = h.magic == kMemMagic && h.version == ipc::kLayoutVersion;
  auto exporter_gone = [&] {
    return fail(Errc::invalid_handle, "{}: the handle's exporter (pid {}) exited or was killed, and its memory went "
                "with it", api, h.pid);
  };
  if (!ours || !ipc::lookup(ipc::RecordKind::legacy_mem, h.record, rec)) {
    TRY(ipc::reachable(Errc::invalid_value, api));  // e.g. another user's registry: say so
    if (ours && ipc::process_gone(h.pid, h.start)) return exporter_gone();
    return fail(Errc::invalid_value, "{}: the handle names no exported memory (never exported, freed by its "
                "exporter, or the bytes were altered)", api);
  }
  if (rec.pid == ::getpid())
    return fail(Errc::invalid_context, "{}: the handle was exported by this process; IPC handles open only in other "
                "processes (use the pointer itself here)", api);
  auto& o = opened();
  std::lock_guard lk(o.m);
  for (auto& [base, v] : o.by_base)
    if (v.first == h.record) {
      ++v.second;
      *pdptr = base;
      return Errc::success;
    }
  int fd = ipc::open_peer_object(rec.pid, rec.fd, rec.dev, rec.ino);
  // Its record is still there, yet its memory is not: the exporter is dead (not swept yet) or
  // dying (a killed process closes its descriptors before it ends: give it a moment), unless
  // it is still alive and its descriptors are out of reach.
  for (int i = 0; fd < 0 && i < 200; ++i) {
    if (ipc::process_gone(h.pid, h.start)) return exporter_gone();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (fd < 0)
    return fail(Errc::invalid_value, "{}: the exporting process (pid {}) no longer holds the memory", api, rec.pid);
  // The record is only as good as whoever wrote the registry: map nothing a holder could shrink
  // under this process (SIGBUS at the next copy), nor fewer bytes than the handle promises.
  struct stat st {};
  if (!size_sealed(fd) || ::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < rec.size) {
    ::close(fd);
    return fail(Errc::invalid_value, "{}: the exporter's object (pid {}, fd {}) is not a sealed memfd of at least the "
                "{} bytes its record names; the registry entry was not written by the driver", api, rec.pid, rec.fd,
                rec.size);
  }
  Errc err = Errc::success;
  auto b = mem::Backing::adopt(fd, rec.size, mem::Backing::View::device, api, err);
  if (!b) return err;
  auto r = std::make_shared<mem::Range>();
  r->kind = Kind::device;
  r->ipc_opened = true;
  r->ordinal = ctx->ordinal();  // measured: the opening context's device
  r->ctx = ctx;
  r->base = b->user_address();
  r->size = rec.size;
  r->host = b->shadow();
  r->buffer_id = AddressSpace::get().next_buffer_id();
  r->backing = std::move(b);
  uintptr_t base = r->base;
  if (!AddressSpace::get().insert(std::move(r)))
    return fail(Errc::out_of_memory, "{}: the mapping overlaps a range the driver already knows", api);
  o.by_base[base] = {h.record, 1};
  *pdptr = base;
  return Errc::success;
}

Errc cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) noexcept {
  return api::cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

Errc cuIpcCloseMemHandle(CUdeviceptr dptr) noexcept {
  const char* api = "cuIpcCloseMemHandle";
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));
  auto& o = opened();
  std::lock_guard lk(o.m);
  RangePtr r = AddressSpace::get().find(dptr);
  // Measured: an address inside the mapping is refused; only the base cuIpcOpenMemHandle gave.
  auto it = r && r->ipc_opened && r->base == dptr ? o.by_base.find(r->base) : o.by_base.end();
  if (it == o.by_base.end())
    return fail(Errc::invalid_value, "{}: {:#x} is not an address cuIpcOpenMemHandle returned (an interior address, "
                "never opened, or closed already)", api, dptr);
  if (--it->second.second > 0) return Errc::success;
  o.by_base.erase(it);
  AddressSpace::get().remove_base(r->base, [&](const mem::Range& x) { return &x == r.get(); });
  return Errc::success;
}

Errc cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) noexcept {
  const char* api = "cuIpcGetEventHandle";
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));
  TRY(need(pHandle, api, "pHandle"));
  if (!event) return fail(Errc::invalid_value, "{}: event is NULL", api);  // measured: not INVALID_HANDLE
  auto ev = events().find(event);
  if (!ev) return fail(Errc::invalid_handle, "{}: {} is not a live event", api, static_cast<void*>(event));
  if (!(ev->flags() & CU_EVENT_INTERPROCESS))  // measured: INVALID_HANDLE
    return fail(Errc::invalid_handle, "{}: the event was created without CU_EVENT_INTERPROCESS (create it with "
                "CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING to share it)", api);
  {
    std::lock_guard lk(g_export_m);
    if (!ev->shared()) {
      ipc::Token t;
      uint64_t* words = nullptr;
      if (!ipc::event_share(t, words))
        return fail(Errc::out_of_memory, "{}: the shared registry has no room for another IPC event", api);
      ev->share(words, t.hi, t.lo, true);
    }
  }
  EventHandle h{kEventMagic, ipc::kLayoutVersion, ipc::Token{ev->token_hi(), ev->token_lo()}};
  std::memset(pHandle, 0, sizeof *pHandle);
  std::memcpy(pHandle, &h, sizeof h);
  return Errc::success;
}

Errc cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) noexcept {
  const char* api = "cuIpcOpenEventHandle";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(phEvent, api, "phEvent"));
  EventHandle h;
  std::memcpy(static_cast<void*>(&h), &handle, sizeof h);  // the handle bytes are a MemHandle/EventHandle
  uint64_t* words = nullptr;
  int owner = 0;
  if (h.magic != kEventMagic || h.version != ipc::kLayoutVersion || !ipc::event_open(h.token, words, owner)) {
    TRY(ipc::reachable(Errc::map_failed, api));  // e.g. another user's registry: say so
    return fail(Errc::map_failed, "{}: the handle names no shared event (never exported, destroyed by its "
                "exporter, or the bytes were altered; an exited exporter's event still opens until its "
                "registry slot is needed for a new one)", api);  // measured: MAP_FAILED
  }
  if (owner == ::getpid())
    return fail(Errc::invalid_context, "{}: the event was exported by this process; IPC event handles open only in "
                "other processes (use the event itself here)", api);
  auto ev = std::make_shared<Event>(CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, ctx);
  ev->share(words, h.token.hi, h.token.lo, false);
  *phEvent = static_cast<CUevent>(events().add_fresh(ev));
  return Errc::success;
}

}  // namespace cuda_shim::api
