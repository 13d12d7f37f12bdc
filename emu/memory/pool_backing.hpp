// Where a pool's window lives.
//  - An exported pool (handleTypes POSIX_FD or FABRIC) owns one memfd named for the pool
//    (platform/shareable.hpp): that descriptor is what an export hands out and what an importer maps.
//  - Every other pool takes its window from a range of a large sparse memfd shared by this
//    process's pools, so it costs no descriptor: a descriptor per pool stopped programs at
//    about a thousand pools under the common `ulimit -n 1024` (and at the hard limit past
//    that), where a GPU has no such limit.
//  - An exportable pool not exported yet owns its memfd from the start while the process holds
//    fewer such files than own_file_budget(); past that it starts in a shared range and moves
//    into a memfd of its own at its first export (pool_migrate.cpp), so 25,000 exportable pools
//    need no 25,000 descriptors.
// Ranges of a shared file are handed out once and never again: a range given back has its
// pages punched out (the memory returns to the system) and a new file starts when one is used
// up, so a mapping made elsewhere from the file (a logical endpoint's binding holds one) can
// never come to see another pool's memory. A file closes when its last pool is gone.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace cuda_shim::mem {

class PoolFile {
 public:
  explicit PoolFile(int fd) noexcept : fd_(fd) {}
  ~PoolFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  PoolFile(const PoolFile&) = delete;
  PoolFile& operator=(const PoolFile&) = delete;
  int fd() const noexcept { return fd_; }
  // The descriptor goes back to whoever handed it over; the file no longer closes it.
  void release() noexcept { fd_ = -1; }

 private:
  int fd_;
};

struct PoolSpan {
  std::shared_ptr<PoolFile> file;
  uint64_t offset = 0;  // of the window's first byte in the file
};

// A file of one pool's own from its descriptor (taken; on failure null, errno set, and the
// descriptor is still the caller's).
std::shared_ptr<PoolFile> own_pool_file(int fd) noexcept;

// A range of len bytes (a page multiple) of a shared file, never handed out before. False
// with errno set when no file could be made.
bool carve_pool_span(size_t len, PoolSpan& out) noexcept;

// Gives [off, off + len) of a file's pages back to the system (the range reads zeros after).
void punch_pool_span(const PoolFile& f, uint64_t off, size_t len) noexcept;

// Memfds that exportable pools own from the start: a quarter of the descriptor limit, at most
// 4096 (CUDA_SHIM_POOL_OWN_FILES overrides; 0: every exportable pool starts shared).
size_t own_file_budget() noexcept;
// Takes one of them (false: the budget is spent); give_own_file returns it.
bool take_own_file() noexcept;
void give_own_file() noexcept;

// The SIGSEGV handler's question (memory/managed.cpp): a write hit a pool's window while it
// moves into its own memfd (read-only meanwhile). Waits for the move and answers true, so
// the write runs again on the new memory; false for any other address. Async-signal-safe.
bool pool_move_fault(uintptr_t addr) noexcept;

}  // namespace cuda_shim::mem
