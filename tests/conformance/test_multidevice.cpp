// Rules between two devices: peer access (contexts and the runtime), P2P attributes, copies
// between devices, VMM access granted to the other device, the second device's pools, managed
// memory advised and prefetched to the other device. Expected codes and values measured on two
// H100s (driver 580, CUDA 13.0, NVLink); the emulator runs this with two devices and eight.
// With one device every case says so and checks nothing.
#include <cstring>
#include <utility>
#include <vector>

#include "common.hpp"
#include "pool_common.hpp"

namespace {

bool two_devices() {
  conformance_primary_ctx();
  return device_count() >= 2;
}
// Ends the test case (passing) on a machine with one device.
#define NEED_TWO_DEVICES() \
  do {                     \
    if (!two_devices()) {  \
      SUCCEED("one device"); \
      return;              \
    }                      \
  } while (0)

// The primary context of `dev`, retained (released by the guard).
struct Primary {
  explicit Primary(int d) : dev(d) { REQUIRE_CU(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS); }
  ~Primary() { cuDevicePrimaryCtxRelease(dev); }
  int dev;
  CUcontext ctx = nullptr;
};

// Makes ctx current for the scope, then puts back what was.
struct Current {
  explicit Current(CUcontext c) {
    cuCtxGetCurrent(&old);
    cuCtxSetCurrent(c);
  }
  ~Current() { cuCtxSetCurrent(old); }
  CUcontext old = nullptr;
};

// One granule of device 0's memory from cuMemCreate (with `types` handle types), mapped, no
// access granted yet; release() checks each step of the teardown.
struct Mapped {
  explicit Mapped(unsigned long long types = 0) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(types);
    REQUIRE_CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
    REQUIRE_CU(cuMemCreate(&h, g, &prop, 0), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAddressReserve(&va, g, 0, 0, 0), CUDA_SUCCESS);
    REQUIRE_CU(cuMemMap(va, g, 0, h, 0), CUDA_SUCCESS);
  }
  void release() {
    CHECK_CU(cuMemUnmap(va, g), CUDA_SUCCESS);
    CHECK_CU(cuMemAddressFree(va, g), CUDA_SUCCESS);
    CHECK_CU(cuMemRelease(h), CUDA_SUCCESS);
  }
  size_t g = 0;
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
};

}  // namespace

