// Proof that a descriptor handed to an import IS the object its exporter exported. A memfd's
// name can be read by any process of the user (readlink of /proc/<pid>/fd/<n>) and copied onto
// a fresh memfd of the right size and seals; its inode cannot: the kernel numbers every memfd
// anew. So the first POSIX-fd export of an object records its (st_dev, st_ino) in the registry
// (an object record, mode 0600: only this user's processes write it), and an import compares
// them with fstat() of what it was given. The record outlives its exporter, as the descriptors
// handed out keep the object alive; it goes with the segment (the user's last process out) or,
// when the table fills up, once its exporter no longer holds the object, oldest first.
#pragma once
#include "core/errc.hpp"
#include "platform/shareable.hpp"

namespace cuda_shim::ipc {

// Records the object behind fd (this process's own descriptor of one of its objects, kept
// open while it holds the object) as exported by this process; again for the same object is a
// no-op. Success without a record when the registry cannot be attached (importers that cannot
// attach it either check seals, size and owner only); OUT_OF_MEMORY, explained, when its table
// is full.
Errc vouch(int fd, const char* api);

// describe_fd, then, for one of our objects, the proof: made by this user (st_uid), and the
// very object a record vouches for. One that fails is foreign_memfd, forged, with forged_why.
// Without a registry to ask (it cannot be attached) the owner, seals and size are all that is
// checked.
FdInfo describe_import(int fd) noexcept;

}  // namespace cuda_shim::ipc
