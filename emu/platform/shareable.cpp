#include "platform/shareable.hpp"

#include "platform/memfd.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace cuda_shim::ipc {
namespace {

constexpr const char kPrefix[] = "cuda-shim:";
constexpr size_t kMaxMemfdName = 249;  // memfd_create's limit, without "memfd:"

const char* kind_word(ObjectKind k) noexcept {
  switch (k) {
    case ObjectKind::pool: return "pool";
    case ObjectKind::vmm: return "vmm";
    case ObjectKind::semaphore: return "semaphore";
  }
  return "?";
}

bool kind_from_word(const std::string& w, ObjectKind& k) {
  for (ObjectKind c : {ObjectKind::pool, ObjectKind::vmm, ObjectKind::semaphore})
    if (w == kind_word(c)) {
      k = c;
      return true;
    }
  return false;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

}  // namespace

Token random_token() noexcept {
  Token t;
  uint64_t w[2] = {0, 0};
  size_t got = 0;
  while (got < sizeof w) {
    ssize_t n = ::getrandom(reinterpret_cast<char*>(w) + got, sizeof w - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
    else if (errno != EINTR) break;
  }
  if (got < sizeof w) {  // no getrandom (old kernel, seccomp): the library's source
    std::random_device rd;
    w[0] = (uint64_t(rd()) << 32) ^ rd();
    w[1] = (uint64_t(rd()) << 32) ^ rd();
  }
  t.hi = w[0];
  t.lo = w[1] ? w[1] : 1;  // never the all-zero token (it means "none")
  return t;
}

std::string to_hex(const Token& t) {
  char b[33];
  std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(t.hi),
                static_cast<unsigned long long>(t.lo));
  return b;
}

bool from_hex(const std::string& s, Token& out) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  out.hi = std::stoull(s.substr(0, 16), nullptr, 16);
  out.lo = std::stoull(s.substr(16), nullptr, 16);
  return true;
}

const char* object_kind_name(ObjectKind k) noexcept {
  switch (k) {
    case ObjectKind::pool: return "memory pool";
    case ObjectKind::vmm: return "cuMemCreate allocation";
    case ObjectKind::semaphore: return "semaphore";
  }
  return "object";
}

int create_object(ObjectKind kind, const Token& token, const std::vector<uint64_t>& fields, size_t size) noexcept {
  try {
    std::string name = std::string(kPrefix) + kind_word(kind) + ":" + to_hex(token);
    for (uint64_t f : fields) {
      char b[24];
      std::snprintf(b, sizeof b, ":%llx", static_cast<unsigned long long>(f));
      name += b;
    }
    if (name.size() > kMaxMemfdName) {
      errno = ENAMETOOLONG;
      return -1;
    }
    // This user's alone (a peer reopening it through /proc/<pid>/fd runs as the same user), and
    // of a sealed size: an importer cannot truncate the exporter's memory away.
    return sealed_memfd(name.c_str(), size);
  } catch (...) {
    errno = ENOMEM;
    return -1;
  }
}

FdInfo describe_fd(int fd) noexcept {
  FdInfo info;
  try {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return info;  // bad_fd
    info.what = FdInfo::What::not_memfd;
    info.size = static_cast<uint64_t>(st.st_size);
    info.dev = st.st_dev;
    info.ino = st.st_ino;
    info.uid = st.st_uid;
    if (!S_ISREG(st.st_mode)) return info;
    // A memfd's link reads "/memfd:<name> (deleted)".
    char path[64], link[512];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(path, link, sizeof link - 1);
    if (n <= 0) return info;
    std::string l(link, static_cast<size_t>(n));
    const std::string memfd = "/memfd:", deleted = " (deleted)";
    if (l.rfind(memfd, 0) != 0) return info;
    l = l.substr(memfd.size());
    if (l.size() >= deleted.size() && l.compare(l.size() - deleted.size(), deleted.size(), deleted) == 0)
      l.resize(l.size() - deleted.size());
    info.what = FdInfo::What::foreign_memfd;
    info.name = l;
    if (l.rfind(kPrefix, 0) != 0) return info;
    auto w = split(l.substr(sizeof kPrefix - 1), ':');
    ObjectKind k;
    Token t;
    if (w.size() < 2 || !kind_from_word(w[0], k) || !from_hex(w[1], t)) return info;
    // Every object the emulator makes has a sealed size; a memfd that only carries one of their
    // names (copied by another process) is not one of them.
    if (!size_sealed(fd)) {
      info.forged = true;
      info.forged_why = "its size is not sealed as the driver seals what it exports: another process made it";
      return info;
    }
    std::vector<uint64_t> fields;
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i].empty() || w[i].size() > 16) return info;
      for (char c : w[i])
        if (!std::isxdigit(static_cast<unsigned char>(c))) return info;
      fields.push_back(std::stoull(w[i], nullptr, 16));
    }
    info.what = FdInfo::What::ours;
    info.kind = k;
    info.token = t;
    info.fields = std::move(fields);
  } catch (...) {
  }
  return info;
}

int open_peer_object(int pid, int fd_number, uint64_t dev, uint64_t ino) noexcept {
  if (pid <= 0 || fd_number < 0) return -1;
  int fd = -1;
  if (pid == ::getpid()) {
    fd = ::fcntl(fd_number, F_DUPFD_CLOEXEC, 0);
  } else {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd_number);
    fd = ::open(path, O_RDWR | O_CLOEXEC);
  }
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
    ::close(fd);  // the descriptor number now names something else: the object is gone
    return -1;
  }
  return fd;
}

void* map_object(int fd, size_t off, size_t len, void* at) noexcept {
  int flags = MAP_SHARED | MAP_NORESERVE | (at ? MAP_FIXED : 0);
  void* p = ::mmap(at, len, PROT_READ | PROT_WRITE, flags, fd, static_cast<off_t>(off));
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace cuda_shim::ipc
