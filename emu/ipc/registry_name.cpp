#include "ipc/registry_name.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace cuda_shim::ipc {
namespace {

// A file in /dev/shm that another user owns (absent or ours: false).
bool squatted(const std::string& name) {
  struct stat st {};
  return ::lstat(("/dev/shm/" + name).c_str(), &st) == 0 && st.st_uid != ::getuid();
}

// A directory that is this user's alone (made when missing).
bool private_dir_ok(const std::string& dir) {
  if (dir.empty()) return false;
  ::mkdir(dir.c_str(), 0700);
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && !(st.st_mode & 077);
}

std::string random_name(const std::string& base) {
  unsigned char r[16];
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = ::getrandom(r + got, sizeof r - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    got += static_cast<size_t>(n);
  }
  std::string s = base + "-";
  char h[3];
  for (unsigned char c : r) {
    std::snprintf(h, sizeof h, "%02x", c);
    s += h;
  }
  return s;
}

// The kept name, if the file holds one that starts with base.
std::string read_kept(const std::string& file, const std::string& base) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() != base.size() + 33 || s.compare(0, base.size() + 1, base + "-") != 0) return {};
  for (size_t i = base.size() + 1; i < s.size(); ++i)
    if (!std::strchr("0123456789abcdef", s[i])) return {};
  return s;
}

// Writes name as the kept one. exclusive: only if none is kept yet (the first writer wins and
// every other process reads its name); otherwise replaces it atomically.
bool keep(const std::string& file, const std::string& name, bool exclusive) {
  std::string tmp = exclusive ? file : file + ".new." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  std::string text = name + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!exclusive) ok = ok && ::rename(tmp.c_str(), file.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

}  // namespace

std::string resolve_registry_name(const std::string& base, const std::string& private_dir, std::string& why) {
  why.clear();
  if (!squatted(base)) return base;
  if (!private_dir_ok(private_dir)) {
    why = "/dev/shm/" + base + " belongs to another user, and there is no private directory (" +
          (private_dir.empty() ? std::string("$XDG_RUNTIME_DIR and $HOME unset") : private_dir) +
          ", mode 0700) to keep a name of this user's own in";
    return base;
  }
  const std::string file = private_dir + "/registry-name";
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::string kept = read_kept(file, base);
    if (!kept.empty() && !squatted(kept)) {
      why = "/dev/shm/" + base + " belongs to another user; this user's registry is /dev/shm/" + kept;
      return kept;
    }
    std::string fresh = random_name(base);
    if (fresh.empty()) break;
    keep(file, fresh, kept.empty());  // a racing process may win: the loop reads what was kept
  }
  why = "/dev/shm/" + base + " belongs to another user, and no name of this user's own could be kept in " + file;
  return base;
}

std::string private_registry_dir() {
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) {
    std::string d = std::string(x) + "/cuda-shim";
    if (private_dir_ok(d)) return d;
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    std::string cache = std::string(h) + "/.cache";
    ::mkdir(cache.c_str(), 0700);
    std::string d = cache + "/cuda-shim";
    if (private_dir_ok(d)) return d;
  }
  return {};
}

}  // namespace cuda_shim::ipc

namespace cuda_shim::ipc {
namespace {

std::string line(const std::string& path, const std::string& what, const std::string& done) {
  return path + ": " + what + "; " + done + "\n";
}

// What unlink did, said right after it (errno).
std::string removed(bool ok) {
  return ok ? "removed" : std::string("cannot remove it (") + std::strerror(errno) + ")";
}

// The kept name's temporary file of process pid (keep()), when pid is gone.
bool left_by_dead(const std::string& entry, int& pid) {
  const std::string pre = "registry-name.new.";
  if (entry.rfind(pre, 0) != 0) return false;
  char* end = nullptr;
  long v = std::strtol(entry.c_str() + pre.size(), &end, 10);
  if (*end || v <= 0) return false;
  pid = static_cast<int>(v);
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

const char* file_type(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link" : S_ISREG(m) ? "a file" : "a special file";
}

bool own_registry_name(const std::string& name, const std::string& base) {
  if (name == base) return true;
  if (name.size() != base.size() + 33 || name.compare(0, base.size() + 1, base + "-") != 0) return false;
  for (size_t i = base.size() + 1; i < name.size(); ++i)
    if (!std::strchr("0123456789abcdef", name[i])) return false;
  return true;
}

std::vector<std::string> private_registry_dirs() {
  std::vector<std::string> out;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) out.push_back(std::string(x) + "/cuda-shim");
  if (const char* h = std::getenv("HOME"); h && *h) out.push_back(std::string(h) + "/.cache/cuda-shim");
  return out;
}

std::string collect_private_dir(const std::string& dir, const std::string& base) {
  std::string out;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return out;  // none: nothing to check
  const uid_t me = ::getuid();
  if (st.st_uid != me)
    return line(dir, fmt::format("{} of uid {} where this user keeps its registry name", file_type(st.st_mode),
                                 st.st_uid),
                "not used; only its owner or root can remove it");
  if (!S_ISDIR(st.st_mode))
    return line(dir, fmt::format("{}, not the private directory this user keeps its registry name in",
                                 file_type(st.st_mode)), removed(::unlink(dir.c_str()) == 0));
  const std::string kept = dir + "/registry-name";
  if (const unsigned mode = st.st_mode & 0777; mode & 077) {
    // Others could read the kept name (and squat it) or, with write access, replace it.
    struct stat f {};
    const bool had = ::lstat(kept.c_str(), &f) == 0;
    const bool gone = !had || ::unlink(kept.c_str()) == 0;
    const bool fixed = ::chmod(dir.c_str(), 0700) == 0;
    return line(dir, fmt::format("a directory of mode {:o}: other users could read or replace the registry name kept "
                                 "there", mode),
                fmt::format("{}{}", fixed ? "made mode 0700" : "cannot make it mode 0700",
                            !had    ? ""
                            : gone ? ", its registry-name removed"
                                   : ", its registry-name cannot be removed"));
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name, path = dir + "/" + n;
    int pid = 0;
    if (n == "registry-name") {
      struct stat f {};
      if (::lstat(path.c_str(), &f) != 0) continue;
      std::string why;
      if (!S_ISREG(f.st_mode)) why = fmt::format("{}, not a file", file_type(f.st_mode));
      else if (f.st_uid != me) why = fmt::format("a file of uid {}", f.st_uid);
      else if (f.st_mode & 077) why = fmt::format("mode {:o}, not 0600", f.st_mode & 0777);
      else if (read_kept(path, base).empty())
        why = "holds no registry name of this user's (" + base + "-<32 hex digits>)";
      if (!why.empty())
        out += line(path, why + ": it cannot be trusted to name this user's registry",
                    removed(::unlink(path.c_str()) == 0) + " (a new name is kept when one is needed)");
    } else if (left_by_dead(n, pid)) {
      out += line(path, fmt::format("a registry name half-written by process {}, which is gone", pid),
                  removed(::unlink(path.c_str()) == 0));
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace cuda_shim::ipc
