// Stream-ordered reuse: when may memory freed on stream A be handed to an allocation on
// stream B? The matrix below is what NVIDIA's driver 580 did (H200), for every reuse
// policy combination, with the free completed but not observed, observed by a
// synchronize, still pending, and ordered before B by an event. "roomy" pools have space
// besides the freed block; "full" ones (maxSize 32 MiB, 30 MiB blocks) do not.
#include <string>
#include <vector>

#include "pool_common.hpp"
#include "real_answers.hpp"

namespace {

enum class Mode { completed, observed, pending, pending_event_dep, event_dep };
enum class Want { same, different, oom };

struct Policy {
  const char* name;
  int follow, opportunistic, internal;
};
const Policy kPolicies[] = {{"defaults", 1, 1, 1},
                            {"all off", 0, 0, 0},
                            {"FOLLOW_EVENT_DEPENDENCIES only", 1, 0, 0},
                            {"ALLOW_OPPORTUNISTIC only", 0, 1, 0},
                            {"ALLOW_INTERNAL_DEPENDENCIES only", 0, 0, 1}};

struct Row {
  Mode mode;
  bool full;
  Want want[5];  // by kPolicies
  // B's state after the allocation while A is still blocked (pending modes): not ready
  // when B was made to wait for A (internal dependency, or the event).
  // What the H200 showed; the test reads the recorded answer (probe case ...b_query).
  bool b_waits[5];
};

constexpr Want S = Want::same, D = Want::different, O = Want::oom;
const Row kRows[] = {
    {Mode::completed, false, {S, D, D, S, D}, {}},
    {Mode::observed, false, {S, S, S, S, S}, {}},
    {Mode::pending, false, {D, D, D, D, D}, {false, false, false, false, false}},
    {Mode::pending_event_dep, false, {S, D, S, D, D}, {true, true, true, true, true}},
    {Mode::event_dep, false, {S, D, S, S, D}, {}},
    {Mode::completed, true, {S, O, O, S, S}, {}},
    {Mode::observed, true, {S, S, S, S, S}, {}},
    {Mode::pending, true, {S, O, O, O, S}, {true, false, false, false, true}},
    {Mode::pending_event_dep, true, {S, O, S, O, S}, {true, true, true, true, true}},
    {Mode::event_dep, true, {S, O, S, S, S}, {}},
};

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::completed: return "free completed, not observed";
    case Mode::observed: return "free observed (stream synchronized)";
    case Mode::pending: return "free pending";
    case Mode::pending_event_dep: return "free pending, B waits on an event after it";
    case Mode::event_dep: return "B waits on an event after the free";
  }
  return "?";
}

// The probe case asking NVIDIA's driver one row and policy (tests/probe/cases/pool_conformance.cases):
// pool.conf.reuse.MODE.{full,roomy}.POLICY.WHAT, WHAT "alloc" (B's allocation) or "b_query".
std::string probe(const Row& row, int pi, const char* what) {
  static const char* const modes[] = {"completed", "observed", "pending", "pending_event_dep", "event_dep"};
  static const char* const policies[] = {"defaults", "all_off", "follow_only", "opportunistic_only", "internal_only"};
  return std::string("pool.conf.reuse.") + modes[static_cast<int>(row.mode)] + (row.full ? ".full." : ".roomy.") +
         policies[pi] + "." + what;
}

}  // namespace

