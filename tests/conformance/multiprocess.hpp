// Multiprocess tests: the test binary re-runs itself as the child (`--mp-child NAME FD`),
// and the two talk over a socketpair: bytes (handles, export data, results) and file
// descriptors (SCM_RIGHTS). Works on the emulator and on the real driver alike.
//   MP_CHILD(reader) { int fd = ch.recv_fd(); ...; ch.send_int(code); return 0; }
//   auto c = mp::spawn("reader"); c.ch.send_fd(fd); CHECK(c.ch.recv_int() == 0); CHECK(c.wait() == 0);
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mp {

class Channel {
 public:
  explicit Channel(int fd = -1) : fd_(fd) {}
  Channel(Channel&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Channel& operator=(Channel&& o) noexcept;
  ~Channel();
  int fd() const { return fd_; }

  bool send(const void* p, size_t n);
  bool recv(void* p, size_t n);  // false on EOF/timeout (30 s)
  bool send_fd(int fd);          // the descriptor itself travels (SCM_RIGHTS)
  int recv_fd();                 // -1 on failure
  void send_int(int64_t v) { send(&v, sizeof v); }
  int64_t recv_int() {
    int64_t v = INT64_MIN;
    recv(&v, sizeof v);
    return v;
  }
  template <class T>
  void send_pod(const T& v) { send(&v, sizeof v); }
  template <class T>
  T recv_pod() {
    T v{};
    recv(&v, sizeof v);
    return v;
  }

 private:
  int fd_;
};

struct Child {
  pid_t pid = -1;
  Channel ch;
  Child() = default;
  Child(Child&& o) noexcept : pid(o.pid), ch(std::move(o.ch)) { o.pid = -1; }
  // Exit status (0..255), 128+signal when killed, -1 on timeout (the child is then killed).
  int wait(int timeout_s = 60);
  void kill(int sig);
  ~Child();
};

// Starts this binary as child `name` (registered with MP_CHILD), with extra environment.
Child spawn(const std::string& name, const std::vector<std::string>& env = {});

using ChildFn = int (*)(Channel&);
bool register_child(const char* name, ChildFn fn);
// Called by the test main: runs the child named in argv and returns true (exit code in rc).
bool run_child_if_asked(int argc, char** argv, int& rc);

// A memfd of n bytes filled with `byte` (a fd that no CUDA exporter produced).
int plain_memfd(size_t n, unsigned char byte = 0);
bool fd_is_open(int fd);
bool fd_cloexec(int fd);

}  // namespace mp

#define MP_CHILD(name)                                                   \
  static int mp_child_##name(mp::Channel& ch);                           \
  static const bool mp_reg_##name = mp::register_child(#name, &mp_child_##name); \
  static int mp_child_##name([[maybe_unused]] mp::Channel& ch)
