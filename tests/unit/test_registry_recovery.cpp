// Emulator-only: the shared IPC registry recovers from what crashed runs leave behind. Every
// scenario runs its processes as children (this binary re-run, multiprocess.hpp) on a registry
// segment of its own (CUDA_SHIM_REGISTRY=cuda-shim-rr-<scenario>-<pid>); the test process
// itself never attaches to them (the segment is a per-process singleton), it only writes or
// reads the segment's bytes (ipc/segment.hpp's Layout) to stage what a crash leaves:
//  (a) an exporter killed with SIGKILL, then a process killed while holding the segment's
//      robust lock in the middle of an update (a record published without its counter, a
//      record left twice by an interrupted rehash): the next process attaches at once, sweeps,
//      repairs, cuShimRegistryCheck finds nothing, the dead exporter's handles give the
//      driver's codes, sharing works, and the last process out removes the segment;
//  (b) a segment of an older layout version, garbage, truncated below a header, empty, or left
//      unready by a creator that died: replaced; one of mode 0666 (or of another user): refused,
//      with CUDA_ERROR_OUT_OF_MEMORY and an explanation naming the reason.
#include <cuda.h>
#include <cuda_shim_ext.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ipc/segment.hpp"
#include "multiprocess.hpp"

namespace seg = cuda_shim::ipc::seg;
using cuda_shim::ipc::kLayoutVersion;
using cuda_shim::ipc::RecordKind;
using Clock = std::chrono::steady_clock;

namespace {

void child_ctx() {
  CUcontext c = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS ||
      cuCtxSetCurrent(c) != CUDA_SUCCESS)
    _exit(99);
}

std::string why() {
  char buf[1024];
  cuShimGetLastExplanation(buf, sizeof buf);
  return buf;
}

std::string registry_check(int& n) {
  std::string buf(1 << 16, '\0');
  n = cuShimRegistryCheck(buf.data(), buf.size());
  buf.resize(std::strlen(buf.c_str()));
  return buf;
}

std::string name_for(const char* scenario) {
  return std::string("cuda-shim-rr-") + scenario + "-" + std::to_string(::getpid());
}
std::string path_of(const std::string& name) { return "/dev/shm/" + name; }
bool exists(const std::string& name) {
  struct stat st;
  return ::stat(path_of(name).c_str(), &st) == 0;
}
// Whatever a failed scenario leaves in /dev/shm goes when it ends (after its assertions).
struct Cleanup {
  std::string name;
  ~Cleanup() { ::unlink(path_of(name).c_str()); }
};

// Sends a string (length, bytes).
void send_str(mp::Channel& ch, const std::string& s) {
  ch.send_int(static_cast<int64_t>(s.size()));
  ch.send(s.data(), s.size());
}
std::string recv_str(mp::Channel& ch) {
  int64_t n = ch.recv_int();
  if (n < 0 || n > (1 << 20)) return "<bad length>";
  std::string s(static_cast<size_t>(n), '\0');
  ch.recv(s.data(), s.size());
  return s;
}

