// Registry squatting (issue 22, item 5): the registry's default name in /dev/shm is predictable
// per uid, so another user could create it first and break legacy IPC, IPC events and fabric
// handles for this one. resolve_registry_name then gives this user a name of its own, kept in a
// private directory. Scenarios with another user's file need root (chown); they are skipped
// otherwise. The names here are the test's own: the real default is never touched.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "ipc/registry_name.hpp"

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
