// Registry squatting (issue 22, item 5): the registry's default name in /dev/shm is predictable
// per uid, so another user could create it first and break legacy IPC, IPC events and fabric
// handles for this one. resolve_registry_name then gives this user a name of its own, kept in a
// private directory. Scenarios with another user's file need root (chown); they are skipped
// otherwise. The names here are the test's own: the real default is never touched. Then what
// `cuda-shim gc` reports and removes.
#include <cuda_shim_ext.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>

#include <catch2/catch.hpp>

#include "ipc/registry_name.hpp"
#include "ipc/segment.hpp"

using cuda_shim::ipc::resolve_registry_name;

namespace {

constexpr uid_t kNobody = 65534;

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/cuda-shim-regname-XXXXXX";
    REQUIRE(mkdtemp(t));
    path = t;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// A file in /dev/shm named `name`, owned by `uid`.
void shm_file(const std::string& name, uid_t uid) {
  std::string p = "/dev/shm/" + name;
  int fd = open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(fchown(fd, uid, uid) == 0);
  close(fd);
}

std::string test_base() { return "cuda-shim-regname-test-" + std::to_string(getpid()); }

}  // namespace

TEST_CASE("the default name stays while nobody else holds it", "[registry][security]") {
  TempDir priv;
  std::string why;
  const std::string base = test_base();
  CHECK(resolve_registry_name(base, priv.path + "/d", why) == base);  // absent
  CHECK(why.empty());
  shm_file(base, getuid());
  CHECK(resolve_registry_name(base, priv.path + "/d", why) == base);  // this user's own
  unlink(("/dev/shm/" + base).c_str());
}

