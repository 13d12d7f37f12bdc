#include "ipc/registry_name.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
