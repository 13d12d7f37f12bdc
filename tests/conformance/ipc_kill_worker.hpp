// The worker of test_ipc_kill_stress.cpp (that binary re-run as child "kill9_worker"): it exports
// and imports memory and events through every IPC path at random, as the parent (its hub) tells
// it, times every driver call, and reports any code but the expected one.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "ipc_kill_stress.hpp"
#include "multiprocess.hpp"
#if !CUDA_SHIM_REAL_BACKEND
#include <cuda_shim_ext.h>
#endif

namespace kill9 {


struct Worker {
  mp::Channel& ch;
  std::mt19937_64 rng;
  int slot = -1;
  bool failed = false;
  int64_t next_id = 1;
  int64_t exports = 0, imports = 0, verifies = 0;
  CUmemoryPool pool = nullptr;
  int pool_fd = -1;
  struct Own {
    int kind;
    CUdeviceptr ptr = 0;
    size_t size = 0;
    uint64_t seed = 0;
    CUevent ev = nullptr;
    bool want_free = false;
  };
  std::map<int64_t, Own> own;

  explicit Worker(mp::Channel& c) : ch(c) {}

  void fail(const std::string& what) {
    Msg m;
    m.op = kFail;
    std::string why;
#if !CUDA_SHIM_REAL_BACKEND
    char buf[160];
    if (cuShimGetLastExplanation(buf, sizeof buf)) why = std::string(" [") + buf + "]";
#endif
    std::snprintf(m.text, sizeof m.text, "worker %d (pid %d): %s%s", slot, static_cast<int>(::getpid()), what.c_str(),
                  why.c_str());
    send_msg(ch.fd(), m);
    failed = true;
  }

  // Every driver call goes through here: timed, and any code but the expected one reported.
  template <class F>
  CUresult call(const char* what, F&& f) {
    auto t0 = Clock::now();
    CUresult r = f();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    if (Clock::now() - t0 > kSlowCall) fail(std::string(what) + " took " + std::to_string(ms) + " ms");
    return r;
  }
#define CALL(expr) call(#expr, [&] { return (expr); })
#define MUST(expr)                                                                                    \
  do {                                                                                                \
    CUresult r_ = CALL(expr);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                         \
      fail(std::string(#expr) + " gave " + cu_name(r_) + " (line " + std::to_string(__LINE__) + ")"); \
      return;                                                                                         \
    }                                                                                                 \
  } while (0)

  size_t random_size() { return 4096u << (rng() % 5); }  // 4 KiB .. 64 KiB

  void publish_legacy() {
    Own o{kLegacy};
    o.size = random_size();
    o.seed = rng();
    MUST(cuMemAlloc(&o.ptr, o.size));
    auto v = fill(o.seed, o.size);
    MUST(cuMemcpyHtoD(o.ptr, v.data(), o.size));
    // From pageable memory, cuMemcpyHtoD may return before the DMA lands (documented; seen on an
    // H100 as importers reading old bytes): only a synchronize makes the bytes another process's.
    MUST(cuCtxSynchronize());
    CUipcMemHandle h;
    MUST(cuIpcGetMemHandle(&h, o.ptr));
    Msg m;
    m.op = kPubLegacy;
    m.id = next_id++;
    m.size = o.size;
    m.seed = o.seed;
    std::memcpy(m.bytes, &h, sizeof h);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m);
  }

