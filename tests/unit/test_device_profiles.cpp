// Device profiles (profiles/*.profile, docs/configuration.md "Device profiles"): the loader and
// its messages, then each profile through the driver API in a process of its own (CTest runs
// the hidden cases one per process: tests/unit/CMakeLists.txt).
#include "unit_common.hpp"

#include <cuda_runtime.h>

#include "core/config.hpp"
#include "core/profile.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

using cuda_shim::Profile;

namespace {

Profile load_ok(const std::string& name) {
  std::vector<std::string> warnings;
  Profile p;
  REQUIRE(cuda_shim::load_profile(name, p, warnings));
  INFO(name);
  for (auto& w : warnings) INFO(w);
  CHECK(warnings.empty());
  return p;
}

int attr(const Profile& p, const char* name) {
  int a = cuda_shim::attribute_number(name);
  REQUIRE(a > 0);
  REQUIRE(p.attr_valid[a]);
  return p.attr[a];
}

// A scratch file of the test's own, removed at the end of the case.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text, const char* stem = "profile") {
    path = "/tmp/cuda-shim-test-" + std::string(stem) + "-" + std::to_string(getpid()) + ".profile";
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

// stderr of the calls made while it lives (the driver prints configuration problems there).
struct CaptureStderr {
  std::string path = "/tmp/cuda-shim-test-stderr-" + std::to_string(getpid());
  int saved = dup(2);
  CaptureStderr() {
    std::fflush(stderr);
    FILE* f = std::fopen(path.c_str(), "w");
    dup2(fileno(f), 2);
    std::fclose(f);
  }
  std::string text() {
    std::fflush(stderr);
    dup2(saved, 2);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::remove(path.c_str());
    return ss.str();
  }
};

}  // namespace

TEST_CASE("profiles: every built-in profile loads without a warning", "[profile]") {
  std::set<std::string> names;
  for (auto& b : cuda_shim::builtin_profiles()) names.insert(b.name);
  const std::set<std::string> expected = {"h200", "h100", "a100", "b200", "gb200-nvl72", "rtx", "tcc-no-pools",
                                          "cc7-no-concurrent-managed"};
  CHECK(names == expected);
  CHECK(std::string(cuda_shim::builtin_profiles().front().name) == "h200");  // the default, listed first
  for (auto& n : names) {
    Profile p = load_ok(n);
    CHECK(!p.description.empty());
    CHECK(!p.device_name.empty());
    CHECK(p.total_mem > 0);
    CHECK(attr(p, "COMPUTE_CAPABILITY_MAJOR") >= 7);
  }
}

TEST_CASE("profiles: h200 is the measured device, every other one states its differences", "[profile]") {
  Profile h200 = load_ok("h200");
  CHECK(h200.chain == std::vector<std::string>{"h200"});
  CHECK(h200.device_name == "NVIDIA H200");
  CHECK(h200.total_mem == 150109880320ull);
  int valid = 0;
  for (bool v : h200.attr_valid) valid += v;
  CHECK(valid == 147);  // attributes 1..147 as the 13.0 driver answered them
  CHECK(attr(h200, "MULTIPROCESSOR_COUNT") == 132);
  CHECK(attr(h200, "MEMORY_POOLS_SUPPORTED") == 1);
  CHECK(attr(h200, "NUMA_ID") == -1);
  CHECK(!h200.attr_valid[153]);  // 13.3's, added by the driver for a 13.3 version

  Profile h100 = load_ok("h100");
  CHECK(h100.chain == std::vector<std::string>{"h100", "h200"});
  CHECK(h100.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(attr(h100, "L2_CACHE_SIZE") == 50 << 20);
  CHECK(attr(h100, "MAX_THREADS_PER_BLOCK") == 1024);  // inherited

  Profile a100 = load_ok("a100");
  CHECK(attr(a100, "COMPUTE_CAPABILITY_MAJOR") == 8);
  CHECK(attr(a100, "MULTIPROCESSOR_COUNT") == 108);
  CHECK(attr(a100, "HANDLE_TYPE_FABRIC_SUPPORTED") == 0);

  Profile gb = load_ok("gb200-nvl72");
  CHECK(gb.chain == std::vector<std::string>{"gb200-nvl72", "b200", "h200"});
  CHECK(gb.devices == 72);
  CHECK(gb.devices_per_host_numa_node == 2);
  CHECK(attr(gb, "COMPUTE_CAPABILITY_MAJOR") == 10);
  CHECK(attr(gb, "MULTICAST_SUPPORTED") == 1);
  CHECK(attr(gb, "HANDLE_TYPE_FABRIC_SUPPORTED") == 1);

  Profile rtx = load_ok("rtx");
  CHECK(attr(rtx, "MULTICAST_SUPPORTED") == 0);
  CHECK(attr(rtx, "HANDLE_TYPE_FABRIC_SUPPORTED") == 0);
  CHECK(attr(rtx, "MEMPOOL_SUPPORTED_HANDLE_TYPES") == 1);
  CHECK(attr(load_ok("tcc-no-pools"), "MEMORY_POOLS_SUPPORTED") == 0);
  CHECK(attr(load_ok("cc7-no-concurrent-managed"), "CONCURRENT_MANAGED_ACCESS") == 0);
}

TEST_CASE("profiles: an unknown name is refused, naming the built-in profiles", "[profile]") {
  cuda_shim::Config c;
  CHECK_FALSE(c.apply_profile("gb300-nvl72"));
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("profile 'gb300-nvl72' is not a built-in profile (h200, ") == 0);
  CHECK(c.profile == "h200");  // nothing changed
  CHECK(c.device_default.name == "NVIDIA H200");
}

