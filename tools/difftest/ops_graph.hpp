// difftest ops of the graph family (graphs and stream capture), for the probe cases in
// tests/probe/cases/graph*.cases (docs/probe.md). Every op is named g_*. Node and graph
// handles live in slots like any other handle; node lists are recorded as their types
// (CUgraphNodeType values), never as addresses.
#pragma once

#include <atomic>
#include <fstream>
#include <sstream>

namespace difftest {

namespace graph_ops {
inline std::atomic<int> g_count{0};
inline void CUDA_CB bump(void*) { g_count.fetch_add(1); }
}  // namespace graph_ops

inline bool ops_graph(Exec& e, Rec& r) {
  namespace go = graph_ops;
  const std::string& op = e.t[0];
  if (op.rfind("g_", 0) != 0) return false;
  auto U = [](auto v) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v)); };
  auto strm = [&](size_t k) { return e.h<CUstream>(k); };
  auto graph = [&](size_t k) { return e.h<CUgraph>(k); };
  auto exec = [&](size_t k) { return e.h<CUgraphExec>(k); };
  auto isnull = [&](size_t k) { return e.a(k) == "null"; };
  // Node slots from token k on: the dependency list of an add.
  auto deps = [&](size_t k) {
    std::vector<CUgraphNode> v;
    for (size_t i = k; i < e.t.size(); ++i) v.push_back(e.h<CUgraphNode>(i));
    return v;
  };
  // The types of a node list, in order ("5,3"): what a graph holds, without addresses.
  auto types = [&](const CUgraphNode* n, size_t count) {
    std::string s;
    auto f = DT_FN(e, cuGraphNodeGetType);
    for (size_t i = 0; i < count && f; ++i) {
      CUgraphNodeType t{};
      int rc = f(n[i], &t);
      s += (i ? "," : "") + (rc ? "e" + std::to_string(rc) : std::to_string(static_cast<int>(t)));
    }
    return s;
  };
  auto ctx = [&]() {
    CUcontext c = nullptr;
    if (auto f = DT_FN(e, cuCtxGetCurrent)) f(&c);
    return c;
  };
  if (op == "g_begin") {  // g_begin S MODE
    DT_CALL(e, r, cuStreamBeginCapture, strm(1), static_cast<CUstreamCaptureMode>(e.num(2)));
  } else if (op == "g_end") {  // g_end S G|null
    CUgraph g = Exec::sent<CUgraph>();
    DT_CALL(e, r, cuStreamEndCapture, strm(1), isnull(2) ? nullptr : &g);
    if (!isnull(2)) e.out(r, e.rc, "out", U(g), 0, false, 2);
  } else if (op == "g_is") {  // g_is S: the capture status
    CUstreamCaptureStatus st = static_cast<CUstreamCaptureStatus>(77);
    DT_CALL(e, r, cuStreamIsCapturing, strm(1), &st);
    r.kv("st", static_cast<int>(st));
  } else if (op == "g_info") {  // g_info S: status, whether id and graph are set, and the dependencies' types
    CUstreamCaptureStatus st = static_cast<CUstreamCaptureStatus>(77);
    cuuint64_t id = 0;
    CUgraph g = nullptr;
    const CUgraphNode* d = nullptr;
    size_t n = 777;
    DT_CALL(e, r, cuStreamGetCaptureInfo, strm(1), &st, &id, &g, &d, nullptr, &n);
    r.kv("st", static_cast<int>(st));
    if (e.rc == 0) {
      r.ks("id", id ? "set" : "0");
      r.ks("graph", g ? "set" : "0");
      r.kv("n", static_cast<long long>(n));
      if (n != 777 && n) r.ks("deps", types(d, n));
    }
  } else if (op == "g_mode") {  // g_mode M: exchange the thread's mode, record the previous one
    CUstreamCaptureMode m = static_cast<CUstreamCaptureMode>(e.num(1));
    DT_CALL(e, r, cuThreadExchangeStreamCaptureMode, &m);
    r.kv("prev", static_cast<int>(m));
  } else if (op == "g_create") {  // g_create G FLAGS
    CUgraph g = Exec::sent<CUgraph>();
    DT_CALL(e, r, cuGraphCreate, isnull(1) ? nullptr : &g, static_cast<unsigned>(e.num(2)));
    e.out(r, e.rc, "out", U(g), 0, false, 1);
  } else if (op == "g_destroy") {
    DT_CALL(e, r, cuGraphDestroy, graph(1));
  } else if (op == "g_inst") {  // g_inst X G FLAGS
    CUgraphExec x = Exec::sent<CUgraphExec>();
    DT_CALL(e, r, cuGraphInstantiateWithFlags, isnull(1) ? nullptr : &x, graph(2), e.num(3));
    e.out(r, e.rc, "out", U(x), 0, false, 1);
  } else if (op == "g_launch") {  // g_launch X S
    DT_CALL(e, r, cuGraphLaunch, exec(1), strm(2));
  } else if (op == "g_upload") {
    DT_CALL(e, r, cuGraphUpload, exec(1), strm(2));
  } else if (op == "g_exec_destroy") {
    DT_CALL(e, r, cuGraphExecDestroy, exec(1));
  } else if (op == "g_hostfn") {  // g_hostfn S: a host function that counts its runs
    DT_CALL(e, r, cuLaunchHostFunc, strm(1), go::bump, nullptr);
  } else if (op == "g_count") {  // g_count: the host functions' runs so far
    r.kv("count", go::g_count.load());
    e.rc = 0;
  } else if (op == "g_nodes" || op == "g_roots") {  // g_nodes G: how many, and their types
    auto f = op == "g_nodes" ? DT_FN(e, cuGraphGetNodes) : DT_FN(e, cuGraphGetRootNodes);
    if (!f) { r.ks("missing", op); return true; }
    size_t n = 0;
    e.RC(r, f(graph(1), nullptr, &n));
    if (e.rc) return true;
    std::vector<CUgraphNode> v(n + 1);
    size_t m = n;
    f(graph(1), v.data(), &m);
    r.kv("n", static_cast<long long>(n));
    r.ks("t", types(v.data(), m));
  } else if (op == "g_edges") {  // g_edges G: the edge count
    size_t n = 0;
    DT_CALL(e, r, cuGraphGetEdges, graph(1), nullptr, nullptr, nullptr, &n);
    r.kv("n", static_cast<long long>(n));
  } else if (op == "g_deps") {  // g_deps N: a node's dependency count and dependents count
    size_t a = 0, b = 0;
    DT_CALL(e, r, cuGraphNodeGetDependencies, e.h<CUgraphNode>(1), nullptr, nullptr, &a);
    if (auto f = DT_FN(e, cuGraphNodeGetDependentNodes)) f(e.h<CUgraphNode>(1), nullptr, nullptr, &b);
    r.kv("deps", static_cast<long long>(a));
    r.kv("dependents", static_cast<long long>(b));
  } else if (op == "g_type") {  // g_type N
    CUgraphNodeType t = static_cast<CUgraphNodeType>(77);
    DT_CALL(e, r, cuGraphNodeGetType, e.h<CUgraphNode>(1), &t);
    r.kv("t", static_cast<int>(t));
  } else if (op == "g_add_empty") {  // g_add_empty N G DEPS...
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(3);
    DT_CALL(e, r, cuGraphAddEmptyNode, isnull(1) ? nullptr : &n, graph(2), d.empty() ? nullptr : d.data(), d.size());
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_host") {  // g_add_host N G DEPS...: the counting host function
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(3);
    CUDA_HOST_NODE_PARAMS p{go::bump, nullptr};
    DT_CALL(e, r, cuGraphAddHostNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), &p);
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_memset") {  // g_add_memset N G D OFF VAL COUNT ELEM DEPS...
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(8);
    CUDA_MEMSET_NODE_PARAMS p{};
    p.dst = e.ptr(3);  // slot + OFF
    p.value = static_cast<unsigned>(e.num(5));
    p.width = e.num(6);
    p.elementSize = static_cast<unsigned>(e.num(7));
    p.height = 1;
    DT_CALL(e, r, cuGraphAddMemsetNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), &p, ctx());
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_copy") {  // g_add_copy N G DST SRC BYTES DEPS...: a 1D device copy
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(6);
    CUDA_MEMCPY3D p{};
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = e.val(4);
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = e.val(3);
    p.WidthInBytes = e.num(5);
    p.Height = 1;
    p.Depth = 1;
    DT_CALL(e, r, cuGraphAddMemcpyNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), &p, ctx());
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_child") {  // g_add_child N G CHILD DEPS...
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(4);
    DT_CALL(e, r, cuGraphAddChildGraphNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), graph(3));
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_record" || op == "g_add_wait") {  // g_add_record N G E DEPS...
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(4);
    if (op == "g_add_record")
      DT_CALL(e, r, cuGraphAddEventRecordNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), e.h<CUevent>(3));
    else
      DT_CALL(e, r, cuGraphAddEventWaitNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), e.h<CUevent>(3));
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_dep") {  // g_add_dep G FROM TO
    CUgraphNode a = e.h<CUgraphNode>(2), b = e.h<CUgraphNode>(3);
    DT_CALL(e, r, cuGraphAddDependencies, graph(1), &a, &b, nullptr, 1);
  } else if (op == "g_rm_dep") {  // g_rm_dep G FROM TO
    CUgraphNode a = e.h<CUgraphNode>(2), b = e.h<CUgraphNode>(3);
    DT_CALL(e, r, cuGraphRemoveDependencies, graph(1), &a, &b, nullptr, 1);
  } else if (op == "g_destroy_node") {
    DT_CALL(e, r, cuGraphDestroyNode, e.h<CUgraphNode>(1));
  } else if (op == "g_clone") {  // g_clone C G
    CUgraph c = Exec::sent<CUgraph>();
    DT_CALL(e, r, cuGraphClone, &c, graph(2));
    e.out(r, e.rc, "out", U(c), 0, false, 1);
  } else if (op == "g_update") {  // g_update X G: cuGraphExecUpdate's code and result
    CUgraphExecUpdateResultInfo info{};
    info.result = static_cast<CUgraphExecUpdateResult>(77);
    DT_CALL(e, r, cuGraphExecUpdate, exec(1), graph(2), &info);
    r.kv("result", static_cast<int>(info.result));
  } else if (op == "g_dot") {  // g_dot G FLAGS: whether a dot file is written, and its first line
    char path[] = "/tmp/difftest-dot-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    DT_CALL(e, r, cuGraphDebugDotPrint, graph(1), path, static_cast<unsigned>(e.num(2)));
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    r.ks("first", first.substr(0, first.find(' ')));
    unlink(path);
  } else if (op == "g_mem_attr") {  // g_mem_attr DEV ATTR: a graph-memory attribute (bytes)
    cuuint64_t v = 0x5a5a;
    DT_CALL(e, r, cuDeviceGetGraphMemAttribute, static_cast<CUdevice>(e.num(1)), static_cast<CUgraphMem_attribute>(e.num(2)), &v);
    if (e.rc == 0) r.ks("v", v == 0 ? "0" : v == 0x5a5a ? "S" : "set");
  } else if (op == "g_mem_reset") {  // g_mem_reset DEV ATTR VAL: cuDeviceSetGraphMemAttribute
    cuuint64_t v = e.num(3);
    DT_CALL(e, r, cuDeviceSetGraphMemAttribute, static_cast<CUdevice>(e.num(1)), static_cast<CUgraphMem_attribute>(e.num(2)), &v);
  } else if (op == "g_mem_trim") {
    DT_CALL(e, r, cuDeviceGraphMemTrim, static_cast<CUdevice>(e.num(1)));
  } else if (op == "g_add_alloc") {  // g_add_alloc N G PTRSLOT SIZE DEPS...: an allocation node on device 0
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(5);
    CUDA_MEM_ALLOC_NODE_PARAMS p{};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = 0;
    p.bytesize = e.num(4);
    DT_CALL(e, r, cuGraphAddMemAllocNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), &p);
    e.out(r, e.rc, "out", U(n), 0, false, 1);
    if (e.rc == 0) { e.def(e.a(3), p.dptr, p.bytesize, true); r.ks("dptr", p.dptr ? "set" : "0"); }
  } else if (op == "g_add_free") {  // g_add_free N G PTRSLOT DEPS...
    CUgraphNode n = Exec::sent<CUgraphNode>();
    auto d = deps(4);
    DT_CALL(e, r, cuGraphAddMemFreeNode, &n, graph(2), d.empty() ? nullptr : d.data(), d.size(), static_cast<CUdeviceptr>(e.val(3)));
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_add_node") {  // g_add_node N G TYPE [D VAL COUNT] DEPS...: cuGraphAddNode (empty, host, memset, or a bare type)
    CUgraphNode n = Exec::sent<CUgraphNode>();
    CUgraphNodeParams p{};
    p.type = static_cast<CUgraphNodeType>(e.num(3));
    size_t first = 4;
    if (p.type == CU_GRAPH_NODE_TYPE_HOST) p.host.fn = go::bump;
    if (p.type == CU_GRAPH_NODE_TYPE_MEMSET) {
      p.memset.dst = e.val(4);
      p.memset.value = static_cast<unsigned>(e.num(5));
      p.memset.width = e.num(6);
      p.memset.height = 1;
      p.memset.elementSize = 1;
      p.memset.ctx = ctx();
      first = 7;
    }
    auto d = deps(first);
    DT_CALL(e, r, cuGraphAddNode, &n, graph(2), d.empty() ? nullptr : d.data(), nullptr, d.size(), &p);
    e.out(r, e.rc, "out", U(n), 0, false, 1);
  } else if (op == "g_enable") {  // g_enable X N ON
    DT_CALL(e, r, cuGraphNodeSetEnabled, exec(1), e.h<CUgraphNode>(2), static_cast<unsigned>(e.num(3)));
  } else if (op == "g_enabled") {  // g_enabled X N
    unsigned on = 77;
    DT_CALL(e, r, cuGraphNodeGetEnabled, exec(1), e.h<CUgraphNode>(2), &on);
    r.kv("on", on);
  } else if (op == "g_exec_host") {  // g_exec_host X N: the exec's host node gets the counting function again
    CUDA_HOST_NODE_PARAMS p{go::bump, nullptr};
    DT_CALL(e, r, cuGraphExecHostNodeSetParams, exec(1), e.h<CUgraphNode>(2), &p);
  } else if (op == "g_memset_info") {  // g_memset_info N: the memset node's value and width
    CUDA_MEMSET_NODE_PARAMS p{};
    DT_CALL(e, r, cuGraphMemsetNodeGetParams, e.h<CUgraphNode>(1), &p);
    if (e.rc == 0) { r.kv("value", p.value); r.kv("width", static_cast<long long>(p.width)); r.kv("elem", p.elementSize); }
  } else {
    r.ks("error", "unknown op");
  }
  return true;
}

}  // namespace difftest
