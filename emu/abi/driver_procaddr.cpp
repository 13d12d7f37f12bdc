// cuGetProcAddress / cuGetProcAddress_v2: resolve a base name + CUDA version + flags to one of
// OUR exported entry points, reproducing the real driver's answers (procaddr.def).
//
// No <cuda.h> here: every symbol the table points at is declared below as `int f()` under an
// internal C++ name bound to the real symbol by an asm label, so the declarations cannot clash
// with the real signatures (cuGetProcAddress* are defined in this very TU). The references
// are to default-visibility symbols, so a returned pointer equals what dlsym gives for the
// same name, strong implementation or weak stub alike.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "abi/call.hpp"
#include "abi/procaddr.hpp"
#include "runtime/rt_hooks.hpp"

namespace cuda_shim {
int driver_version_reported() noexcept;
}

#define PROC(base, cls, version, symbol) \
  extern "C" int cuda_shim_procaddr_target_##symbol() noexcept __asm__(#symbol);
#include "abi/procaddr.def"

namespace cuda_shim::abi {
namespace {

enum Cls : unsigned char { DEFAULT, LEGACY, PTDS, INVALID };

struct Row {
  const char* name;
  Cls cls;
  int version;       // the answer below holds from this cudaVersion on
  int (*fn)();       // null: no function, answer (ret, status)
  int ret;           // a CUresult value
  int status;        // CUdriverProcAddressQueryResult
};

constexpr Row kRows[] = {
#define PROC(base, cls, version, symbol) {base, cls, version, &cuda_shim_procaddr_target_##symbol, 0, 0},
#define PROC_NONE(base, cls, version, ret, status) {base, cls, version, nullptr, ret, status},
#include "abi/procaddr.def"
};

struct FlagRule {
  long long value;  // -1: every other flags value
  Cls cls;
};
constexpr FlagRule kFlags[] = {
#define PROC_FLAGS(value, cls) {value, cls},
#include "abi/procaddr.def"
};

Cls class_of(unsigned long long flags) noexcept {
  for (const auto& r : kFlags)
    if (r.value >= 0 && static_cast<unsigned long long>(r.value) == flags) return r.cls;
  for (const auto& r : kFlags)
    if (r.value < 0) return r.cls;
  return INVALID;
}

// The table is generated sorted by name (strcmp order); checked once at compile time.
constexpr bool sorted_by_name() {
  for (std::size_t i = 1; i < std::size(kRows); ++i)
    if (std::string_view(kRows[i - 1].name) > std::string_view(kRows[i].name)) return false;
  return true;
}
static_assert(sorted_by_name(), "procaddr.def must be sorted by base name");

}  // namespace

// cudaGetDriverEntryPoint answers from the same table.
[[maybe_unused]] static const ev::Registration kProcLookup{rt::proc_lookup, &get_proc_address};

// Measured on driver 580.x (.probe/SUMMARY.md): a version newer than the driver or flags
// outside {0,1,2,3} fail with INVALID_VALUE and leave *pfn and *symbolStatus untouched; a
// name that is unknown (exact, case-sensitive base names only) or older than the function
// succeeds with a null *pfn and status 1 or 2; flags 1 == 0 and 3 == 2. A NULL symbol or pfn
// crashes the real driver; we answer INVALID_VALUE instead.
Errc get_proc_address(const char* symbol, void** pfn, int cudaVersion, unsigned long long flags,
                      int* symbolStatus, int driverVersion) {
  if (!symbol) return fail(Errc::invalid_value, "cuGetProcAddress: symbol is NULL");
  if (!pfn) return fail(Errc::invalid_value, "cuGetProcAddress: pfn is NULL");
  if (cudaVersion > driverVersion)
    return fail(Errc::invalid_value,
                "cuGetProcAddress({}): cudaVersion {} is newer than the driver's version {}", symbol,
                cudaVersion, driverVersion);
  const Cls cls = class_of(flags);
  if (cls == INVALID)
    return fail(Errc::invalid_value, "cuGetProcAddress({}): unsupported flags {:#x}", symbol, flags);

  // A negative version resolved cuInit on the real driver (status 0): it reads as "newest".
  const int want = cudaVersion < 0 ? driverVersion : cudaVersion;
  *pfn = nullptr;
  auto set_status = [&](int s) {
    if (symbolStatus) *symbolStatus = s;
  };
  const std::string_view name(symbol);
  const Row* first = std::lower_bound(std::begin(kRows), std::end(kRows), name,
                                      [](const Row& r, std::string_view n) { return r.name < n; });
  const Row* last = first;
  while (last != std::end(kRows) && last->name == name) ++last;

  // Rows newer than the emulated driver do not exist for it (a 13.0 driver has never heard of
  // a 13.3 entry point: "not found", not "version not sufficient").
  auto visible = [&](const Row& r) { return r.version <= driverVersion; };
  auto has_class = [&](Cls c) {
    return std::any_of(first, last, [&](const Row& r) { return r.cls == c && visible(r); });
  };
  const Cls use = has_class(cls) ? cls : DEFAULT;
  if (!has_class(use)) {
    set_status(proc_status_symbol_not_found);
    return Errc::success;
  }
  const Row* best = nullptr;
  for (const Row* r = first; r != last; ++r)
    if (r->cls == use && visible(*r) && r->version <= want &&
        (!best || r->version >= best->version))
      best = r;
  if (!best) {
    set_status(proc_status_version_not_sufficient);
    return Errc::success;
  }
  if (!best->fn) {
    set_status(best->status);
    return best->ret == 0 ? Errc::success
                          : fail(from_curesult(best->ret), "cuGetProcAddress({}, {}, {:#x}): refused",
                                 symbol, cudaVersion, flags);
  }
  *pfn = reinterpret_cast<void*>(best->fn);
  set_status(proc_status_success);
  return Errc::success;
}

}  // namespace cuda_shim::abi

// CUresult cuGetProcAddress_v2(const char*, void**, int, cuuint64_t,
//                              CUdriverProcAddressQueryResult*): the entry cuda.h maps
// cuGetProcAddress to since CUDA 12.0, and the one loaders dlsym. Works before cuInit.
extern "C" __attribute__((visibility("default"))) int cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cudaVersion, unsigned long long flags,
    int* symbolStatus) noexcept {
  return cuda_shim::abi::driver_call("cuGetProcAddress_v2", [&] {
    return cuda_shim::abi::get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus,
                                            cuda_shim::driver_version_reported());
  });
}

// CUresult cuGetProcAddress(const char*, void**, int, cuuint64_t): the CUDA 11.3 entry, with
// no status out-parameter. Measured: a name it cannot serve (unknown, or older than the
// function) is CUDA_ERROR_NOT_FOUND with *pfn untouched; a too-new version is INVALID_VALUE.
extern "C" __attribute__((visibility("default"))) int cuGetProcAddress(
    const char* symbol, void** pfn, int cudaVersion, unsigned long long flags) noexcept {
  return cuda_shim::abi::driver_call("cuGetProcAddress", [&] {
    int status = 0;
    void* found = nullptr;
    cuda_shim::Errc e =
        cuda_shim::abi::get_proc_address(symbol, pfn ? &found : nullptr, cudaVersion, flags,
                                         &status, cuda_shim::driver_version_reported());
    if (e != cuda_shim::Errc::success) return e;
    if (status != cuda_shim::abi::proc_status_success)
      return cuda_shim::fail(cuda_shim::Errc::not_found,
                             "cuGetProcAddress({}, {}): no such entry point (status {})", symbol,
                             cudaVersion, status);
    *pfn = found;
    return e;
  });
}
