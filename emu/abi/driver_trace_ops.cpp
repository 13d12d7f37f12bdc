// Stream operations in a JSON trace (listening to ev::op_enqueued and ev::op_completed). Each stream gets its own track
// (a synthetic thread of the process, named after the stream's short id); each operation is a
// slice from when the stream reached it to its completion, named after the call that enqueued it
// ("copy" for cuMemcpyAsync), and a flow arrow joins that call to the slice.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "abi/trace_args.hpp"
#include "abi/trace_writer.hpp"
#include "core/call_info.hpp"
#include "core/stream.hpp"
#include "core/events.hpp"

namespace cuda_shim::abi::trace {
namespace {

// Stream tracks are threads of the process with ids no real thread has.
constexpr long kStreamTid = 1'000'000'000;

struct Pending {
  const char* api;
  uint64_t call;
  int64_t when;
};

// Never destroyed: stream workers may finish operations while the process exits.
std::mutex& g_m = *new std::mutex;
auto& g_pending = *new std::unordered_map<uint64_t, Pending>;
auto& g_named = *new std::set<std::pair<pid_t, uint64_t>>;  // stream tracks named, per process

// What an operation is, from the entry that enqueued it.
const char* op_kind(const char* api) {
  if (!api) return "operation";
  std::string_view a(api);
  auto has = [&](std::string_view part) { return a.find(part) != std::string_view::npos; };
  if (has("Prefetch")) return "prefetch";
  if (has("Memcpy")) return "copy";
  if (has("Memset")) return "memset";
  if (has("Free")) return "free";
  if (has("Alloc") || has("Malloc")) return "alloc";
  if (has("EventRecord")) return "event record";
  if (has("WaitEvent")) return "event wait";
  if (has("HostFunc") || has("Callback")) return "host function";
  if (has("Launch")) return "kernel (skipped)";
  if (has("Semaphore")) return "external semaphore";
  if (has("WaitValue") || has("WriteValue") || has("BatchMemOp")) return "stream memory op";
  if (has("Attach")) return "attach";
  if (has("Advise")) return "advise";
  return api;
}

// Flow ids are global in a trace file that several processes write: the pid goes in the high
// bits, kept under 2^53 so that JSON readers hold them exactly.
uint64_t flow_id(pid_t pid, uint64_t token) {
  return (static_cast<uint64_t>(pid) & 0x3fffff) << 28 | (token & 0xfffffff);
}

std::string stream_name(const Stream& s) {
  if (s.handle()) return handle_id("stream", s.handle());
  switch (s.kind()) {
    case StreamKind::legacy: return "legacy stream";
    case StreamKind::per_thread: return "per-thread stream";
    default: return fmt::format("stream (id {})", s.id());
  }
}

// The operation's number (ev::next_op) is the token joining its call to its slice.
void on_enqueued(const Stream&, uint64_t token) {
  const CallInfo c = current_call();
  const int64_t now = ev::now_ns();
  try {
    {
      std::lock_guard lk(g_m);
      g_pending[token] = {c.api, c.id, now};
    }
    // The arrow starts inside the enqueuing call's slice (strictly after its start).
    if (c.api && form() == Form::chrome)
      if (int64_t t0 = call_started()) {
        const pid_t pid = ::getpid();
        emit(fmt::format(R"({{"ph":"s","cat":"flow","name":"enqueue","id":{},"pid":{},"tid":{},"ts":{}}})",
                         flow_id(pid, token), pid, tid(), us(std::max(now, t0 + 1))));
      }
  } catch (...) {
  }
}

void on_ran(const Stream& s, uint64_t seq, uint64_t token, int64_t t0, int64_t t1) {
  try {
    Pending p{nullptr, 0, 0};
    if (token) {
      std::lock_guard lk(g_m);
      if (auto it = g_pending.find(token); it != g_pending.end()) {
        p = it->second;
        g_pending.erase(it);
      }
    }
    const pid_t pid = ::getpid();
    const std::string name = stream_name(s);
    const char* kind = op_kind(p.api);
    if (form() == Form::lines) {
      emit(fmt::format(R"({{"type":"op","pid":{},"stream":{},"stream_id":{},"seq":{},"op":"{}","api":{},"call":{},)"
                       R"("enqueued_us":{},"ts_us":{},"dur_us":{}}})",
                       pid, json_str(name), s.id(), seq, kind, p.api ? json_str(p.api) : "null", p.call,
                       us(p.when), us(t0), us(t1 - t0)));
      return;
    }
    const long track = kStreamTid + static_cast<long>(s.id());
    bool fresh;
    {
      std::lock_guard lk(g_m);
      fresh = g_named.emplace(pid, s.id()).second;
    }
    std::string ev;
    if (fresh) {
      name_process();
      ev += fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}},)"
                        "\n"
                        R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}},)"
                        "\n",
                        pid, track, json_str(name), pid, track, track);
    }
    // A slice of at least a nanosecond, so the arrow's end has a slice to bind to.
    ev += fmt::format(R"({{"ph":"X","cat":"stream","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                      R"("args":{{"stream":{},"seq":{},"call":{},"api":{},"enqueued_us":{}}}}})",
                      kind, pid, track, us(t0), us(std::max<int64_t>(t1 - t0, 1)), json_str(name), seq, p.call,
                      p.api ? json_str(p.api) : "null", us(p.when));
    if (p.api)
      ev += fmt::format(",\n" R"({{"ph":"f","bp":"e","cat":"flow","name":"enqueue","id":{},"pid":{},"tid":{},"ts":{}}})",
                        flow_id(pid, token), pid, track, us(t0));
    emit(std::move(ev));  // one write: the track's name, the slice and the arrow's end together
  } catch (...) {
  }
}

}  // namespace

// Listens only while a JSON trace is on: otherwise stream operations pay one load and a branch.
void setup() noexcept {
  const Form f = form();
  static std::once_flag once;
  if (f == Form::lines || f == Form::chrome)
    std::call_once(once, [] {
      ev::op_enqueued.listen(&on_enqueued);
      ev::op_completed.listen(&on_ran);
    });
}

}  // namespace cuda_shim::abi::trace
