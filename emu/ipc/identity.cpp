#include "ipc/identity.hpp"

#include "ipc/segment.hpp"

namespace cuda_shim::ipc {
using namespace seg;

namespace {
// The registry, or null (and no explanation left behind: the caller's call goes on).
Segment* segment(const char* api) {
  Errc e = Errc::success;
  Segment* s = Segment::get(e, api);
  if (!s) clear_explanation();
  return s;
}
}  // namespace

Errc vouch(int fd, const char* api) {
  FdInfo info = describe_fd(fd);
  if (info.what != FdInfo::What::ours) return Errc::success;
  Segment* s = segment(api);
  if (!s) return Errc::success;
  Segment::Lock lk(*s);
  if (RecordSlot* r = s->find(RecordKind::object, info.token)) {
    if (r->rec.dev == info.dev && r->rec.ino == info.ino) return Errc::success;  // vouched for already
    s->retire(*r);  // another object under this token is no export of its: this one is
  }
  Record r;
  r.kind = RecordKind::object;
  r.token = r.object = info.token;
  r.pid = ::getpid();
  r.fd = fd;
  r.dev = info.dev;
  r.ino = info.ino;
  r.size = info.size;
  r.what = info.kind;
  r.seq = ++s->L()->h.object_seq;
  return s->insert(r, api);
}

FdInfo describe_import(int fd) noexcept {
  FdInfo info = describe_fd(fd);
  if (info.what != FdInfo::What::ours) return info;
  try {
    auto forged = [&](std::string why) {
      info.what = FdInfo::What::foreign_memfd;
      info.forged = true;
      info.forged_why = std::move(why);
    };
    // Another user's object is never one of this user's exports, and this user's registry,
    // which no other user can write, cannot vouch for it.
    if (info.uid != ::getuid()) {
      forged(fmt::format("it was made by uid {} and this process runs as uid {}: imports take only objects "
                         "that this user's processes exported", info.uid, ::getuid()));
      return info;
    }
    Segment* s = segment("import");
    if (!s) return info;
    bool found = false;
    Record r;
    {
      Segment::Lock lk(*s);
      if (RecordSlot* slot = s->find(RecordKind::object, info.token)) {
        found = true;
        r = slot->rec;
      }
    }
    if (!found)
      forged(fmt::format("no process of this user exported it (the registry /dev/shm/{} holds no record of object "
                         "{}): a process made it and copied an export's name, or it was never exported",
                         s->name(), to_hex(info.token).substr(0, 8)));
    else if (r.dev != info.dev || r.ino != info.ino)
      forged(fmt::format("it is not the object exported under that name (inode {}; the export, by pid {}, is inode "
                         "{}): another process made it and copied the name, size and seals", info.ino, r.pid, r.ino));
  } catch (...) {
  }
  return info;
}

}  // namespace cuda_shim::ipc
