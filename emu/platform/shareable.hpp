// Shareable memory objects: how memory made by this emulator travels between processes.
//  - Every shareable object is one memfd. Its name says what it is ("cuda-shim:<kind>:
//    <token>:<fields>"), so a POSIX-fd handle is self-describing: an importer that was handed
//    the fd (SCM_RIGHTS) learns the object's kind, properties and identity from the fd alone,
//    even after the exporter died, as a real driver's fd keeps its allocation alive. A name
//    can be copied, so imports also prove the object's identity (identity.hpp).
//  - Byte handles (legacy IPC, fabric) cannot carry an fd: they name a record in the shared
//    registry (ipc/registry.hpp) holding the exporter's pid and fd number; the importer opens
//    the object through /proc/<pid>/fd/<n> and checks the inode, so a stale record can never
//    open another object.
// Identity is a 128-bit random token (getrandom), never a counter: handles cannot be guessed.
// A platform facility (memory, vmm, ipc and external all make such objects); its names keep
// the ipc:: namespace they were born in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim::ipc {

struct Token {
  uint64_t hi = 0, lo = 0;
  bool zero() const { return hi == 0 && lo == 0; }
  friend bool operator==(const Token&, const Token&) = default;
};
Token random_token() noexcept;
std::string to_hex(const Token& t);
bool from_hex(const std::string& s, Token& out);

// What a memfd of ours holds.
enum class ObjectKind : uint8_t {
  pool,        // a memory pool's whole window (fields: loc_type, loc_id, handle_types, alloc_type, capacity)
  vmm,         // a cuMemCreate allocation (fields: the CUmemAllocationProp that matters)
  semaphore,   // an exportable semaphore standing in for another API's (fields: timeline 0/1)
};
const char* object_kind_name(ObjectKind k) noexcept;

// Creates a memfd of `size` bytes named for (kind, token, fields). fields are short
// decimal/hex words without ':'; they come back in describe_fd's order. -1 with errno on failure.
int create_object(ObjectKind kind, const Token& token, const std::vector<uint64_t>& fields, size_t size) noexcept;

// What an fd handed to the emulator is.
struct FdInfo {
  enum class What {
    bad_fd,        // not an open descriptor (-1, closed)
    not_memfd,     // a socket, /dev/null, a regular file...
    foreign_memfd, // a memfd no exporter of ours produced (its name is in `name`)
    ours,          // one of our objects: kind, token, fields, size are set
  } what = What::bad_fd;
  std::string name;  // the memfd's name without "memfd:" (foreign and ours)
  bool forged = false;  // foreign_memfd named like one of ours, but not one of them (forged_why)
  std::string forged_why;  // why not, worded to follow "named like an export, but"
  ObjectKind kind = ObjectKind::pool;
  Token token;
  std::vector<uint64_t> fields;
  uint64_t size = 0;  // st_size
  uint64_t dev = 0, ino = 0;
  uint32_t uid = 0;  // st_uid: the user whose process made it
};
// What fd is, from its name and seals alone: enough for the emulator's own descriptors. What
// an import is handed needs describe_import (identity.hpp), which also proves its identity.
FdInfo describe_fd(int fd) noexcept;

// Opens, in this process, object `ino` that process `pid` holds as descriptor `fd_number`
// (through /proc/<pid>/fd). -1 when the process or descriptor is gone or is another object.
int open_peer_object(int pid, int fd_number, uint64_t dev, uint64_t ino) noexcept;

// Maps `len` bytes of object fd at offset `off` read-write; null on failure. With `at`,
// MAP_FIXED over that (reserved) address.
void* map_object(int fd, size_t off, size_t len, void* at = nullptr) noexcept;

}  // namespace cuda_shim::ipc
