// The private tables themselves: static, constant-initialised, one struct per table so every
// slot has its type. Slot indices count pointer-sized words from the table's start, the size
// word (where there is one) being slot 0. docs/dark-api.md describes each slot.
#include <array>
#include <cstring>
#include <utility>
#include <string>

#include <fmt/format.h>

#include "abi/call.hpp"
#include "hosting/hosting.hpp"

namespace cuda_shim::hosting {
namespace {

enum Table : int {
  kCudartInterface,
  kToolsTls,
  kToolsCallbackHooks,
  kContextLocalStorage,
  kContextChecks,
  kIntegrityCheck,
  kRuntimeInit,
  kRuntime135,
  kTableCount
};

constexpr const char* kNames[kTableCount] = {
    "CUDART_INTERFACE",   "TOOLS_TLS",       "TOOLS_RUNTIME_CALLBACK_HOOKS", "CONTEXT_LOCAL_STORAGE",
    "CONTEXT_CHECKS",     "INTEGRITY_CHECK", "RUNTIME_INIT_F8CF", "RUNTIME_13_5_21318C60",
};

// A slot nobody has documented: it answers CUDA_ERROR_NOT_SUPPORTED and says which it is, so a
// trace (CUDA_SHIM_TRACE / CUDA_SHIM_EXPLAIN) shows what NVIDIA's runtime asked for. Taking no
// arguments is safe whatever the caller passes (the caller owns the argument registers and
// stack under the x86-64 and AArch64 C conventions).
template <int T, int S>
CUresult CUDAAPI undocumented() {
  static const std::string api = fmt::format("{}[{}]", kNames[T], S);
  return static_cast<CUresult>(abi::driver_call(api.c_str(), [] {
    return fail(Errc::not_supported, "{}: slot {} of NVIDIA's private table {} has no documented meaning, and "
                "cuda-shim does not implement it (docs/dark-api.md lists what is known)", api, S, kNames[T]);
  }));
}
using Stub = CUresult(CUDAAPI*)();

constexpr uintptr_t words(size_t n) { return n * sizeof(void*); }

// 6bd5fb6c-5bf4-e74a-8987-d93912fd9df9: what the runtime needs to load its fat binaries.
struct CudartInterface {
  uintptr_t size;
  CUresult(CUDAAPI* load_fatbin_wrapper)(CUmodule*, const void*);
  CUresult(CUDAAPI* get_primary_context)(CUcontext*, CUdevice);
  Stub s3, s4, s5;
  CUresult(CUDAAPI* load_fatbin_wrapper_ex)(CUmodule*, const void*, void*, void*, unsigned);
  void(CUDAAPI* slot7)(size_t);
  CUresult(CUDAAPI* load_fatbin_ex)(const void*, CUmodule*, void*, void*, unsigned);
  Stub s9, s10, s11;
  CUresult(CUDAAPI* load_compilers)();
};
static_assert(sizeof(CudartInterface) == 104);
constexpr CudartInterface kCudart = {
    words(13),
    &load_fatbin_wrapper,
    &get_primary_context,
    &undocumented<kCudartInterface, 3>,
    &undocumented<kCudartInterface, 4>,
    &undocumented<kCudartInterface, 5>,
    &load_fatbin_wrapper_ex,
    &cudart_slot7,
    &load_fatbin_ex,
    &undocumented<kCudartInterface, 9>,
    &undocumented<kCudartInterface, 10>,
    &undocumented<kCudartInterface, 11>,
    &load_compilers,
};

// 42d85a81-23f6-cb47-8298-f6e78a3aecdc: thread-local state for tools. No slot is called by the
// runtime of a program that no tool watches.
struct ToolsTls {
  uintptr_t size;
  Stub s1, s2;
};
constexpr ToolsTls kToolsTlsTable = {words(3), &undocumented<kToolsTls, 1>, &undocumented<kToolsTls, 2>};

// a094798c-2e74-2e74-93f2-0800200c0a66: the tables through which tools hook runtime calls.
struct ToolsHooks {
  uintptr_t size;
  Stub s1;
  void(CUDAAPI* callbacks)(void**, size_t*);
  Stub s3, s4, s5;
  void(CUDAAPI* callbacks2)(void**, size_t*);
};
constexpr ToolsHooks kToolsHooks = {
    words(7),
    &undocumented<kToolsCallbackHooks, 1>,
    &tools_callback_table,
    &undocumented<kToolsCallbackHooks, 3>,
    &undocumented<kToolsCallbackHooks, 4>,
    &undocumented<kToolsCallbackHooks, 5>,
    &tools_callback_table2,
};

// c693336e-1121-df11-a8c3-68f355d89593: context-local storage. This table has no size word.
struct ContextStorage {
  CUresult(CUDAAPI* put)(CUcontext, void*, void*, ClsDestructor);
  CUresult(CUDAAPI* del)(CUcontext, void*);
  CUresult(CUDAAPI* get)(void**, CUcontext, void*);
  Stub s3;
};
constexpr ContextStorage kContextStorage = {&cls_put, &cls_delete, &cls_get, &undocumented<kContextLocalStorage, 3>};

// 263e8860-7cd2-6143-92f6-bbd5006dfa7e: checks the runtime makes on a context before using it.
struct ContextChecks {
  uintptr_t size;
  Stub s1;
  CUresult(CUDAAPI* check)(CUcontext, unsigned*, const void**);
  unsigned(CUDAAPI* flags)();
  Stub s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14;
};
static_assert(sizeof(ContextChecks) == 120);
constexpr ContextChecks kContextChecksTable = {
    words(15),
    &undocumented<kContextChecks, 1>,
    &context_check,
    &context_check_flags,
    &undocumented<kContextChecks, 4>,
    &undocumented<kContextChecks, 5>,
    &undocumented<kContextChecks, 6>,
    &undocumented<kContextChecks, 7>,
    &undocumented<kContextChecks, 8>,
    &undocumented<kContextChecks, 9>,
    &undocumented<kContextChecks, 10>,
    &undocumented<kContextChecks, 11>,
    &undocumented<kContextChecks, 12>,
    &undocumented<kContextChecks, 13>,
    &undocumented<kContextChecks, 14>,
};

// d4082055-bde6-704b-8d34-ba123c66e1f2: the runtime's proof that it talks to a real driver.
struct IntegrityTable {
  uintptr_t size;
  CUresult(CUDAAPI* check)(unsigned, unsigned long long, unsigned long long*);
  Stub s2;
};
constexpr IntegrityTable kIntegrity = {words(3), &integrity_check, &undocumented<kIntegrityCheck, 2>};

// f8cff951-2146-8b4e-b9e2-fb469e7c0dd9: asked for before cuInit. Runtime 13.5 calls slot 2 as
// it loads kernels, with (1, 1, p, q); driver 580 then leaves p in the result register
// (tests/nvcc/data/dark_api_580) and the runtime looks no further: this slot does the same.
uintptr_t CUDAAPI runtime_init_slot2(uintptr_t, uintptr_t, uintptr_t p, uintptr_t) {
  abi::driver_call("RUNTIME_INIT_F8CF[2]", [] { return Errc::success; });
  return p;
}
struct RuntimeInit {
  uintptr_t size;
  Stub s1;
  uintptr_t(CUDAAPI* s2)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
};
constexpr RuntimeInit kRuntimeInitTable = {words(3), &undocumented<kRuntimeInit, 1>, &runtime_init_slot2};

// 21318c60-9714-3248-8ca6-41ff7324c8f2: asked for by runtime 13.5; driver 580 gives 744 bytes
// (tests/nvcc/data/dark_api_580); the programs recorded call none of its slots.
template <int T, size_t... I>
constexpr std::array<Stub, sizeof...(I)> undocumented_slots(std::index_sequence<I...>) {
  return {&undocumented<T, static_cast<int>(I) + 1>...};
}
struct Runtime135 {
  uintptr_t size;
  std::array<Stub, 92> slots;
};
static_assert(sizeof(Runtime135) == 93 * sizeof(void*));
constexpr Runtime135 kRuntime135Table = {words(93), undocumented_slots<kRuntime135>(std::make_index_sequence<92>())};

}  // namespace

const unsigned char kCudartInterfaceId[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                              0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
const unsigned char kIntegrityCheckId[16] = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                             0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};

namespace {
const TableInfo kTables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     kNames[kCudartInterface], &kCudart, 13},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     kNames[kToolsTls], &kToolsTlsTable, 3},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     kNames[kToolsCallbackHooks], &kToolsHooks, 7},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     kNames[kContextLocalStorage], &kContextStorage, 4},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     kNames[kContextChecks], &kContextChecksTable, 15},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     kNames[kIntegrityCheck], &kIntegrity, 3},
    {{0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9},
     kNames[kRuntimeInit], &kRuntimeInitTable, 3},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     kNames[kRuntime135], &kRuntime135Table, 93},
};
}  // namespace

const TableInfo* find_table(const CUuuid& id) noexcept {
  for (const TableInfo& t : kTables)
    if (std::memcmp(t.id, id.bytes, 16) == 0) return &t;
  return nullptr;
}

const TableInfo* tables(size_t& count) noexcept {
  count = sizeof kTables / sizeof kTables[0];
  return kTables;
}

const void* cudart_interface_table() noexcept { return &kCudart; }
const void* integrity_check_table() noexcept { return &kIntegrity; }
const void* integrity_check_slot() noexcept { return reinterpret_cast<const void*>(kIntegrity.check); }

}  // namespace cuda_shim::hosting