// The segment's bytes as the test process sees them (never attached through the library).
struct Raw {
  int fd = -1;
  void* p = MAP_FAILED;
  size_t n = 0;
  explicit Raw(const std::string& name, size_t len = sizeof(seg::Layout)) : n(len) {
    fd = ::open(path_of(name).c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ~Raw() {
    if (p != MAP_FAILED) ::munmap(p, n);
    if (fd >= 0) ::close(fd);
  }
  seg::Layout* L() const { return p == MAP_FAILED ? nullptr : static_cast<seg::Layout*>(p); }
};

// Writes a stray segment file: `size` bytes, the first `bytes` given, with mode `mode`.
void write_segment(const std::string& name, const std::vector<unsigned char>& bytes, size_t size, mode_t mode) {
  ::unlink(path_of(name).c_str());
  int fd = ::open(path_of(name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  if (!bytes.empty())
    REQUIRE(::pwrite(fd, bytes.data(), std::min(bytes.size(), size), 0) ==
            static_cast<ssize_t>(std::min(bytes.size(), size)));
  REQUIRE(::fchmod(fd, mode) == 0);  // not subject to the umask
  ::close(fd);
}

template <class T>
std::vector<unsigned char> bytes_of(const T& v) {
  std::vector<unsigned char> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

}  // namespace

// ---- Children ----

// Exports legacy IPC memory (0x3d), an IPC event and a fabric pool (IMEX channel 0 in its
// environment), sends the three handles, then is killed (command 1) or waits for command 0, frees
// its legacy memory, says so, and on the next command exits.
MP_CHILD(rr_exporter) {
  child_ctx();
  CUdeviceptr d = 0;
  CUipcMemHandle h;
  CUevent ev = nullptr;
  CUipcEventHandle eh;
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  CUmemFabricHandle fh;
  std::memset(&fh, 0, sizeof fh);
  bool ok = cuMemAlloc(&d, 1 << 16) == CUDA_SUCCESS && cuMemsetD8(d, 0x3d, 1 << 16) == CUDA_SUCCESS &&
            cuIpcGetMemHandle(&h, d) == CUDA_SUCCESS &&
            cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
            cuEventRecord(ev, nullptr) == CUDA_SUCCESS && cuIpcGetEventHandle(&eh, ev) == CUDA_SUCCESS &&
            cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS &&
            cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0) == CUDA_SUCCESS &&
            cuCtxSynchronize() == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 1);
  if (!ok) return 1;
  ch.send_pod(h);
  ch.send_pod(eh);
  ch.send_pod(fh);
  ch.send_int(::getpid());
  if (ch.recv_int() == 1) pause();  // to be killed
  ch.send_int(cuMemFree(d));
  (void)ch.recv_int();
  cuEventDestroy(ev);
  cuMemPoolDestroy(pool);
  return 0;
}

// Maps the segment raw, takes its robust lock (as the library does) and, holding it, leaves what
// a process killed in the middle of an update leaves, then waits to be killed:
//   bit 1: a record published without its counter (killed between the state and ++live_records),
//          and a tomb counter that is off;
//   bit 2: a second copy of pid P's legacy record further along its probe sequence (killed in
//          rehash() between copying a record and tombing its old slot).
MP_CHILD(rr_lock_holder) {
  const char* name = std::getenv("CUDA_SHIM_REGISTRY");
  int mode = static_cast<int>(ch.recv_int());
  int victim = static_cast<int>(ch.recv_int());
  Raw raw(name ? name : "");
  seg::Layout* l = raw.L();
  if (!l) return 2;
  int r = pthread_mutex_lock(&l->h.lock);
  if (r == EOWNERDEAD)
    pthread_mutex_consistent(&l->h.lock);
  else if (r != 0)
    return 3;
  bool ok = true;
  if (mode & 1) {
    std::mt19937_64 rng(::getpid());
    seg::RecordSlot* d = nullptr;
    for (uint32_t i = 0, h = static_cast<uint32_t>(rng()); i < seg::kRecords && !d; ++i)
      if (l->records[(h + i) & (seg::kRecords - 1)].state == seg::kFree) d = &l->records[(h + i) & (seg::kRecords - 1)];
    if (!d) return 4;
    // Published where find() will look for it: at its token's home (the slot found free).
    d->rec = cuda_shim::ipc::Record{};
    d->rec.kind = RecordKind::legacy_mem;
    d->rec.token.hi = rng() | 1;
    d->rec.token.lo = static_cast<uint64_t>(d - l->records);  // home = this slot
    d->rec.pid = ::getpid();
    d->state = seg::kLive;  // ... and killed before ++live_records
    l->h.tombs += 5;
  }
  if (mode & 2) {
    ok = false;
    for (uint32_t k = 0; k < seg::kRecords && !ok; ++k) {
      seg::RecordSlot& s = l->records[k];
      if (s.state != seg::kLive || s.rec.pid != victim || s.rec.kind != RecordKind::legacy_mem) continue;
      for (uint32_t i = 1; i < seg::kRecords; ++i) {
        seg::RecordSlot& d = l->records[(k + i) & (seg::kRecords - 1)];
        if (d.state == seg::kLive) continue;
        d.rec = s.rec;
        d.state = seg::kLive;  // the copy; the counters untouched
        ok = true;
        break;
      }
    }
  }
  ch.send_int(ok ? 0 : 5);
  pause();  // killed holding the lock
  return 0;
}

// A new process on a registry that crashed processes left: first attaches (timed) and checks
// it, then tries the dead exporter's handles (if sent), then exports legacy memory (0x4a) and an
// IPC event for an importer, and at last frees them and exits.
MP_CHILD(rr_survivor) {
  child_ctx();
  bool have_dead = ch.recv_int() == 1;
  CUipcMemHandle dh{};
  CUipcEventHandle deh{};
  CUmemFabricHandle dfh{};
  if (have_dead) {
    dh = ch.recv_pod<CUipcMemHandle>();
    deh = ch.recv_pod<CUipcEventHandle>();
    dfh = ch.recv_pod<CUmemFabricHandle>();
  }
  auto t0 = Clock::now();
  int n = -2;
  std::string report = registry_check(n);
  ch.send_int(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
  ch.send_int(n);
  send_str(ch, report);
  if (have_dead) {
    CUdeviceptr p = 0;
    ch.send_int(cuIpcOpenMemHandle(&p, dh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    send_str(ch, why());
    CUevent ev = nullptr;
    CUresult er = cuIpcOpenEventHandle(&ev, deh);
    ch.send_int(er);
    ch.send_int(er == CUDA_SUCCESS ? cuEventQuery(ev) : er);
    if (er == CUDA_SUCCESS) cuEventDestroy(ev);
    CUmemoryPool pool = nullptr;
    ch.send_int(cuMemPoolImportFromShareableHandle(&pool, &dfh, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    send_str(ch, why());
  }
  // Sharing works.
  CUdeviceptr d = 0;
  CUipcMemHandle h;
  CUevent ev = nullptr;
  CUipcEventHandle eh;
  bool ok = cuMemAlloc(&d, 1 << 16) == CUDA_SUCCESS && cuMemsetD8(d, 0x4a, 1 << 16) == CUDA_SUCCESS &&
            cuCtxSynchronize() == CUDA_SUCCESS && cuIpcGetMemHandle(&h, d) == CUDA_SUCCESS &&
            cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
            cuEventRecord(ev, nullptr) == CUDA_SUCCESS && cuIpcGetEventHandle(&eh, ev) == CUDA_SUCCESS;
  ch.send_int(ok ? 0 : 1);
  ch.send_pod(h);
  ch.send_pod(eh);
  (void)ch.recv_int();  // the importer is done
  ch.send_int(registry_check(n).empty() && n == 0 ? 0 : n);
  cuMemFree(d);
  cuEventDestroy(ev);
  return 0;
}

// Opens a legacy handle (expecting bytes `fill`) and an event handle; reports the codes.
MP_CHILD(rr_importer) {
  child_ctx();
  auto h = ch.recv_pod<CUipcMemHandle>();
  auto eh = ch.recv_pod<CUipcEventHandle>();
  int fill = static_cast<int>(ch.recv_int());
  CUdeviceptr p = 0;
  CUresult r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  ch.send_int(r);
  if (r == CUDA_SUCCESS) {
    std::vector<unsigned char> buf(1 << 16);
    bool ok = cuMemcpyDtoH(buf.data(), p, buf.size()) == CUDA_SUCCESS;
    for (unsigned char c : buf) ok = ok && c == fill;
    ch.send_int(ok);
    ch.send_int(cuIpcCloseMemHandle(p));
  }
  CUevent ev = nullptr;
  CUresult er = cuIpcOpenEventHandle(&ev, eh);
  ch.send_int(er);
  if (er == CUDA_SUCCESS) {
    ch.send_int(cuEventSynchronize(ev));
    cuEventDestroy(ev);
  }
  int n = -2;
  std::string report = registry_check(n);
  ch.send_int(n);
  send_str(ch, report);
  return 0;
}

// Many exports at once, then churn: exports made and freed until the table's tombs force
// rehash() several times; every export made first must still be found; reports the check.
MP_CHILD(rr_churn) {
  child_ctx();
  const int keep = static_cast<int>(ch.recv_int()), churn = static_cast<int>(ch.recv_int());
  std::vector<CUdeviceptr> kept(keep);
  std::vector<CUipcMemHandle> hs(keep);
  for (int i = 0; i < keep; ++i)
    if (cuMemAlloc(&kept[i], 4096) != CUDA_SUCCESS ||
        cuMemsetD8(kept[i], static_cast<unsigned char>(i), 4096) != CUDA_SUCCESS ||
        cuIpcGetMemHandle(&hs[i], kept[i]) != CUDA_SUCCESS)
      return 2;
  cuCtxSynchronize();
  for (int i = 0; i < churn; ++i) {
    CUdeviceptr d = 0;
    CUipcMemHandle h;
    if (cuMemAlloc(&d, 4096) != CUDA_SUCCESS || cuIpcGetMemHandle(&h, d) != CUDA_SUCCESS ||
        cuMemFree(d) != CUDA_SUCCESS)
      return 3;
  }
  int n = -2;
  std::string report = registry_check(n);
  ch.send_int(n);
  send_str(ch, report);
  for (auto& h : hs) ch.send_pod(h);
  (void)ch.recv_int();  // the importer is done
  for (auto d : kept) cuMemFree(d);
  return 0;
}

// Opens n handles, each expecting bytes i; reports how many opened with the right bytes.
MP_CHILD(rr_open_many) {
  child_ctx();
  int n = static_cast<int>(ch.recv_int());
  int good = 0;
  for (int i = 0; i < n; ++i) {
    auto h = ch.recv_pod<CUipcMemHandle>();
    CUdeviceptr p = 0;
    if (cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) continue;
    unsigned char b = 0xff;
    if (cuMemcpyDtoH(&b, p, 1) == CUDA_SUCCESS && b == static_cast<unsigned char>(i)) ++good;
    cuIpcCloseMemHandle(p);
  }
  ch.send_int(good);
  return 0;
}

// First call on a registry segment the test staged: an export (success, or the refusal and its
// explanation), the check, then (on success) the handle for an importer.
MP_CHILD(rr_fresh) {
  child_ctx();
  CUdeviceptr d = 0;
  CUipcMemHandle h;
  if (cuMemAlloc(&d, 1 << 16) != CUDA_SUCCESS || cuMemsetD8(d, 0x2b, 1 << 16) != CUDA_SUCCESS ||
      cuCtxSynchronize() != CUDA_SUCCESS)
    return 2;
  auto t0 = Clock::now();
  CUresult r = cuIpcGetMemHandle(&h, d);
  ch.send_int(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
  ch.send_int(r);
  send_str(ch, why());
  int n = -2;
  std::string report = registry_check(n);
  ch.send_int(n);
  send_str(ch, report);
  if (r != CUDA_SUCCESS) return 0;
  CUevent ev = nullptr;
  CUipcEventHandle eh;
  if (cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
      cuIpcGetEventHandle(&eh, ev) != CUDA_SUCCESS)
    return 3;
  ch.send_pod(h);
  ch.send_pod(eh);
  (void)ch.recv_int();
  cuMemFree(d);
  cuEventDestroy(ev);
  return 0;
}

// ---- Scenarios ----

namespace {

// The importer opens the survivor's exports; both then exit and the segment goes with them.
void share_through(mp::Child& owner, int fill, const std::string& name) {
  auto h = owner.ch.recv_pod<CUipcMemHandle>();
  auto eh = owner.ch.recv_pod<CUipcEventHandle>();
  auto imp = mp::spawn("rr_importer", {"CUDA_SHIM_REGISTRY=" + name});
  imp.ch.send_pod(h);
  imp.ch.send_pod(eh);
  imp.ch.send_int(fill);
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);  // open
  CHECK(imp.ch.recv_int() == 1);             // the owner's bytes
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);  // close
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);  // the event opens
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);  // ... and synchronizes
  CHECK(imp.ch.recv_int() == 0);             // the importer's registry check
  INFO(recv_str(imp.ch));
  CHECK(imp.wait() == 0);
}

}  // namespace

TEST_CASE("(emulator) a crashed run's registry: an exporter and a lock holder killed, then a new process works",
          "[ipc][registry][recovery]") {
  const std::string name = name_for("a");
  Cleanup cleanup{name};
  const std::vector<std::string> env = {"CUDA_SHIM_REGISTRY=" + name, "CUDA_SHIM_IMEX_CHANNEL=0"};
  auto ex = mp::spawn("rr_exporter", env);
  REQUIRE(ex.ch.recv_int() == 0);
  auto h = ex.ch.recv_pod<CUipcMemHandle>();
  auto eh = ex.ch.recv_pod<CUipcEventHandle>();
  auto fh = ex.ch.recv_pod<CUmemFabricHandle>();
  int ex_pid = static_cast<int>(ex.ch.recv_int());
  ex.ch.send_int(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ex.kill(SIGKILL);
  REQUIRE(ex.wait() == 128 + SIGKILL);
  REQUIRE(exists(name));  // a crash leaves the segment
  {
    Raw raw(name);
    REQUIRE(raw.L());
    CHECK(raw.L()->h.live_records >= 2);  // the legacy and the fabric export, still there
  }

  // Killed holding the lock, half-way through publishing a record.
  auto holder = mp::spawn("rr_lock_holder", env);
  holder.ch.send_int(1);
  holder.ch.send_int(0);
  REQUIRE(holder.ch.recv_int() == 0);
  holder.kill(SIGKILL);
  REQUIRE(holder.wait() == 128 + SIGKILL);

  auto sv = mp::spawn("rr_survivor", env);
  sv.ch.send_int(1);
  sv.ch.send_pod(h);
  sv.ch.send_pod(eh);
  sv.ch.send_pod(fh);
  int64_t attach_ms = sv.ch.recv_int();
  CHECK(attach_ms < 2000);       // the lock a dead process held is taken over at once
  CHECK(sv.ch.recv_int() == 0);  // cuShimRegistryCheck: swept, counters repaired, nothing wrong
  INFO(recv_str(sv.ch));
  // The dead exporter's handles: the driver's codes (measured on driver 580).
  CHECK(sv.ch.recv_int() == CUDA_ERROR_INVALID_HANDLE);
  std::string w = recv_str(sv.ch);
  CHECK(w.find("exporter (pid " + std::to_string(ex_pid) + ") exited or was killed") != std::string::npos);
  CHECK(sv.ch.recv_int() == CUDA_SUCCESS);              // an IPC event outlives its exporter ...
  CHECK(sv.ch.recv_int() == CUDA_SUCCESS);              // ... and reads complete
  CHECK(sv.ch.recv_int() == CUDA_ERROR_NOT_SUPPORTED);  // the fabric export went with it
  CHECK(recv_str(sv.ch).find("names no exported memory") != std::string::npos);
  REQUIRE(sv.ch.recv_int() == 0);
  share_through(sv, 0x4a, name);
  sv.ch.send_int(0);
  CHECK(sv.ch.recv_int() == 0);  // the check once more, with the importer gone
  CHECK(sv.wait() == 0);
  CHECK_FALSE(exists(name));  // the last process out removed it
}

TEST_CASE("(emulator) a holder killed in the middle of rehash() leaves a record twice: swept, the export still works",
          "[ipc][registry][recovery]") {
  const std::string name = name_for("rehash");
  Cleanup cleanup{name};
  const std::vector<std::string> env = {"CUDA_SHIM_REGISTRY=" + name, "CUDA_SHIM_IMEX_CHANNEL=0"};
  auto ex = mp::spawn("rr_exporter", env);  // stays alive
  REQUIRE(ex.ch.recv_int() == 0);
  auto h = ex.ch.recv_pod<CUipcMemHandle>();
  auto eh = ex.ch.recv_pod<CUipcEventHandle>();
  (void)ex.ch.recv_pod<CUmemFabricHandle>();
  int ex_pid = static_cast<int>(ex.ch.recv_int());

  auto holder = mp::spawn("rr_lock_holder", env);
  holder.ch.send_int(2 | 1);
  holder.ch.send_int(ex_pid);
  REQUIRE(holder.ch.recv_int() == 0);
  holder.kill(SIGKILL);
  REQUIRE(holder.wait() == 128 + SIGKILL);
  {
    Raw raw(name);
    REQUIRE(raw.L());
    int copies = 0;
    for (auto& r : raw.L()->records)
      copies += r.state == seg::kLive && r.rec.pid == ex_pid && r.rec.kind == RecordKind::legacy_mem;
    CHECK(copies == 2);  // staged
  }

  // The next process in: the duplicate is dropped, the counters recounted, the export opens.
  auto imp = mp::spawn("rr_importer", env);
  imp.ch.send_pod(h);
  imp.ch.send_pod(eh);
  imp.ch.send_int(0x3d);
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);
  CHECK(imp.ch.recv_int() == 1);
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);
  CHECK(imp.ch.recv_int() == CUDA_SUCCESS);
  CHECK(imp.ch.recv_int() == 0);
  INFO(recv_str(imp.ch));
  CHECK(imp.wait() == 0);
  {
    Raw raw(name);
    int copies = 0;
    for (auto& r : raw.L()->records)
      copies += r.state == seg::kLive && r.rec.pid == ex_pid && r.rec.kind == RecordKind::legacy_mem;
    CHECK(copies == 1);
  }
  // Freed by its live exporter, the handle opens nothing (no copy left behind): INVALID_VALUE.
  ex.ch.send_int(0);
  CHECK(ex.ch.recv_int() == CUDA_SUCCESS);
  auto late = mp::spawn("rr_importer", env);
  late.ch.send_pod(h);
  late.ch.send_pod(eh);
  late.ch.send_int(0x3d);
  CHECK(late.ch.recv_int() == CUDA_ERROR_INVALID_VALUE);
  CHECK(late.ch.recv_int() == CUDA_SUCCESS);  // the event is the exporter's still
  CHECK(late.ch.recv_int() == CUDA_SUCCESS);
  CHECK(late.ch.recv_int() == 0);
  INFO(recv_str(late.ch));
  CHECK(late.wait() == 0);
  ex.ch.send_int(0);
  CHECK(ex.wait() == 0);
  CHECK_FALSE(exists(name));
}

TEST_CASE("(emulator) tombs force rehash() several times and every live export is still found",
          "[ipc][registry][recovery]") {
  const std::string name = name_for("churn");
  Cleanup cleanup{name};
  auto c = mp::spawn("rr_churn", {"CUDA_SHIM_REGISTRY=" + name});
  const int keep = 200;
  c.ch.send_int(keep);
  c.ch.send_int(3 * static_cast<int>(seg::kRecords / 4) + 1000);  // > 8192 tombs three times over
  CHECK(c.ch.recv_int() == 0);
  INFO(recv_str(c.ch));
  std::vector<CUipcMemHandle> hs;
  for (int i = 0; i < keep; ++i) hs.push_back(c.ch.recv_pod<CUipcMemHandle>());
  auto o = mp::spawn("rr_open_many", {"CUDA_SHIM_REGISTRY=" + name});
  o.ch.send_int(keep);
  for (auto& h : hs) o.ch.send_pod(h);
  CHECK(o.ch.recv_int() == keep);
  CHECK(o.wait() == 0);
  c.ch.send_int(0);
  CHECK(c.wait() == 0);
  CHECK_FALSE(exists(name));
}

TEST_CASE("(emulator) a segment of an older layout, garbage, truncated or never made ready is replaced",
          "[ipc][registry][recovery]") {
  struct Case {
    const char* what;
    std::vector<unsigned char> bytes;
    size_t size;
  };
  seg::Header older{};
  older.magic = seg::kMagic;
  older.version = kLayoutVersion - 1;
  older.ready = 1;
  older.size = sizeof(seg::Layout) - 4096 * 16;
  seg::Header unready{};
  unready.magic = seg::kMagic;
  unready.version = kLayoutVersion;
  unready.ready = 0;  // its creator died before finishing
  unready.size = sizeof(seg::Layout);
  std::vector<unsigned char> garbage(4096);
  std::mt19937 rng(7);
  for (auto& b : garbage) b = static_cast<unsigned char>(rng());
  std::vector<Case> cases = {
      {"older layout version", bytes_of(older), static_cast<size_t>(older.size)},
      {"garbage", garbage, sizeof(seg::Layout)},
      {"truncated below a header", garbage, 16},
      {"empty", {}, 0},
      {"never made ready", bytes_of(unready), sizeof(seg::Layout)},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    INFO(k.what);
    const std::string name = name_for(("b" + std::to_string(i)).c_str());
    Cleanup cleanup{name};
    write_segment(name, k.bytes, k.size, 0600);
    struct stat before {};
    REQUIRE(::stat(path_of(name).c_str(), &before) == 0);
    auto f = mp::spawn("rr_fresh", {"CUDA_SHIM_REGISTRY=" + name});
    int64_t ms = f.ch.recv_int();
    CHECK(ms < 2000);
    CHECK(f.ch.recv_int() == CUDA_SUCCESS);  // the export: the registry was replaced
    (void)recv_str(f.ch);
    CHECK(f.ch.recv_int() == 0);
    INFO(recv_str(f.ch));
    {
      struct stat now {};
      REQUIRE(::stat(path_of(name).c_str(), &now) == 0);
      CHECK(now.st_ino != before.st_ino);
      CHECK(static_cast<size_t>(now.st_size) == sizeof(seg::Layout));
      CHECK((now.st_mode & 0777) == 0600);
      Raw raw(name);
      REQUIRE(raw.L());
      CHECK(raw.L()->h.magic == seg::kMagic);
      CHECK(raw.L()->h.version == kLayoutVersion);
    }
    share_through(f, 0x2b, name);
    f.ch.send_int(0);
    CHECK(f.wait() == 0);
    CHECK_FALSE(exists(name));
  }
}

TEST_CASE("(emulator) a registry segment others could write (mode 0666) or of another user is refused",
          "[ipc][registry][recovery]") {
  seg::Header good{};
  good.magic = seg::kMagic;
  good.version = kLayoutVersion;
  good.size = sizeof(seg::Layout);
  struct Case {
    const char* what;
    mode_t mode;
    uid_t uid;
    std::string reason;
  };
  std::vector<Case> cases = {{"mode 0666", 0666, ::getuid(), "with mode 666; it must be this user's, mode 0600"}};
  if (::geteuid() == 0)  // root may give the file away and still open it
    cases.push_back({"another user's", 0600, 65534, "belongs to uid 65534 with mode 600"});
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    INFO(k.what);
    const std::string name = name_for(("perm" + std::to_string(i)).c_str());
    Cleanup cleanup{name};
    write_segment(name, bytes_of(good), sizeof(seg::Layout), k.mode);
    if (k.uid != ::getuid()) REQUIRE(::chown(path_of(name).c_str(), k.uid, static_cast<gid_t>(-1)) == 0);
    struct stat before {};
    REQUIRE(::stat(path_of(name).c_str(), &before) == 0);
    auto f = mp::spawn("rr_fresh", {"CUDA_SHIM_REGISTRY=" + name});
    (void)f.ch.recv_int();
    CHECK(f.ch.recv_int() == CUDA_ERROR_OUT_OF_MEMORY);  // registry.hpp: "the segment cannot be attached"
    std::string w = recv_str(f.ch);
    CHECK(w.find("cuIpcGetMemHandle: cannot attach the shared registry segment '" + name + "'") != std::string::npos);
    CHECK(w.find(k.reason) != std::string::npos);
    CHECK(f.ch.recv_int() == -1);  // cuShimRegistryCheck: no registry to check, and why
    std::string report = recv_str(f.ch);
    CHECK(report.find(k.reason) != std::string::npos);
    CHECK(f.wait() == 0);
    struct stat now {};
    REQUIRE(::stat(path_of(name).c_str(), &now) == 0);  // left alone: never replaced or removed
    CHECK(now.st_ino == before.st_ino);
    CHECK((now.st_mode & 0777) == k.mode);
    ::unlink(path_of(name).c_str());
  }
}