TEST_CASE("profiles: a malformed user file: each bad line named by file and line, the rest applied", "[profile]") {
  TempFile f("# mine\nbase = h100\nCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = lots\nno equals sign here\n"
             "CU_DEVICE_ATTRIBUTE_NO_SUCH_THING = 1\ncolour = blue\nname = My GPU\n"
             "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = none\n");
  cuda_shim::Config c;
  REQUIRE(c.apply_profile(f.path));
  REQUIRE(c.warnings.size() == 4);
  CHECK(c.warnings[0].find(f.path + ":4: expected key = value") == 0);  // read before the others
  CHECK(c.warnings[1].find(f.path + ":3: CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 'lots': an int") == 0);
  CHECK(c.warnings[2].find(f.path + ":5: CU_DEVICE_ATTRIBUTE_NO_SUCH_THING is not a CUdevice_attribute") == 0);
  CHECK(c.warnings[3].find(f.path + ":6: unknown key 'colour'") == 0);
  CHECK(c.profile_origin == f.path);
  CHECK(c.device_default.name == "My GPU");
  CHECK(c.device_default.total_mem == 85017493504ull);  // the H100's
  CHECK(c.attr[16] == 132);                             // MULTIPROCESSOR_COUNT: the base's stays
  CHECK(!c.attr_valid[132]);                            // MULTICAST_SUPPORTED: none
}

TEST_CASE("profiles: a missing file and a cycle of bases are refused", "[profile]") {
  cuda_shim::Config c;
  CHECK_FALSE(c.apply_profile("/nonexistent/dir/x.profile"));
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "profile file /nonexistent/dir/x.profile: cannot open");
  TempFile f("base = ./" + std::string("cuda-shim-test-loop-") + std::to_string(getpid()) + ".profile\n", "loop");
  cuda_shim::Config d;
  CHECK_FALSE(d.apply_profile(f.path));
  REQUIRE(!d.warnings.empty());
  CHECK(d.warnings[0].find("more than 8 profiles deep") != std::string::npos);
}

TEST_CASE("profiles: the configuration file's keys override the profile", "[profile]") {
  cuda_shim::Config c;
  REQUIRE(c.apply_profile("gb200-nvl72"));
  c.apply_file_text("devices = 3\ndevice.1.name = Mine\nprofile = ignored-here\n", "t");
  c.finalize();
  CHECK(c.warnings.empty());
  REQUIRE(c.device.size() == 3);
  CHECK(c.device[0].name == "NVIDIA GB200");
  CHECK(c.device[1].name == "Mine");
  CHECK(c.device[1].total_mem == 186000000000ull);
  CHECK(c.device[2].numa_id == 1);  // two devices to a Grace CPU
  CHECK(c.device[0].pageable_memory_access == 1);
}

