// The socket between an nvcc test program and the copy of itself it runs as a child
// (pool_ipc.cu, pool_ipc_kernel.cu): whole messages, and a descriptor passed with SCM_RIGHTS.
// Every wait gives up after kTimeoutMs, under ctest's timeout: a lost peer fails, never hangs.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

constexpr int kTimeoutMs = 20000;

static bool wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, kTimeoutMs);
  while (r < 0 && errno == EINTR);
  return r > 0;
}
static bool send_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
static bool recv_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    if (!wait_readable(fd)) return false;
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}
static bool send_fd(int sock, int fd) {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(sock, &m, MSG_NOSIGNAL) == 1;
}
static int recv_fd(int sock) {
  if (!wait_readable(sock)) return -1;
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  if (::recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}