TEST_CASE("a default name squatted by another user gives way to a name of this user's own", "[registry][security]") {
  if (getuid() != 0) {
    WARN("not root: cannot make a file of another user; skipped");
    return;
  }
  TempDir priv;
  const std::string base = test_base(), dir = priv.path + "/d";
  shm_file(base, kNobody);
  std::string why;
  const std::string mine = resolve_registry_name(base, dir, why);
  CHECK(mine != base);
  CHECK(mine.rfind(base + "-", 0) == 0);
  CHECK(mine.size() == base.size() + 33);  // 128 random bits in hex
  CHECK(why.find("belongs to another user") != std::string::npos);
  struct stat st {};
  REQUIRE(stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // Every process of the user finds the same name.
  CHECK(resolve_registry_name(base, dir, why) == mine);

  // The kept name squatted in turn (it can be seen in /dev/shm while in use): replaced.
  shm_file(mine, kNobody);
  const std::string next = resolve_registry_name(base, dir, why);
  CHECK(next != mine);
  CHECK(next != base);
  CHECK(resolve_registry_name(base, dir, why) == next);

  // A private directory that others can read is not private: no name is kept there.
  TempDir open_dir;
  REQUIRE(chmod(open_dir.path.c_str(), 0755) == 0);
  CHECK(resolve_registry_name(base, open_dir.path, why) == base);
  CHECK(why.find("private directory") != std::string::npos);

  unlink(("/dev/shm/" + base).c_str());
  unlink(("/dev/shm/" + mine).c_str());
}

// `cuda-shim gc` (cuShimCollectGarbage): one line per thing it cannot trust, saying what it is
// and what was done. Planted under names of the test's own; a squatted name needs root (chown).
namespace {

// A file /dev/shm/<name> of `mode` holding `bytes`, last changed two minutes ago unless `fresh`.
std::string plant(const std::string& name, mode_t mode, const std::string& bytes, bool fresh = false) {
  std::string p = "/dev/shm/" + name;
  int fd = open(p.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  REQUIRE(fchmod(fd, mode) == 0);
  close(fd);
  if (!fresh) {
    struct timespec t[2] = {{time(nullptr) - 120, 0}, {time(nullptr) - 120, 0}};
    REQUIRE(utimensat(AT_FDCWD, p.c_str(), t, AT_SYMLINK_NOFOLLOW) == 0);
  }
  return p;
}

bool exists(const std::string& p) {
  struct stat st {};
  return lstat(p.c_str(), &st) == 0;
}

std::string gc() {
  std::string out(1 << 20, '\0');
  out.resize(std::min(out.size() - 1, cuShimCollectGarbage(out.data(), out.size())));
  return out;
}

// The line of `out` about path, or "".
std::string line_of(const std::string& out, const std::string& path) {
  size_t at = out.find(path + ": ");
  if (at == std::string::npos || (at > 0 && out[at - 1] != '\n')) return {};
  return out.substr(at, out.find('\n', at) - at);
}

struct Env {  // sets a variable for the scope
  std::string name;
  std::string old;
  bool had;
  Env(const char* n, const std::string& v) : name(n) {
    const char* o = getenv(n);
    had = o != nullptr;
    if (had) old = o;
    setenv(n, v.c_str(), 1);
  }
  ~Env() { had ? setenv(name.c_str(), old.c_str(), 1) : unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("gc reports and removes registry segments it cannot trust", "[registry][gc]") {
  namespace seg = cuda_shim::ipc::seg;
  const std::string pre = "cuda-shim-gctest-" + std::to_string(getpid());
  seg::Header h{};
  h.magic = seg::kMagic;
  h.version = cuda_shim::ipc::kLayoutVersion - 1;
  std::string old_layout(reinterpret_cast<const char*>(&h), sizeof h);
  old_layout.resize(4096);

  const std::string mode = plant(pre + "-mode", 0644, old_layout);
  const std::string version = plant(pre + "-version", 0600, old_layout);
  const std::string garbage = plant(pre + "-garbage", 0600, std::string(4096, 'x'));
  const std::string stub = plant(pre + "-stub", 0600, std::string(16, '\0'));
  const std::string fresh = plant(pre + "-fresh", 0600, std::string(16, '\0'), true);
  const std::string dir = "/dev/shm/" + pre + "-dir";
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  {
    struct timespec t[2] = {{time(nullptr) - 120, 0}, {time(nullptr) - 120, 0}};
    REQUIRE(utimensat(AT_FDCWD, dir.c_str(), t, 0) == 0);
  }
  // A registry of this layout whose one process is gone.
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  const std::string dead = plant(pre + "-dead", 0600, "", true);
  {
    int fd = open(dead.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, sizeof(seg::Layout)) == 0);
    void* m = mmap(nullptr, sizeof(seg::Layout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    auto* l = static_cast<seg::Layout*>(m);
    l->h.magic = seg::kMagic;
    l->h.version = cuda_shim::ipc::kLayoutVersion;
    l->h.size = sizeof(seg::Layout);
    l->h.ready = 1;
    l->procs[0].pid = child;
    l->procs[0].state = seg::kLive;
    l->procs[0].start = 1;
    munmap(m, sizeof(seg::Layout));
    close(fd);
  }
  // Another user's file under a name this user's processes would keep (needs chown).
  std::string squatted;
  if (getuid() == 0) {
    squatted = plant("cuda-shim-" + std::to_string(getuid()) + "-" + std::string(32, 'e'), 0644, "");
    REQUIRE(chown(squatted.c_str(), kNobody, kNobody) == 0);
  }

  const std::string out = gc();
  INFO(out);
  CHECK(line_of(out, mode).find("mode 644, not 0600") != std::string::npos);
  CHECK(line_of(out, version).find("layout version " + std::to_string(cuda_shim::ipc::kLayoutVersion - 1)) !=
        std::string::npos);
  CHECK(line_of(out, garbage).find("no cuda-shim registry") != std::string::npos);
  CHECK(line_of(out, stub).find("shorter than a registry's header") != std::string::npos);
  CHECK(line_of(out, dir).find("a directory, not a registry segment") != std::string::npos);
  CHECK(line_of(out, dead).find("processes that exited or were killed (pid " + std::to_string(child) + ")") !=
        std::string::npos);
  for (const auto& p : {mode, version, garbage, stub, dir, dead}) {
    CHECK(line_of(out, p).find("; removed") != std::string::npos);
    CHECK_FALSE(exists(p));
  }
  // Something of this user's that changed within the minute may be a registry being made.
  CHECK(line_of(out, fresh).find("left for now") != std::string::npos);
  CHECK(exists(fresh));
  unlink(fresh.c_str());
  if (!squatted.empty()) {
    CHECK(line_of(out, squatted).find("squatted: a file of uid 65534") != std::string::npos);
    CHECK(line_of(out, squatted).find("cannot remove it") != std::string::npos);
    CHECK(exists(squatted));
    unlink(squatted.c_str());
  } else {
    WARN("not root: cannot make a file of another user; the squatted name was not tried");
  }
}

TEST_CASE("gc makes the private directory private again and drops what it cannot trust there", "[registry][gc]") {
  TempDir home;
  Env xdg("XDG_RUNTIME_DIR", home.path), h("HOME", home.path);
  const std::string dir = home.path + "/cuda-shim", kept = dir + "/registry-name";
  const std::string base = "cuda-shim-" + std::to_string(getuid());
  REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  auto write_file = [](const std::string& p, const std::string& text) {
    int fd = open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    close(fd);
  };
  write_file(kept, base + "-" + std::string(32, 'a') + "\n");
  std::string out = gc();
  INFO(out);
  // Others could read the kept name (and squat it): dropped, the directory closed.
  CHECK(line_of(out, dir).find("a directory of mode 755") != std::string::npos);
  CHECK(line_of(out, dir).find("made mode 0700, its registry-name removed") != std::string::npos);
  struct stat st {};
  REQUIRE(stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK_FALSE(exists(kept));

  // A kept name that is none of this user's, and a name a dead process half wrote.
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  const std::string half = dir + "/registry-name.new." + std::to_string(child);
  write_file(kept, "cuda-shim-4242-" + std::string(32, 'b') + "\n");
  write_file(half, base + "-");
  write_file(dir + "/unrelated", "kept");
  out = gc();
  INFO(out);
  CHECK(line_of(out, kept).find("holds no registry name of this user's") != std::string::npos);
  CHECK(line_of(out, half).find("half-written by process " + std::to_string(child)) != std::string::npos);
  CHECK_FALSE(exists(kept));
  CHECK_FALSE(exists(half));
  CHECK(exists(dir + "/unrelated"));
  CHECK(line_of(out, dir + "/unrelated").empty());

  // A sound one is left alone.
  write_file(kept, base + "-" + std::string(32, 'c') + "\n");
  out = gc();
  CHECK(line_of(out, kept).empty());
  CHECK(line_of(out, dir).empty());
  CHECK(exists(kept));
}
