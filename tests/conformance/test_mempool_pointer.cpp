// Pointer attributes, address ranges and copies of pool memory, per pool kind
// (device, host, host-NUMA, managed), as NVIDIA's driver 580 reports them.
#include <cctype>
#include <string>
#include <vector>

#include "pool_common.hpp"
#include "real_answers.hpp"

namespace {
template <class T>
CUresult attr(T& out, CUpointer_attribute a, CUdeviceptr p) {
  return cuPointerGetAttribute(&out, a, p);
}
// The probe case that asks NVIDIA's driver the question for pool kind T
// (tests/probe/cases/pool_conformance.cases): "host NUMA" -> pool.conf.pointer.host_numa.WHAT.
template <class T>
std::string probe(const char* what) {
  std::string k;
  for (const char* c = T::name; *c; ++c)
    if (*c != ',') k += *c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  return "pool.conf.pointer." + k + "." + what;
}
}  // namespace

TEMPLATE_TEST_CASE("pointer attributes of pool memory", "[mempool][pointer]", DevicePool, HostPool, HostNumaPool,
                   ManagedPool, ManagedNoLocationPool) {
  conformance_primary_ctx();
  INFO(TestType::name);
  ScopedStream s;
  CUmemPoolProps props = TestType::props();
  ScopedPool pool(props);
  CUdeviceptr x = 0, x2 = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 1000, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x2, 1000, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  const CUdeviceptr q = x + 100;

  CUcontext ctx = reinterpret_cast<CUcontext>(0x1);
  CHECK_CU(attr(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, q), CUDA_SUCCESS);
  CHECK(ctx == nullptr);  // pool memory belongs to no context
  unsigned type = 0;
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, q), CUDA_SUCCESS);
  CHECK(type == TestType::mem_type);
  CUdeviceptr dptr = 1;
  CHECK_CU(attr(dptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, q), REAL_CU(probe<TestType>("device_pointer")));
  CHECK(dptr == (TestType::device_pointer ? q : 0));
  void* hptr = reinterpret_cast<void*>(1);
  CHECK_CU(attr(hptr, CU_POINTER_ATTRIBUTE_HOST_POINTER, q), REAL_CU(probe<TestType>("host_pointer")));
  CHECK(hptr == (TestType::host_accessible ? reinterpret_cast<void*>(q) : nullptr));
  int b = -1;
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_IS_MANAGED, q), CUDA_SUCCESS);
  CHECK(b == (TestType::managed ? 1 : 0));
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, q), CUDA_SUCCESS);
  CHECK(b == (TestType::managed ? 1 : 0));
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, q), CUDA_SUCCESS);
  CHECK(b == 0);
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, q), CUDA_SUCCESS);
  CHECK(b == 0);  // pool memory is shared through pool export, not cudaIpcGetMemHandle
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_MAPPED, q), CUDA_SUCCESS);
  CHECK(b == 1);
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, q), CUDA_SUCCESS);
  CHECK(b == 0);
  CHECK_CU(attr(b, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, q), CUDA_SUCCESS);
  CHECK(b == 0);
  unsigned flags = 0;
  CHECK_CU(attr(flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, q), CUDA_SUCCESS);
  CHECK(flags == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
  CUdeviceptr start = 1;
  size_t size = 0;
  CHECK_CU(attr(start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, q), CUDA_SUCCESS);
  // Measured: host-located pool memory reports a range start of 0.
  CHECK(start == (TestType::mem_type == CU_MEMORYTYPE_HOST ? 0 : x));
  CHECK_CU(attr(size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, q), CUDA_SUCCESS);
  CHECK(size == 1000);
  unsigned long long handle_types = 99;
  CHECK_CU(attr(handle_types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, q), CUDA_SUCCESS);
  CHECK(handle_types == static_cast<unsigned long long>(props.handleTypes));
  CUmemoryPool owner = nullptr;
  CHECK_CU(attr(owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q), CUDA_SUCCESS);
  CHECK(owner == pool.pool);
  size_t mapping = 0;
  void* mapping_base = nullptr;
  CHECK_CU(attr(mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, q), CUDA_SUCCESS);
  CHECK(mapping == kChunk);
  CHECK_CU(attr(mapping_base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, q), CUDA_SUCCESS);
  CHECK(mapping_base == reinterpret_cast<void*>(x));  // x opens the pool's first chunk
  unsigned long long id1 = 0, id2 = 0;
  CHECK_CU(attr(id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, x), CUDA_SUCCESS);
  CHECK_CU(attr(id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, x2), CUDA_SUCCESS);
  CHECK(id1 != id2);  // one per allocation
  CHECK_CU(attr(id1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, x), CUDA_SUCCESS);
  CHECK_CU(attr(id2, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, x2), CUDA_SUCCESS);
  CHECK(id1 == id2);  // one per chunk

  // cudaPointerGetAttributes.
  cudaPointerAttributes pa;
  std::memset(&pa, 0xab, sizeof pa);
  CHECK_RT(cudaPointerGetAttributes(&pa, reinterpret_cast<void*>(q)), cudaSuccess);
  CHECK(pa.type == TestType::rt_type);
  CHECK(pa.device == 0);
  CHECK(pa.devicePointer == (TestType::device_pointer ? reinterpret_cast<void*>(q) : nullptr));
  CHECK(pa.hostPointer == (TestType::host_accessible ? reinterpret_cast<void*>(q) : nullptr));

  // cuMemGetAddressRange: the allocation, except for host-located pools (measured).
  CUdeviceptr base = 0;
  size_t len = 0;
  if (TestType::mem_type == CU_MEMORYTYPE_HOST) {
    CHECK_CU(cuMemGetAddressRange(&base, &len, q), REAL_CU(probe<TestType>("addr_range")));
  } else {
    CHECK_CU(cuMemGetAddressRange(&base, &len, q), CUDA_SUCCESS);
    CHECK(base == x);
    CHECK(len == 1000);
  }

  // After the free, the pointer is unknown again.
  CHECK_CU(cuMemFreeAsync(x, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK_CU(attr(type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x), REAL_CU(probe<TestType>("freed.memory_type")));
  CHECK_CU(cuMemGetAddressRange(&base, &len, x), REAL_CU(probe<TestType>("freed.addr_range")));
  unsigned char byte = 0;
  CHECK_CU(cuMemcpyDtoH(&byte, x, 1), REAL_CU(probe<TestType>("freed.read")));
  CHECK_CU(cuMemFreeAsync(x2, s), CUDA_SUCCESS);
}

TEMPLATE_TEST_CASE("copies stay inside one pool allocation", "[mempool][pointer]", DevicePool, ManagedPool) {
  conformance_primary_ctx();
  INFO(TestType::name);
  ScopedStream s;
  ScopedPool pool(TestType::props());
  CUdeviceptr x = 0, x2 = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 1000, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x2, 1000, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  std::vector<unsigned char> buf(4096, 7);
  CHECK_CU(cuMemcpyHtoD(x, buf.data(), 1000), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyHtoD(x, buf.data(), 2000), REAL_CU(probe<TestType>("copy.htod_past_end")));  // runs into the next allocation
  CHECK_CU(cuMemcpyDtoH(buf.data(), x, 2000), REAL_CU(probe<TestType>("copy.dtoh_past_end")));
  CHECK_CU(cuMemsetD8(x, 1, 2000), REAL_CU(probe<TestType>("copy.memset_past_end")));
  CHECK_CU(cuMemcpyHtoD(x + 1000, buf.data(), 8), REAL_CU(probe<TestType>("copy.htod_gap")));  // the gap before x2
  CHECK_CU(cuMemcpyDtoD(x2, x, 1000), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(x, s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(x2, s), CUDA_SUCCESS);
}

TEMPLATE_TEST_CASE("host-located pool memory is host memory: the CPU uses it, device-side copies refuse it",
                   "[mempool][pointer]", HostPool, HostNumaPool) {
  conformance_primary_ctx();
  INFO(TestType::name);
  ScopedStream s;
  ScopedPool pool(TestType::props());
  CUdeviceptr x = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 4096, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  auto* host = reinterpret_cast<volatile unsigned char*>(x);
  host[7] = 0x42;
  unsigned char back[64] = {}, in[64] = {1, 2, 3};
  // The device-side forms refuse it, even once a device has access (measured).
  CHECK_CU(cuMemcpyDtoH(back, x, 64), REAL_CU(probe<TestType>("host_memory.dtoh")));
  CHECK_CU(cuMemcpyHtoD(x, in, 64), REAL_CU(probe<TestType>("host_memory.htod")));
  CHECK_CU(cuMemsetD8(x, 1, 64), REAL_CU(probe<TestType>("host_memory.memset")));
  CHECK_RT(cudaMemcpy(back, reinterpret_cast<void*>(x), 64, cudaMemcpyDeviceToHost),
           REAL_RT(probe<TestType>("host_memory.rt_memcpy_dtoh")));
  CUmemAccessDesc d{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CHECK_CU(cuMemPoolSetAccess(pool, &d, 1), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(back, x, 64), REAL_CU(probe<TestType>("host_memory.dtoh_with_access")));
  // Unified-address copies treat it as the host memory it is.
  CHECK_CU(cuMemcpy(reinterpret_cast<CUdeviceptr>(back), x, 64), CUDA_SUCCESS);
  CHECK(back[7] == 0x42);
  std::memset(back, 0, sizeof back);
  CHECK_RT(cudaMemcpy(back, reinterpret_cast<void*>(x), 64, cudaMemcpyDefault), cudaSuccess);
  CHECK(back[7] == 0x42);
  CHECK_RT(cudaMemcpy(reinterpret_cast<void*>(x), in, 64, cudaMemcpyHostToHost), cudaSuccess);
  CHECK(host[1] == 2);
  CHECK_RT(cudaGetLastError(), REAL_RT(probe<TestType>("host_memory.rt_last_error")));
  CHECK_CU(cuMemFreeAsync(x, s), CUDA_SUCCESS);
}

TEST_CASE("managed pool memory is reachable from the host and the device", "[mempool][pointer]") {
  conformance_primary_ctx();
  ScopedStream s;
  ScopedPool pool(ManagedPool::props());
  CUdeviceptr x = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 4096, pool, s), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  reinterpret_cast<volatile unsigned char*>(x)[5] = 0x77;
  unsigned char back = 0;
  CHECK_CU(cuMemcpyDtoH(&back, x + 5, 1), CUDA_SUCCESS);
  CHECK(back == 0x77);
  CHECK_CU(cuMemsetD8(x, 3, 16), CUDA_SUCCESS);
  CHECK(reinterpret_cast<volatile unsigned char*>(x)[15] == 3);
  CHECK_CU(cuMemFreeAsync(x, s), CUDA_SUCCESS);
}
