// CUDA_SHIM_TRACE (docs/trace.md): a two-process pool-IPC run written as one Chrome/Perfetto
// trace, the JSON-lines form, and the readable stderr form. The traced processes are this binary
// re-run (the settings are read once per process): as multiprocess.hpp children for the trace
// file, as a hidden test case for the forms read from a pipe.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "unit_common.hpp"
#include "multiprocess.hpp"

namespace pt = boost::property_tree;

namespace {

constexpr size_t kPoolBytes = 1 << 20;
constexpr size_t kScratch = 4096;

void host_fn(void* p) { *static_cast<int*>(p) += 1; }

std::string tmp_path(const char* suffix) {
  std::string p = "/tmp/cuda-shim-trace-XXXXXX";
  p += suffix;
  std::vector<char> buf(p.begin(), p.end());
  buf.push_back('\0');
  int fd = mkstemps(buf.data(), static_cast<int>(std::strlen(suffix)));
  REQUIRE(fd >= 0);
  close(fd);  // created empty: the first writer opens the JSON array
  return buf.data();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The Chrome form leaves the array open (every process only appends): close it to parse.
pt::ptree parse_chrome(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ',')) text.pop_back();
  if (text.empty() || text.back() != ']') text += "\n]";
  std::stringstream s(text);
  pt::ptree root;
  pt::read_json(s, root);  // throws on anything that is not JSON
  return root;
}

double num(const pt::ptree& e, const char* key) { return e.get<double>(key); }

int run_child(const std::string& env, std::string& out) { return run_self(env, "[.trace_child]", out); }

std::vector<std::string> lines_with(const std::string& out, const std::string& start) {
  std::vector<std::string> v;
  std::stringstream s(out);
  for (std::string l; std::getline(s, l);)
    if (l.rfind(start, 0) == 0) v.push_back(l);
  return v;
}

}  // namespace

// The importer: opens the exporter's pool and pointer, reads the bytes back.
MP_CHILD(trace_importer) {
  int fd = ch.recv_fd();
  auto data = ch.recv_pod<cudaMemPoolPtrExportData>();
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess)
    return 2;
  void* p = nullptr;
  if (cudaMemPoolImportPointer(&p, pool, &data) != cudaSuccess) return 3;
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 4;
  std::vector<unsigned char> host(kScratch);
  if (cudaMemcpyAsync(host.data(), p, kScratch, cudaMemcpyDeviceToHost, s) != cudaSuccess) return 5;
  if (cudaStreamSynchronize(s) != cudaSuccess) return 6;
  for (unsigned char b : host)
    if (b != 0x5a) return 7;
  cudaFree(p);
  cudaStreamDestroy(s);
  close(fd);
  return 0;
}

// The exporter: stream-ordered work on a user stream, then the pool and one pointer handed over.
MP_CHILD(trace_exporter) {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 2;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) return 3;
  void* shared = nullptr;
  void* scratch = nullptr;
  int calls = 0;
  cudaEvent_t ev = nullptr;
  if (cudaMallocFromPoolAsync(&shared, kPoolBytes, pool, s) != cudaSuccess) return 4;
  if (cudaMallocAsync(&scratch, kScratch, s) != cudaSuccess) return 5;
  if (cudaMemsetAsync(scratch, 0x5a, kScratch, s) != cudaSuccess) return 6;
  if (cudaLaunchHostFunc(s, host_fn, &calls) != cudaSuccess) return 7;
  if (cudaMemcpyAsync(shared, scratch, kScratch, cudaMemcpyDeviceToDevice, s) != cudaSuccess) return 8;
  if (cudaEventCreate(&ev) != cudaSuccess || cudaEventRecord(ev, s) != cudaSuccess) return 9;
  if (cudaFreeAsync(scratch, s) != cudaSuccess) return 10;
  if (cudaStreamSynchronize(s) != cudaSuccess || calls != 1) return 11;
  int fd = -1;
  if (cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess)
    return 12;
  cudaMemPoolPtrExportData data{};
  if (cudaMemPoolExportPointer(&data, shared) != cudaSuccess) return 13;
  auto c = mp::spawn("trace_importer");
  c.ch.send_fd(fd);
  c.ch.send_pod(data);
  const int rc = c.wait();
  if (rc != 0) return 20 + rc;
  cudaFreeAsync(shared, s);
  cudaStreamSynchronize(s);
  cudaEventDestroy(ev);
  cudaMemPoolDestroy(pool);
  cudaStreamDestroy(s);
  close(fd);
  return 0;
}

