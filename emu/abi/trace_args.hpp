// Decoding an entry's arguments for the trace (CUDA_SHIM_TRACE). The generated entries' bodies,
// called with an ArgSink, do `sink.put(args...)` instead of the call (abi/call.hpp); the door
// does that only on the hooked path while tracing, after the call ran, so with tracing off the
// arguments cost nothing. Values are decoded by type: sizes and ints as numbers, pointers (and CUdeviceptr,
// unsigned long long) in hex, the common enums by name, handles by a short id per process
// ("stream#3"), and an out-parameter (a non-const pointer to a scalar or a handle) as what the
// call stored there, named "*name", once the call succeeded.
#pragma once
#include <cuda.h>
#include <driver_types.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cuda_shim::abi {

struct TraceArg {
  std::string name;
  std::string value;
  bool quote;  // a string in JSON (numbers are not quoted)
};

// Names of the enums the trace shows by name (abi/driver_trace_args.cpp); null when unknown.
const char* enum_name(CUresult v) noexcept;
const char* enum_name(CUmemPool_attribute v) noexcept;
const char* enum_name(CUmemAllocationHandleType v) noexcept;
const char* enum_name(CUmemLocationType v) noexcept;
const char* enum_name(CUmemAllocationType v) noexcept;
const char* enum_name(CUpointer_attribute v) noexcept;
const char* enum_name(cudaMemcpyKind v) noexcept;
const char* enum_name(cudaMemPoolAttr v) noexcept;
const char* enum_name(cudaMemAllocationHandleType v) noexcept;
const char* enum_name(cudaMemLocationType v) noexcept;

// The kind a handle type is shown as ("stream#3"); only the handle types have one.
#define CUDA_SHIM_HANDLE(T, kind) \
  constexpr const char* handle_kind(T) noexcept { return kind; }
CUDA_SHIM_HANDLE(CUcontext, "ctx")
CUDA_SHIM_HANDLE(CUmodule, "module")
CUDA_SHIM_HANDLE(CUfunction, "func")
CUDA_SHIM_HANDLE(CUlibrary, "library")
CUDA_SHIM_HANDLE(CUkernel, "kernel")
CUDA_SHIM_HANDLE(CUarray, "array")
CUDA_SHIM_HANDLE(CUmipmappedArray, "mipmap")
CUDA_SHIM_HANDLE(CUevent, "event")
CUDA_SHIM_HANDLE(CUstream, "stream")
CUDA_SHIM_HANDLE(CUexternalMemory, "extmem")
CUDA_SHIM_HANDLE(CUexternalSemaphore, "extsem")
CUDA_SHIM_HANDLE(CUgraph, "graph")
CUDA_SHIM_HANDLE(CUgraphNode, "node")
CUDA_SHIM_HANDLE(CUgraphExec, "graphexec")
CUDA_SHIM_HANDLE(CUmemoryPool, "pool")
CUDA_SHIM_HANDLE(CUlinkState, "link")
#undef CUDA_SHIM_HANDLE

// The stable short id of a handle in this process ("stream#3", numbered on first sight); the
// default streams by name. Thread-safe.
std::string handle_id(const char* kind, const void* h);

class ArgSink {
 public:
  explicit ArgSink(bool ok) : ok_(ok) {}
  // The parameter list as written in the .def row, "(CUdeviceptr* dptr, size_t bytesize)".
  void begin(const char* params);
  template <class... A>
  void put(const A&... a) {
    (one(a), ...);
  }
  std::vector<TraceArg> args;

  // Out-of-line appenders, one per shape of value.
  void num(long long v);
  void unum(unsigned long long v);
  void hex(unsigned long long v);
  void ptr(const void* p);
  void str(const char* s);
  void raw(std::string v, bool quote);
  void enumerated(const char* name, long long v);
  void handle(const char* kind, const void* h) { raw(handle_id(kind, h), true); }

 private:
  template <class T>
  void one(const T& v) {
    if constexpr (std::is_pointer_v<T>) {
      if constexpr (is_out<std::remove_pointer_t<T>>()) {
        if (ok_ && v) {
          next(true);
          value(*v);
          return;
        }
      }
    }
    next(false);
    value(v);
  }
  // Written through by the call: a non-const scalar, enum, handle or pointer (void**).
  template <class P>
  static constexpr bool is_out() {
    if constexpr (std::is_const_v<P> || std::is_void_v<P> || std::is_function_v<P>) return false;
    else if constexpr (std::is_same_v<P, char> || std::is_same_v<P, unsigned char> || std::is_same_v<P, signed char>)
      return false;  // a buffer
    else return std::is_arithmetic_v<P> || std::is_enum_v<P> || std::is_pointer_v<P>;
  }
  template <class T>
  void value(const T& v) {
    if constexpr (std::is_same_v<T, bool>) raw(v ? "true" : "false", false);
    else if constexpr (std::is_enum_v<T>) {
      if constexpr (requires { enum_name(v); }) enumerated(enum_name(v), static_cast<long long>(v));
      else num(static_cast<long long>(v));
    } else if constexpr (std::is_same_v<T, unsigned long long>) hex(v);  // CUdeviceptr, handles, flags
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) num(v);
    else if constexpr (std::is_integral_v<T>) unum(v);
    else if constexpr (std::is_floating_point_v<T>) raw(std::to_string(v), false);
    else if constexpr (std::is_pointer_v<T>) {
      using P = std::remove_cv_t<std::remove_pointer_t<T>>;
      if constexpr (requires { handle_kind(v); }) handle(handle_kind(v), v);
      else if constexpr (std::is_same_v<P, char>) str(v);
      else if constexpr (std::is_function_v<P>) ptr(reinterpret_cast<const void*>(v));
      else ptr(static_cast<const void*>(v));
    } else if constexpr (requires { v.x; v.y; v.z; }) {  // dim3
      raw("(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")", true);
    } else {
      raw("{...}", true);
    }
  }
  void next(bool out);  // starts the next argument, named from the parameter list
  std::vector<std::string_view> names_;
  size_t at_ = 0;
  bool ok_;
};

}  // namespace cuda_shim::abi
