// The protocol of test_ipc_kill_stress.cpp between the parent (the hub that forwards handles and
// kills workers) and its workers (ipc_kill_worker.hpp), the bytes an export holds, and the codes
// importing gives once an exporter was killed (test_ipc_kill_stress_codes.cpp asserts them one
// handle at a time). NVIDIA's API only, so they also run on the real driver.
#pragma once
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common.hpp"

namespace kill9 {

using Clock = std::chrono::steady_clock;

// What importing a handle gives once its exporter was killed, measured on an H100 with driver
// 580 (the last test case of this file asserts it one handle at a time): legacy memory is
// CUDA_ERROR_INVALID_HANDLE (a live exporter's freed memory is INVALID_VALUE: test_ipc_legacy);
// an IPC event still opens, and reads complete; a pool travels as a descriptor, which keeps its
// memory: the pool and the pointer import.
constexpr CUresult kDeadLegacy = CUDA_ERROR_INVALID_HANDLE;
constexpr CUresult kDeadEvent = CUDA_SUCCESS;

constexpr auto kSlowCall = std::chrono::seconds(2);

enum Op : int32_t {
  // worker -> parent
  kHello = 1,
  kPubLegacy,   // id, size, seed, bytes: CUipcMemHandle
  kPubPool,     // id, size, seed, bytes: CUmemPoolPtrExportData; the pool's descriptor rides along
  kPubEvent,    // id, bytes: CUipcEventHandle
  kWantFree,    // id: the worker wants to free its export (no new imports; answered by kFreeOk)
  kImportDone,  // id: the export (parent's id); a: first call's code; b: later calls' first failure; c: bytes right
  kChecked,     // a: problems found by cuShimRegistryCheck; text: the first of them
  kBurstDone,   // a: exports made in the burst
  kFail,        // text: what went wrong
  kStats,       // a, b, c: exports, imports, verifications (sent on a normal exit)
  // parent -> worker
  kInit,    // a: slot, b: generation, seed
  kImport,  // id, kind, size, seed, bytes (+ the pool's descriptor)
  kFreeOk,  // id: the worker's id; a: mailbox 0 never written, 1 written, 2 either
  kCheck,
  kBurst,
  kStop,
};
enum Kind : int32_t { kLegacy = 1, kPool = 2, kEvent = 3 };

struct Msg {
  int32_t op = 0;
  int32_t kind = 0;
  int64_t id = 0;
  int64_t a = 0, b = 0, c = 0;
  uint64_t size = 0, seed = 0;
  unsigned char bytes[64] = {};
  char text[200] = {};
};

// Messages are whole structures; a descriptor may ride along (SCM_RIGHTS).
inline bool send_msg(int sock, const Msg& m, int fd = -1) {
  iovec iov{const_cast<Msg*>(&m), sizeof m};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr h{};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  if (fd >= 0) {
    h.msg_control = buf;
    h.msg_controllen = sizeof buf;
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  size_t done = 0;
  while (done < sizeof m) {
    ssize_t w = ::sendmsg(sock, &h, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
    iov.iov_base = reinterpret_cast<char*>(const_cast<Msg*>(&m)) + done;
    iov.iov_len = sizeof m - done;
    h.msg_control = nullptr;
    h.msg_controllen = 0;
  }
  return true;
}

// False on EOF or error; *fd gets a descriptor that rode along (else -1).
inline bool recv_msg(int sock, Msg& m, int* fd = nullptr) {
  if (fd) *fd = -1;
  size_t got = 0;
  while (got < sizeof m) {
    iovec iov{reinterpret_cast<char*>(&m) + got, sizeof m - got};
    alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = buf;
    h.msg_controllen = sizeof buf;
    ssize_t r = ::recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int in = -1;
        std::memcpy(&in, CMSG_DATA(c), sizeof in);
        if (fd && *fd < 0)
          *fd = in;
        else
          ::close(in);
      }
    got += static_cast<size_t>(r);
  }
  return true;
}

inline bool readable(int sock, int ms) {
  pollfd p{sock, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}

// The bytes an export holds: a pattern of its seed, and the last 8 bytes a mailbox that
// importers write (the exporter checks it when it frees the memory).
inline unsigned char pattern(uint64_t seed, size_t i) {
  return static_cast<unsigned char>(seed * 131 + i * 7 + (i >> 9));
}
inline uint64_t mailbox_value(uint64_t seed) { return seed * 0x9e3779b97f4a7c15ull | 1; }
constexpr size_t kMailbox = 8;

inline std::vector<unsigned char> fill(uint64_t seed, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i + kMailbox < n; ++i) v[i] = pattern(seed, i);
  return v;  // mailbox 0
}
inline bool pattern_ok(const std::vector<unsigned char>& v, uint64_t seed) {
  for (size_t i = 0; i + kMailbox < v.size(); ++i)
    if (v[i] != pattern(seed, i)) return false;
  return true;
}
inline uint64_t mailbox(const std::vector<unsigned char>& v) {
  uint64_t x = 0;
  std::memcpy(&x, v.data() + v.size() - kMailbox, kMailbox);
  return x;
}
inline int env_int(const char* name, int dflt) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : dflt;
}

}  // namespace kill9
