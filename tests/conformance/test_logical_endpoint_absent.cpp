// Logical endpoints on a driver older than 13.3: they are absent, as on NVIDIA's driver 580
// (CUDA 13.0). This file runs on the real GPU unchanged, and on the emulator with
// CUDA_SHIM_DRIVER_VERSION=13000 (CTest): the same answers prove the emulator hides them alike.
#include "le_api.hpp"

namespace {
const char* const kNames[] = {
    "cuLogicalEndpointIdReserve", "cuLogicalEndpointIdRelease", "cuLogicalEndpointGetLimits",
    "cuLogicalEndpointCreate",    "cuLogicalEndpointAddDevice", "cuLogicalEndpointDestroy",
    "cuLogicalEndpointBindAddr",  "cuLogicalEndpointBindMem",   "cuLogicalEndpointUnbind",
    "cuLogicalEndpointExport",    "cuLogicalEndpointImport",    "cuLogicalEndpointQuery",
};
}  // namespace

TEST_CASE("a 13.0 driver has no logical endpoints", "[le][absent]") {
  REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
  int v = 0;
  REQUIRE_CU(cuDriverGetVersion(&v), CUDA_SUCCESS);
  if (v >= 13030) {
    WARN("driver " << v << " has logical endpoints: nothing to check here");
    return;
  }
  CHECK_FALSE(le().ok);

  SECTION("cuGetProcAddress at 13030 (newer than the driver): INVALID_VALUE, outputs untouched") {
    for (const char* n : kNames) {
      void* p = &v;
      CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      CHECK_CU(cuGetProcAddress(n, &p, 13030, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_ERROR_INVALID_VALUE);
      CHECK(p == static_cast<void*>(&v));
      CHECK(q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    }
  }
  SECTION("cuGetProcAddress at the driver's version: success, SYMBOL_NOT_FOUND, no pointer") {
    for (const char* n : kNames) {
      INFO(n);
      void* p = &v;
      CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
      CHECK_CU(cuGetProcAddress(n, &p, v, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS);
      CHECK(q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
      CHECK(p == nullptr);
    }
  }
  SECTION("device attributes 153-156 are INVALID_VALUE") {
    for (int a : {153, 154, 155, 156}) {
      int x = -7;
      CHECK_CU(cuDeviceGetAttribute(&x, static_cast<CUdevice_attribute>(a), 0), CUDA_ERROR_INVALID_VALUE);
    }
  }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("emulator: called by symbol anyway, the entries answer NOT_SUPPORTED") {
    // A real 13.0 libcuda.so.1 has no such symbols; ours exports them for 13.3 clients.
    auto reserve = reinterpret_cast<CUresult (*)(CUlogicalEndpointId*, cuuint32_t)>(
        dlsym(RTLD_DEFAULT, "cuLogicalEndpointIdReserve"));
    REQUIRE(reserve != nullptr);
    CUlogicalEndpointId id = 0;
    CHECK_CU(reserve(&id, 1), CUDA_ERROR_NOT_SUPPORTED);
  }
#endif
}
