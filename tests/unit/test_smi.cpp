// Emulator-only: `cuda-shim smi`, the live inspector (docs/smi.md). Process A (this binary
// re-run, multiprocess.hpp) makes an exportable pool, allocates from it and exports it; process
// B imports the pool and one pointer. cuda-shim-smi --json then shows A's pool with its books and
// live allocations, exported and imported by B, and B's imported pool naming A; -p narrows it to
// one process; a stopped process is shown as not answering. B is killed: smi shows it dead,
// --reap reclaims it, and the next smi no longer lists it. The test process itself never uses
// CUDA: it only runs the children and the tool (all on this binary's own registry segment).
#include <cuda.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "multiprocess.hpp"

namespace {
// Whether every thread of process pid reached the stopped state ('T' in its stat) within 5 s:
// a group stop reaches each thread on its own.
bool wait_stopped(int pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (int i = 0; i < 500; ++i) {
    bool all = false;
    if (DIR* d = ::opendir(dir.c_str())) {
      all = true;
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char state = 0;
        if (FILE* f = std::fopen((dir + "/" + e->d_name + "/stat").c_str(), "r")) {
          if (std::fscanf(f, "%*d (%*[^)]) %c", &state) != 1) state = 0;
          std::fclose(f);
        }
        all = all && state == 'T';
      }
      ::closedir(d);
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}


constexpr size_t kSizes[] = {size_t(1) << 20, size_t(3) << 20, size_t(512) << 10};

#define OR_EXIT(call, code) \
  do {                      \
    if ((call) != CUDA_SUCCESS) return code; \
  } while (0)

// Runs the inspector with these arguments; its standard output, and its exit status in rc.
std::string smi(const std::string& args, int& rc) {
  std::string cmd = std::string(CUDA_SHIM_BIN_DIR) + "/cuda-shim-smi " + args + " 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  REQUIRE(f);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  int st = ::pclose(f);
  rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}
std::string smi(const std::string& args) {
  int rc = 0;
  std::string out = smi(args, rc);
  CHECK(rc == 0);
  return out;
}

// The JSON object that starts with `head` (the tool writes compact JSON), braces matched;
// empty when there is none.
std::string object_at(const std::string& json, const std::string& head) {
  size_t at = json.find(head);
  if (at == std::string::npos) return "";
  int depth = 0;
  bool in_str = false;
  for (size_t i = at; i < json.size(); ++i) {
    char c = json[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
    } else if (c == '"') in_str = true;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return json.substr(at, i + 1 - at);
  }
  return "";
}
std::string proc(const std::string& json, int pid) { return object_at(json, "{\"pid\":" + std::to_string(pid) + ",\"state\""); }
bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

// A: an exportable pool with three live allocations (one more made and freed); sends the pool's
// descriptor and the first allocation's export data, then waits for command 0 and exits.
MP_CHILD(smi_exporter) {
  CUcontext ctx = nullptr;
  OR_EXIT(cuInit(0), 10);
  OR_EXIT(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
  OR_EXIT(cuCtxSetCurrent(ctx), 12);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  OR_EXIT(cuMemPoolCreate(&pool, &props), 13);
  CUdeviceptr p[3] = {}, extra = 0;
  for (int i = 0; i < 3; ++i) OR_EXIT(cuMemAllocFromPoolAsync(&p[i], kSizes[i], pool, nullptr), 14);
  OR_EXIT(cuMemAllocFromPoolAsync(&extra, 8 << 20, pool, nullptr), 15);
  OR_EXIT(cuMemFreeAsync(extra, nullptr), 16);
  OR_EXIT(cuStreamSynchronize(nullptr), 17);
  int fd = -1;
  OR_EXIT(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), 18);
  CUmemPoolPtrExportData data{};
  OR_EXIT(cuMemPoolExportPointer(&data, p[0]), 19);
  ch.send_fd(fd);
  ch.send_pod(data);
  return ch.recv_int() == 0 ? 0 : 20;
}

// B: imports the pool and the pointer, says so, then waits to be killed.
MP_CHILD(smi_importer) {
  CUcontext ctx = nullptr;
  OR_EXIT(cuInit(0), 10);
  OR_EXIT(cuDevicePrimaryCtxRetain(&ctx, 0), 11);
  OR_EXIT(cuCtxSetCurrent(ctx), 12);
  int fd = ch.recv_fd();
  auto data = ch.recv_pod<CUmemPoolPtrExportData>();
  CUmemoryPool pool = nullptr;
  OR_EXIT(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), 13);
  CUdeviceptr ptr = 0;
  OR_EXIT(cuMemPoolImportPointer(&ptr, pool, &data), 14);
  ch.send_int(0);
  for (;;) pause();
}

TEST_CASE("smi shows a pool, its allocations, its importer, and reaps a killed process", "[smi]") {
  auto a = mp::spawn("smi_exporter");
  int fd = a.ch.recv_fd();
  REQUIRE(fd >= 0);
  auto data = a.ch.recv_pod<CUmemPoolPtrExportData>();
  auto b = mp::spawn("smi_importer");
  b.ch.send_fd(fd);
  ::close(fd);
  b.ch.send_pod(data);
  REQUIRE(b.ch.recv_int() == 0);

  const std::string all = smi("--json");
  INFO(all);
  const std::string pa = proc(all, a.pid), pb = proc(all, b.pid);
  REQUIRE(!pa.empty());
  REQUIRE(!pb.empty());
  CHECK(has(pa, "\"state\":\"live\""));
  CHECK(has(pb, "\"state\":\"live\""));
  // A's exported pool: one 32 MiB chunk reserved (two at the high-water mark, when the freed
  // 8 MiB block lay beyond the first), the three allocations live, the largest 3 MiB, B its importer.
  CHECK(has(pa, "\"handle_types\":1,"));
  CHECK(has(pa, "\"reserved\":33554432,"));
  CHECK(has(pa, "\"used\":" + std::to_string(kSizes[0] + kSizes[1] + kSizes[2]) + ","));
  CHECK(has(pa, "\"allocations\":3,\"bytes\":" + std::to_string(kSizes[0] + kSizes[1] + kSizes[2]) +
                    ",\"largest\":" + std::to_string(kSizes[1])));
  CHECK(has(pa, "\"exported\":1"));
  CHECK(has(pa, "\"importers\":[" + std::to_string(b.pid) + "]"));
  // B: the imported pool, naming A, holding the one pointer it imported.
  CHECK(has(pb, "\"imported\":1"));
  CHECK(has(pb, "\"exporter\":" + std::to_string(a.pid)));
  CHECK(has(pb, "\"allocations\":1,\"bytes\":" + std::to_string(kSizes[0]) + ","));
  // The registry's record of the export (POSIX fd: the pool's object), imported by B.
  CHECK(has(all, "\"kind\":\"object\",\"pid\":" + std::to_string(a.pid)));
  CHECK(has(all, "\"what\":\"pool\""));
  // Both processes' device memory and contexts, from the registry.
  CHECK(has(pa, "\"devices\":[{\"pid\":" + std::to_string(a.pid) + ",\"dev\":0,"));

  SECTION("-p narrows to one process") {
    const std::string only = smi("--json -p " + std::to_string(a.pid));
    CHECK(!proc(only, a.pid).empty());
    CHECK(proc(only, b.pid).empty());
    CHECK(has(only, "\"pid\":" + std::to_string(a.pid)));
    CHECK(!has(only, "\"pid\":" + std::to_string(b.pid)));
    const std::string text = smi("-p " + std::to_string(b.pid));
    CHECK(has(text, "imported from " + std::to_string(a.pid)));
    CHECK(!has(text, "exported"));
  }
  SECTION("a stopped process does not answer, and is shown as such") {
    ::kill(b.pid, SIGSTOP);
    // kill() returns before the process stops: under load its inspector could still answer.
    REQUIRE(wait_stopped(b.pid));
    const auto t0 = std::chrono::steady_clock::now();
    const std::string s = smi("--json -p " + std::to_string(b.pid));
    ::kill(b.pid, SIGCONT);
    CHECK(has(proc(s, b.pid), "\"state\":\"not answering\""));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  }
  SECTION("a killed process is shown dead, reaped, then gone") {
    const int bpid = b.pid;  // wait() forgets it
    b.kill(SIGKILL);
    CHECK(b.wait() == 128 + SIGKILL);
    const std::string dead = smi("--json");
    INFO(dead);
    CHECK(has(proc(dead, bpid), "\"state\":\"dead\""));
    CHECK(has(proc(dead, a.pid), "\"state\":\"live\""));
    const std::string reaped = smi("--reap --json");
    INFO(reaped);
    CHECK(has(reaped, "\"pid\":" + std::to_string(bpid) + ","));
    CHECK(!has(reaped, "\"pid\":" + std::to_string(a.pid) + ","));
    const std::string after = smi("--json");
    CHECK(proc(after, bpid).empty());
    CHECK(has(proc(after, a.pid), "\"state\":\"live\""));
    CHECK(has(smi("--reap"), "nothing to reap"));
  }
  a.ch.send_int(0);
  CHECK(a.wait() == 0);
}

TEST_CASE("smi --watch=N refreshes N times", "[smi]") {
  const std::string s = smi("--json --watch=2");
  size_t lines = 0;
  for (char c : s) lines += c == '\n';
  CHECK(lines == 2);
}

TEST_CASE("smi refuses bad arguments with status 2", "[smi]") {
  int rc = 0;
  smi("-p notapid", rc);
  CHECK(rc == 2);
  smi("--watch=0", rc);
  CHECK(rc == 2);
  smi("--bogus", rc);
  CHECK(rc == 2);
}