TEST_CASE("trace: a two-process pool-IPC run as one Perfetto trace", "[trace]") {
  const std::string path = tmp_path(".json");
  auto c = mp::spawn("trace_exporter", {"CUDA_SHIM_TRACE=" + path});
  const long exporter = c.pid;
  REQUIRE(c.wait() == 0);
  const std::string text = slurp(path);
  INFO(text.substr(0, 4000));
  REQUIRE(text.rfind("[\n", 0) == 0);  // the first writer opened the array, once
  CHECK(lines_with(text, "[").size() == 1);
  pt::ptree root = parse_chrome(text);

  std::set<long> pids;
  std::map<std::string, pt::ptree> first_call;                  // api -> its first X event
  std::map<std::pair<long, long>, std::vector<pt::ptree>> ops;  // (pid, track) -> slices
  std::vector<pt::ptree> calls, starts, ends;
  std::map<std::pair<long, long>, std::string> track_names;
  for (auto& [k, e] : root) {
    const std::string ph = e.get<std::string>("ph");
    const long pid = e.get<long>("pid");
    const long tid = e.get<long>("tid", 0);
    if (ph == "X" && e.get<std::string>("cat").rfind("api", 0) == 0) {
      pids.insert(pid);
      calls.push_back(e);
      first_call.emplace(e.get<std::string>("name"), e);
    } else if (ph == "X" && e.get<std::string>("cat") == "stream") {
      ops[{pid, tid}].push_back(e);
    } else if (ph == "s") {
      starts.push_back(e);
    } else if (ph == "f") {
      ends.push_back(e);
    } else if (ph == "M" && e.get<std::string>("name") == "thread_name") {
      track_names[{pid, tid}] = e.get<std::string>("args.name");
    }
  }
  CHECK(pids.size() == 2);  // the exporter's calls and the importer's
  CHECK(pids.count(exporter) == 1);

  // Decoded arguments: sizes as numbers, enums by name, handles by short id, out-parameters.
  REQUIRE(first_call.count("cudaMallocAsync"));
  const pt::ptree& ma = first_call["cudaMallocAsync"];
  CHECK(ma.get<size_t>("args.size") == kScratch);
  CHECK(ma.get<std::string>("args.hStream") == "stream#1");
  CHECK(ma.get<std::string>("args.*devPtr").rfind("0x", 0) == 0);
  CHECK(ma.get<std::string>("args.result") == "cudaSuccess");
  CHECK(ma.get<long>("args.call") > 0);
  REQUIRE(first_call.count("cudaMemcpyAsync"));
  CHECK(first_call["cudaMemcpyAsync"].get<std::string>("args.kind") == "cudaMemcpyDeviceToDevice");
  REQUIRE(first_call.count("cudaMemPoolImportFromShareableHandle"));
  CHECK(first_call["cudaMemPoolImportFromShareableHandle"].get<std::string>("args.handleType") ==
        "cudaMemHandleTypePosixFileDescriptor");
  CHECK(first_call["cudaMemPoolImportFromShareableHandle"].get<std::string>("args.*memPool") == "pool#1");
  CHECK(first_call["cudaStreamCreateWithFlags"].get<std::string>("args.*pStream") == "stream#1");
  CHECK(first_call["cudaMallocFromPoolAsync"].get<size_t>("args.size") == kPoolBytes);
  // The emulator's own calls (libcudart reaching the driver) never appear.
  CHECK(first_call.count("cuGetExportTable") == 0);
  for (auto& e : calls) CHECK(e.get<std::string>("name").rfind("cuda", 0) == 0);  // the runtime's calls only

  // Stream tracks: named, and their operations complete in stream order.
  std::set<std::string> kinds;
  size_t user_ops = 0;
  for (auto& [track, v] : ops) {
    CHECK(track_names.count(track) == 1);
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.template get<long>("args.seq") < b.template get<long>("args.seq"); });
    for (size_t i = 0; i < v.size(); ++i) {
      kinds.insert(v[i].get<std::string>("name"));
      if (i) {
        CHECK(v[i].get<long>("args.seq") > v[i - 1].get<long>("args.seq"));
        CHECK(num(v[i], "ts") + 1e-3 >= num(v[i - 1], "ts") + num(v[i - 1], "dur"));
      }
    }
    if (track_names[track] == "stream#1") user_ops += v.size();
  }
  CHECK(user_ops >= 5);
  for (const char* k : {"memset", "copy", "host function", "event record", "free"}) {
    INFO(k);
    CHECK(kinds.count(k) == 1);
  }

  // Flows: every arrow's start lies in a call of its thread, its end in a stream slice.
  REQUIRE(!ends.empty());
  std::map<long long, pt::ptree> by_id;
  for (auto& s : starts) by_id[s.get<long long>("id")] = s;
  size_t joined = 0;
  for (auto& f : ends) {
    auto it = by_id.find(f.get<long long>("id"));
    REQUIRE(it != by_id.end());
    const pt::ptree& s = it->second;
    bool in_call = false;
    for (auto& e : calls)
      if (e.get<long>("pid") == s.get<long>("pid") && e.get<long>("tid") == s.get<long>("tid") &&
          num(e, "ts") <= num(s, "ts") && num(s, "ts") <= num(e, "ts") + num(e, "dur"))
        in_call = true;
    CHECK(in_call);
    bool in_op = false;
    for (auto& e : ops[{f.get<long>("pid"), f.get<long>("tid")}])
      if (num(e, "ts") <= num(f, "ts") && num(f, "ts") <= num(e, "ts") + num(e, "dur")) in_op = true;
    CHECK(in_op);
    ++joined;
  }
  CHECK(joined >= user_ops);
  std::remove(path.c_str());
}

