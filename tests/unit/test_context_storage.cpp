// Context-local storage (the private table c693336e..., which NVIDIA's runtime keeps its
// per-context state in): a value's destructor runs when its context goes, inside the call that
// tears the context down (cuCtxDestroy, primary release to 0, reset), as NVIDIA's driver runs
// it, with the handle, key and value it was put with; never twice, and not for deleted keys.
#include <cuda.h>

#include <catch2/catch.hpp>
#include <vector>

#include "unit_common.hpp"

namespace {

using Dtor = void (*)(CUcontext, void*, void*);
struct Storage {
  CUresult(CUDAAPI* put)(CUcontext, void*, void*, Dtor);
  CUresult(CUDAAPI* del)(CUcontext, void*);
  CUresult(CUDAAPI* get)(void**, CUcontext, void*);
};

const Storage& storage() {
  static const Storage* s = [] {
    CUuuid id;
    const unsigned char b[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
    for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(b[i]);
    const void* t = nullptr;
    REQUIRE(cuGetExportTable(&t, &id) == CUDA_SUCCESS);
    return static_cast<const Storage*>(t);
  }();
  return *s;
}

struct Call {
  CUcontext ctx;
  void* key;
  void* value;
};
std::vector<Call>& dtor_calls() {
  static std::vector<Call> v;
  return v;
}
void record(CUcontext c, void* k, void* v) { dtor_calls().push_back({c, k, v}); }

int g_key1, g_key2, g_value1, g_value2;

}  // namespace

TEST_CASE("context storage: destructors run inside cuCtxDestroy") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE(cuCtxCreate(&c, nullptr, 0, 0) == CUDA_SUCCESS);
  dtor_calls().clear();
  REQUIRE(storage().put(c, &g_key1, &g_value1, &record) == CUDA_SUCCESS);
  REQUIRE(storage().put(c, &g_key2, &g_value2, &record) == CUDA_SUCCESS);
  REQUIRE(storage().del(c, &g_key2) == CUDA_SUCCESS);  // a deleted key's destructor never runs
  void* v = nullptr;
  REQUIRE(storage().get(&v, c, &g_key1) == CUDA_SUCCESS);
  CHECK(v == &g_value1);
  CHECK(dtor_calls().empty());
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);
  REQUIRE(dtor_calls().size() == 1);  // already, with no later storage call
  CHECK(dtor_calls()[0].ctx == c);
  CHECK(dtor_calls()[0].key == &g_key1);
  CHECK(dtor_calls()[0].value == &g_value1);
}

TEST_CASE("context storage: a primary context's values go at release to 0 and at reset") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext p = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&p, 0) == CUDA_SUCCESS);
  dtor_calls().clear();
  REQUIRE(storage().put(p, &g_key1, &g_value1, &record) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
  REQUIRE(dtor_calls().size() == 1);
  CHECK(dtor_calls()[0].ctx == p);

  REQUIRE(cuDevicePrimaryCtxRetain(&p, 0) == CUDA_SUCCESS);
  void* v = nullptr;
  CHECK(storage().get(&v, p, &g_key1) == CUDA_ERROR_INVALID_HANDLE);  // gone with the last life
  REQUIRE(storage().put(p, &g_key2, &g_value2, &record) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxReset(0) == CUDA_SUCCESS);
  REQUIRE(dtor_calls().size() == 2);
  CHECK(dtor_calls()[1].key == &g_key2);
  CHECK(dtor_calls()[1].value == &g_value2);
}

TEST_CASE("context storage: a destructor may use the storage of another context") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  static CUcontext other = nullptr;
  CUcontext c = nullptr;
  REQUIRE(cuCtxCreate(&other, nullptr, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxCreate(&c, nullptr, 0, 0) == CUDA_SUCCESS);
  static CUresult inner = CUDA_ERROR_UNKNOWN;
  REQUIRE(storage().put(c, &g_key1, &g_value1, [](CUcontext, void*, void*) {
    inner = storage().put(other, &g_key2, &g_value2, nullptr);  // the storage lock is not held
  }) == CUDA_SUCCESS);
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);
  CHECK(inner == CUDA_SUCCESS);
  void* v = nullptr;
  CHECK(storage().get(&v, other, &g_key2) == CUDA_SUCCESS);
  CHECK(v == &g_value2);
  REQUIRE(cuCtxDestroy(other) == CUDA_SUCCESS);
}