TEST_CASE("cross-stream reuse follows the reuse policies exactly as the driver does", "[mempool][reuse]") {
  conformance_primary_ctx();
  for (const Row& row : kRows) {
    for (int pi = 0; pi < 5; ++pi) {
      const Policy& pol = kPolicies[pi];
      INFO(mode_name(row.mode) << ", " << (row.full ? "full" : "roomy") << " pool, " << pol.name);
      ScopedStream a, b;
      CUmemPoolProps props = pool_props();
      if (row.full) props.maxSize = kChunk;
      ScopedPool pool(props);
      set_reuse(pool, pol.follow, pol.opportunistic, pol.internal);
      const size_t n = row.full ? 30 * kMiB : kMiB;
      CUevent ev = nullptr;
      REQUIRE_CU(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
      Blocker gate;
      const bool pending = row.mode == Mode::pending || row.mode == Mode::pending_event_dep;
      CUdeviceptr x = 0, y = 0;
      REQUIRE_CU(cuMemAllocFromPoolAsync(&x, n, pool, a), CUDA_SUCCESS);
      if (pending) gate.block(a);
      REQUIRE_CU(cuMemFreeAsync(x, a), CUDA_SUCCESS);
      switch (row.mode) {
        case Mode::completed: wait_idle_unobserved(a); break;
        case Mode::observed: REQUIRE_CU(cuStreamSynchronize(a), CUDA_SUCCESS); break;
        case Mode::pending: break;
        case Mode::pending_event_dep:
        case Mode::event_dep:
          REQUIRE_CU(cuEventRecord(ev, a), CUDA_SUCCESS);
          REQUIRE_CU(cuStreamWaitEvent(b, ev, 0), CUDA_SUCCESS);
          break;
      }
      CUresult r = cuMemAllocFromPoolAsync(&y, n, pool, b);
      if (pending) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK_CU(cuStreamQuery(b), REAL_CU(probe(row, pi, "b_query")));
        gate.release();
      }
      switch (row.want[pi]) {
        case Want::same:
          CHECK_CU(r, CUDA_SUCCESS);
          CHECK(y == x);
          break;
        case Want::different:
          CHECK_CU(r, CUDA_SUCCESS);
          CHECK(y != x);
          break;
        case Want::oom:
          CHECK_CU(r, REAL_CU(probe(row, pi, "alloc")));
          CHECK(y == 0);
          break;
      }
      REQUIRE_CU(cuStreamSynchronize(a), CUDA_SUCCESS);
      REQUIRE_CU(cuStreamSynchronize(b), CUDA_SUCCESS);
      if (r == CUDA_SUCCESS) CHECK_CU(cuMemFreeAsync(y, b), CUDA_SUCCESS);
      REQUIRE_CU(cuStreamSynchronize(b), CUDA_SUCCESS);
      CHECK_CU(cuEventDestroy(ev), CUDA_SUCCESS);
    }
  }
}

TEST_CASE("the freeing stream reuses its own pending free at once, whatever the policies", "[mempool][reuse]") {
  conformance_primary_ctx();
  ScopedStream a;
  ScopedPool pool(pool_props());
  set_reuse(pool, 0, 0, 0);
  Blocker gate;
  gate.block(a);
  CUdeviceptr x = 0, y = 0, z = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, kMiB, pool, a), CUDA_SUCCESS);
  REQUIRE_CU(cuMemFreeAsync(x, a), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&y, kMiB, pool, a), CUDA_SUCCESS);
  CHECK(y == x);
  REQUIRE_CU(cuMemFreeAsync(y, a), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&z, 1000, pool, a), CUDA_SUCCESS);  // a smaller request
  CHECK(z == x);
  REQUIRE_CU(cuMemFreeAsync(z, a), CUDA_SUCCESS);
  gate.release();
}

TEST_CASE("work on the legacy stream is ordered after a blocking stream's free", "[mempool][reuse]") {
  conformance_primary_ctx();
  ScopedStream blocking(CU_STREAM_DEFAULT);
  ScopedPool pool(pool_props());
  set_reuse(pool, 1, 0, 0);  // only an ordering dependency allows reuse
  Blocker gate;
  gate.block(blocking);
  CUdeviceptr x = 0, y = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, kMiB, pool, blocking), CUDA_SUCCESS);
  REQUIRE_CU(cuMemFreeAsync(x, blocking), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&y, kMiB, pool, CU_STREAM_LEGACY), CUDA_SUCCESS);
  CHECK(y == x);
  gate.release();
  REQUIRE_CU(cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(y, CU_STREAM_LEGACY), CUDA_SUCCESS);
}

