// difftest ops of the ipc_conformance family, for the probe cases in tests/probe/cases/ipc_conformance*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
// What the IPC conformance tests (tests/conformance/test_*ipc*.cpp) ask that the core ops and
// ops_ipc.hpp do not: fixed forged bytes, a stream busy for a while, the runtime's event and
// stream queries, and an exporter process that hands its handle back and then exits or dies.
#pragma once

namespace difftest {

namespace ipcc {
// The runtime's entries (cudaError_t is an int; events and streams are the driver's handles).
using RtOne = int (*)(void*);
using RtWait = int (*)(CUstream, CUevent, unsigned);
using RtElapsed = int (*)(float*, CUevent, CUevent);
inline void CUDA_CB sleep_fn(void* ms) { usleep(static_cast<useconds_t>(reinterpret_cast<uintptr_t>(ms)) * 1000); }
// Where a peer leaves a blob for the process that started it (both sides know the parent's pid).
inline std::string blob_path(pid_t parent, const std::string& name) {
  return "/tmp/difftest-ipcc-" + std::to_string(parent) + "-" + name;
}
}  // namespace ipcc

inline bool ops_ipc_conformance(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  auto setblob = [&](size_t k, const unsigned char* b) {
    e.def(e.a(k), 0, 0, false);
    e.slots[e.a(k)].blob.assign(b, b + 64);
  };
  auto rt1 = [&](const char* name, void* arg) {  // a runtime entry of one handle argument
    auto f = reinterpret_cast<ipcc::RtOne>(e.api.rtsym(name));
    if (!f) r.ks("rt", "missing"); else e.RC(r, f(arg));
  };

  if (op == "ipcc_blob") {  // ipcc_blob K fill BYTE | random SEED | xor SRC IDX MASK: 64 fixed bytes
    unsigned char b[64] = {};
    const std::string& m = e.a(2);
    if (m == "fill") memset(b, static_cast<int>(e.num(3) & 0xff), 64);
    if (m == "random") {  // the same bytes on every run and machine (an LCG of the seed)
      uint64_t x = e.num(3) * 6364136223846793005ull + 1442695040888963407ull;
      for (auto& c : b) { x = x * 6364136223846793005ull + 1442695040888963407ull; c = static_cast<unsigned char>(x >> 56); }
    }
    if (m == "xor") {
      Slot* s = e.slot(3);
      if (!s || s->blob.size() != 64) { r.ks("skip", "no blob"); return true; }
      memcpy(b, s->blob.data(), 64);
      b[e.num(4) & 63] ^= static_cast<unsigned char>(e.num(5));
    }
    e.RC(r, 0);
    setblob(1, b);
  } else if (op == "ipcc_block") {  // ipcc_block S MS: S runs a host function that sleeps MS ms
    DT_CALL(e, r, cuLaunchHostFunc, e.h<CUstream>(1), ipcc::sleep_fn, reinterpret_cast<void*>(static_cast<uintptr_t>(e.num(2))));
  } else if (op == "ipcc_rt_event_query") {  // ipcc_rt_event_query E: cudaEventQuery
    rt1("cudaEventQuery", e.h<void*>(1));
  } else if (op == "ipcc_rt_event_sync") {  // ipcc_rt_event_sync E: cudaEventSynchronize
    rt1("cudaEventSynchronize", e.h<void*>(1));
  } else if (op == "ipcc_rt_event_destroy") {  // ipcc_rt_event_destroy E: cudaEventDestroy
    rt1("cudaEventDestroy", e.h<void*>(1));
  } else if (op == "ipcc_rt_stream_query") {  // ipcc_rt_stream_query S: cudaStreamQuery
    rt1("cudaStreamQuery", e.h<void*>(1));
  } else if (op == "ipcc_rt_stream_wait") {  // ipcc_rt_stream_wait S E: cudaStreamWaitEvent(S, E, 0)
    auto f = reinterpret_cast<ipcc::RtWait>(e.api.rtsym("cudaStreamWaitEvent"));
    if (!f) r.ks("rt", "missing"); else e.RC(r, f(e.h<CUstream>(1), e.h<CUevent>(2), 0));
  } else if (op == "ipcc_rt_event_elapsed") {  // ipcc_rt_event_elapsed E1 E2: the code, never the time
    auto f = reinterpret_cast<ipcc::RtElapsed>(e.api.rtsym("cudaEventElapsedTime"));
    float ms = 0;
    if (!f) r.ks("rt", "missing"); else e.RC(r, f(&ms, e.h<CUevent>(1), e.h<CUevent>(2)));
  } else if (op == "ipcc_blob_to_parent") {  // ipcc_blob_to_parent K (in the peer): K for the parent
    Slot* s = e.slot(1);
    FILE* f = s && s->blob.size() == 64 ? fopen(ipcc::blob_path(getppid(), e.a(1)).c_str(), "wb") : nullptr;
    bool ok = f && fwrite(s->blob.data(), 1, 64, f) == 64;
    if (f) fclose(f);
    e.RC(r, ok ? 0 : -1);
  } else if (op == "ipcc_blob_from_peer") {  // ipcc_blob_from_peer K: the blob the peer left as K
    std::string p = ipcc::blob_path(getpid(), e.a(1));
    unsigned char b[64];
    FILE* f = fopen(p.c_str(), "rb");
    bool ok = f && fread(b, 1, 64, f) == 64;
    if (f) fclose(f);
    unlink(p.c_str());
    e.RC(r, ok ? 0 : -1);
    if (ok) setblob(1, b);
  } else if (op == "ipcc_peer_kill") {  // the peer process dies of SIGKILL, with whatever it holds
    int st = 0;
    bool ok = e.peer_pid > 0 && kill(e.peer_pid, SIGKILL) == 0 && waitpid(e.peer_pid, &st, 0) == e.peer_pid;
    if (e.peer_sock >= 0) close(e.peer_sock);
    e.peer_pid = -1; e.peer_sock = -1;
    e.RC(r, ok && WIFSIGNALED(st) ? 0 : -1);
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