  void publish_pool() {
    if (!pool) {
      CUmemPoolProps p;
      std::memset(&p, 0, sizeof p);
      p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      p.location.id = 0;
      MUST(cuMemPoolCreate(&pool, &p));
      MUST(cuMemPoolExportToShareableHandle(&pool_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    Own o{kPool};
    o.size = random_size();
    o.seed = rng();
    MUST(cuMemAllocFromPoolAsync(&o.ptr, o.size, pool, nullptr));
    MUST(cuStreamSynchronize(nullptr));
    auto v = fill(o.seed, o.size);
    MUST(cuMemcpyHtoD(o.ptr, v.data(), o.size));
    MUST(cuCtxSynchronize());  // as in publish_legacy: the bytes have landed before anyone imports
    CUmemPoolPtrExportData x;
    std::memset(&x, 0, sizeof x);
    MUST(cuMemPoolExportPointer(&x, o.ptr));
    Msg m;
    m.op = kPubPool;
    m.id = next_id++;
    m.size = o.size;
    m.seed = o.seed;
    std::memcpy(m.bytes, &x, sizeof x);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m, pool_fd);
  }

  void publish_event() {
    Own o{kEvent};
    MUST(cuEventCreate(&o.ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    MUST(cuEventRecord(o.ev, nullptr));
    MUST(cuEventSynchronize(o.ev));
    CUipcEventHandle h;
    MUST(cuIpcGetEventHandle(&h, o.ev));
    Msg m;
    m.op = kPubEvent;
    m.id = next_id++;
    std::memcpy(m.bytes, &h, sizeof h);
    own[m.id] = o;
    ++exports;
    send_msg(ch.fd(), m);
  }

  // Reads an export of this worker back: the pattern intact, the mailbox as `expect` says
  // (0: never written, 1: written by an importer, 2: either).
  void verify(int64_t id, const Own& o, int expect) {
    if (o.kind == kEvent) {
      MUST(cuEventQuery(o.ev));
      return;
    }
    std::vector<unsigned char> v(o.size);
    MUST(cuMemcpyDtoH(v.data(), o.ptr, o.size));
    ++verifies;
    if (!pattern_ok(v, o.seed)) fail("export " + std::to_string(id) + ": its own bytes changed");
    uint64_t mb = mailbox(v), want = mailbox_value(o.seed);
    if ((expect == 0 && mb != 0) || (expect == 1 && mb != want) || (expect == 2 && mb != 0 && mb != want))
      fail("export " + std::to_string(id) + ": mailbox " + std::to_string(mb) + ", expected " +
           (expect == 0   ? "0"
            : expect == 1 ? "the importers' value"
                          : "0 or the importers' value"));
  }

  void release(const Own& o) {
    if (o.kind == kLegacy) MUST(cuMemFree(o.ptr));
    if (o.kind == kPool) {
      MUST(cuMemFreeAsync(o.ptr, nullptr));
      MUST(cuStreamSynchronize(nullptr));
    }
    if (o.kind == kEvent) MUST(cuEventDestroy(o.ev));
  }

  // An export of another worker, forwarded by the parent: open it, check its bytes, write the
  // mailbox, close it; report the codes.
  void import(const Msg& m, int fd) {
    Msg r;
    r.op = kImportDone;
    r.id = m.id;
    r.kind = m.kind;
    CUresult first = CUDA_SUCCESS, later = CUDA_SUCCESS;
    bool bytes_ok = true;
    auto note = [&](CUresult x) {
      if (later == CUDA_SUCCESS) later = x;
    };
    auto check_and_write = [&](CUdeviceptr p) {
      std::vector<unsigned char> v(m.size);
      CUresult x = CALL(cuMemcpyDtoH(v.data(), p, m.size));
      note(x);
      if (x == CUDA_SUCCESS) bytes_ok = pattern_ok(v, m.seed);
      uint64_t mb = mailbox_value(m.seed);
      note(CALL(cuMemcpyHtoD(p + m.size - kMailbox, &mb, kMailbox)));
      // The mailbox write lands before this import is reported done and the exporter may free
      // (and reuse) the memory: a pageable copy's DMA may still be in flight when it returns.
      note(CALL(cuCtxSynchronize()));
    };
    if (m.kind == kLegacy) {
      CUipcMemHandle h;
      std::memcpy(&h, m.bytes, sizeof h);
      CUdeviceptr p = 0;
      first = CALL(cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
      if (first == CUDA_SUCCESS) {
        check_and_write(p);
        note(CALL(cuIpcCloseMemHandle(p)));
      }
    } else if (m.kind == kPool) {
      CUmemoryPool ip = nullptr;
      first = CALL(cuMemPoolImportFromShareableHandle(&ip, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      if (first == CUDA_SUCCESS) {
        CUmemPoolPtrExportData x;
        std::memcpy(&x, m.bytes, sizeof x);
        CUdeviceptr p = 0;
        CUresult ir = CALL(cuMemPoolImportPointer(&p, ip, &x));
        note(ir);
        if (ir == CUDA_SUCCESS) {
          check_and_write(p);
          note(CALL(cuMemFreeAsync(p, nullptr)));
          note(CALL(cuStreamSynchronize(nullptr)));
        }
        note(CALL(cuMemPoolDestroy(ip)));
      }
    } else {
      CUipcEventHandle h;
      std::memcpy(&h, m.bytes, sizeof h);
      CUevent ev = nullptr;
      first = CALL(cuIpcOpenEventHandle(&ev, h));
      if (first == CUDA_SUCCESS) {
        note(CALL(cuEventSynchronize(ev)));
        note(CALL(cuEventQuery(ev)));
        note(CALL(cuEventDestroy(ev)));
      }
    }
    if (fd >= 0) ::close(fd);
    if (first == CUDA_SUCCESS && later == CUDA_SUCCESS) ++imports;
    r.a = first;
    r.b = later;
    r.c = bytes_ok;
    send_msg(ch.fd(), r);
  }

  // Exports and frees in a tight loop: the parent kills the worker in the middle of it.
  void burst() {
    Msg m;
    m.op = kBurstDone;
    for (int i = 0; i < 150 && !failed; ++i) {
      CUdeviceptr d = 0;
      CUipcMemHandle h;
      MUST(cuMemAlloc(&d, 4096));
      MUST(cuIpcGetMemHandle(&h, d));
      MUST(cuMemFree(d));
      if (i % 16 == 0) {
        CUevent ev = nullptr;
        CUipcEventHandle eh;
        MUST(cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
        MUST(cuIpcGetEventHandle(&eh, ev));
        MUST(cuEventDestroy(ev));
      }
      ++m.a;
    }
    exports += m.a;
    send_msg(ch.fd(), m);
  }

  // Handles what the parent sent; false once told to stop (or the parent is gone).
  bool handle(const Msg& m, int fd) {
    switch (m.op) {
      case kImport:
        import(m, fd);
        return true;
      case kFreeOk: {
        auto it = own.find(m.id);
        if (it == own.end()) {
          fail("kFreeOk for an unknown export " + std::to_string(m.id));
          return true;
        }
        verify(it->first, it->second, static_cast<int>(m.a));
        release(it->second);
        own.erase(it);
        return true;
      }
      case kCheck: {
        Msg r;
        r.op = kChecked;
#if !CUDA_SHIM_REAL_BACKEND
        std::string buf(1 << 16, '\0');
        auto t0 = Clock::now();
        r.a = cuShimRegistryCheck(buf.data(), buf.size());
        if (Clock::now() - t0 > kSlowCall) fail("cuShimRegistryCheck took more than 2 s");
        std::snprintf(r.text, sizeof r.text, "%s", buf.c_str());
#endif
        send_msg(ch.fd(), r);
        return true;
      }
      case kBurst:
        burst();
        return true;
      case kStop:
        return false;
      default:
        fail("unexpected message " + std::to_string(m.op));
        return true;
    }
  }

  int run() {
    Msg init;
    if (!recv_msg(ch.fd(), init) || init.op != kInit) return 3;
    slot = static_cast<int>(init.a);
    rng.seed(init.seed);
    Msg hello;
    hello.op = kHello;
    hello.a = ::getpid();
    send_msg(ch.fd(), hello);
    for (;;) {
      while (readable(ch.fd(), 0)) {
        Msg m;
        int fd = -1;
        if (!recv_msg(ch.fd(), m, &fd)) return 4;  // the parent is gone
        if (!handle(m, fd)) return finish();
      }
      if (failed) {  // keep answering (the parent asks for checks and stops us); no more work
        readable(ch.fd(), 100);
        continue;
      }
      unsigned roll = static_cast<unsigned>(rng() % 100);
      size_t n_own = own.size();
      if (roll < 30 && n_own < 8)
        publish_legacy();
      else if (roll < 48 && n_own < 8)
        publish_pool();
      else if (roll < 58 && n_own < 8)
        publish_event();
      else if (roll < 80 && n_own > 0) {
        auto it = own.begin();
        std::advance(it, static_cast<long>(rng() % n_own));
        if (!it->second.want_free) {
          it->second.want_free = true;
          Msg m;
          m.op = kWantFree;
          m.id = it->first;
          send_msg(ch.fd(), m);
        }
      } else if (roll < 90) {
        CUdeviceptr d = 0;  // memory nobody shares, beside the shared
        size_t sz = random_size();
        if (CALL(cuMemAlloc(&d, sz)) != CUDA_SUCCESS || CALL(cuMemFree(d)) != CUDA_SUCCESS)
          fail("cuMemAlloc/cuMemFree");
      } else {
        for (auto& [id, o] : own) verify(id, o, 2);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 3000));
    }
  }

  int finish() {
    for (auto& [id, o] : own) {
      verify(id, o, 2);
      release(o);
    }
    own.clear();
    if (pool) {
      if (CALL(cuMemPoolDestroy(pool)) != CUDA_SUCCESS) fail("cuMemPoolDestroy");
      ::close(pool_fd);
    }
    Msg m;
    m.op = kStats;
    m.a = exports;
    m.b = imports;
    m.c = verifies;
    send_msg(ch.fd(), m);
    return failed ? 1 : 0;
  }
#undef MUST
#undef CALL
};

}  // namespace kill9
