// Emulator-only: refused calls explain themselves; garbage and stale handles are
// answered with the documented code instead of being dereferenced.
#include <cuda.h>
#include <cuda_shim_ext.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include <catch2/catch.hpp>

#include "core/config.hpp"
#include "unit_common.hpp"


TEST_CASE("a refused call records which rule it broke", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int v;
  CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 42) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(last_why().find("device ordinal 42 is out of range") != std::string::npos);
  CHECK(cuShimGetLastExplanationCode() == CUDA_ERROR_INVALID_DEVICE);
  CHECK(cuInit(7) == CUDA_ERROR_INVALID_VALUE);
  CHECK(last_why().find("cuInit") != std::string::npos);
}

TEST_CASE("the explanation survives later successful calls", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuCtxCreate(nullptr, nullptr, 0, 0) == CUDA_ERROR_INVALID_VALUE);
  int n;
  REQUIRE(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  CHECK(last_why().find("pctx is NULL") != std::string::npos);
}

TEST_CASE("cuShimGetLastExplanation truncates and reports the full length", "[explain]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuDeviceGet(nullptr, 0) == CUDA_ERROR_INVALID_VALUE);
  char tiny[5];
  size_t n = cuShimGetLastExplanation(tiny, sizeof tiny);
  CHECK(n > 4);
  CHECK(std::string(tiny).size() == 4);
  CHECK(cuShimGetLastExplanation(nullptr, 0) == n);
}

TEST_CASE("garbage stream handle is CUDA_ERROR_INVALID_HANDLE, not a crash", "[handles]") {
  primary();
  auto garbage = reinterpret_cast<CUstream>(0x1234);
  CHECK(cuStreamQuery(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamSynchronize(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamDestroy(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(last_why().find("not a live stream") != std::string::npos);
}

TEST_CASE("stale stream and event handles after destroy are refused", "[handles]") {
  primary();
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuStreamQuery(s) == CUDA_ERROR_INVALID_HANDLE);
  CUevent e;
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuEventQuery(e) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuEventRecord(e, nullptr) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("a destroyed context is refused everywhere", "[handles]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext c;
  REQUIRE(cuCtxCreate(&c, nullptr, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);
  CHECK(cuCtxDestroy(c) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxPushCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxSetCurrent(c) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("unimplemented entry points answer CUDA_ERROR_NOT_SUPPORTED and say so", "[stubs]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUDA_ARRAY_SPARSE_PROPERTIES sp{};
  CHECK(cuArrayGetSparseProperties(&sp, nullptr) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(last_why().find("cuArrayGetSparseProperties") != std::string::npos);
}

TEST_CASE("config file: keys, env override, and warnings for unknown keys", "[config]") {
  cuda_shim::Config c;
  c.apply_file_text("devices = 3\n# comment\ndriver_version = 13000\ndevice.1.name = Test GPU\nbogus = 1\n", "t");
  c.finalize();
  CHECK(c.devices == 3);
  CHECK(c.driver_version == 13000);
  REQUIRE(c.device.size() == 3);
  CHECK(c.device[1].name == "Test GPU");
  CHECK(c.device[0].name == "NVIDIA H200");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("bogus") != std::string::npos);
}

TEST_CASE("an fd no exporter made is explained: what it is, and where importable fds come from", "[explain]") {
  primary();
  int fd = memfd_create("my-buffer", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, 1 << 20) == 0);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = 1 << 20;
  CUexternalMemory m = nullptr;
  CHECK(cuImportExternalMemory(&m, &d) == CUDA_ERROR_UNKNOWN);  // the real driver's code
  CHECK(last_why().find("a memfd (\"my-buffer\"") != std::string::npos);
  CHECK(last_why().find("vkGetMemoryFdKHR") != std::string::npos);
  CHECK(last_why().find("the fd is closed") != std::string::npos);
  CHECK(fcntl(fd, F_GETFD) == -1);  // consumed, as by the real driver
}

TEST_CASE("external objects destroyed twice are refused, never dereferenced", "[explain]") {
  primary();
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, 2 << 20, &p, 0) == CUDA_SUCCESS);
  int fd = -1;
  REQUIRE(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = 2 << 20;
  CUexternalMemory m = nullptr;
  REQUIRE(cuImportExternalMemory(&m, &d) == CUDA_SUCCESS);
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md{};
  md.arrayDesc.Width = md.arrayDesc.Height = 64;
  md.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
  md.arrayDesc.NumChannels = 1;
  md.numLevels = 1;
  CUmipmappedArray mm = nullptr;
  REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm, m, &md) == CUDA_SUCCESS);
  CHECK(cuMipmappedArrayDestroy(mm) == CUDA_SUCCESS);
  CHECK(cuMipmappedArrayDestroy(mm) == CUDA_ERROR_INVALID_HANDLE);  // the real driver: SIGSEGV
  CHECK(cuDestroyExternalMemory(m) == CUDA_SUCCESS);
  CHECK(cuDestroyExternalMemory(m) == CUDA_ERROR_INVALID_HANDLE);   // the real driver: SIGSEGV
  CHECK(last_why().find("destroyed already") != std::string::npos);
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd{};
  bd.size = 4096;
  CUdeviceptr ptr = 0;
  CHECK(cuExternalMemoryGetMappedBuffer(&ptr, m, &bd) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuExternalMemoryGetMappedBuffer(&ptr, reinterpret_cast<CUexternalMemory>(0x1234), &bd) ==
        CUDA_ERROR_INVALID_HANDLE);
  CUexternalSemaphore garbage = reinterpret_cast<CUexternalSemaphore>(0x5678);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
  CHECK(cuSignalExternalSemaphoresAsync(&garbage, &sp, 1, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuDestroyExternalSemaphore(garbage) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);
}