// What the driver reports for the profile in CUDA_SHIM_PROFILE (h200 when unset) is the file's,
// device for device; a few values are also written here, so a loader bug that reads both sides
// wrongly still fails.
TEST_CASE("profiles: the driver reports the selected profile", "[profile][driver]") {
  const char* e = std::getenv("CUDA_SHIM_PROFILE");
  const std::string name = e && *e ? e : "h200";
  Profile p = load_ok(name);
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int n = 0;
  REQUIRE(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  CHECK(n == p.devices);
  int rt = 0;
  REQUIRE(cudaGetDeviceCount(&rt) == cudaSuccess);
  CHECK(rt == p.devices);
  for (int d = 0; d < n; ++d) {
    char dev_name[256] = {};
    REQUIRE(cuDeviceGetName(dev_name, sizeof dev_name, d) == CUDA_SUCCESS);
    CHECK(std::string(dev_name) == p.device_name);
    size_t bytes = 0;
    REQUIRE(cuDeviceTotalMem(&bytes, d) == CUDA_SUCCESS);
    CHECK(bytes == p.total_mem);
    for (int a = 1; a <= 147; ++a) {
      if (a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID || a == CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) continue;  // per device
      INFO("device " << d << " attribute " << a << " " << cuda_shim::attribute_name(a));
      int v = 0;
      CUresult r = cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(a), d);
      if (a == CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) {
        CHECK(v == (p.devices_per_host_numa_node ? d / p.devices_per_host_numa_node : 0));
      } else if (p.attr_valid[a]) {
        CHECK(r == CUDA_SUCCESS);
        CHECK(v == p.attr[a]);
      } else {
        CHECK(r == CUDA_ERROR_INVALID_VALUE);
      }
    }
  }
  int major = 0, sms = 0;
  REQUIRE(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  REQUIRE(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == CUDA_SUCCESS);
  if (name == "h200") CHECK((major == 9 && sms == 132 && n == 1));
  if (name == "a100") CHECK((major == 8 && sms == 108));
  if (name == "gb200-nvl72") CHECK((major == 10 && n == 72));
  if (name == "rtx") CHECK((major == 8 && sms == 128));
  if (name == "cc7-no-concurrent-managed") CHECK((major == 7 && sms == 80));
}

// The driver's answer to a profile that does not load is the one it gives any bad setting: a
// line on stderr, the default kept, cuInit succeeding (docs/configuration.md).
TEST_CASE("profiles: CUDA_SHIM_PROFILE naming no profile", "[.bad_profile_name]") {
  setenv("CUDA_SHIM_PROFILE", "h300", 1);
  CaptureStderr err;
  CUresult r = cuInit(0);
  std::string text = err.text();
  CHECK(r == CUDA_SUCCESS);
  CHECK(text.find("cuda-shim: config: CUDA_SHIM_PROFILE: profile 'h300' is not a built-in profile (h200, ") !=
        std::string::npos);
  CHECK(text.find("cuda-shim: config: CUDA_SHIM_PROFILE: profile = h300 did not load (keeping the h200 profile)") !=
        std::string::npos);
  char dev_name[64] = {};
  REQUIRE(cuDeviceGetName(dev_name, sizeof dev_name, 0) == CUDA_SUCCESS);
  CHECK(std::string(dev_name) == "NVIDIA H200");
}

TEST_CASE("profiles: a malformed user profile file", "[.bad_profile_file]") {
  TempFile f("base = rtx\nCU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 72 MB\n");
  setenv("CUDA_SHIM_PROFILE", f.path.c_str(), 1);
  CaptureStderr err;
  CUresult r = cuInit(0);
  std::string text = err.text();
  CHECK(r == CUDA_SUCCESS);
  CHECK(text.find("cuda-shim: config: CUDA_SHIM_PROFILE: " + f.path +
                  ":2: CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = '72 MB': an int") != std::string::npos);
  int l2 = 0;
  REQUIRE(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 0) == CUDA_SUCCESS);
  CHECK(l2 == 75497472);  // the rtx base's: the bad line was ignored
}

