// Emulator-only: double destroys, use after destroy and garbage handles, where NVIDIA's driver
// dereferences what it is given (SIGSEGV, double free) or hangs. Every handle is validated
// through its registry (core/registry.hpp) before use, so each call answers with the
// documented code and an explanation naming the object; afterwards the process still works.
// The codes: CUDA_ERROR_INVALID_HANDLE for streams, events, external memory and semaphores,
// arrays (cudaErrorInvalidResourceHandle in the runtime); CUDA_ERROR_INVALID_VALUE for memory
// pools and VMM allocation handles (measured for 0 / released handles on driver 580, README);
// CUDA_ERROR_INVALID_CONTEXT for contexts; CUDA_ERROR_INVALID_VALUE for NULL handles.
// Stale handles (the runtime's forms, objects of a destroyed context, handles reused by new
// objects): test_handle_robustness_stale.cpp.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "handle_robustness.hpp"
#include "unit_common.hpp"

using namespace handle_robustness;

// ---- destroyed twice ------------------------------------------------------------------------
TEST_CASE("double destroy of every handle kind is answered, never followed", "[handles][robustness]") {
  primary();
  SECTION("stream") {
    CUstream s = nullptr;
    REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
    CHECK(cuStreamDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuStreamDestroy", hex(s), "not a live stream"}));
  }
  SECTION("event") {
    CUevent e = nullptr;
    REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
    REQUIRE(cuEventDestroy(e) == CUDA_SUCCESS);
    CHECK(cuEventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuEventDestroy", hex(e), "not a live event"}));
  }
  SECTION("memory pool") {
    CUmemPoolProps pp = pool_props();
    CUmemoryPool pool = nullptr;
    REQUIRE(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    CHECK(cuMemPoolDestroy(pool) == CUDA_ERROR_INVALID_VALUE);
    CHECK(says({"cuMemPoolDestroy", hex(pool), "not a live memory pool"}));
  }
  SECTION("external memory") {
    CUexternalMemory m = import_memory();
    REQUIRE(cuDestroyExternalMemory(m) == CUDA_SUCCESS);
    CHECK(cuDestroyExternalMemory(m) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuDestroyExternalMemory", hex(m), "not a live external memory object"}));
  }
  SECTION("external semaphore") {
    CUexternalSemaphore s = import_semaphore();
    REQUIRE(cuDestroyExternalSemaphore(s) == CUDA_SUCCESS);
    CHECK(cuDestroyExternalSemaphore(s) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuDestroyExternalSemaphore", hex(s), "not a live external semaphore"}));
  }
  SECTION("VMM allocation handle (cuMemRelease)") {
    CUmemAllocationProp p = vmm_prop();
    CUmemGenericAllocationHandle h = 0;
    REQUIRE(cuMemCreate(&h, kGran, &p, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
    CHECK(cuMemRelease(h) == CUDA_ERROR_INVALID_VALUE);  // measured for a handle released as often as acquired
    CHECK(says({"cuMemRelease", "not a live allocation handle"}));
  }
  SECTION("mipmapped array and its levels") {
    CUexternalMemory m = import_memory();
    CUmipmappedArray mm = nullptr;
    auto d = mip_desc();
    REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm, m, &d) == CUDA_SUCCESS);
    CUarray level = nullptr;
    REQUIRE(cuMipmappedArrayGetLevel(&level, mm, 1) == CUDA_SUCCESS);
    // Measured: a level's destroy succeeds (it lives as long as its mipmapped array), also twice.
    CHECK(cuArrayDestroy(level) == CUDA_SUCCESS);
    CHECK(cuArrayDestroy(level) == CUDA_SUCCESS);
    REQUIRE(cuMipmappedArrayDestroy(mm) == CUDA_SUCCESS);
    CHECK(cuMipmappedArrayDestroy(mm) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuMipmappedArrayDestroy", hex(mm), "not a live mipmapped array"}));
    CHECK(cuArrayDestroy(level) == CUDA_ERROR_INVALID_HANDLE);  // gone with its mipmapped array
    CHECK(says({"cuArrayDestroy", hex(level), "not a live CUDA array"}));
    CUarray again = nullptr;
    CHECK(cuMipmappedArrayGetLevel(&again, mm, 0) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuDestroyExternalMemory(m) == CUDA_SUCCESS);
  }
  SECTION("context") {
    CUdevice dev = 0;
    REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
    CUcontext c = nullptr;
    REQUIRE(cuCtxCreate(&c, nullptr, 0, dev) == CUDA_SUCCESS);
    REQUIRE(cuCtxPushCurrent(c) == CUDA_SUCCESS);  // current twice: one entry outlives the destroy
    REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);
    CHECK(cuCtxDestroy(c) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(says({"cuCtxDestroy", hex(c), "not a live context"}));
    // The stack still names it: work through it is refused.
    CUdeviceptr d = 0;
    CHECK(cuMemAlloc(&d, 16) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(says({"cuMemAlloc", "has been destroyed"}));
    CHECK(cuCtxSynchronize() == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxSetCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxPushCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(says({"cuCtxPushCurrent", hex(c), "not a live context"}));
    unsigned long long id = 0;
    CHECK(cuCtxGetId(c, &id) == CUDA_ERROR_INVALID_CONTEXT);
    CUcontext popped = nullptr;
    CHECK(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);  // popping the stale entry is fine
    CHECK(popped == c);
    primary();
  }
  still_works();
}

// ---- used after destroy ---------------------------------------------------------------------
TEST_CASE("a destroyed stream, passed to every call that takes a stream", "[handles][robustness]") {
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  CUevent e = nullptr;
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  CUdeviceptr d = 0, m = 0;
  REQUIRE(cuMemAlloc(&d, 4096) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  CUmemPoolProps pp = pool_props();
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS);
  CUexternalSemaphore sem = import_semaphore();
  int calls = 0;
  unsigned char host[16] = {};
  auto stale = [&](CUresult r, const char* api) {
    INFO(api);
    CHECK(r == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({api, hex(s), "not a live stream"}));
  };
  stale(cuStreamSynchronize(s), "cuStreamSynchronize");
  stale(cuStreamQuery(s), "cuStreamQuery");
  stale(cuStreamWaitEvent(s, e, 0), "cuStreamWaitEvent");
  stale(cuLaunchHostFunc(s, host_fn, &calls), "cuLaunchHostFunc");
  CUdeviceptr p = 1;
  stale(cuMemAllocAsync(&p, 256, s), "cuMemAllocAsync");
  CHECK(p == 0);
  stale(cuMemAllocFromPoolAsync(&p, 256, pool, s), "cuMemAllocFromPoolAsync");
  stale(cuMemFreeAsync(d, s), "cuMemFreeAsync");
  stale(cuEventRecord(e, s), "cuEventRecord");
  stale(cuMemcpyHtoDAsync(d, host, sizeof host, s), "cuMemcpyHtoDAsync");
  stale(cuMemsetD8Async(d, 1, 16, s), "cuMemsetD8Async");
  stale(cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_GLOBAL), "cuStreamAttachMemAsync");
  stale(cuStreamAttachMemAsync(s, m, 0, 0), "cuStreamAttachMemAsync");  // the stream is checked first
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
  std::memset(&sp, 0, sizeof sp);
  stale(cuSignalExternalSemaphoresAsync(&sem, &sp, 1, s), "cuSignalExternalSemaphoresAsync");
  unsigned flags = 0;
  stale(cuStreamGetFlags(s, &flags), "cuStreamGetFlags");
  CHECK(calls == 0);  // nothing ran
  CHECK(cuDestroyExternalSemaphore(sem) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(cuMemFree(m) == CUDA_SUCCESS);
  CHECK(cuMemFree(d) == CUDA_SUCCESS);  // cuMemFreeAsync on the dead stream freed nothing
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  still_works();
}

TEST_CASE("a destroyed event, passed to every call that takes an event", "[handles][robustness]") {
  primary();
  CUevent e = nullptr, live = nullptr;
  // `live` first: handles are addresses, and an event created after the destroy could take the
  // dead one's address (and then the stale handle would name it, as on the real driver).
  REQUIRE(cuEventCreate(&live, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(e, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuEventDestroy(e) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(live, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuEventSynchronize(live) == CUDA_SUCCESS);
  auto stale = [&](CUresult r, const char* api) {
    INFO(api);
    CHECK(r == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({api, hex(e), "not a live event"}));
  };
  stale(cuEventRecord(e, nullptr), "cuEventRecord");
  stale(cuEventRecordWithFlags(e, nullptr, 0), "cuEventRecordWithFlags");
  stale(cuEventSynchronize(e), "cuEventSynchronize");
  stale(cuEventQuery(e), "cuEventQuery");
  float ms = 0;
  stale(cuEventElapsedTime(&ms, e, live), "cuEventElapsedTime");
  stale(cuEventElapsedTime(&ms, live, e), "cuEventElapsedTime");
  stale(cuStreamWaitEvent(nullptr, e, 0), "cuStreamWaitEvent");
  CUipcEventHandle ih;
  stale(cuIpcGetEventHandle(&ih, e), "cuIpcGetEventHandle");
  CHECK(cuEventDestroy(live) == CUDA_SUCCESS);
  still_works();
}

TEST_CASE("a destroyed memory pool, passed to every call that takes a pool", "[handles][robustness]") {
  primary();
  CUmemPoolProps pp = pool_props();
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  auto stale = [&](CUresult r, const char* api) {
    INFO(api);
    CHECK(r == CUDA_ERROR_INVALID_VALUE);  // pools: the driver's code for a handle it does not know
    CHECK(says({api, hex(pool), "not a live memory pool"}));
  };
  cuuint64_t v = 0;
  stale(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v), "cuMemPoolGetAttribute");
  stale(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v), "cuMemPoolSetAttribute");
  stale(cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo");
  CUdeviceptr p = 1;
  stale(cuMemAllocFromPoolAsync(&p, 256, pool, nullptr), "cuMemAllocFromPoolAsync");
  CHECK(p == 0);
  int fd = -1;
  stale(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemPoolExportToShareableHandle");
  CHECK(fd == -1);
  CUmemAccessDesc a;
  std::memset(&a, 0, sizeof a);
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  stale(cuMemPoolSetAccess(pool, &a, 1), "cuMemPoolSetAccess");
  stale(cuDeviceSetMemPool(0, pool), "cuDeviceSetMemPool");
  CHECK(cuMemPoolGetAttribute(nullptr, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says({"cuMemPoolGetAttribute", "NULL"}));
  still_works();
}

TEST_CASE("destroyed external memory and semaphores, and released VMM handles", "[handles][robustness]") {
  primary();
  CUexternalMemory m = import_memory();
  REQUIRE(cuDestroyExternalMemory(m) == CUDA_SUCCESS);
  CUdeviceptr p = 0;
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC b;
  std::memset(&b, 0, sizeof b);
  b.size = 4096;
  CHECK(cuExternalMemoryGetMappedBuffer(&p, m, &b) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuExternalMemoryGetMappedBuffer", hex(m), "not a live external memory object"}));
  CUmipmappedArray mm = nullptr;
  auto md = mip_desc();
  CHECK(cuExternalMemoryGetMappedMipmappedArray(&mm, m, &md) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuExternalMemoryGetMappedMipmappedArray", hex(m)}));

  CUexternalSemaphore s = import_semaphore();
  REQUIRE(cuDestroyExternalSemaphore(s) == CUDA_SUCCESS);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
  std::memset(&sp, 0, sizeof sp);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp;
  std::memset(&wp, 0, sizeof wp);
  CHECK(cuSignalExternalSemaphoresAsync(&s, &sp, 1, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuSignalExternalSemaphoresAsync", hex(s), "not a live external semaphore"}));
  CHECK(cuWaitExternalSemaphoresAsync(&s, &wp, 1, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuWaitExternalSemaphoresAsync", hex(s)}));

  CUmemAllocationProp vp = vmm_prop();
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, kGran, &vp, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
  CUdeviceptr va = 0;
  REQUIRE(cuMemAddressReserve(&va, kGran, 0, 0, 0) == CUDA_SUCCESS);
  CHECK(cuMemMap(va, kGran, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says({"cuMemMap", "not a live allocation handle"}));
  int fd = -1;
  CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(fd == -1);
  CUmemAllocationProp q;
  CHECK(cuMemGetAllocationPropertiesFromHandle(&q, h) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemAddressFree(va, kGran) == CUDA_SUCCESS);
  still_works();
}

// ---- garbage ---------------------------------------------------------------------------------
TEST_CASE("garbage pointers as every handle kind", "[handles][robustness]") {
  primary();
  Garbage g;
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 4096) == CUDA_SUCCESS);
  for (void* v : g.values) {
    INFO("garbage handle " << v);
    auto st = static_cast<CUstream>(v);
    CHECK(cuStreamSynchronize(st) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuStreamSynchronize", hex(v), "not a live stream"}));
    CHECK(cuStreamQuery(st) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamDestroy(st) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuLaunchHostFunc(st, host_fn, nullptr) == CUDA_ERROR_INVALID_HANDLE);
    CUdeviceptr p = 0;
    CHECK(cuMemAllocAsync(&p, 64, st) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamAttachMemAsync(st, d, 0, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_INVALID_HANDLE);

    auto ev = static_cast<CUevent>(v);
    CHECK(cuEventQuery(ev) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuEventQuery", hex(v), "not a live event"}));
    CHECK(cuEventSynchronize(ev) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuEventRecord(ev, nullptr) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuEventDestroy(ev) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamWaitEvent(nullptr, ev, 0) == CUDA_ERROR_INVALID_HANDLE);

    auto pool = static_cast<CUmemoryPool>(v);
    cuuint64_t val = 0;
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &val) == CUDA_ERROR_INVALID_VALUE);
    CHECK(says({"cuMemPoolGetAttribute", hex(v), "not a live memory pool"}));
    CHECK(cuMemPoolDestroy(pool) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAllocFromPoolAsync(&p, 64, pool, nullptr) == CUDA_ERROR_INVALID_VALUE);

    auto em = static_cast<CUexternalMemory>(v);
    CHECK(cuDestroyExternalMemory(em) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuDestroyExternalMemory", hex(v), "not a live external memory object"}));
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b;
    std::memset(&b, 0, sizeof b);
    b.size = 64;
    CHECK(cuExternalMemoryGetMappedBuffer(&p, em, &b) == CUDA_ERROR_INVALID_HANDLE);

    auto es = static_cast<CUexternalSemaphore>(v);
    CHECK(cuDestroyExternalSemaphore(es) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuDestroyExternalSemaphore", hex(v), "not a live external semaphore"}));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
    std::memset(&sp, 0, sizeof sp);
    CHECK(cuSignalExternalSemaphoresAsync(&es, &sp, 1, nullptr) == CUDA_ERROR_INVALID_HANDLE);

    auto arr = static_cast<CUarray>(v);
    CHECK(cuArrayDestroy(arr) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuArrayDestroy", hex(v), "not a live CUDA array"}));
    auto mip = static_cast<CUmipmappedArray>(v);
    CHECK(cuMipmappedArrayDestroy(mip) == CUDA_ERROR_INVALID_HANDLE);

    auto h = static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<uintptr_t>(v));
    CHECK(cuMemRelease(h) == CUDA_ERROR_INVALID_VALUE);
    CHECK(says({"cuMemRelease", "not a live allocation handle"}));

    auto c = static_cast<CUcontext>(v);
    CHECK(cuCtxSetCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(says({"cuCtxSetCurrent", hex(v), "not a live context"}));
    CHECK(cuCtxPushCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxDestroy(c) == CUDA_ERROR_INVALID_CONTEXT);
  }
  CHECK(cuMemFree(d) == CUDA_SUCCESS);
  still_works();
}

TEST_CASE("NULL handles to destroy", "[handles][robustness]") {
  primary();
  // Streams and events: NULL names no live object (cudaStreamDestroy(NULL) measured so).
  CHECK(cuStreamDestroy(nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuEventDestroy(nullptr) == CUDA_ERROR_INVALID_HANDLE);
  // The rest: CUDA_ERROR_INVALID_VALUE (measured for pools, external objects, VMM handles).
  CHECK(cuMemPoolDestroy(nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuDestroyExternalMemory(nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says({"cuDestroyExternalMemory", "NULL"}));
  CHECK(cuDestroyExternalSemaphore(nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says({"cuDestroyExternalSemaphore", "NULL"}));
  CHECK(cuCtxDestroy(nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemRelease(0) == CUDA_ERROR_INVALID_VALUE);
  still_works();
}

// ---- cuStreamAttachMemAsync flags -----------------------------------------------------------
TEST_CASE("cuStreamAttachMemAsync: flags that are not one attach mode, and destroyed streams", "[handles][robustness][managed]") {
  primary();
  CUdeviceptr m = 0;
  REQUIRE(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  for (unsigned f : {0u, 3u, 0x80000000u, 5u, 7u, 8u}) {
    INFO("flags " << f);
    CHECK(cuStreamAttachMemAsync(s, m, 0, f) == CUDA_ERROR_INVALID_VALUE);
    CHECK(says({"cuStreamAttachMemAsync", "flags", "must be exactly one of"}));
  }
  CHECK(cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_SINGLE) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  for (unsigned f : {0u, 3u, 0x80000000u, unsigned(CU_MEM_ATTACH_GLOBAL), unsigned(CU_MEM_ATTACH_SINGLE)}) {
    INFO("flags " << f << " on a destroyed stream");
    CHECK(cuStreamAttachMemAsync(s, m, 0, f) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(says({"cuStreamAttachMemAsync", hex(s), "not a live stream"}));
  }
  // Host code still reaches the memory (its association reverted with the stream).
  static_cast<volatile unsigned char*>(reinterpret_cast<void*>(m))[0] = 0x42;
  CHECK(cuMemFree(m) == CUDA_SUCCESS);
  still_works();
}

// ---- synchronizing from inside a host function -----------------------------------------------
// A host function runs on its stream; a synchronize it makes would wait for itself for ever (it
// hung here before). The documentation says host functions must not make CUDA calls and that
// doing so may give CUDA_ERROR_NOT_PERMITTED: every synchronizing call from one does.
namespace {
struct InsideHostFn {
  CUstream s = nullptr;
  CUevent after = nullptr;  // recorded on s after the host function
  CUcontext ctx = nullptr;
  CUresult stream_sync = CUDA_SUCCESS, event_sync = CUDA_SUCCESS, ctx_sync = CUDA_SUCCESS;
  cudaError_t rt_stream_sync = cudaSuccess, rt_device_sync = cudaSuccess;
  CUresult query = CUDA_ERROR_UNKNOWN;
  std::string why;
};
void sync_inside(void* p) {
  auto* t = static_cast<InsideHostFn*>(p);
  t->stream_sync = cuStreamSynchronize(t->s);
  t->why = last_why();
  t->event_sync = cuEventSynchronize(t->after);
  cuCtxSetCurrent(t->ctx);
  t->ctx_sync = cuCtxSynchronize();
  t->rt_stream_sync = cudaStreamSynchronize(t->s);
  t->rt_device_sync = cudaDeviceSynchronize();
  t->query = cuStreamQuery(t->s);  // not a wait: answered (the stream is busy running us)
}
}  // namespace

TEST_CASE("synchronizing from inside a host function is CUDA_ERROR_NOT_PERMITTED, not a deadlock", "[handles][robustness][hostfn]") {
  primary();
  InsideHostFn t;
  REQUIRE(cuCtxGetCurrent(&t.ctx) == CUDA_SUCCESS);
  REQUIRE(cuStreamCreate(&t.s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&t.after, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  REQUIRE(cuLaunchHostFunc(t.s, sync_inside, &t) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(t.after, t.s) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(t.s) == CUDA_SUCCESS);  // returns: nothing deadlocked
  CHECK(t.stream_sync == CUDA_ERROR_NOT_PERMITTED);
  CHECK(t.why.find("inside a host function") != std::string::npos);
  CHECK(t.event_sync == CUDA_ERROR_NOT_PERMITTED);
  CHECK(t.ctx_sync == CUDA_ERROR_NOT_PERMITTED);
  CHECK(t.rt_stream_sync == cudaErrorNotPermitted);
  CHECK(t.rt_device_sync == cudaErrorNotPermitted);
  CHECK(t.query == CUDA_ERROR_NOT_READY);
  // Outside host functions the same calls synchronize as before.
  CHECK(cuEventSynchronize(t.after) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cuEventDestroy(t.after) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(t.s) == CUDA_SUCCESS);
  still_works();
}

// Issue 22, item 4: a handle value was the object's address, so the next object the allocator
// placed there got the same handle, and a second destroy through the stale one destroyed the
// new object. Handles are now counted, never reused: a stale one stays dead.
