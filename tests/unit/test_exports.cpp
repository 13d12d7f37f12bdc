// The exported surface: every name NVIDIA's libraries export is there (driver unversioned,
// runtime under libcudart.so.13), and cuGetProcAddress hands out those very entry points.
// The exact export sets (nothing more) are checked by exports_check.cmake.
#include <dlfcn.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#ifndef CUDA_SHIM_LIB_DIR
#error "CUDA_SHIM_LIB_DIR must name the directory holding the built libcuda.so.1 / libcudart.so.13"
#endif

namespace {

const char* const kDriverSyms[] = {
#define CU_SYM(name) #name,
#include "abi/driver_symbols.def"
#undef CU_SYM
};

const char* const kRuntimeSyms[] = {
#define RT_SYM(name) #name,
#define RT_SYM_SPECIAL(name) #name,
#include "abi/runtime_symbols.def"
#undef RT_SYM
#undef RT_SYM_SPECIAL
};

struct ProcRow {
  const char* base;
  int cls;  // 0 DEFAULT, 1 LEGACY, 2 PTDS
  int version;
  const char* symbol;
};
enum { DEFAULT = 0, LEGACY = 1, PTDS = 2, INVALID = 3 };
const ProcRow kProcRows[] = {
#define PROC(base, cls, version, symbol) {base, cls, version, #symbol},
#include "abi/procaddr.def"
};

void* open_lib(const char* name) {
  std::string path = std::string(CUDA_SHIM_LIB_DIR) + "/" + name;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen(" << path << "): " << (h ? "ok" : dlerror()));
  REQUIRE(h != nullptr);
  return h;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

using gpa2_t = int (*)(const char*, void**, int, unsigned long long, int*);
using gpa1_t = int (*)(const char*, void**, int, unsigned long long);

int reported_driver_version(void* h) {
  auto get = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
  int v = 0;
  if (get && get(&v) == 0) return v;
  return 13000;  // not implemented yet: the default profile
}

}  // namespace

TEST_CASE("libcuda.so.1 exports every driver symbol, unversioned", "[exports]") {
  void* h = open_lib("libcuda.so.1");
  std::vector<std::string> missing;
  for (const char* n : kDriverSyms)
    if (!dlsym(h, n)) missing.emplace_back(n);
  INFO("missing: " << join(missing));
  CHECK(missing.empty());
  CHECK(std::size(kDriverSyms) >= 637);  // the CUDA 13.0 stub alone has 637
  dlclose(h);
}

TEST_CASE("libcudart.so.13 exports every runtime symbol under libcudart.so.13", "[exports]") {
  void* h = open_lib("libcudart.so.13");
  std::vector<std::string> missing;
  for (const char* n : kRuntimeSyms)
    if (!dlvsym(h, n, "libcudart.so.13")) missing.emplace_back(n);
  INFO("missing (as name@libcudart.so.13): " << join(missing));
  CHECK(missing.empty());
  CHECK(std::size(kRuntimeSyms) >= 407);
  dlclose(h);
}

TEST_CASE("an unimplemented driver entry answers CUDA_ERROR_NOT_SUPPORTED", "[exports]") {
  void* h = open_lib("libcuda.so.1");
  // cuProfilerInitialize was removed from cuda.h long ago; the emulator will never implement it.
  auto f = reinterpret_cast<int (*)(const char*, const char*, int)>(dlsym(h, "cuProfilerInitialize"));
  REQUIRE(f != nullptr);
  CHECK(f(nullptr, nullptr, 0) == 801);
  dlclose(h);
}

TEST_CASE("cuGetProcAddress_v2 resolves every table row to the exported symbol", "[exports][procaddr]") {
  void* h = open_lib("libcuda.so.1");
  auto gpa = reinterpret_cast<gpa2_t>(dlsym(h, "cuGetProcAddress_v2"));
  REQUIRE(gpa != nullptr);
  const int drv = reported_driver_version(h);
  const unsigned long long flags_of[] = {0, 1, 2};
  std::vector<std::string> wrong;
  for (const auto& r : kProcRows) {
    if (r.version > drv) continue;
    void* want = dlsym(h, r.symbol);
    void* got = reinterpret_cast<void*>(0x1);
    int status = 77;
    int ret = gpa(r.base, &got, r.version, flags_of[r.cls], &status);
    if (ret != 0 || status != 0 || got == nullptr || got != want)
      wrong.push_back(std::string(r.base) + "@" + std::to_string(r.version) + "/" +
                      std::to_string(r.cls) + "->ret " + std::to_string(ret) + " status " +
                      std::to_string(status) + " (want " + r.symbol + ")");
  }
  INFO(join(wrong));
  CHECK(wrong.empty());
  dlclose(h);
}

TEST_CASE("cuGetProcAddress_v2 edge answers match the real driver", "[exports][procaddr]") {
  void* h = open_lib("libcuda.so.1");
  auto gpa = reinterpret_cast<gpa2_t>(dlsym(h, "cuGetProcAddress_v2"));
  REQUIRE(gpa != nullptr);
  const int drv = reported_driver_version(h);
  void* p = reinterpret_cast<void*>(0x1);
  int status = 77;

  SECTION("unknown name: success, SYMBOL_NOT_FOUND, null") {
    CHECK(gpa("cuNoSuchFunction", &p, 13000, 0, &status) == 0);
    CHECK(status == 1);
    CHECK(p == nullptr);
  }
  SECTION("a version newer than the driver: CUDA_ERROR_INVALID_VALUE, outputs untouched") {
    CHECK(gpa("cuInit", &p, drv + 10, 0, &status) == 1);
    CHECK(p == reinterpret_cast<void*>(0x1));
    CHECK(status == 77);
    CHECK(gpa("cuInit", &p, 99999, 0, &status) == 1);
  }
  SECTION("flags outside {0,1,2,3}: CUDA_ERROR_INVALID_VALUE, outputs untouched") {
    for (unsigned long long fl : {4ull, 8ull, 0xFFFFull}) {
      CHECK(gpa("cuMemAlloc", &p, 13000, fl, &status) == 1);
      CHECK(p == reinterpret_cast<void*>(0x1));
      CHECK(status == 77);
    }
  }
  SECTION("only exact base names are found") {
    for (const char* n : {"cuMemAlloc_v2", "cuMemcpyAsync_ptsz", "cuGetProcAddress_v2", "cuinit",
                          "CUINIT", "cuInit ", "", "cudaMalloc"}) {
      INFO(n);
      status = 77;
      p = reinterpret_cast<void*>(0x1);
      CHECK(gpa(n, &p, 13000, 0, &status) == 0);
      CHECK(status == 1);
      CHECK(p == nullptr);
    }
  }
  SECTION("a negative version reads as the newest") {
    CHECK(gpa("cuInit", &p, -1, 0, &status) == 0);
    CHECK(status == 0);
    CHECK(p == dlsym(h, "cuInit"));
  }
  SECTION("a version older than the function: success, VERSION_NOT_SUFFICIENT, null") {
    CHECK(gpa("cuMemAlloc", &p, 1000, 0, &status) == 0);
    CHECK(status == 2);
    CHECK(p == nullptr);
  }
  SECTION("versioned names pick the version's symbol") {
    CHECK(gpa("cuMemAlloc", &p, 13000, 0, &status) == 0);
    CHECK(status == 0);
    CHECK(p == dlsym(h, "cuMemAlloc_v2"));
    CHECK(gpa("cuMemAlloc", &p, 3010, 0, &status) == 0);
    CHECK(p == dlsym(h, "cuMemAlloc"));
  }
  SECTION("per-thread default stream flag picks the _ptsz/_ptds variants") {
    CHECK(gpa("cuMemcpyAsync", &p, 13000, 2, &status) == 0);
    CHECK(p == dlsym(h, "cuMemcpyAsync_ptsz"));
    CHECK(gpa("cuMemcpyAsync", &p, 13000, 1, &status) == 0);
    CHECK(p == dlsym(h, "cuMemcpyAsync"));
    CHECK(gpa("cuMemcpyAsync", &p, 13000, 0, &status) == 0);
    CHECK(p == dlsym(h, "cuMemcpyAsync"));
    CHECK(gpa("cuMemcpyAsync", &p, 13000, 3, &status) == 0);  // 3 behaves as 2
    CHECK(p == dlsym(h, "cuMemcpyAsync_ptsz"));
    // below the per-thread variant's introduction there is no fallback to the legacy one
    CHECK(gpa("cuMemcpyAsync", &p, 4000, 2, &status) == 0);
    CHECK(status == 2);
    CHECK(p == nullptr);
    CHECK(gpa("cuMemcpyHtoD", &p, 13000, 2, &status) == 0);
    CHECK(p == dlsym(h, "cuMemcpyHtoD_v2_ptds"));
    // names without a per-thread variant ignore the flag
    CHECK(gpa("cuMemAlloc", &p, 13000, 2, &status) == 0);
    CHECK(p == dlsym(h, "cuMemAlloc_v2"));
  }
  SECTION("cuGetProcAddress resolves itself") {
    CHECK(gpa("cuGetProcAddress", &p, 13000, 0, &status) == 0);
    CHECK(p == dlsym(h, "cuGetProcAddress_v2"));
  }
  SECTION("logical endpoint entries exist only for a 13.3 driver") {
    int r = gpa("cuLogicalEndpointCreate", &p, drv, 0, &status);
    CHECK(r == 0);
    if (drv >= 13030) {
      CHECK(status == 0);
      CHECK(p == dlsym(h, "cuLogicalEndpointCreate"));
    } else {
      CHECK(status == 1);  // a 13.0 driver has never heard of it
      CHECK(p == nullptr);
    }
  }
  SECTION("null symbol status pointer is optional") {
    CHECK(gpa("cuInit", &p, 13000, 0, nullptr) == 0);
    CHECK(p == dlsym(h, "cuInit"));
  }
  dlclose(h);
}

TEST_CASE("legacy cuGetProcAddress (no status) reports CUDA_ERROR_NOT_FOUND", "[exports][procaddr]") {
  void* h = open_lib("libcuda.so.1");
  auto gpa = reinterpret_cast<gpa1_t>(dlsym(h, "cuGetProcAddress"));
  REQUIRE(gpa != nullptr);
  void* p = reinterpret_cast<void*>(0x1);
  CHECK(gpa("cuNoSuchFunction", &p, 13000, 0) == 500);
  CHECK(p == reinterpret_cast<void*>(0x1));  // untouched, as the real driver
  CHECK(gpa("cuMemcpyAsync", &p, 3020, 0) == 500);  // older than the function
  CHECK(p == reinterpret_cast<void*>(0x1));
  CHECK(gpa("cuMemAlloc", &p, reported_driver_version(h) + 10, 0) == 1);
  CHECK(gpa("cuStreamQuery", &p, 13000, 2) == 0);
  CHECK(p == dlsym(h, "cuStreamQuery_ptsz"));
  CHECK(gpa("cuMemAlloc", &p, 13000, 0) == 0);
  CHECK(p == dlsym(h, "cuMemAlloc_v2"));
  dlclose(h);
}