// What the forms read from a pipe run: a few calls, one of them failing.
TEST_CASE("trace child", "[.trace_child]") {
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 512) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(p, 1, 512, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(cudaFree(reinterpret_cast<void*>(0x10)) == cudaErrorInvalidValue);
  cudaStreamDestroy(s);
  cudaFree(p);
}

TEST_CASE("trace: CUDA_SHIM_TRACE=1 prints each call with its arguments and result", "[trace]") {
  std::string out;
  CHECK(run_child("CUDA_SHIM_TRACE=1", out) == 0);
  INFO(out);
  auto lines = lines_with(out, "cuda-shim: ");
  REQUIRE(lines.size() >= 6);
  // The user's first call comes first: the emulator's own calls at load never show.
  CHECK(lines[0].find(" cudaMalloc -> success | *devPtr=0x") != std::string::npos);
  CHECK(lines[0].find(", size=512 | ") != std::string::npos);
  CHECK(lines[0].rfind("cuda-shim: #1 ", 0) == 0);
  CHECK(out.find("cudaStreamCreate -> success | *pStream=stream#1 |") != std::string::npos);
  CHECK(out.find("cudaMemsetAsync -> success | devPtr=0x") != std::string::npos);
  CHECK(out.find(", value=1, count=512, stream=stream#1 |") != std::string::npos);
  CHECK(out.find("cudaFree -> cudaErrorInvalidValue: ") != std::string::npos);
  CHECK(out.find("| devPtr=0x10 |") != std::string::npos);
  CHECK(out.find("cuGetExportTable") == std::string::npos);
}

TEST_CASE("trace: CUDA_SHIM_TRACE=- writes one JSON object per line, calls and stream operations", "[trace]") {
  std::string out;
  CHECK(run_child("CUDA_SHIM_TRACE=-", out) == 0);
  INFO(out);
  auto lines = lines_with(out, "{");
  REQUIRE(lines.size() >= 6);
  bool memset_op = false, failed = false;
  for (auto& l : lines) {
    std::stringstream s(l);
    pt::ptree e;
    REQUIRE_NOTHROW(pt::read_json(s, e));
    if (e.get<std::string>("type") == "op" && e.get<std::string>("op") == "memset") {
      memset_op = true;
      CHECK(e.get<std::string>("api") == "cudaMemsetAsync");
      CHECK(e.get<std::string>("stream") == "stream#1");
    }
    if (e.get<std::string>("type") == "call" && e.get<std::string>("api") == "cudaFree" &&
        e.get<std::string>("result") == "cudaErrorInvalidValue") {
      failed = true;
      CHECK(e.get<std::string>("args.devPtr") == "0x10");
      CHECK(!e.get<std::string>("why").empty());
    }
  }
  CHECK(memset_op);
  CHECK(failed);
  std::stringstream first(lines[0]);
  pt::ptree e0;
  pt::read_json(first, e0);
  CHECK(e0.get<std::string>("api") == "cudaMalloc");
  CHECK(e0.get<size_t>("args.size") == 512);
}

TEST_CASE("trace: an injected fault is marked in the JSON trace", "[trace]") {
  const std::string path = tmp_path(".jsonl");
  std::string out;
  CHECK(run_child("CUDA_SHIM_TRACE=" + path + " CUDA_SHIM_FAULTS='cudaStreamCreate:cudaErrorMemoryAllocation'", out) != 0);
  const std::string text = slurp(path);
  INFO(text);
  CHECK(text.find(R"("api":"cudaStreamCreate","ts_us")") != std::string::npos);
  CHECK(text.find(R"("injected":true)") != std::string::npos);
  std::remove(path.c_str());
}
