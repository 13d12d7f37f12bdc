// Emulator-only: double destroys, use after destroy and garbage handles, where NVIDIA's driver
// dereferences what it is given (SIGSEGV, double free) or hangs. Every handle is validated
// through its registry (core/registry.hpp) before use, so each call answers with the
// documented code and an explanation naming the object; afterwards the process still works.
// The codes: CUDA_ERROR_INVALID_HANDLE for streams, events, external memory and semaphores,
// arrays (cudaErrorInvalidResourceHandle in the runtime); CUDA_ERROR_INVALID_VALUE for memory
// pools and VMM allocation handles (measured for 0 / released handles on driver 580, README);
// CUDA_ERROR_INVALID_CONTEXT for contexts; CUDA_ERROR_INVALID_VALUE for NULL handles.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

namespace {

constexpr size_t kGran = size_t(2) << 20;

// The last failure's explanation contains every one of `words`.
bool says(std::initializer_list<std::string> words) {
  std::string w = last_why();
  for (auto& s : words)
    if (w.find(s) == std::string::npos) {
      UNSCOPED_INFO("explanation \"" << w << "\" lacks \"" << s << "\"");
      return false;
    }
  return true;
}
// A handle as explanations print it (fmt's pointer form).
std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return b;
}

// The four kinds of garbage a program may pass as a handle: a small integer, all ones, the
// address of a stack variable, and the address of freed heap memory.
struct Garbage {
  int on_stack = 0;
  std::vector<void*> values;
  Garbage() {
    void* heap = std::malloc(24);
    std::free(heap);
    values = {reinterpret_cast<void*>(0x1234), reinterpret_cast<void*>(~uintptr_t(0)), &on_stack, heap};
  }
};

CUmemAllocationProp vmm_prop() {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

CUmemPoolProps pool_props() {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

// External memory imported from a cuMemCreate allocation's exported fd.
CUexternalMemory import_memory() {
  CUmemAllocationProp p = vmm_prop();
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, kGran, &p, 0) == CUDA_SUCCESS);
  int fd = -1;
  REQUIRE(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);  // the fd keeps the memory
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = kGran;
  CUexternalMemory m = nullptr;
  REQUIRE(cuImportExternalMemory(&m, &d) == CUDA_SUCCESS);
  return m;
}

CUexternalSemaphore import_semaphore() {
  int fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&fd, 1, 0) == CUDA_SUCCESS);
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  d.handle.fd = fd;
  CUexternalSemaphore s = nullptr;
  REQUIRE(cuImportExternalSemaphore(&s, &d) == CUDA_SUCCESS);
  return s;
}

CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mip_desc() {
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC d;
  std::memset(&d, 0, sizeof d);
  d.arrayDesc.Width = 64;
  d.arrayDesc.Height = 64;
  d.arrayDesc.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.arrayDesc.NumChannels = 4;
  d.numLevels = 2;
  return d;
}

void host_fn(void* p) { ++*static_cast<int*>(p); }

// The process still works: allocate, copy both ways, free; a stream, an event, a pool allocation.
void still_works() {
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 1 << 16) == CUDA_SUCCESS);
  std::vector<unsigned char> a(1 << 16), b(1 << 16, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 7 + 3);
  REQUIRE(cuMemcpyHtoD(d, a.data(), a.size()) == CUDA_SUCCESS);
  REQUIRE(cuMemcpyDtoH(b.data(), d, b.size()) == CUDA_SUCCESS);
  CHECK(a == b);
  CHECK(cuMemFree(d) == CUDA_SUCCESS);
  CUstream s = nullptr;
  CUevent e = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAllocAsync(&p, 4096, s) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoDAsync(p, a.data(), 4096, s) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(p, s) == CUDA_SUCCESS);
  CHECK(cuEventRecord(e, s) == CUDA_SUCCESS);
  CHECK(cuEventSynchronize(e) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_SUCCESS);
}

}  // namespace

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

