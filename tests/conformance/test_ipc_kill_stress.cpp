// kill -9 under load: worker processes (this binary re-run) export and import memory through
// every IPC path at random while the parent, the hub that forwards handles between them, kills
// random workers with SIGKILL at random moments (mid-call too: a worker is told to run an export
// loop just before it dies) and starts new ones. Survivors keep working: every call returns
// success, or exactly the driver's code for a handle whose exporter died; their own memory keeps
// its contents; no call takes more than 2 s (no lock is left held by the dead). On the emulator,
// after each kill a survivor's cuShimRegistryCheck finds no fault in the shared registry, and
// once all workers exited normally their registry segment is gone from /dev/shm.
// Every export stays until no import of it is under way (the worker asks the parent before it
// frees), so an import fails only when its exporter was killed; importers write a mailbox that
// the exporter checks when it frees the memory. CUDA_SHIM_STRESS_ROUNDS (kills, default 200:
// about 25 s on two cores) and CUDA_SHIM_STRESS_SECONDS (a cap on the killing, default 30 s:
// sanitizer builds, the real driver) size the run; it prints one line of figures.
// What importing gives once the exporter was killed or exited, one handle at a time:
// test_ipc_kill_stress_codes.cpp. The workers: ipc_kill_worker.hpp.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "ipc_kill_stress.hpp"
#include "ipc_kill_worker.hpp"
#include "multiprocess.hpp"
#if !CUDA_SHIM_REAL_BACKEND
#include <cuda_shim_ext.h>
#endif

using namespace kill9;

MP_CHILD(kill9_worker) {
  child_primary_ctx();
  Worker w(ch);
  return w.run();
}

