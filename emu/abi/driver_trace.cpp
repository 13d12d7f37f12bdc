// Reporting for the abi layer: CUDA_SHIM_EXPLAIN prints why a call failed; CUDA_SHIM_TRACE
// writes every call of the user's (abi/trace_writer.hpp says where and in which form).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "abi/call.hpp"
#include "abi/runtime_api.hpp"
#include "abi/trace_args.hpp"
#include "abi/trace_writer.hpp"
#include "core/config.hpp"
#include "core/events.hpp"

namespace cuda_shim::abi {

bool tracing() noexcept {
  static const bool on = Config::get().trace;  // settings are read once
  return on;
}

const char* cu_error_name(int code) noexcept;  // api_core.cpp

namespace trace {
namespace {

struct Dest {
  Form form = Form::off;
  int fd = -1;
};

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Dest open_dest() noexcept {
  Dest d;
  if (!tracing()) return d;
  const std::string& to = Config::get().trace_to;
  if (to.empty()) return {Form::readable, STDERR_FILENO};
  if (to == "-") return {Form::lines, STDOUT_FILENO};
  // Appended to, never truncated: several processes (a parent and the children it starts, with
  // the variable inherited) write into one trace. `cuda-shim run --trace` starts it empty.
  int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    fmt::print(stderr, "cuda-shim: CUDA_SHIM_TRACE: cannot open {}: {}; not tracing\n", to, std::strerror(errno));
    return d;
  }
  d.fd = fd;
  d.form = ends_with(to, ".json") ? Form::chrome : Form::lines;
  if (d.form == Form::chrome) {
    // The first writer opens the JSON array; the closing bracket is left out (Perfetto and
    // chrome://tracing accept a trace cut there), so every process only ever appends.
    ::flock(fd, LOCK_EX);
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size == 0) (void)!::write(fd, "[\n", 2);
    ::flock(fd, LOCK_UN);
  }
  return d;
}

const Dest& dest() noexcept {
  static const Dest d = open_dest();
  return d;
}

thread_local int64_t t_call_t0 = 0;

}  // namespace

Form form() noexcept { return dest().form; }

void emit(std::string event) noexcept {
  const Dest& d = dest();
  if (d.form == Form::off) return;
  event += d.form == Form::chrome ? ",\n" : "\n";
  const char* p = event.data();
  size_t left = event.size();
  while (left > 0) {
    ssize_t n = ::write(d.fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

long tid() noexcept { return static_cast<long>(::syscall(SYS_gettid)); }

std::string json_str(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  out += '"';
  return out;
}

std::string us(int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

void name_process() noexcept {
  static std::atomic<pid_t> named{0};
  const pid_t pid = ::getpid();
  if (named.exchange(pid, std::memory_order_relaxed) == pid) return;
  try {
    char comm[64] = "process";
    if (FILE* f = std::fopen("/proc/self/comm", "re")) {
      if (std::fgets(comm, sizeof comm, f)) comm[std::strcspn(comm, "\n")] = '\0';
      std::fclose(f);
    }
    emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid,
                     json_str(fmt::format("{} (pid {})", comm, pid))));
  } catch (...) {
  }
}

int64_t call_started() noexcept { return t_call_t0; }

int64_t begin_call() noexcept { return t_call_t0 = ev::now_ns(); }

void end_call(const CallRecord& r) noexcept {
  const int64_t t1 = ev::now_ns();
  t_call_t0 = 0;
  const Form f = form();
  if (f == Form::off) return;
  try {
    ArgSink sink(r.e == Errc::success);
    if (r.fmt && r.params) {
      sink.begin(r.params);
      r.fmt(r.fmt_obj, sink);
    }
    const char* result = r.runtime ? rtapi::error_name(to_cuda_error(r.e)) : cu_error_name(to_curesult(r.e));
    const std::string why = r.e == Errc::success ? std::string() : explanation();
    const pid_t pid = ::getpid();
    if (f == Form::readable) {
      // "cuda-shim: #12 cuMemAllocAsync -> success | *dptr=0x..., bytesize=1024 | 2.1 us, pid 7 tid 7"
      std::string line = fmt::format("cuda-shim: #{} {} -> {}", r.id, r.api, r.e == Errc::success ? "success" : result);
      if (r.injected) line += " [injected]";
      if (!why.empty()) line += ": " + why;
      if (!sink.args.empty()) {
        line += " |";
        for (size_t i = 0; i < sink.args.size(); ++i)
          line += fmt::format("{} {}={}", i ? "," : "", sink.args[i].name, sink.args[i].value);
      }
      line += fmt::format(" | {} us, pid {} tid {}", us(t1 - r.t0), pid, tid());
      emit(std::move(line));
      return;
    }
    std::string args;
    for (auto& a : sink.args)
      args += fmt::format(",{}:{}", json_str(a.name), a.quote ? json_str(a.value) : a.value);
    std::string extra;
    if (r.injected) extra += R"(,"injected":true)";
    if (!why.empty()) extra += ",\"why\":" + json_str(why);
    if (f == Form::lines) {
      emit(fmt::format(R"({{"type":"call","pid":{},"tid":{},"call":{},"api":"{}","ts_us":{},"dur_us":{},)"
                       R"("result":"{}"{},"args":{{{}}}}})",
                       pid, tid(), r.id, r.api, us(r.t0), us(t1 - r.t0), result, extra,
                       args.empty() ? args : args.substr(1)));
      return;
    }
    name_process();
    emit(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                     R"("args":{{"call":{},"result":"{}"{}{}}}}})",
                     r.e == Errc::success ? "api" : r.injected ? "api,error,injected" : "api,error", r.api, pid,
                     tid(), us(r.t0), us(t1 - r.t0), r.id, result, extra, args));
  } catch (...) {
  }
}

}  // namespace trace

void report(const char* api, Errc e, bool runtime, bool injected) noexcept {
  try {
    if (!explanation_set()) {
      if (e == Errc::not_ready)  // a query's normal answer, not a broken rule
        set_explanation(e, fmt::format("{}: not ready: work queued before it has not completed yet", api));
      else
        set_explanation(e, fmt::format("{}: failed (no specific rule recorded)", api));
    } else if (runtime) {
      // A runtime entry failing in the driver entry it is built on names the call the user made.
      const std::string& why = explanation();
      size_t n = 0;
      while (n < why.size() && (std::isalnum(static_cast<unsigned char>(why[n])) || why[n] == '_')) ++n;
      if (n > 2 && why.compare(0, 2, "cu") == 0 && why.compare(0, 4, "cuda") != 0 && why.compare(n, 2, ": ") == 0)
        set_explanation(e, fmt::format("{}{}", api, std::string_view(why).substr(n)));
    }
    const Config& c = Config::get();
    // NOT_READY is a normal answer of a query, not an error worth explaining. The readable
    // trace prints the same line for every call, explanation included.
    if (c.explain && e != Errc::not_ready && trace::form() != trace::Form::readable)
      fmt::print(stderr, "cuda-shim: {} -> {}{}: {}\n", api,
                 runtime ? rtapi::error_name(to_cuda_error(e)) : cu_error_name(to_curesult(e)),
                 injected ? " [injected]" : "", explanation());
  } catch (...) {
  }
}

}  // namespace cuda_shim::abi
