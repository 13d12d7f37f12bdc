// `cuda-shim gc` (cuShimCollectGarbage): what this user's registry may be, checked without
// attaching it, and removed when it cannot be trusted or serves nobody.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "ipc/registry_name.hpp"
#include "ipc/segment.hpp"

namespace cuda_shim::ipc {
using namespace seg;

namespace {

// Why this user's segment `path` (a regular file, mode 0600) cannot be used, or empty when it is
// a registry of this layout; `pids` gets the processes it names as live.
std::string unusable(const std::string& path, const struct stat& st, std::vector<int>& pids, bool& busy) {
  if (static_cast<size_t>(st.st_size) < sizeof(Header))
    return fmt::format("{} bytes, shorter than a registry's header: a creator killed half-way, or no registry",
                       st.st_size);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fmt::format("unreadable ({})", std::strerror(errno));
  const size_t len = std::min(static_cast<size_t>(st.st_size), sizeof(Layout));
  void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return fmt::format("cannot be mapped ({})", std::strerror(errno));
  const auto* l = static_cast<const Layout*>(m);
  std::string why;
  if (l->h.magic != kMagic)
    why = fmt::format("no cuda-shim registry (magic {:#x}, expected {:#x})", l->h.magic, kMagic);
  else if (l->h.version != kLayoutVersion)
    why = fmt::format("a registry of layout version {}, which this build (layout {}) cannot read", l->h.version,
                      kLayoutVersion);
  else if (l->h.size != sizeof(Layout) || len < sizeof(Layout) || l->h.ready != 1)
    why = fmt::format("a registry that is corrupt or half-made ({} bytes, header size {}, ready {})", st.st_size,
                      l->h.size, l->h.ready);
  else
    for (auto& p : l->procs)
      if (p.state == kLive) {
        pids.push_back(p.pid);
        busy = busy || alive(p.pid, p.start);
      }
  ::munmap(m, len);
  return why;
}

}  // namespace

std::string collect_garbage() {
  const uid_t me = ::getuid();
  const std::string base = fmt::format("cuda-shim-{}", me);
  const char* env = std::getenv("CUDA_SHIM_REGISTRY");
  const std::string env_name = env && *env ? (env[0] == '/' ? env + 1 : env) : "";
  std::string out;
  auto note = [&](const std::string& path, const std::string& what, const std::string& done) {
    out += path + ": " + what + "; " + done + "\n";
  };
  auto remove = [](const std::string& path, bool dir) {
    if ((dir ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) == 0) return std::string("removed");
    return fmt::format("cannot remove it ({})", std::strerror(errno));
  };
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* ent = ::readdir(d)) {
      const std::string n = ent->d_name, path = "/dev/shm/" + n;
      if (n.rfind("cuda-shim-", 0) != 0) continue;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (st.st_uid != me) {
        // Another user's own registry is none of this user's business; one under a name this
        // user's processes would use is squatted (registry_name.hpp): they use another name.
        if (own_registry_name(n, base) || n == env_name)
          note(path, fmt::format("squatted: {} of uid {} (mode {:o}) under a registry name of this user's",
                                 file_type(st.st_mode), st.st_uid, st.st_mode & 0777),
               n == env_name ? "cannot remove it (only its owner or root can); CUDA_SHIM_REGISTRY names it, so pick "
                               "another name"
                             : "cannot remove it (only its owner or root can); this user's processes keep a name of "
                               "their own in a private directory instead");
        continue;
      }
      // Anything else of this user's that cannot be used goes once it has not changed for a
      // minute (a creator may be half-way; a segment's mtime is its creation: mapped writes
      // do not change it).
      const bool settled = ::time(nullptr) - st.st_mtime > 60;
      const std::string later = "left for now: changed in the last minute";
      if (!S_ISREG(st.st_mode)) {
        note(path, fmt::format("{}, not a registry segment", file_type(st.st_mode)),
             settled ? remove(path, S_ISDIR(st.st_mode)) : later);
        continue;
      }
      if (st.st_mode & 077) {
        note(path, fmt::format("mode {:o}, not 0600: other users could have written it, so no process attaches it",
                               st.st_mode & 0777),
             settled ? remove(path, false) : later);
        continue;
      }
      std::vector<int> pids;
      bool busy = false;
      if (std::string why = unusable(path, st, pids, busy); !why.empty()) {
        note(path, why, settled ? remove(path, false) : later);
        continue;
      }
      if (busy) continue;  // in use
      std::string who = "no process";
      if (!pids.empty()) {
        who = "processes that exited or were killed (pid";
        for (size_t i = 0; i < pids.size() && i < 8; ++i) who += (i ? ", " : " ") + std::to_string(pids[i]);
        who += pids.size() > 8 ? ", ...)" : ")";
      }
      note(path, "a registry segment of " + who, remove(path, false));
    }
    ::closedir(d);
  }
  for (const std::string& dir : private_registry_dirs()) out += collect_private_dir(dir, base);
  return out;
}

}  // namespace cuda_shim::ipc