TEST_CASE("kill -9 under load: survivors keep sharing memory and events", "[ipc][kill][stress]") {
  const int kWorkers = 4;
  const int rounds = env_int("CUDA_SHIM_STRESS_ROUNDS", 200);
  const int cap_s = env_int("CUDA_SHIM_STRESS_SECONDS", 30);
  const std::string registry = "cuda-shim-kill9-" + std::to_string(::getpid());
#if !CUDA_SHIM_REAL_BACKEND
  struct Cleanup {  // what a failed run leaves goes when the test ends (after its assertions)
    std::string path;
    ~Cleanup() { ::unlink(path.c_str()); }
  } cleanup{"/dev/shm/" + registry};
#endif
  std::mt19937_64 rng(0x6b696c6c39ull ^ static_cast<uint64_t>(::getpid()));
  const auto t_start = Clock::now();

  struct Slot {
    std::unique_ptr<mp::Child> c;
    int gen = 0;
    bool up = false;
    int outstanding = 0;
  };
  std::vector<Slot> slots(kWorkers);
  std::set<std::pair<int, int>> killed;  // (slot, generation)
  struct Export {
    int slot = 0, gen = 0;
    int64_t local = 0;
    int kind = 0;
    uint64_t size = 0, seed = 0;
    unsigned char bytes[64] = {};
    int fd = -1;
    bool retiring = false;
    int outstanding = 0, ok = 0;
    bool maybe = false;  // an importer died mid-import: the mailbox may or may not be written
  };
  std::map<int64_t, Export> exports;
  struct Pending {
    int64_t exp;
    int exp_slot, exp_gen, kind;
    int imp_slot, imp_gen;
  };
  std::vector<Pending> pending;
  int64_t next_export = 1;
  std::vector<std::string> failures;
  int kills = 0, mid_loop_kills = 0, done_rounds = 0, checks = 0, spawned = 0;
  long long pub[4] = {}, burst_exports = 0, imports_ok = 0, dead_refused[4] = {}, dead_opened[4] = {},
            worker_exports = 0, worker_imports = 0, worker_verifies = 0;

  auto failure = [&](const std::string& s) {
    if (failures.size() < 50) failures.push_back(s);
  };
  auto spawn = [&](int i) {
    Slot& s = slots[i];
    s.c = std::make_unique<mp::Child>(mp::spawn("kill9_worker", {"CUDA_SHIM_REGISTRY=" + registry}));
    ++s.gen;
    s.up = s.c->pid > 0;
    s.outstanding = 0;
    ++spawned;
    Msg m;
    m.op = kInit;
    m.a = i;
    m.b = s.gen;
    m.seed = rng();
    send_msg(s.c->ch.fd(), m);
  };
  auto free_ok = [&](std::map<int64_t, Export>::iterator it) {
    Export& e = it->second;
    Msg m;
    m.op = kFreeOk;
    m.id = e.local;
    m.a = e.ok > 0 ? 1 : e.maybe ? 2 : 0;
    if (slots[e.slot].gen == e.gen && slots[e.slot].up) send_msg(slots[e.slot].c->ch.fd(), m);
    if (e.fd >= 0) ::close(e.fd);
    exports.erase(it);
  };
  // Everything a worker says; `dead` when its messages are read after it was killed.
  int checked_result = -1;
  std::string checked_text;
  auto on_msg = [&](int i, const Msg& m, int fd, bool dead) {
    Slot& s = slots[i];
    switch (m.op) {
      case kHello:
        break;
      case kPubLegacy:
      case kPubPool:
      case kPubEvent: {
        int kind = m.op == kPubLegacy ? kLegacy : m.op == kPubPool ? kPool : kEvent;
        ++pub[kind];
        if (dead) break;
        Export e;
        e.slot = i;
        e.gen = s.gen;
        e.local = m.id;
        e.kind = kind;
        e.size = m.size;
        e.seed = m.seed;
        std::memcpy(e.bytes, m.bytes, sizeof e.bytes);
        e.fd = fd;
        fd = -1;
        exports[next_export++] = e;
        break;
      }
      case kWantFree: {
        if (dead) break;
        for (auto it = exports.begin(); it != exports.end(); ++it)
          if (it->second.slot == i && it->second.gen == s.gen && it->second.local == m.id) {
            it->second.retiring = true;
            if (it->second.outstanding == 0) free_ok(it);
            break;
          }
        break;
      }
      case kImportDone: {
        auto p = std::find_if(pending.begin(), pending.end(),
                              [&](const Pending& x) { return x.exp == m.id && x.imp_slot == i && x.imp_gen == s.gen; });
        if (p == pending.end()) {
          failure("an import result nobody asked for");
          break;
        }
        Pending pd = *p;
        pending.erase(p);
        --s.outstanding;
        bool exporter_killed = killed.count({pd.exp_slot, pd.exp_gen}) > 0;
        auto r0 = static_cast<CUresult>(m.a), r1 = static_cast<CUresult>(m.b);
        static const char* kname[] = {"?", "legacy memory", "pool memory", "IPC event"};
        std::string what = std::string(kname[pd.kind]) + " of worker " + std::to_string(pd.exp_slot) + " gen " +
                           std::to_string(pd.exp_gen) + " imported by worker " + std::to_string(i);
        if (!exporter_killed) {
          if (r0 != CUDA_SUCCESS || r1 != CUDA_SUCCESS || !m.c)
            failure(what + ": open " + cu_name(r0) + ", then " + cu_name(r1) + (m.c ? "" : ", wrong bytes") +
                    " while its exporter was alive");
          else
            ++imports_ok;
        } else {
          // The exporter was killed before this result came: its handle may open (the import
          // won the race, or the memory outlives it) or give exactly the documented code.
          CUresult dead_code = pd.kind == kLegacy ? kDeadLegacy : pd.kind == kEvent ? kDeadEvent : CUDA_SUCCESS;
          if (r0 == CUDA_SUCCESS && r1 == CUDA_SUCCESS)
            ++dead_opened[pd.kind];
          else if (r0 == dead_code && r0 != CUDA_SUCCESS)
            ++dead_refused[pd.kind];
          else
            failure(what + " (its exporter killed): open " + cu_name(r0) + ", then " + cu_name(r1) + "; expected " +
                    cu_name(dead_code));
        }
        auto it = exports.find(pd.exp);
        if (it != exports.end()) {
          --it->second.outstanding;
          if (r0 == CUDA_SUCCESS && r1 == CUDA_SUCCESS && m.c) ++it->second.ok;
          if (it->second.retiring && it->second.outstanding == 0) free_ok(it);
        }
        break;
      }
      case kChecked:
        checked_result = static_cast<int>(m.a);
        checked_text = m.text;
        break;
      case kBurstDone:
        burst_exports += m.a;
        break;
      case kFail:
        failure(m.text);
        break;
      case kStats:
        worker_exports += m.a;
        worker_imports += m.b;
        worker_verifies += m.c;
        break;
      default:
        failure("unexpected message " + std::to_string(m.op) + " from worker " + std::to_string(i));
    }
    if (fd >= 0) ::close(fd);
  };
  // Reads what is there (up to `ms` for the first message); false when a worker hung up.
  auto service = [&](int ms) {
    std::vector<pollfd> fds;
    std::vector<int> idx;
    for (int i = 0; i < kWorkers; ++i)
      if (slots[i].up) {
        fds.push_back({slots[i].c->ch.fd(), POLLIN, 0});
        idx.push_back(i);
      }
    if (::poll(fds.data(), fds.size(), ms) <= 0) return;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = idx[k];
      while (slots[i].up && readable(slots[i].c->ch.fd(), 0)) {
        Msg m;
        int fd = -1;
        if (!recv_msg(slots[i].c->ch.fd(), m, &fd)) {
          int st = slots[i].c->wait(5);
          failure("worker " + std::to_string(i) + " hung up unexpectedly (status " + std::to_string(st) + ")");
          slots[i].up = false;
          killed.insert({i, slots[i].gen});
          break;
        }
        on_msg(i, m, fd, false);
      }
    }
  };
  // Sends one export to another worker now and then.
  auto forward = [&] {
    if (exports.empty()) return;
    auto it = exports.begin();
    std::advance(it, static_cast<long>(rng() % exports.size()));
    Export& e = it->second;
    if (e.retiring || !slots[e.slot].up || slots[e.slot].gen != e.gen) return;
    int to = static_cast<int>(rng() % kWorkers);
    if (to == e.slot || !slots[to].up || slots[to].outstanding >= 3) return;
    for (auto& p : pending)
      if (p.exp == it->first && p.imp_slot == to) return;
    Msg m;
    m.op = kImport;
    m.id = it->first;
    m.kind = e.kind;
    m.size = e.size;
    m.seed = e.seed;
    std::memcpy(m.bytes, e.bytes, sizeof m.bytes);
    if (!send_msg(slots[to].c->ch.fd(), m, e.fd)) return;
    pending.push_back({it->first, e.slot, e.gen, e.kind, to, slots[to].gen});
    ++slots[to].outstanding;
    ++e.outstanding;
  };
  auto run_for = [&](std::chrono::milliseconds d, bool fwd = true) {
    auto until = Clock::now() + d;
    while (Clock::now() < until) {
      service(2);
      if (fwd) forward();
    }
  };

  for (int i = 0; i < kWorkers; ++i) spawn(i);
  run_for(std::chrono::milliseconds(300));

  for (int round = 0; round < rounds && failures.empty(); ++round) {
    if (Clock::now() - t_start > std::chrono::seconds(cap_s)) break;
    run_for(std::chrono::milliseconds(30 + rng() % 150));
    int v = static_cast<int>(rng() % kWorkers);
    Slot& s = slots[v];
    if (!s.up) continue;
    if (rng() % 3 == 0) {  // mid-call: in its export loop
      Msg m;
      m.op = kBurst;
      send_msg(s.c->ch.fd(), m);
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 4000));
      ++mid_loop_kills;
    }
    s.c->kill(SIGKILL);
    int st = s.c->wait(10);
    if (st != 128 + SIGKILL) failure("worker " + std::to_string(v) + " ended with status " + std::to_string(st));
    ++kills;
    s.up = false;
    killed.insert({v, s.gen});
    // What it said before it died still counts (a failure it reported, imports it finished).
    while (readable(s.c->ch.fd(), 0)) {
      Msg m;
      int fd = -1;
      if (!recv_msg(s.c->ch.fd(), m, &fd)) break;
      on_msg(v, m, fd, true);
    }
    for (auto it = exports.begin(); it != exports.end();) {
      if (it->second.slot == v && it->second.gen == s.gen) {
        if (it->second.fd >= 0) ::close(it->second.fd);
        it = exports.erase(it);
      } else {
        ++it;
      }
    }
    for (auto p = pending.begin(); p != pending.end();) {
      if (p->imp_slot == v && p->imp_gen == s.gen) {
        auto it = exports.find(p->exp);
        if (it != exports.end()) {
          --it->second.outstanding;
          it->second.maybe = true;
          if (it->second.retiring && it->second.outstanding == 0) free_ok(it);
        }
        p = pending.erase(p);
      } else {
        ++p;
      }
    }
