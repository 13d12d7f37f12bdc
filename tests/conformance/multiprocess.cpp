#include "multiprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

extern char** environ;

namespace mp {
namespace {
std::map<std::string, ChildFn>& children() {
  static std::map<std::string, ChildFn> m;
  return m;
}
bool wait_readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}
}  // namespace

Channel& Channel::operator=(Channel&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}
Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

bool Channel::send(const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd_, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool Channel::recv(void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    if (!wait_readable(fd_, 30000)) return false;
    ssize_t r = ::recv(fd_, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// One byte of payload with room for one descriptor (SCM_RIGHTS), for sendmsg and recvmsg.
struct FdMessage {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  FdMessage() {
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
  }
  FdMessage(const FdMessage&) = delete;
};

bool Channel::send_fd(int fd) {
  FdMessage f;
  msghdr& m = f.m;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(fd_, &m, MSG_NOSIGNAL) == 1;
}

int Channel::recv_fd() {
  if (!wait_readable(fd_, 30000)) return -1;
  FdMessage f;
  msghdr& m = f.m;
  if (::recvmsg(fd_, &m, MSG_CMSG_CLOEXEC) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

int Child::wait(int timeout_s) {
  if (pid <= 0) return -1;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      pid = -1;
      if (WIFEXITED(st)) return WEXITSTATUS(st);
      if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
      return -1;
    }
    if (r < 0) {
      pid = -1;
      return -1;
    }
    if (std::chrono::steady_clock::now() > end) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      pid = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Child::kill(int sig) {
  if (pid > 0) ::kill(pid, sig);
}

Child::~Child() {
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    int st;
    ::waitpid(pid, &st, 0);
  }
}

Child spawn(const std::string& name, const std::vector<std::string>& env) {
  int sv[2];
  Child c;
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return c;
  std::string fdarg = std::to_string(sv[1]);
  std::vector<std::string> envs;
  auto key = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (char** e = environ; *e; ++e) {
    bool replaced = false;
    for (auto& o : env) replaced |= key(o) == key(*e);
    if (!replaced) envs.emplace_back(*e);
  }
  for (auto& e : env) envs.push_back(e);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", flag = "--mp-child", nm = name;
  char* argv[] = {self.data(), flag.data(), nm.data(), fdarg.data(), nullptr};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::fcntl(sv[1], F_SETFD, 0);  // the child's end survives exec
    ::execve("/proc/self/exe", argv, envp.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  c.pid = pid;
  c.ch = Channel(sv[0]);
  return c;
}

bool register_child(const char* name, ChildFn fn) {
  children()[name] = fn;
  return true;
}

bool run_child_if_asked(int argc, char** argv, int& rc) {
  if (argc < 4 || std::strcmp(argv[1], "--mp-child") != 0) return false;
  auto it = children().find(argv[2]);
  if (it == children().end()) {
    rc = 126;
    return true;
  }
  Channel ch(std::atoi(argv[3]));
  ::fcntl(ch.fd(), F_SETFD, FD_CLOEXEC);
  alarm(90);  // a child never outlives a hung test
  rc = it->second(ch);
  return true;
}

int plain_memfd(size_t n, unsigned char byte) {
  int fd = ::memfd_create("plain-test-memfd", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::ftruncate(fd, static_cast<off_t>(n)) != 0) return -1;
  if (byte) {
    std::string s(n, static_cast<char>(byte));
    if (::pwrite(fd, s.data(), n, 0) != static_cast<ssize_t>(n)) return -1;
  }
  return fd;
}

bool fd_is_open(int fd) { return fd >= 0 && ::fcntl(fd, F_GETFD) != -1; }
bool fd_cloexec(int fd) {
  int f = ::fcntl(fd, F_GETFD);
  return f != -1 && (f & FD_CLOEXEC);
}

}  // namespace mp
