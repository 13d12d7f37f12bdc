// Driver API: initialization, versions, devices, attributes, error names.
#include <cstring>
#include <string>

#include "common.hpp"

TEST_CASE("cuInit with nonzero flags is CUDA_ERROR_INVALID_VALUE", "[init]") {
  CHECK_CU(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuInit(0) succeeds and may be repeated", "[init]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CHECK_CU(cuInit(0), CUDA_SUCCESS);
}

TEST_CASE("cuDriverGetVersion reports a 13.x driver", "[version]") {
  int v = 0;
  REQUIRE_CU(cuDriverGetVersion(&v), CUDA_SUCCESS);
  CHECK(v >= 13000);
  CHECK(v < 14000);
}

TEST_CASE("cuDriverGetVersion with a null pointer is CUDA_ERROR_INVALID_VALUE", "[version]") {
  CHECK_CU(cuDriverGetVersion(nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("devices: count, handles, names, memory", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  int n = 0;
  REQUIRE_CU(cuDeviceGetCount(&n), CUDA_SUCCESS);
  REQUIRE(n >= 1);
  CUdevice d = -1;
  REQUIRE_CU(cuDeviceGet(&d, 0), CUDA_SUCCESS);
  CHECK(d == 0);
  char name[256] = {};
  REQUIRE_CU(cuDeviceGetName(name, sizeof name, d), CUDA_SUCCESS);
  CHECK(std::string(name).rfind("NVIDIA", 0) == 0);
  size_t total = 0;
  REQUIRE_CU(cuDeviceTotalMem(&total, d), CUDA_SUCCESS);
  CHECK(total > (size_t(16) << 30));
  CUuuid u1{}, u2{};
  REQUIRE_CU(cuDeviceGetUuid(&u1, d), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceGetUuid(&u2, d), CUDA_SUCCESS);
  CHECK(std::memcmp(&u1, &u2, sizeof u1) == 0);
  CUuuid zero{};
  CHECK(std::memcmp(&u1, &zero, sizeof u1) != 0);
}

TEST_CASE("cuDeviceGetName truncates to len-1 characters", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  char full[256] = {};
  REQUIRE_CU(cuDeviceGetName(full, sizeof full, 0), CUDA_SUCCESS);
  char small[4];
  std::memset(small, 'x', sizeof small);
  REQUIRE_CU(cuDeviceGetName(small, sizeof small, 0), CUDA_SUCCESS);
  CHECK(std::string(small) == std::string(full).substr(0, 3));
}

TEST_CASE("cuDeviceGet with an out-of-range ordinal is CUDA_ERROR_INVALID_DEVICE", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  int n = 0;
  REQUIRE_CU(cuDeviceGetCount(&n), CUDA_SUCCESS);
  CUdevice d;
  CHECK_CU(cuDeviceGet(&d, n), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuDeviceGet(&d, -1), CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("cuDeviceGetAttribute on a nonexistent device is CUDA_ERROR_INVALID_DEVICE", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  int n = 0, v = 0;
  REQUIRE_CU(cuDeviceGetCount(&n), CUDA_SUCCESS);
  CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, n), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, -1), CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("cuDeviceGetAttribute with an unknown attribute is CUDA_ERROR_INVALID_VALUE", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  int v = 0;
  CHECK_CU(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(9999), 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(0), 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuDeviceGetAttribute with a null pointer is CUDA_ERROR_INVALID_VALUE", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  CHECK_CU(cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("memory-surface attributes of a Hopper-class device", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  auto attr = [](CUdevice_attribute a) {
    int v = -1;
    REQUIRE_CU(cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS);
    return v;
  };
  CHECK(attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) == 9);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) == 0);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE) == 32);
  CHECK(attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) >= 0);
}

TEST_CASE("cuDeviceGetPCIBusId round-trips through cuDeviceGetByPCIBusId", "[device]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  char bus[64] = {};
  REQUIRE_CU(cuDeviceGetPCIBusId(bus, sizeof bus, 0), CUDA_SUCCESS);
  CUdevice d = -1;
  REQUIRE_CU(cuDeviceGetByPCIBusId(&d, bus), CUDA_SUCCESS);
  CHECK(d == 0);
}

TEST_CASE("cuGetErrorName and cuGetErrorString give the driver's text", "[errors]") {
  const char* s = nullptr;
  REQUIRE_CU(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s), CUDA_SUCCESS);
  CHECK(std::string(s) == "CUDA_ERROR_INVALID_VALUE");
  REQUIRE_CU(cuGetErrorName(CUDA_SUCCESS, &s), CUDA_SUCCESS);
  CHECK(std::string(s) == "CUDA_SUCCESS");
  REQUIRE_CU(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s), CUDA_SUCCESS);
  CHECK(std::string(s) == "invalid argument");
  REQUIRE_CU(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
  CHECK(std::string(s) == "out of memory");
}

TEST_CASE("cuGetErrorName with an unknown code is CUDA_ERROR_INVALID_VALUE and a null string", "[errors]") {
  const char* s = "untouched";
  CHECK(cuGetErrorName(static_cast<CUresult>(12345), &s) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s == nullptr);
  s = "untouched";
  CHECK(cuGetErrorString(static_cast<CUresult>(12345), &s) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s == nullptr);
}

TEST_CASE("cuGetProcAddress resolves versioned names and reports unknown ones", "[procaddr]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  void* p = nullptr;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
  REQUIRE_CU(cuGetProcAddress("cuMemAlloc", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st), CUDA_SUCCESS);
  CHECK(st == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(p != nullptr);
  p = reinterpret_cast<void*>(1);
  REQUIRE_CU(cuGetProcAddress("cuNoSuchFunction", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st), CUDA_SUCCESS);
  CHECK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(p == nullptr);
}

TEST_CASE("cuGetExportTable with an unknown table id fails", "[exporttable]") {
  const void* t = nullptr;
  CUuuid id{};
  for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(0x5a ^ i);
  CHECK(cuGetExportTable(&t, &id) != CUDA_SUCCESS);
}