#if !CUDA_SHIM_REAL_BACKEND
    // A survivor checks the registry right away: the dead worker swept, nothing inconsistent.
    std::vector<int> alive;
    for (int i = 0; i < kWorkers; ++i)
      if (slots[i].up) alive.push_back(i);
    if (!alive.empty()) {
      int by = alive[rng() % alive.size()];
      checked_result = -2;
      Msg m;
      m.op = kCheck;
      send_msg(slots[by].c->ch.fd(), m);
      auto until = Clock::now() + std::chrono::seconds(10);
      while (checked_result == -2 && Clock::now() < until && slots[by].up) service(5);
      ++checks;
      if (checked_result != 0)
        failure("after kill " + std::to_string(kills) + ", cuShimRegistryCheck in worker " + std::to_string(by) +
                " gave " + std::to_string(checked_result) + ": " + checked_text);
    }
#endif
    spawn(v);
    ++done_rounds;
  }

  // Wind down: no new imports, the ones under way finish, then every worker frees what it
  // holds and exits normally.
  auto until = Clock::now() + std::chrono::seconds(20);
  while (!pending.empty() && Clock::now() < until) run_for(std::chrono::milliseconds(5), false);
  CHECK(pending.empty());
  for (auto& s : slots) {
    Msg m;
    m.op = kStop;
    if (s.up) send_msg(s.c->ch.fd(), m);
  }
  for (int i = 0; i < kWorkers; ++i) {
    Slot& s = slots[i];
    if (!s.up) continue;
    // Its last words (kStats), then its exit.
    auto t_end = Clock::now() + std::chrono::seconds(20);
    bool stats = false;
    while (!stats && Clock::now() < t_end && readable(s.c->ch.fd(), 1000)) {
      Msg m;
      int fd = -1;
      if (!recv_msg(s.c->ch.fd(), m, &fd)) break;
      on_msg(i, m, fd, false);
      stats = m.op == kStats;
    }
    if (!stats) failure("worker " + std::to_string(i) + " sent no statistics at its end");
    int st = s.c->wait(20);
    if (st != 0) failure("worker " + std::to_string(i) + " exited with status " + std::to_string(st));
    s.up = false;
  }
  for (auto& [id, e] : exports)
    if (e.fd >= 0) ::close(e.fd);
  double secs = std::chrono::duration<double>(Clock::now() - t_start).count();
  std::printf(
      "kill9-stress: %d rounds, %d kills (%d told to run an export loop first), %d processes, %lld exports (%lld "
      "legacy, %lld pool, %lld event, "
      "%lld in export loops), %lld imports verified, imports of killed exporters: %lld refused with the "
      "documented code (%lld legacy, %lld event), %lld opened (%lld legacy, %lld pool, %lld event), "
      "%d registry checks, %.1f s\n",
      done_rounds, kills, mid_loop_kills, spawned, pub[kLegacy] + pub[kPool] + pub[kEvent] + burst_exports,
      pub[kLegacy], pub[kPool], pub[kEvent], burst_exports, imports_ok, dead_refused[kLegacy] + dead_refused[kEvent],
      dead_refused[kLegacy], dead_refused[kEvent], dead_opened[kLegacy] + dead_opened[kPool] + dead_opened[kEvent],
      dead_opened[kLegacy], dead_opened[kPool], dead_opened[kEvent], checks, secs);
  std::fflush(stdout);
  for (auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  CHECK(kills >= std::min(rounds, 10));
  CHECK(imports_ok > 0);
#if !CUDA_SHIM_REAL_BACKEND
  // Every worker left: the last one out removed the segment, and nothing of it is left.
  struct stat st;
  CHECK(::stat(("/dev/shm/" + registry).c_str(), &st) != 0);
  std::vector<std::string> left;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* ent = ::readdir(d))
      if (std::string(ent->d_name).rfind(registry, 0) == 0) left.push_back(ent->d_name);
    ::closedir(d);
  }
  INFO("left in /dev/shm: " << (left.empty() ? "" : left[0]));
  CHECK(left.empty());
#endif
}