// ---- the runtime's forms --------------------------------------------------------------------
TEST_CASE("the runtime: double destroys and stale handles are cudaErrorInvalidResourceHandle", "[handles][robustness][runtime]") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  cudaStream_t s = nullptr;
  cudaEvent_t e = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
  CHECK(says({"cudaStreamDestroy", hex(s), "not a live stream"}));
  CHECK(cudaEventDestroy(e) == cudaErrorInvalidResourceHandle);
  CHECK(says({"cudaEventDestroy", hex(e), "not a live event"}));
  CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamQuery(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamWaitEvent(nullptr, e, 0) == cudaErrorInvalidResourceHandle);
  CHECK(cudaLaunchHostFunc(s, host_fn, nullptr) == cudaErrorInvalidResourceHandle);
  void* p = nullptr;
  CHECK(cudaMallocAsync(&p, 64, s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventRecord(e, nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventSynchronize(e) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventQuery(e) == cudaErrorInvalidResourceHandle);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e, e) == cudaErrorInvalidResourceHandle);

  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  REQUIRE(cudaMemPoolCreate(&pool, &pp) == cudaSuccess);
  REQUIRE(cudaMemPoolDestroy(pool) == cudaSuccess);
  CHECK(cudaMemPoolDestroy(pool) == cudaErrorInvalidValue);
  CHECK(says({"not a live memory pool"}));
  uint64_t v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &v) == cudaErrorInvalidValue);

  primary();
  auto m = reinterpret_cast<cudaExternalMemory_t>(import_memory());
  REQUIRE(cudaDestroyExternalMemory(m) == cudaSuccess);
  CHECK(cudaDestroyExternalMemory(m) == cudaErrorInvalidResourceHandle);
  CHECK(says({"not a live external memory object"}));
  auto sem = reinterpret_cast<cudaExternalSemaphore_t>(import_semaphore());
  REQUIRE(cudaDestroyExternalSemaphore(sem) == cudaSuccess);
  CHECK(cudaDestroyExternalSemaphore(sem) == cudaErrorInvalidResourceHandle);
  CHECK(says({"not a live external semaphore"}));

  void* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, 4096) == cudaSuccess);
  CHECK(cudaStreamAttachMemAsync(nullptr, managed, 0, 0) == cudaErrorInvalidValue);
  CHECK(cudaStreamAttachMemAsync(s, managed, 0, cudaMemAttachGlobal) == cudaErrorInvalidResourceHandle);
  CHECK(cudaFree(managed) == cudaSuccess);

  Garbage g;
  for (void* gv : g.values) {
    INFO("garbage " << gv);
    CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventQuery(static_cast<cudaEvent_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamDestroy(static_cast<cudaStream_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(gv)) == cudaErrorInvalidResourceHandle);
  }
  // And the runtime still works.
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4096) == cudaSuccess);
  std::vector<unsigned char> a(4096, 0x6b), b(4096, 0);
  REQUIRE(cudaMemcpy(d, a.data(), a.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(b.data(), d, b.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(a == b);
  CHECK(cudaFree(d) == cudaSuccess);
}

// ---- objects of a destroyed context ---------------------------------------------------------
TEST_CASE("streams, events and memory of a destroyed context", "[handles][robustness][context]") {
  primary();
  CUcontext prim = nullptr;
  REQUIRE(cuCtxGetCurrent(&prim) == CUDA_SUCCESS);
  CUdevice dev = 0;
  REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE(cuCtxCreate(&c, nullptr, 0, dev) == CUDA_SUCCESS);
  CUstream s = nullptr;
  CUevent e = nullptr;
  CUdeviceptr d = 0;
  int calls = 0;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&d, 4096) == CUDA_SUCCESS);
  REQUIRE(cuLaunchHostFunc(s, host_fn, &calls) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(e, s) == CUDA_SUCCESS);
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);  // waits for its streams' work first
  CHECK(calls == 1);
  REQUIRE(cuCtxSetCurrent(prim) == CUDA_SUCCESS);
  // Its streams went with it.
  CHECK(cuStreamSynchronize(s) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuStreamSynchronize", hex(s), "not a live stream"}));
  CHECK(cuStreamDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
  // So did its memory.
  CHECK(cuMemFree(d) == CUDA_ERROR_INVALID_VALUE);
  // Its event lives on until destroyed, but cannot be recorded on another context's stream.
  CHECK(cuEventQuery(e) == CUDA_SUCCESS);
  CHECK(cuEventSynchronize(e) == CUDA_SUCCESS);
  CHECK(cuEventRecord(e, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuEventRecord", "different contexts"}));
  CHECK(cuStreamWaitEvent(nullptr, e, 0) == CUDA_SUCCESS);  // its record completed
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
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
TEST_CASE("stale event and VMM handles never name a new object", "[handles][robustness]") {
  primary();
  for (int round = 0; round < 64; ++round) {
    CUevent e1 = nullptr, e2 = nullptr;
    REQUIRE(cuEventCreate(&e1, 0) == CUDA_SUCCESS);
    REQUIRE(cuEventDestroy(e1) == CUDA_SUCCESS);
    REQUIRE(cuEventCreate(&e2, 0) == CUDA_SUCCESS);
    CHECK(e2 != e1);
    CHECK(cuEventDestroy(e1) == CUDA_ERROR_INVALID_HANDLE);  // stale: e2 must survive it
    CHECK(cuEventQuery(e2) == CUDA_SUCCESS);
    REQUIRE(cuEventDestroy(e2) == CUDA_SUCCESS);
  }
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  for (int round = 0; round < 16; ++round) {
    CUmemGenericAllocationHandle h1 = 0, h2 = 0;
    REQUIRE(cuMemCreate(&h1, 2 << 20, &p, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(h1) == CUDA_SUCCESS);
    REQUIRE(cuMemCreate(&h2, 2 << 20, &p, 0) == CUDA_SUCCESS);
    CHECK(h2 != h1);
    CHECK(cuMemRelease(h1) == CUDA_ERROR_INVALID_VALUE);  // stale, measured code for a released handle
    CUmemAllocationProp q;
    CHECK(cuMemGetAllocationPropertiesFromHandle(&q, h2) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(h2) == CUDA_SUCCESS);
  }
  // A handle released while mapped comes back the same from cuMemRetainAllocationHandle
  // (measured), and a stale value of another allocation still names nothing.
  CUmemGenericAllocationHandle h = 0, back = 0;
  REQUIRE(cuMemCreate(&h, 2 << 20, &p, 0) == CUDA_SUCCESS);
  CUdeviceptr va = 0;
  REQUIRE(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(va, 2 << 20, 0, h, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
  REQUIRE(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(va)) == CUDA_SUCCESS);
  CHECK(back == h);
  CHECK(cuMemRelease(back) == CUDA_SUCCESS);
  CHECK(cuMemUnmap(va, 2 << 20) == CUDA_SUCCESS);
  CHECK(cuMemAddressFree(va, 2 << 20) == CUDA_SUCCESS);
}

// Issue 22, item 4 for every other kind whose handle is its object's address: such objects live
// at addresses never handed out again (core/fresh_alloc.hpp), so a stale handle cannot name the
// object created after it, however many come and go.
TEST_CASE("stale stream, pool, context, array, external memory and semaphore handles never name a new object",
          "[handles][robustness]") {
  primary();
  CUdevice dev = 0;
  REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  std::set<void*> seen;
  auto fresh = [&](void* h) { return seen.insert(h).second; };
  CUmemPoolProps pp = pool_props();
  pp.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  for (int round = 0; round < 200; ++round) {
    CUstream s1 = nullptr, s2 = nullptr;
    REQUIRE(cuStreamCreate(&s1, 0) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy(s1) == CUDA_SUCCESS);
    REQUIRE(cuStreamCreate(&s2, 0) == CUDA_SUCCESS);
    CHECK(fresh(s1));
    CHECK(cuStreamDestroy(s1) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamQuery(s2) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy(s2) == CUDA_SUCCESS);

    CUmemoryPool p1 = nullptr, p2 = nullptr;
    REQUIRE(cuMemPoolCreate(&p1, &pp) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(p1) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolCreate(&p2, &pp) == CUDA_SUCCESS);
    CHECK(fresh(p1));
    CHECK(cuMemPoolDestroy(p1) == CUDA_ERROR_INVALID_VALUE);
    cuuint64_t v = 0;
    CHECK(cuMemPoolGetAttribute(p2, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(p2) == CUDA_SUCCESS);

    CUexternalSemaphore e1 = import_semaphore();
    REQUIRE(cuDestroyExternalSemaphore(e1) == CUDA_SUCCESS);
    CUexternalSemaphore e2 = import_semaphore();
    CHECK(fresh(e1));
    CHECK(cuDestroyExternalSemaphore(e1) == CUDA_ERROR_INVALID_HANDLE);
    REQUIRE(cuDestroyExternalSemaphore(e2) == CUDA_SUCCESS);

    if (round % 8 == 0) {  // the slower kinds, fewer rounds
      CUexternalMemory m1 = import_memory();
      REQUIRE(cuDestroyExternalMemory(m1) == CUDA_SUCCESS);
      CUexternalMemory m2 = import_memory();
      CHECK(fresh(m1));
      CHECK(cuDestroyExternalMemory(m1) == CUDA_ERROR_INVALID_HANDLE);
      // Mipmapped arrays (cuArrayCreate is not emulated; external memory makes them).
      auto md = mip_desc();
      CUmipmappedArray mm1 = nullptr, mm2 = nullptr;
      REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm1, m2, &md) == CUDA_SUCCESS);
      CUarray l1 = nullptr, l2 = nullptr;
      REQUIRE(cuMipmappedArrayGetLevel(&l1, mm1, 0) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayDestroy(mm1) == CUDA_SUCCESS);
      REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm2, m2, &md) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayGetLevel(&l2, mm2, 0) == CUDA_SUCCESS);
      CHECK(fresh(mm1));
      CHECK(fresh(l1));
      CHECK(cuMipmappedArrayDestroy(mm1) == CUDA_ERROR_INVALID_HANDLE);
      CHECK(cuArrayDestroy(l1) == CUDA_ERROR_INVALID_HANDLE);
      CUDA_ARRAY_DESCRIPTOR got;
      CHECK(cuArrayGetDescriptor(&got, l2) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayDestroy(mm2) == CUDA_SUCCESS);
      REQUIRE(cuDestroyExternalMemory(m2) == CUDA_SUCCESS);

      CUcontext c1 = nullptr, c2 = nullptr;
      REQUIRE(cuCtxCreate(&c1, nullptr, 0, dev) == CUDA_SUCCESS);
      REQUIRE(cuCtxDestroy(c1) == CUDA_SUCCESS);
      REQUIRE(cuCtxCreate(&c2, nullptr, 0, dev) == CUDA_SUCCESS);
      CHECK(fresh(c1));
      CHECK(cuCtxDestroy(c1) == CUDA_ERROR_INVALID_CONTEXT);  // c2 must survive it
      unsigned long long id = 0;
      CHECK(cuCtxGetId(c2, &id) == CUDA_SUCCESS);
      REQUIRE(cuCtxDestroy(c2) == CUDA_SUCCESS);
      primary();
    }
  }
  still_works();
}