TEST_CASE("multi-device: P2P attributes of two devices", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  int v = -1;
  CHECK_CU(cuDeviceCanAccessPeer(&v, 0, 1), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_CU(cuDeviceCanAccessPeer(&v, 1, 0), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_CU(cuDeviceCanAccessPeer(&v, 0, 0), CUDA_SUCCESS);
  CHECK(v == 0);
  CHECK_CU(cuDeviceCanAccessPeer(&v, 0, device_count()), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuDeviceCanAccessPeer(nullptr, 0, 1), CUDA_ERROR_INVALID_VALUE);
  // Measured over NVLink: every kind of access, atomics in full, rank 0.
  const std::pair<CUdevice_P2PAttribute, int> attrs[] = {
      {CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1},
      {CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 1},
      {CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, 1},
      {CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0},
      {CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED, 0},
  };
  for (auto [attr, want] : attrs) {
    INFO("attribute " << static_cast<int>(attr));
    v = -1;
    CHECK_CU(cuDeviceGetP2PAttribute(&v, attr, 0, 1), CUDA_SUCCESS);
    CHECK(v == want);
  }
  CHECK_CU(cuDeviceGetP2PAttribute(&v, static_cast<CUdevice_P2PAttribute>(0), 0, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, device_count()),
           CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuDeviceGetP2PAttribute(&v, static_cast<CUdevice_P2PAttribute>(99), 0, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuDeviceGetP2PAttribute(nullptr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1), CUDA_ERROR_INVALID_VALUE);
  v = -1;
  CHECK_RT(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 1, 0), cudaSuccess);
  CHECK(v == 1);
  CHECK_RT(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 1, 1), cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_CASE("multi-device: context peer access is enabled once and disabled once", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  Primary p0(0), p1(1);
  Current cur(p0.ctx);
  CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuCtxEnablePeerAccess(nullptr, 0), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(cuCtxEnablePeerAccess(p0.ctx, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);  // itself
  CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 0), CUDA_SUCCESS);
  CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  {
    // One direction only: device 1's context has not enabled access to device 0's.
    Current c1(p1.ctx);
    CHECK_CU(cuCtxDisablePeerAccess(p0.ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  }
  CHECK_CU(cuCtxDisablePeerAccess(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_SUCCESS);
  CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  {
    Current none(nullptr);
    CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_ERROR_INVALID_CONTEXT);
  }
}

TEST_CASE("multi-device: runtime peer access is the primary contexts'", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
  CHECK_RT(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessUnsupported);  // itself
  CHECK_RT(cudaDeviceEnablePeerAccess(device_count(), 0), cudaErrorInvalidDevice);
  CHECK_RT(cudaDeviceEnablePeerAccess(-1, 0), cudaErrorInvalidDevice);
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
  CHECK_RT(cudaGetLastError(), cudaErrorPeerAccessNotEnabled);
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  CHECK_RT(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
  {
    // The driver sees the same state through the primary contexts.
    Primary p0(0), p1(1);
    Current cur(p0.ctx);
    CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  }
  REQUIRE_RT(cudaSetDevice(1), cudaSuccess);
  CHECK_RT(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  CHECK_RT(cudaDeviceDisablePeerAccess(device_count()), cudaErrorInvalidDevice);
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
  cudaGetLastError();
}

TEST_CASE("multi-device: copies between the devices' memory, with and without peer access", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  const size_t n = 1 << 20;
  void *a = nullptr, *b = nullptr;
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&a, n), cudaSuccess);
  REQUIRE_RT(cudaSetDevice(1), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&b, n), cudaSuccess);
  cudaStream_t s1 = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  std::vector<unsigned char> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 1);
  REQUIRE_RT(cudaMemcpy(a, in.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpyPeer(b, 1, a, 0, n), cudaSuccess);
  CHECK_RT(cudaMemcpy(out.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(out == in);
  // The device numbers are checked, but the pointers decide where the bytes go.
  CHECK_RT(cudaMemsetAsync(b, 0, n, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_RT(cudaMemcpyPeer(b, 0, a, 1, n), cudaSuccess);
  CHECK_RT(cudaMemcpy(out.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(out == in);
  CHECK_RT(cudaMemcpyPeer(b, 1, a, 0, 0), cudaSuccess);
  // Onto a stream of the other device, from device 0's current context.
  CHECK_RT(cudaMemsetAsync(b, 0, n, s1), cudaSuccess);
  CHECK_RT(cudaMemcpyPeerAsync(b, 1, a, 0, n, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_RT(cudaMemcpy(out.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(out == in);
  // Default-kind and device-to-device copies across devices need no peer access.
  CHECK_RT(cudaMemsetAsync(b, 0, n, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_RT(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpy(out.data(), b, n, cudaMemcpyDefault), cudaSuccess);
  CHECK(out == in);
  CHECK_RT(cudaMemcpyAsync(a, b, n, cudaMemcpyDefault, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  // Peer access changes none of it.
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  CHECK_RT(cudaMemcpyPeer(b, 1, a, 0, n), cudaSuccess);
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  cudaPointerAttributes attr{};
  CHECK_RT(cudaPointerGetAttributes(&attr, b), cudaSuccess);
  CHECK(attr.device == 1);
  CHECK(attr.type == cudaMemoryTypeDevice);
  CHECK_RT(cudaStreamDestroy(s1), cudaSuccess);
  CHECK_RT(cudaFree(b), cudaSuccess);  // another device's memory, freed from device 0
  CHECK_RT(cudaFree(a), cudaSuccess);
}

TEST_CASE("multi-device: VMM memory of one device mapped for the other", "[multi-gpu][vmm]") {
  NEED_TWO_DEVICES();
  Mapped m;
  const size_t g = m.g;
  const CUdeviceptr va = m.va;
  CUmemAccessDesc d{};
  d.location = {CU_MEM_LOCATION_TYPE_DEVICE, 1};
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  // Access for device 1 alone: device 0, where the memory lives, gets none.
  CHECK_CU(cuMemSetAccess(va, g, &d, 1), CUDA_SUCCESS);
  CUmemLocation l0{CU_MEM_LOCATION_TYPE_DEVICE, 0}, l1{CU_MEM_LOCATION_TYPE_DEVICE, 1};
  unsigned long long f = 99;
  CHECK_CU(cuMemGetAccess(&f, &l1, va), CUDA_SUCCESS);
  CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  f = 99;
  CHECK_CU(cuMemGetAccess(&f, &l0, va), CUDA_SUCCESS);
  CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  // A memset runs on the current context's device, which has no access here.
  CHECK_CU(cuMemsetD8(va, 1, g), CUDA_ERROR_INVALID_VALUE);
  {
    Primary p1(1);
    Current cur(p1.ctx);
    CHECK_CU(cuMemsetD8(va, 1, g), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);  // landed before the access changes
  }
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  CHECK_CU(cuMemSetAccess(va, g, &d, 1), CUDA_SUCCESS);
  f = 99;
  CHECK_CU(cuMemGetAccess(&f, &l1, va), CUDA_SUCCESS);
  CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_READ);
  CUmemAccessDesc both[2] = {{l0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE}, {l1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE}};
  CHECK_CU(cuMemSetAccess(va, g, both, 2), CUDA_SUCCESS);
  {
    Primary p1(1);
    Current cur(p1.ctx);
    unsigned char in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {};
    CHECK_CU(cuMemcpyHtoD(va, in, 8), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoH(out, va, 8), CUDA_SUCCESS);
    CHECK(out[7] == 8);
    int ordinal = -1;
    CHECK_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va), CUDA_SUCCESS);
    CHECK(ordinal == 0);
  }
  m.release();
}

TEST_CASE("multi-device: the second device's default and current pools", "[multi-gpu][mempool]") {
  NEED_TWO_DEVICES();
  cudaMemPool_t d0 = nullptr, d1 = nullptr, cur1 = nullptr;
  REQUIRE_RT(cudaDeviceGetDefaultMemPool(&d0, 0), cudaSuccess);
  REQUIRE_RT(cudaDeviceGetDefaultMemPool(&d1, 1), cudaSuccess);
  CHECK(d0 != d1);
  REQUIRE_RT(cudaDeviceGetMemPool(&cur1, 1), cudaSuccess);
  CHECK(cur1 == d1);
  // A device's current pool must be located on that device.
  CHECK_RT(cudaDeviceSetMemPool(0, d1), cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE_RT(cudaSetDevice(1), cudaSuccess);
  cudaStream_t s1 = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  // cudaMallocAsync allocates from the current pool of the stream's device, not the caller's.
  void* p = nullptr;
  REQUIRE_RT(cudaMallocAsync(&p, 4096, s1), cudaSuccess);
  cudaPointerAttributes attr{};
  CHECK_RT(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  CHECK(attr.device == 1);
  CHECK_RT(cudaFreeAsync(p, s1), cudaSuccess);
  // A pool of device 1 serves a stream of device 0.
  cudaStream_t s0 = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
  CHECK_RT(cudaMallocFromPoolAsync(&p, 4096, d1, s0), cudaSuccess);
  CHECK_RT(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  CHECK(attr.device == 1);
  CHECK_RT(cudaFreeAsync(p, s0), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s0), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  // Trimmed, device 1's default pool holds nothing.
  CHECK_RT(cudaMemPoolTrimTo(d1, 0), cudaSuccess);
  cuuint64_t reserved = 1;
  CHECK_RT(cudaMemPoolGetAttribute(d1, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
  CHECK(reserved == 0);
  CHECK_RT(cudaStreamDestroy(s0), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s1), cudaSuccess);
}

TEST_CASE("multi-device: managed memory advised and prefetched to the other device", "[multi-gpu][managed]") {
  NEED_TWO_DEVICES();
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  const size_t n = 2 << 20;
  void* m = nullptr;
  REQUIRE_RT(cudaMallocManaged(&m, n), cudaSuccess);
  std::memset(m, 3, n);
  cudaMemLocation dev1{cudaMemLocationTypeDevice, 1}, dev0{cudaMemLocationTypeDevice, 0};
  CHECK_RT(cudaMemAdvise(m, n, cudaMemAdviseSetPreferredLocation, dev1), cudaSuccess);
  CHECK_RT(cudaMemAdvise(m, n, cudaMemAdviseSetAccessedBy, dev0), cudaSuccess);
  int v = -5;
  CHECK_RT(cudaMemRangeGetAttribute(&v, sizeof v, cudaMemRangeAttributePreferredLocation, m, n), cudaSuccess);
  CHECK(v == 1);
  int by[4] = {-5, -5, -5, -5};
  CHECK_RT(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, m, n), cudaSuccess);
  CHECK(by[0] == 0);
  CHECK(by[1] == -2);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  CHECK_RT(cudaMemPrefetchAsync(m, n, dev1, 0, s), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  v = -5;
  CHECK_RT(cudaMemRangeGetAttribute(&v, sizeof v, cudaMemRangeAttributeLastPrefetchLocation, m, n), cudaSuccess);
  CHECK(v == 1);
  // The host still reads what it wrote.
  CHECK(static_cast<unsigned char*>(m)[n - 1] == 3);
  CHECK_RT(cudaMemPrefetchAsync(m, n, cudaMemLocation{cudaMemLocationTypeDevice, device_count()}, 0, s),
           cudaErrorInvalidDevice);
  cudaGetLastError();
  CHECK_RT(cudaMemAdvise(m, n, cudaMemAdviseUnsetAccessedBy, dev0), cudaSuccess);
  CHECK_RT(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, m, n), cudaSuccess);
  CHECK(by[0] == -2);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFree(m), cudaSuccess);
}

TEST_CASE("multi-device: a memset runs on its stream's device, which must reach the memory", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  const size_t n = 1 << 16;
  void* b = nullptr;
  REQUIRE_RT(cudaSetDevice(1), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&b, n), cudaSuccess);
  cudaStream_t s1 = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  cudaStream_t s0 = nullptr;
  REQUIRE_RT(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
  // Device 0 cannot write device 1's memory without peer access; copies go either way.
  CHECK_RT(cudaMemset(b, 1, n), cudaErrorInvalidValue);
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);
  CHECK_RT(cudaMemsetAsync(b, 1, n, s0), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaMemsetAsync(b, 1, n, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_CU(cuMemsetD8(reinterpret_cast<CUdeviceptr>(b), 2, n), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemsetD32(reinterpret_cast<CUdeviceptr>(b), 2, n / 4), CUDA_ERROR_INVALID_VALUE);
  std::vector<unsigned char> h(n, 7);
  CHECK_RT(cudaMemcpy(b, h.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  // With peer access it can.
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  CHECK_RT(cudaMemset(b, 3, n), cudaSuccess);
  CHECK_RT(cudaMemsetAsync(b, 3, n, s0), cudaSuccess);
  CHECK_CU(cuMemsetD8(reinterpret_cast<CUdeviceptr>(b), 3, n), CUDA_SUCCESS);
  CHECK_RT(cudaStreamSynchronize(s0), cudaSuccess);
  CHECK_RT(cudaMemcpy(h.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(h[n - 1] == 3);
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  CHECK_RT(cudaMemset(b, 1, n), cudaErrorInvalidValue);
  cudaGetLastError();
  // Pool memory: the pool's access list decides, peer access does not.
  cudaMemPool_t d1 = nullptr;
  REQUIRE_RT(cudaDeviceGetDefaultMemPool(&d1, 1), cudaSuccess);
  void* q = nullptr;
  REQUIRE_RT(cudaMallocAsync(&q, n, s1), cudaSuccess);
  REQUIRE_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_RT(cudaMemset(q, 1, n), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  CHECK_RT(cudaMemset(q, 1, n), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  cudaMemAccessDesc a{};
  a.location = {cudaMemLocationTypeDevice, 0};
  a.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK_RT(cudaMemPoolSetAccess(d1, &a, 1), cudaSuccess);
  CHECK_RT(cudaMemset(q, 1, n), cudaSuccess);
  // The fill runs until it lands: access goes only after (else the device faults).
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  a.flags = cudaMemAccessFlagsProtNone;
  CHECK_RT(cudaMemPoolSetAccess(d1, &a, 1), cudaSuccess);
  CHECK_RT(cudaFreeAsync(q, s1), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s1), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s0), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s1), cudaSuccess);
  CHECK_RT(cudaFree(b), cudaSuccess);
}

TEST_CASE("multi-device: every fill form of another device's memory needs peer access", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  Primary p0(0), p1(1);
  Current cur(p0.ctx);
  CUdeviceptr prim = 0;
  {
    Current in1(p1.ctx);
    REQUIRE_CU(cuMemAlloc(&prim, 4096), CUDA_SUCCESS);
  }
  CHECK_CU(cuMemsetD8(prim, 1, 4096), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemsetD16(prim, 1, 2048), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemsetD2D8(prim, 64, 1, 64, 4), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuCtxEnablePeerAccess(p1.ctx, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemsetD8(prim, 1, 4096), CUDA_SUCCESS);
  CHECK_CU(cuMemsetD2D8(prim, 64, 1, 64, 4), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_SUCCESS);
  {
    Current in1(p1.ctx);
    CHECK_CU(cuMemFree(prim), CUDA_SUCCESS);
  }
}

TEST_CASE("multi-device: peer access is per context: a second context of the peer device is its own", "[multi-gpu]") {
  NEED_TWO_DEVICES();
  Primary p0(0), p1(1);
  Current cur(p0.ctx);
  CUcontext c1 = nullptr;
  REQUIRE_CU(cuCtxCreate(&c1, nullptr, 0, 1), CUDA_SUCCESS);  // now current
  CUdeviceptr own = 0;
  REQUIRE_CU(cuMemAlloc(&own, 4096), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(p0.ctx), CUDA_SUCCESS);
  CHECK_CU(cuCtxEnablePeerAccess(c1, 0), CUDA_SUCCESS);
  CHECK_CU(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  CHECK_CU(cuCtxDisablePeerAccess(p1.ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  CHECK_CU(cuMemsetD8(own, 5, 4096), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK_CU(cuCtxDisablePeerAccess(c1), CUDA_SUCCESS);
  CHECK_CU(cuMemsetD8(own, 5, 4096), CUDA_ERROR_INVALID_VALUE);
  unsigned char b = 0;
  CHECK_CU(cuMemcpyDtoH(&b, own + 4095, 1), CUDA_SUCCESS);
  CHECK(b == 5);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(own), CUDA_SUCCESS);
  CHECK_CU(cuCtxDestroy(c1), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(p0.ctx), CUDA_SUCCESS);
}

TEST_CASE("multi-device: device 0's memory imported as external memory on device 1", "[multi-gpu][external]") {
  NEED_TWO_DEVICES();
  Mapped m(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  const size_t g = m.g;
  const CUdeviceptr va = m.va;
  CUmemAccessDesc d{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  REQUIRE_CU(cuMemSetAccess(va, g, &d, 1), CUDA_SUCCESS);
  std::vector<unsigned char> in(g);
  for (size_t i = 0; i < g; ++i) in[i] = static_cast<unsigned char>(i * 13 + 5);
  REQUIRE_CU(cuMemcpyHtoD(va, in.data(), g), CUDA_SUCCESS);
  int fd = -1;
  REQUIRE_CU(cuMemExportToShareableHandle(&fd, m.h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  {
    Primary p1(1);
    Current cur(p1.ctx);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC md;
    std::memset(&md, 0, sizeof md);
    md.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    md.handle.fd = fd;
    md.size = g;
    CUexternalMemory ext = nullptr;
    REQUIRE_CU(cuImportExternalMemory(&ext, &md), CUDA_SUCCESS);
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
    std::memset(&bd, 0, sizeof bd);
    bd.size = g;
    CUdeviceptr p = 0;
    REQUIRE_CU(cuExternalMemoryGetMappedBuffer(&p, ext, &bd), CUDA_SUCCESS);
    int ordinal = -1;
    CHECK_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), CUDA_SUCCESS);
    CHECK(ordinal == 1);
    std::vector<unsigned char> out(g);
    CHECK_CU(cuMemcpyDtoH(out.data(), p, g), CUDA_SUCCESS);
    CHECK(out == in);
    CHECK_CU(cuMemsetD8(p, 9, 4096), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
    CHECK_CU(cuDestroyExternalMemory(ext), CUDA_SUCCESS);
  }
  unsigned char b = 0;
  CHECK_CU(cuMemcpyDtoH(&b, va + 4095, 1), CUDA_SUCCESS);
  CHECK(b == 9);
  m.release();
}
