// The trace's writer (abi/driver_trace.cpp), shared by the call events (the door's hooked path)
// and the stream operations (abi/driver_trace_ops.cpp). CUDA_SHIM_TRACE says where:
//   1        the readable form on stderr (calls only)
//   -        JSON lines on stdout
//   x.json   Chrome trace event format (Perfetto, chrome://tracing), appended to by every process
//   x.other  JSON lines in that file
// Every event is one write() of whole lines (O_APPEND for files), so threads and processes
// writing into one trace never interleave within an event, and no lock is held while writing.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "abi/call.hpp"

namespace cuda_shim::abi::trace {

enum class Form { off, readable, lines, chrome };
// Opens the destination on first use (the JSON array's "[" when the file is empty).
Form form() noexcept;
// Writes one event (a JSON object, or the readable line), adding the separator the form needs.
void emit(std::string event) noexcept;
// Chrome form: the process's name event, once per process (after a fork, once more).
void name_process() noexcept;

long tid() noexcept;
std::string json_str(std::string_view s);  // quoted and escaped
std::string us(int64_t ns);                // microseconds with three decimals, as the trace wants

// The traced call this thread is inside started at (0 outside one); flows start after it.
int64_t call_started() noexcept;

// The door's side (abi/driver_call_hooks.cpp).
struct CallRecord {
  const char* api;
  uint64_t id;
  bool runtime;
  Errc e;
  bool injected;
  int64_t t0;
  ArgFormatter fmt;     // null: the arguments are not decoded
  const void* fmt_obj;  // the entry's body, which decodes them when given an ArgSink
  const char* params;   // the entry's parameter list as written
};
int64_t begin_call() noexcept;  // now, remembered for call_started()
void end_call(const CallRecord& r) noexcept;
// Listens to the stream-operation events (ev::op_enqueued, ev::op_completed) when the form is
// JSON (abi/driver_trace_ops.cpp).
void setup() noexcept;

}  // namespace cuda_shim::abi::trace
