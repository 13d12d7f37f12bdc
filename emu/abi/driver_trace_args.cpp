// The trace's argument decoding (abi/trace_args.hpp): enum names, handle ids, value formats.
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "abi/trace_args.hpp"

namespace cuda_shim::abi {

const char* cu_error_name(int code) noexcept;  // api_core.cpp

// One function per enum, from the list of its names.
#define N(x) \
  case x:    \
    return #x;
#define NAMES(T, ...) \
  const char* enum_name(T v) noexcept { \
    switch (v) { __VA_ARGS__ default: return nullptr; } \
  }

const char* enum_name(CUresult v) noexcept { return cu_error_name(v); }

NAMES(CUmemPool_attribute,
      N(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES) N(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)
      N(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) N(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
      N(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) N(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
      N(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) N(CU_MEMPOOL_ATTR_USED_MEM_HIGH))

NAMES(CUmemAllocationHandleType,  // nullptr: a combination of types
      N(CU_MEM_HANDLE_TYPE_NONE) N(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) N(CU_MEM_HANDLE_TYPE_WIN32)
      N(CU_MEM_HANDLE_TYPE_WIN32_KMT) N(CU_MEM_HANDLE_TYPE_FABRIC))

NAMES(CUmemLocationType,
      N(CU_MEM_LOCATION_TYPE_INVALID) N(CU_MEM_LOCATION_TYPE_DEVICE) N(CU_MEM_LOCATION_TYPE_HOST)
      N(CU_MEM_LOCATION_TYPE_HOST_NUMA) N(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT))

NAMES(CUmemAllocationType,
      N(CU_MEM_ALLOCATION_TYPE_INVALID) N(CU_MEM_ALLOCATION_TYPE_PINNED) N(CU_MEM_ALLOCATION_TYPE_MANAGED))

NAMES(CUpointer_attribute,
      N(CU_POINTER_ATTRIBUTE_CONTEXT) N(CU_POINTER_ATTRIBUTE_MEMORY_TYPE) N(CU_POINTER_ATTRIBUTE_DEVICE_POINTER)
      N(CU_POINTER_ATTRIBUTE_HOST_POINTER) N(CU_POINTER_ATTRIBUTE_IS_MANAGED) N(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
      N(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) N(CU_POINTER_ATTRIBUTE_RANGE_SIZE) N(CU_POINTER_ATTRIBUTE_MAPPED)
      N(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES) N(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS)
      N(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE))

NAMES(cudaMemcpyKind,
      N(cudaMemcpyHostToHost) N(cudaMemcpyHostToDevice) N(cudaMemcpyDeviceToHost) N(cudaMemcpyDeviceToDevice)
      N(cudaMemcpyDefault))

NAMES(cudaMemPoolAttr,
      N(cudaMemPoolReuseFollowEventDependencies) N(cudaMemPoolReuseAllowOpportunistic)
      N(cudaMemPoolReuseAllowInternalDependencies) N(cudaMemPoolAttrReleaseThreshold)
      N(cudaMemPoolAttrReservedMemCurrent) N(cudaMemPoolAttrReservedMemHigh) N(cudaMemPoolAttrUsedMemCurrent)
      N(cudaMemPoolAttrUsedMemHigh))

NAMES(cudaMemAllocationHandleType,
      N(cudaMemHandleTypeNone) N(cudaMemHandleTypePosixFileDescriptor) N(cudaMemHandleTypeWin32)
      N(cudaMemHandleTypeWin32Kmt) N(cudaMemHandleTypeFabric))

NAMES(cudaMemLocationType,
      N(cudaMemLocationTypeInvalid) N(cudaMemLocationTypeDevice) N(cudaMemLocationTypeHost)
      N(cudaMemLocationTypeHostNuma) N(cudaMemLocationTypeHostNumaCurrent))

#undef NAMES
#undef N

std::string handle_id(const char* kind, const void* h) {
  if (!h) return std::strcmp(kind, "stream") == 0 ? "default" : "null";
  if (std::strcmp(kind, "stream") == 0) {
    // CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are values, not objects.
    if (reinterpret_cast<uintptr_t>(h) == 1) return "legacy";
    if (reinterpret_cast<uintptr_t>(h) == 2) return "per-thread";
  }
  // Never destroyed: worker threads may trace while the process exits.
  static std::mutex& m = *new std::mutex;
  static auto& ids = *new std::map<std::pair<std::string_view, const void*>, unsigned>;
  static auto& next = *new std::map<std::string_view, unsigned>;
  std::lock_guard lk(m);
  auto [it, fresh] = ids.try_emplace({kind, h}, 0);
  if (fresh) it->second = ++next[kind];
  return fmt::format("{}#{}", kind, it->second);
}

void ArgSink::begin(const char* params) {
  // Split "(T a, U (*f)(V), W c[3])" at the top level and keep each parameter's name.
  std::string_view p(params);
  if (p.size() >= 2 && p.front() == '(') p = p.substr(1, p.size() - 2);
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= p.size(); ++i) {
    if (i < p.size() && p[i] == '(') ++depth;
    if (i < p.size() && p[i] == ')') --depth;
    if (i < p.size() && (p[i] != ',' || depth > 0)) continue;
    std::string_view part = p.substr(start, i - start);
    start = i + 1;
    if (size_t fp = part.find("(*"); fp != std::string_view::npos) part = part.substr(fp + 2);  // a function pointer
    else if (size_t br = part.find('['); br != std::string_view::npos) part = part.substr(0, br);
    size_t end = part.size();
    while (end > 0 && !ident(part[end - 1])) --end;
    size_t b = end;
    while (b > 0 && ident(part[b - 1])) --b;
    if (part.substr(b, end - b) == "void" && names_.empty() && i == p.size()) break;  // "(void)"
    if (end > b) names_.push_back(part.substr(b, end - b));
  }
}

void ArgSink::next(bool out) {
  std::string name = at_ < names_.size() ? std::string(names_[at_]) : fmt::format("arg{}", at_);
  ++at_;
  args.push_back({out ? "*" + name : std::move(name), {}, false});
}

void ArgSink::num(long long v) { args.back().value = fmt::format("{}", v); }
void ArgSink::unum(unsigned long long v) { args.back().value = fmt::format("{}", v); }
void ArgSink::hex(unsigned long long v) {
  args.back().value = fmt::format("{:#x}", v);
  args.back().quote = true;  // JSON numbers lose precision past 2^53; hex reads better as text anyway
}
void ArgSink::ptr(const void* p) {
  if (p) hex(reinterpret_cast<uintptr_t>(p));
  else raw("null", true);
}
void ArgSink::str(const char* s) {
  if (!s) return raw("null", true);
  std::string v(s, strnlen(s, 96));
  raw(std::move(v), true);
}
void ArgSink::raw(std::string v, bool quote) {
  args.back().value = std::move(v);
  args.back().quote = quote;
}
void ArgSink::enumerated(const char* name, long long v) {
  if (name) raw(name, true);
  else num(v);
}

}  // namespace cuda_shim::abi
