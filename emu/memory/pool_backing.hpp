// Where a pool's window lives.
//  - An exportable pool (handleTypes POSIX_FD or FABRIC) owns one memfd named for the pool
//    (platform/shareable.hpp): that descriptor is what an export hands out and what an importer maps.
//  - Every other pool takes its window from a range of a large sparse memfd shared by this
//    process's pools, so it costs no descriptor: a descriptor per pool stopped programs at
//    about a thousand pools under the common `ulimit -n 1024` (and at the hard limit past
//    that), where a GPU has no such limit.
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

}  // namespace cuda_shim::mem