TEST_CASE("placement is first fit at the lowest address, across adjacent frees", "[mempool][reuse]") {
  conformance_primary_ctx();
  for (bool synced : {false, true}) {
    INFO((synced ? "frees observed" : "frees pending on the allocating stream"));
    ScopedStream s;
    ScopedPool pool(pool_props());
    CUdeviceptr v[6];
    for (auto& x : v) REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 1000, pool, s), CUDA_SUCCESS);
    for (int i = 1; i < 6; ++i) CHECK(v[i] - v[i - 1] == 1024);  // 512-byte granularity
    REQUIRE_CU(cuMemFreeAsync(v[1], s), CUDA_SUCCESS);
    REQUIRE_CU(cuMemFreeAsync(v[2], s), CUDA_SUCCESS);
    REQUIRE_CU(cuMemFreeAsync(v[4], s), CUDA_SUCCESS);
    if (synced) REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CUdeviceptr a = 0, b = 0, c = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 2000, pool, s), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 1000, pool, s), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAllocFromPoolAsync(&c, 1000, pool, s), CUDA_SUCCESS);
    CHECK(a - v[0] == 1024);  // v[1] and v[2] together
    CHECK(b - v[0] == 4096);  // v[4]
    CHECK(c - v[0] == 6144);  // after v[5]
  }
}

TEST_CASE("a stream allocates across its own pending free and the free space next to it", "[mempool][reuse]") {
  conformance_primary_ctx();
  CUmemPoolProps p = pool_props();
  p.maxSize = 64 * kMiB;
  ScopedPool pool(p);
  ScopedStream s;
  CUdeviceptr a = 0, b = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&a, 36 * kMiB, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemFreeAsync(a, s), CUDA_SUCCESS);  // pending, not observed
  REQUIRE_CU(cuMemAllocFromPoolAsync(&b, 42 * kMiB, pool, s), CUDA_SUCCESS);
  CHECK(b == a);
  CHECK_CU(cuMemFreeAsync(b, s), CUDA_SUCCESS);
}

TEST_CASE("a free that the allocating stream cannot reuse is a barrier within free space", "[mempool][reuse]") {
  conformance_primary_ctx();
  ScopedStream a, b;
  ScopedPool pool(pool_props());
  set_reuse(pool, 0, 0, 0);
  CUdeviceptr x = 0, y = 0, z = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, kMiB, pool, a), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&y, kMiB, pool, a), CUDA_SUCCESS);
  REQUIRE_CU(cuMemFreeAsync(y, a), CUDA_SUCCESS);  // [x][free y: a's][fresh...]
  REQUIRE_CU(cuMemFreeAsync(x, b), CUDA_SUCCESS);  // [free x: b's][free y: a's][fresh...]
  wait_idle_unobserved(a);
  wait_idle_unobserved(b);
  CUdeviceptr r = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&r, kMiB, pool, b), CUDA_SUCCESS);
  CHECK(r == x);  // b's own free
  CHECK_CU(cuMemFreeAsync(r, b), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&z, 2 * kMiB, pool, b), CUDA_SUCCESS);
  CHECK(z == y + kMiB);  // cannot span a's free: starts after it
  CHECK_CU(cuMemFreeAsync(z, b), CUDA_SUCCESS);
}

TEST_CASE("a free pending on a destroyed stream is released once the context synchronizes", "[mempool][reuse]") {
  conformance_primary_ctx();
  ScopedPool pool(pool_props());
  CUstream t = nullptr;
  REQUIRE_CU(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr x = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, kMiB, pool, t), CUDA_SUCCESS);
  Blocker gate;
  gate.block(t);
  REQUIRE_CU(cuMemFreeAsync(x, t), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(t), CUDA_SUCCESS);
  gate.release();
  REQUIRE_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(reserved(pool) == 0);
}