// Profile < configuration file < environment, and the file may name the profile.
TEST_CASE("profiles: the layers", "[.profile_layers]") {
  TempFile f("profile = h100\ndevice.1.name = Second\ndevices = 4\n", "config");
  setenv("CUDA_SHIM_CONFIG", f.path.c_str(), 1);
  setenv("CUDA_SHIM_DEVICES", "2", 1);
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int n = 0, sms = 0;
  REQUIRE(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  CHECK(n == 2);
  char a[64] = {}, b[64] = {};
  REQUIRE(cuDeviceGetName(a, sizeof a, 0) == CUDA_SUCCESS);
  REQUIRE(cuDeviceGetName(b, sizeof b, 1) == CUDA_SUCCESS);
  CHECK(std::string(a) == "NVIDIA H100 80GB HBM3");
  CHECK(std::string(b) == "Second");
  REQUIRE(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1) == CUDA_SUCCESS);
  CHECK(sms == 50 << 20);
}

// The NVL72 rack: pools on devices across the 72, stream-ordered allocations on each, and a
// fabric handle exported from a pool of the last device (CUDA_SHIM_IMEX_CHANNEL=0 set by CTest).
TEST_CASE("profiles: gb200-nvl72 pools and fabric handles across 72 devices", "[.gb200]") {
  REQUIRE(std::string(std::getenv("CUDA_SHIM_PROFILE") ? std::getenv("CUDA_SHIM_PROFILE") : "") == "gb200-nvl72");
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  REQUIRE(n == 72);
  for (int d : {0, 1, 4, 35, 36, 70, 71}) {
    INFO("device " << d);
    REQUIRE(cudaSetDevice(d) == cudaSuccess);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeFabric;
    props.location = {cudaMemLocationTypeDevice, d};
    cudaMemPool_t pool;
    REQUIRE(cudaMemPoolCreate(&pool, &props) == cudaSuccess);
    cudaStream_t s;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    void* p = nullptr;
    REQUIRE(cudaMallocFromPoolAsync(&p, 1 << 20, pool, s) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(p, d, 1 << 20, s) == cudaSuccess);
    cudaPointerAttributes pa{};
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    REQUIRE(cudaPointerGetAttributes(&pa, p) == cudaSuccess);
    CHECK(pa.device == d);
    if (d == 71) {
      cudaMemFabricHandle_t h{};
      CHECK(cudaMemPoolExportToShareableHandle(&h, pool, cudaMemHandleTypeFabric, 0) == cudaSuccess);
      cudaMemPoolPtrExportData data{};
      CHECK(cudaMemPoolExportPointer(&data, p) == cudaSuccess);
    }
    REQUIRE(cudaFreeAsync(p, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
    REQUIRE(cudaMemPoolDestroy(pool) == cudaSuccess);
    int numa = -1;
    REQUIRE(cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, d) == cudaSuccess);
    CHECK(numa == d / 2);
  }
}

// What a profile takes away stops working (core/device_support.hpp): under tcc-no-pools the
// stream-ordered allocator and every pool entry answer NOT_SUPPORTED; under rtx, a100 and cc7 fabric
// handles do. The expected codes are written per profile here, so a check reading the wrong
// attribute fails; the h200 rows are the measured driver's answers, unchanged.
TEST_CASE("profiles: a feature the profile lacks is refused as on such a device", "[profile][driver]") {
  const char* e = std::getenv("CUDA_SHIM_PROFILE");
  const std::string name = e && *e ? e : "h200";
  const bool no_pools = name == "tcc-no-pools";
  const bool no_fabric = name == "rtx" || name == "a100" || name == "cc7-no-concurrent-managed";
  const bool imex = std::getenv("CUDA_SHIM_IMEX_CHANNEL") != nullptr;
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  const CUresult pools_ok = no_pools ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
  INFO("profile " << name);

  SECTION("the stream-ordered allocator") {
    CUdeviceptr p = 1;
    CHECK(cuMemAllocAsync(&p, 1 << 20, s) == pools_ok);
    if (no_pools) {
      CHECK(p == 0);  // cleared, as on every refusal
      CHECK(last_why().find("cuMemAllocAsync: the stream-ordered allocator needs CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_"
                            "SUPPORTED, which device 0 reports as 0 (profile tcc-no-pools, "
                            "profiles/tcc-no-pools.profile)") != std::string::npos);
      void* rp = nullptr;
      CHECK(cudaMallocAsync(&rp, 1 << 20, reinterpret_cast<cudaStream_t>(s)) == cudaErrorNotSupported);
      CUdeviceptr plain = 0;
      REQUIRE(cuMemAlloc(&plain, 1 << 20) == CUDA_SUCCESS);
      CHECK(cuMemFreeAsync(plain, s) == CUDA_ERROR_NOT_SUPPORTED);  // and the memory stays
      CHECK(cuMemFree(plain) == CUDA_SUCCESS);
    } else {
      CHECK(cuMemFreeAsync(p, s) == CUDA_SUCCESS);
    }
    REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  }

  SECTION("the default and current pools") {
    CUmemoryPool pool = nullptr;
    CHECK(cuDeviceGetDefaultMemPool(&pool, 0) == pools_ok);
    CHECK(cuDeviceGetMemPool(&pool, 0) == pools_ok);
    CUmemLocation dev{CU_MEM_LOCATION_TYPE_DEVICE, 0}, host{CU_MEM_LOCATION_TYPE_HOST, 0},
        numa{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    CHECK(cuMemGetDefaultMemPool(&pool, &dev, CU_MEM_ALLOCATION_TYPE_PINNED) == pools_ok);
    CHECK(cuMemGetMemPool(&pool, &host, CU_MEM_ALLOCATION_TYPE_PINNED) == pools_ok);
    if (no_pools)
      CHECK(last_why().find("CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, which device 0 reports as 0") !=
            std::string::npos);
    CHECK(cuMemGetDefaultMemPool(&pool, &numa, CU_MEM_ALLOCATION_TYPE_PINNED) == pools_ok);
    if (no_pools)
      CHECK(last_why().find("CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED") != std::string::npos);
  }

  SECTION("cuMemPoolCreate on the device, the host and a host NUMA node") {
    for (CUmemLocationType t : {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA}) {
      INFO("location type " << t);
      CUmemPoolProps props{};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.location = {t, 0};
      CUmemoryPool pool = nullptr;
      REQUIRE(cuMemPoolCreate(&pool, &props) == pools_ok);
      if (!no_pools) CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    }
  }

  SECTION("fabric handles: cuMemCreate and cuMemPoolCreate") {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    CUmemGenericAllocationHandle h = 0;
    // Measured on the H200: without an IMEX channel, NOT_PERMITTED.
    const CUresult want = no_fabric ? CUDA_ERROR_NOT_SUPPORTED : imex ? CUDA_SUCCESS : CUDA_ERROR_NOT_PERMITTED;
    CHECK(cuMemCreate(&h, 2 << 20, &prop, 0) == want);
    if (no_fabric)
      CHECK(last_why().find("cuMemCreate: prop->requestedHandleTypes CU_MEM_HANDLE_TYPE_FABRIC needs "
                            "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, which device 0 reports as 0 (profile " +
                            name) != std::string::npos);
    if (want == CUDA_SUCCESS) CHECK(cuMemRelease(h) == CUDA_SUCCESS);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;  // still offered everywhere
    REQUIRE(cuMemCreate(&h, 2 << 20, &prop, 0) == CUDA_SUCCESS);
    CHECK(cuMemRelease(h) == CUDA_SUCCESS);

    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    props.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    CUmemoryPool pool = nullptr;
    CHECK(cuMemPoolCreate(&pool, &props) == (no_pools || no_fabric ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS));
    if (!no_pools && !no_fabric) CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    REQUIRE(cuMemPoolCreate(&pool, &props) == pools_ok);
    if (!no_pools) CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  }

  SECTION("multicast objects: the entries answer as on a device without multicast") {
    int mc = -1;
    REQUIRE(cuDeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0) == CUDA_SUCCESS);
    CUmulticastObjectProp mp{};
    mp.numDevices = 1;
    mp.size = 2 << 20;
    CUmemGenericAllocationHandle h = 0;
    if (mc == 0) CHECK(cuMulticastCreate(&h, &mp) == CUDA_ERROR_NOT_SUPPORTED);
  }
  CHECK(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
}
