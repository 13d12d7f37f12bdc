// The per-user registry segment shared by every process using the emulator: the process
// table, byte-handle exports (legacy IPC memory, fabric handles), the identity of objects
// exported as descriptors (identity.hpp) and IPC events. One Boost.Interprocess
// shared_memory_object (mode 0600), fixed-size tables of trivially copyable records, guarded
// by one process-shared robust pthread mutex: a peer killed while holding it hands it over
// (EOWNERDEAD) and the next holder sweeps the records of dead processes. Records are written
// whole before they are marked live, so a record half-written by a killed process is never read.
// Attached lazily (the first call that shares anything); the last process out removes it.
// CUDA_SHIM_REGISTRY=<name> picks another segment (tests run in isolation).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errc.hpp"
#include "platform/shareable.hpp"

namespace cuda_shim::ipc {

// 2: logical endpoint tables; 3: orphaned IPC events (kOrphan), legacy IPC handles name their
// exporter (pid and start time); 4: each process's device memory and contexts (usage.cpp); 5: up to 576 devices
// (core/limits.hpp); 6: object records, the identity of what POSIX-fd exports hand out (identity.hpp)
constexpr uint32_t kLayoutVersion = 8;

// Kinds of registry records.
enum class RecordKind : uint32_t {
  legacy_mem = 1,  // cuIpcGetMemHandle
  fabric = 2,      // CU_MEM_HANDLE_TYPE_FABRIC exports (pool or VMM object)
  object = 3,      // an object a POSIX fd was exported of: its inode (identity.hpp); outlives its exporter
};

// A record as callers see it (a copy of the shared one).
struct Record {
  RecordKind kind = RecordKind::legacy_mem;
  Token token;          // the handle's identity (what the 64 bytes carry)
  Token object;         // the memfd object's token (shareable.hpp)
  int pid = 0;          // exporter
  int fd = -1;          // exporter's descriptor of the object (opened via /proc)
  uint64_t dev = 0, ino = 0;
  uint64_t offset = 0;  // where the exported memory starts in the object
  uint64_t size = 0;
  int device = 0;       // device ordinal the memory belongs to
  int channel = -1;     // IMEX channel of the exporter (fabric)
  ObjectKind what = ObjectKind::pool;  // object records: what the object holds
  uint64_t seq = 0;     // object records: publish order (the oldest no longer held go first)
};

// Publishes r (its pid is filled in); fails with OUT_OF_MEMORY when the table is full or
// the segment cannot be attached (explained).
Errc publish(Record& r, const char* api);
// The live record with this token and kind, whose exporter is alive. False otherwise.
bool lookup(RecordKind kind, const Token& token, Record& out);
// Success when this process can use the registry segment; otherwise `code`, explained with why
// the segment cannot be attached (e.g. it belongs to another user: mode 0600 keeps them out).
Errc reachable(Errc code, const char* api);
// Withdraws this process's record with that token (no-op when absent).
void withdraw(RecordKind kind, const Token& token) noexcept;

// IMEX emulation. A process holds channel n when CUDA_SHIM_IMEX_CHANNEL=n; processes on the
// same channel form one IMEX domain. CUDA_SHIM_IMEX_DAEMON=not_ready simulates a daemon that
// is not running (CUDA_ERROR_SYSTEM_NOT_READY). Returns success and the channel, or the
// driver's code for fabric memory on a machine without a channel (NOT_PERMITTED), explained.
Errc imex_channel(const char* api, int& channel);

// Fabric handles (CU_MEM_HANDLE_TYPE_FABRIC, 64 bytes): exports object fd (kind checked by the
// importer) for this process's IMEX domain.
Errc fabric_export(int fd, const FdInfo& info, int device, unsigned char out[64], const char* api);
// Opens the object a fabric handle names (caller owns the returned fd); NOT_PERMITTED from
// another IMEX domain or without a channel; INVALID_VALUE for a handle nobody exported.
Errc fabric_import(const unsigned char h[64], int& out_fd, FdInfo& info, const char* api);
// Withdraws every fabric record of this process for object `object` (the object died).
void fabric_withdraw(const Token& object) noexcept;

// IPC events: a slot of the segment holding two counters, [0] records issued and [1] the
// highest record completed, shared by the exporter and every importer of the event.
// event_share allocates one for this process (false when the table is full); event_open finds
// the slot with that token, live or orphaned (its exporter exited or was killed: it still
// opens, as on driver 580); event_unshare frees this process's slot.
bool event_share(Token& token, uint64_t*& words);
bool event_open(const Token& token, uint64_t*& words, int& owner_pid);
void event_unshare(const Token& token) noexcept;

// Process identity for handles that name their exporter: the start time of pid (0 when it is
// gone), and whether the process (pid, start) has ended (a reused pid is another process; a
// zombie has ended).
uint64_t process_start(int pid) noexcept;
bool process_gone(int pid, uint64_t start) noexcept;

// Diagnostics (`cuda-shim ipc`, tests): the segment's name and a one-line-per-record dump.
std::string segment_name();
std::string dump();
// Removes segments of this user whose processes are all dead (`cuda-shim gc`); returns
// what was removed, one line each.
std::string collect_garbage();
// cuShimRegistryCheck: takes the lock (attaching first), sweeps the dead, then verifies every
// invariant of the shared layout. Returns the number of problems, one line each in `report`;
// -1 (and the reason) when no segment can be attached.
int check(std::string& report);

}  // namespace cuda_shim::ipc
