// The hand-written stateful calls: object lifecycles whose book-keeping needs more than a
// table row (fd ownership, semaphore waits that must end, mappings of reservations), and the
// NVML calls. fuzz_api.cpp checks the books after each.
#include <sys/mman.h>

#include "fuzz.hpp"
#include "nvml/nvml_api.h"

namespace fz {

void check_nvml(const char* api, nvmlReturn_t r);  // fuzz_codes.cpp

namespace {
void CUDA_CB graph_host_noop(void*) {}

// A graph with structure: up to six nodes of the kinds that need no kernel (empty, host, memset,
// event record and wait, a child graph), each after some of the ones before it (or after a node
// of another graph, a dead one, garbage), instantiated and launched once or twice.
void graph_step(Picker& pk) {
  FuzzedDataProvider& in = pk.in;
  CUgraph g = nullptr;
  CUresult r = cuGraphCreate(&g, 0);
  check_cu("graph", r);
  if (r != CUDA_SUCCESS) return;
  S.graphs.push_back(g);
  std::vector<CUgraphNode> mine;
  for (int i = 0, n = in.ConsumeIntegralInRange(0, 6); i < n; ++i) {
    std::vector<CUgraphNode> deps;
    for (CUgraphNode d : mine)
      if (in.ConsumeBool()) deps.push_back(d);
    if (!in.ConsumeIntegralInRange(0, 7)) deps.push_back(pk.pick(S.graph_nodes));
    CUgraphNodeParams p{};
    switch (in.ConsumeIntegralInRange(0, 5)) {
      case 0: p.type = CU_GRAPH_NODE_TYPE_EMPTY; break;
      case 1: p.type = CU_GRAPH_NODE_TYPE_HOST; p.host.fn = graph_host_noop; break;
      case 2: {
        size_t room = 0;
        p.type = CU_GRAPH_NODE_TYPE_MEMSET;
        p.memset.dst = pk.dptr(&room);
        p.memset.elementSize = 1u << in.ConsumeIntegralInRange(0, 2);
        p.memset.width = in.ConsumeIntegralInRange<size_t>(0, room / p.memset.elementSize);
        p.memset.height = 1;
        p.memset.value = in.ConsumeIntegral<unsigned>();
        break;
      }
      case 3: p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD; p.eventRecord.event = pk.pick(S.events); break;
      case 4: p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT; p.eventWait.event = pk.pick(S.events); break;
      default: p.type = CU_GRAPH_NODE_TYPE_GRAPH; p.graph.graph = pk.pick(S.graphs); break;
    }
    CUgraphNode node = nullptr;
    r = cuGraphAddNode(&node, g, deps.data(), nullptr, deps.size(), &p);
    check_cu("graph", r);
    if (r == CUDA_SUCCESS) {
      mine.push_back(node);
      S.graph_nodes.push_back(node);
    }
  }
  CUgraphExec x = nullptr;
  r = cuGraphInstantiate(&x, g, 0);
  check_cu("graph", r);
  if (r != CUDA_SUCCESS) return;
  S.graph_execs.push_back(x);
  for (int i = 0, n = in.ConsumeIntegralInRange(1, 2); i < n; ++i) check_cu("graph", cuGraphLaunch(x, pk.stream()));
  if (in.ConsumeBool()) {
    check_cu("graph", cuGraphExecDestroy(x));
    destroyed(S.graph_execs, x);
  }
}
}  // namespace

// One call; returns its name for the books' report.
const char* step_stateful(Picker& pk) {
  FuzzedDataProvider& in = pk.in;
  const char* api = "?";
  switch (in.ConsumeIntegralInRange(0, 48)) {
    case 48: {
      api = "graph";
      graph_step(pk);
      break;
    }
    case 0: {
      api = "cuMemAlloc";
      CUdeviceptr p = 0;
      size_t n = pk.size();
      CUresult r = cuMemAlloc(&p, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::device});
      break;
    }
    case 1: {
      api = "cuMemFree";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFree(p);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 2: {
      api = "cuMemAllocHost";
      void* p = nullptr;
      size_t n = pk.size() % (1 << 22);
      CUresult r = cuMemAllocHost(&p, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::host});
      break;
    }
    case 3: {
      api = "cuMemFreeHost";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFreeHost(reinterpret_cast<void*>(p));
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 4: {
      api = "cuMemAllocManaged";
      CUdeviceptr p = 0;
      size_t n = pk.size() % (1 << 22);
      unsigned flags = in.ConsumeBool() ? CU_MEM_ATTACH_GLOBAL : in.ConsumeIntegral<unsigned>() % 8;
      CUresult r = cuMemAllocManaged(&p, n, flags);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::managed});
      break;
    }
    case 5: {
      api = "cuStreamAttachMemAsync";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      size_t len = in.ConsumeBool() ? 0 : pk.size();
      unsigned flags = in.ConsumeBool() ? (1u << in.ConsumeIntegralInRange(0, 2)) : in.ConsumeIntegral<unsigned>();
      check_cu(api, cuStreamAttachMemAsync(pk.stream(), p, len, flags));
      break;
    }
    case 6: {
      api = "cuStreamCreate";
      CUstream s = nullptr;
      unsigned flags = in.ConsumeBool() ? CU_STREAM_NON_BLOCKING : in.ConsumeIntegral<unsigned>() % 4;
      CUresult r = in.ConsumeBool() ? cuStreamCreate(&s, flags)
                                    : cuStreamCreateWithPriority(&s, flags, in.ConsumeIntegralInRange(-8, 8));
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.streams.push_back(s);
      break;
    }
    case 7: {
      api = "cuStreamDestroy";
      CUstream s = pk.pick(S.streams);
      CUresult r = cuStreamDestroy(s);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.streams, s);
      break;
    }
    case 8: {
      api = "cuStreamSynchronize/Query";
      // Never on a stream that may wait on a semaphore nobody signals: query instead.
      CUstream s = pk.stream();
      CUresult r = S.sems.empty() && in.ConsumeBool() ? cuStreamSynchronize(s) : cuStreamQuery(s);
      check_cu(api, r);
      break;
    }
    case 9: {
      api = "cuEventCreate";
      CUevent e = nullptr;
      unsigned flags = in.ConsumeBool() ? CU_EVENT_DISABLE_TIMING : in.ConsumeIntegral<unsigned>() % 16;
      CUresult r = cuEventCreate(&e, flags);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.events.push_back(e);
      break;
    }
    case 10: {
      api = "cuEventDestroy";
      CUevent e = pk.pick(S.events);
      CUresult r = cuEventDestroy(e);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.events, e);
      break;
    }
    case 11: {
      api = "cuEventRecord";
      check_cu(api, cuEventRecord(pk.pick(S.events), pk.stream()));
      break;
    }
    case 12: {
      api = "cuEventQuery/ElapsedTime";
      float ms = 0;
      CUresult r = in.ConsumeBool() ? cuEventQuery(pk.pick(S.events))
                                    : cuEventElapsedTime(&ms, pk.pick(S.events), pk.pick(S.events));
      check_cu(api, r);
      break;
    }
    case 13: {
      api = "cuStreamWaitEvent";
      check_cu(api, cuStreamWaitEvent(pk.stream(), pk.pick(S.events), in.ConsumeBool() ? 0 : in.ConsumeIntegral<unsigned>()));
      break;
    }
    case 14: {
      api = "cuMemPoolCreate";
      CUmemPoolProps p{};
      p.allocType = in.ConsumeIntegralInRange(0, 7) ? CU_MEM_ALLOCATION_TYPE_PINNED
                                                    : static_cast<CUmemAllocationType>(in.ConsumeIntegral<int>());
      p.handleTypes = pk.handle_types();
      p.location = pk.location();
      p.maxSize = in.ConsumeBool() ? 0 : pk.size();
      if (!in.ConsumeIntegralInRange(0, 7)) p.reserved[in.ConsumeIntegralInRange(0, 53)] = 1;
      CUmemoryPool pool = nullptr;
      CUresult r = cuMemPoolCreate(&pool, &p);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.pools.push_back(pool);
      break;
    }
    case 15: {
      api = "cuMemPoolDestroy";
      CUmemoryPool pool = pk.pick(S.pools);
      CUresult r = cuMemPoolDestroy(pool);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.pools, pool);
      break;
    }
    case 16: {
      api = "cuMemPoolGet/SetAttribute";
      CUmemoryPool pool = pk.pick(S.pools);
      auto attr = static_cast<CUmemPool_attribute>(in.ConsumeIntegralInRange(0, 10));
      cuuint64_t v = in.ConsumeBool() ? 0 : in.ConsumeIntegral<cuuint64_t>();
      int iv = in.ConsumeIntegralInRange(0, 1);
      bool int_attr = attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES && attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
      void* val = int_attr ? static_cast<void*>(&iv) : static_cast<void*>(&v);
      if (!in.ConsumeIntegralInRange(0, 15)) val = nullptr;
      check_cu(api, in.ConsumeBool() ? cuMemPoolGetAttribute(pool, attr, val) : cuMemPoolSetAttribute(pool, attr, val));
      break;
    }
    case 17: {
      api = "cuMemPoolTrimTo";
      check_cu(api, cuMemPoolTrimTo(pk.pick(S.pools), in.ConsumeBool() ? 0 : pk.size()));
      break;
    }
    case 18: {
      api = "cuMemAllocAsync/FromPoolAsync";
      CUdeviceptr p = 0;
      size_t n = pk.size();
      CUresult r = in.ConsumeBool() ? cuMemAllocAsync(&p, n, pk.stream())
                                    : cuMemAllocFromPoolAsync(&p, n, pk.pick(S.pools), pk.stream());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::pool});
      break;
    }
    case 19: {
      api = "cuMemFreeAsync";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFreeAsync(p, pk.stream());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 20: {
      api = "cuMemcpyHtoD";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemcpyHtoD(p, g_hostmem, pk.copy_bytes(room)));
      break;
    }
    case 21: {
      api = "cuMemcpyDtoH";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemcpyDtoH(g_hostmem, p, pk.copy_bytes(room)));
      break;
    }
    case 22: {
      api = "cuMemcpyDtoDAsync";
      size_t r1 = 0, r2 = 0;
      CUdeviceptr a = pk.dptr(&r1), b = pk.dptr(&r2);
      check_cu(api, cuMemcpyDtoDAsync(a, b, pk.copy_bytes(std::min(r1, r2)), pk.stream()));
      break;
    }
    case 23: {
      api = "cuMemsetD8Async";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemsetD8Async(p, in.ConsumeIntegral<unsigned char>(), pk.copy_bytes(room), pk.stream()));
      break;
    }
    case 24: {
      api = "cuMemCreate";
      CUmemAllocationProp p{};
      p.type = in.ConsumeIntegralInRange(0, 7) ? CU_MEM_ALLOCATION_TYPE_PINNED
                                               : static_cast<CUmemAllocationType>(in.ConsumeIntegral<int>());
      p.requestedHandleTypes = pk.handle_types();
      p.location = pk.location();
      size_t n = pk.size();
      CUmemGenericAllocationHandle h = 0;
      CUresult r = cuMemCreate(&h, n, &p, in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned long long>());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) add_vmm(h, n);
      break;
    }
    case 25: {
      api = "cuMemRelease";
      CUmemGenericAllocationHandle h =
          !S.vmms.empty() && in.ConsumeIntegralInRange(0, 3) ? S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()].h
                                                             : reinterpret_cast<CUmemGenericAllocationHandle>(pk.dead());
      CUresult r = cuMemRelease(h);
      check_cu(api, r);
      if (r == CUDA_SUCCESS && release_vmm(h)) remember_dead(reinterpret_cast<void*>(h));
      break;
    }
    case 26: {
      api = "cuMemAddressReserve";
      CUdeviceptr base = 0;
      size_t n = pk.size();
      CUresult r = cuMemAddressReserve(&base, n, in.ConsumeBool() ? 0 : pk.size(), 0, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.res.push_back({base, n, {}, {}});
      break;
    }
    case 27: {
      api = "cuMemAddressFree";
      CUdeviceptr base = !S.res.empty() && in.ConsumeBool() ? S.res[in.ConsumeIntegral<size_t>() % S.res.size()].base : pk.dptr();
      size_t n = 0;
      for (auto& r : S.res)
        if (r.base == base) n = r.size;
      if (!n || !in.ConsumeIntegralInRange(0, 7)) n = pk.size();
      CUresult r = cuMemAddressFree(base, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS)
        S.res.erase(std::remove_if(S.res.begin(), S.res.end(), [&](const Reservation& x) { return x.base == base; }), S.res.end());
      break;
    }
    case 28: {
      api = "cuMemMap";
      if (S.res.empty() || S.vmms.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      const Vmm& v = S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()];
      size_t off = (size_t(2) << 20) * in.ConsumeIntegralInRange(0, 3);
      size_t n = in.ConsumeIntegralInRange(0, 3) ? v.size : pk.size();
      CUresult r = cuMemMap(rv.base + off, n, in.ConsumeIntegralInRange(0, 7) ? 0 : pk.size(), v.h, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        rv.mapped.push_back(rv.base + off);
        rv.mapped_size.push_back(n);
      }
      break;
    }
    case 29: {
      api = "cuMemUnmap";
      if (S.res.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      if (rv.mapped.empty()) break;
      size_t i = in.ConsumeIntegral<size_t>() % rv.mapped.size();
      size_t n = in.ConsumeIntegralInRange(0, 7) ? rv.mapped_size[i] : pk.size();
      CUresult r = cuMemUnmap(rv.mapped[i], n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        rv.mapped.erase(rv.mapped.begin() + static_cast<long>(i));
        rv.mapped_size.erase(rv.mapped_size.begin() + static_cast<long>(i));
      }
      break;
    }
    case 30: {
      api = "cuMemSetAccess";
      if (S.res.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      CUmemAccessDesc d{};
      d.location = pk.location();
      d.flags = static_cast<CUmemAccess_flags>(in.ConsumeIntegralInRange(0, 4));
      check_cu(api, cuMemSetAccess(rv.base, in.ConsumeBool() ? rv.size : pk.size(), &d, in.ConsumeIntegralInRange(0, 7) ? 1 : 0));
      break;
    }
    case 31: {
      api = "cuMemExportToShareableHandle";
      CUmemGenericAllocationHandle h =
          !S.vmms.empty() && in.ConsumeIntegralInRange(0, 3) ? S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()].h
                                                             : reinterpret_cast<CUmemGenericAllocationHandle>(pk.garbage());
      unsigned char out[64] = {};
      int fd = -1;
      auto type = pk.handle_types();
      void* dst = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ? static_cast<void*>(&fd) : static_cast<void*>(out);
      CUresult r = cuMemExportToShareableHandle(dst, h, type, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) keep_fd(fd);
        else pk.keep_blob(out);
      }
      break;
    }
    case 32: {
      api = "cuMemImportFromShareableHandle";
      CUmemGenericAllocationHandle h = 0;
      auto type = pk.handle_types();
      int fd = pk.fd();
      std::vector<unsigned char> b = pk.blob();
      bool was_open = fd_open(fd);
      void* src = type == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(b.data())
                                                    : reinterpret_cast<void*>(static_cast<intptr_t>(fd));
      CUresult r = cuMemImportFromShareableHandle(&h, src, type);
      check_cu(api, r);
      if (was_open && !fd_open(fd)) die(api, "closed the caller's fd (importing never takes it)");
      if (r == CUDA_SUCCESS) {
        add_vmm(h, size_t(2) << 20);
        CUmemAllocationProp prop{};
        check_cu("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle(&prop, h));
      }
      break;
    }
    case 33: {
      api = "cuMemPoolExportToShareableHandle";
      CUmemoryPool pool = pk.pick(S.pools);
      auto type = pk.handle_types();
      int fd = -1;
      unsigned char out[64] = {};
      void* dst = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ? static_cast<void*>(&fd) : static_cast<void*>(out);
      CUresult r = cuMemPoolExportToShareableHandle(dst, pool, type, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) keep_fd(fd);
        else pk.keep_blob(out);
      }
      break;
    }
    case 34: {
      api = "cuMemPoolImportFromShareableHandle";
      CUmemoryPool pool = nullptr;
      auto type = pk.handle_types();
      int fd = pk.fd();
      std::vector<unsigned char> b = pk.blob();
      bool was_open = fd_open(fd);
      void* src = type == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(b.data())
                                                    : reinterpret_cast<void*>(static_cast<intptr_t>(fd));
      CUresult r = cuMemPoolImportFromShareableHandle(&pool, src, type, 0);
      check_cu(api, r);
      if (was_open && !fd_open(fd)) die(api, "closed the caller's fd");
      if (r == CUDA_SUCCESS && std::find(S.pools.begin(), S.pools.end(), pool) == S.pools.end()) S.pools.push_back(pool);
      break;
    }
    case 35: {
      api = "cuMemPoolExportPointer";
      CUmemPoolPtrExportData d{};
      CUresult r = cuMemPoolExportPointer(&d, pk.dptr());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) pk.keep_blob(&d);
      break;
    }
    case 36: {
      api = "cuMemPoolImportPointer";
      CUmemPoolPtrExportData d{};
      std::vector<unsigned char> b = pk.blob();
      std::memcpy(&d, b.data(), 64);
      CUdeviceptr p = 0;
      CUresult r = cuMemPoolImportPointer(&p, pk.pick(S.pools), &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, 1, Alloc::pool_imported});
      break;
    }
    case 37: {
      api = "cuIpcGetMemHandle";
      CUipcMemHandle h{};
      CUresult r = cuIpcGetMemHandle(&h, pk.dptr());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) pk.keep_blob(&h);
      break;
    }
    case 38: {
      api = "cuIpcOpenMemHandle";
      CUipcMemHandle h{};
      std::vector<unsigned char> b = pk.blob();
      std::memcpy(&h, b.data(), 64);
      CUdeviceptr p = 0;
      CUresult r = cuIpcOpenMemHandle(&p, h, in.ConsumeBool() ? CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS : in.ConsumeIntegral<unsigned>());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, 1, Alloc::ipc_opened});
      break;
    }
    case 39: {
      api = "cuIpcGetEventHandle/OpenEventHandle";
      CUipcEventHandle h{};
      if (in.ConsumeBool()) {
        CUresult r = cuIpcGetEventHandle(&h, pk.pick(S.events));
        check_cu(api, r);
        if (r == CUDA_SUCCESS) pk.keep_blob(&h);
      } else {
        std::vector<unsigned char> b = pk.blob();
        std::memcpy(&h, b.data(), 64);
        CUevent e = nullptr;
        CUresult r = cuIpcOpenEventHandle(&e, h);
        check_cu(api, r);
        if (r == CUDA_SUCCESS) S.events.push_back(e);
      }
      break;
    }
    case 40: {
      api = "cuImportExternalMemory";
      CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
      int k = in.ConsumeIntegralInRange(0, 7);
      d.type = k < 6 ? CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD : static_cast<CUexternalMemoryHandleType>(in.ConsumeIntegralInRange(0, 10));
      int src = pk.fd();
      int fd = src >= 0 && fd_open(src) ? ::dup(src) : src;  // ownership may pass: hand over a copy
      d.handle.fd = fd;
      d.size = in.ConsumeBool() ? (size_t(2) << 20) : pk.size();
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUexternalMemory m = nullptr;
      CUresult r = cuImportExternalMemory(&m, &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (d.type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD && fd != src && fd_open(fd))
          die(api, "succeeded but left the fd it now owns open in the caller's table");
        S.extmems.push_back(m);
      } else if (fd != src && fd_open(fd)) {
        ::close(fd);  // refused before ownership passed: still ours
      }
      break;
    }
    case 41: {
      api = "cuExternalMemoryGetMappedBuffer";
      CUDA_EXTERNAL_MEMORY_BUFFER_DESC d{};
      d.offset = in.ConsumeBool() ? 0 : pk.size();
      d.size = in.ConsumeBool() ? 4096 : pk.size();
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUdeviceptr p = 0;
      CUresult r = cuExternalMemoryGetMappedBuffer(&p, pk.pick(S.extmems), &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, static_cast<size_t>(d.size), Alloc::ext_buffer});
      break;
    }
    case 42: {
      api = "cuDestroyExternalMemory";
      CUexternalMemory m = pk.pick(S.extmems);
      CUresult r = cuDestroyExternalMemory(m);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.extmems, m);
      break;
    }
    case 43: {
      api = "cuImportExternalSemaphore";
      int obj = -1;
      bool timeline = in.ConsumeBool(), fresh = false;
      if (in.ConsumeIntegralInRange(0, 3)) {
        fresh = true;
        if (cuShimExportableSemaphoreCreate(&obj, timeline ? 1 : 0, 0) != CUDA_SUCCESS) die(api, "no semaphore object");
        keep_fd(obj);
        S.sem_object_fds.push_back(obj);
      } else {
        obj = pk.fd();
      }
      CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
      d.type = in.ConsumeIntegralInRange(0, 5) ? (timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
                                                           : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD)
                                               : static_cast<CUexternalSemaphoreHandleType>(in.ConsumeIntegralInRange(0, 12));
      int fd = obj >= 0 && fd_open(obj) ? ::dup(obj) : obj;
      d.handle.fd = fd;
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUexternalSemaphore s = nullptr;
      CUresult r = cuImportExternalSemaphore(&s, &d);
      check_cu(api, r);
      const bool clean = fresh && d.type == (timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
                                                      : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD);
      if (!clean) S.tainted_sem_objects.insert(obj);
      if (r == CUDA_SUCCESS) {
        S.sems.push_back({s, obj, clean, timeline});
      } else if (fd != obj && fd_open(fd)) {
        ::close(fd);  // a refused semaphore import leaves the fd to its caller
      }
      break;
    }
    case 44: {
      api = "cuSignal/WaitExternalSemaphoresAsync";
      Sem* live = S.sems.empty() || !in.ConsumeIntegralInRange(0, 5)
                      ? nullptr
                      : &S.sems[in.ConsumeIntegral<size_t>() % S.sems.size()];
      CUexternalSemaphore s = live ? live->h : static_cast<CUexternalSemaphore>(pk.dead());
      // Arrays of two (the count may be 0, 1 or 2): the second is the same semaphore.
      unsigned n = in.ConsumeIntegralInRange(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 2);
      CUexternalSemaphore ss[2] = {s, s};
      if (in.ConsumeBool()) {
        CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p[2] = {};
        p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, 64);
        p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
        CUresult r = cuSignalExternalSemaphoresAsync(ss, p, n, pk.stream());
        check_cu(api, r);
        if (r == CUDA_SUCCESS && n && live) {
          live->floor = live->pending && live->timeline ? std::min(live->floor, p[0].params.fence.value)
                                                        : p[0].params.fence.value;
          live->pending = true;
        }
      } else {
        CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p[2] = {};
        // Only waits that will end (see Sem); others go to a handle that is not live.
        const bool may_wait = live && live->clean && !S.tainted_sem_objects.count(live->object_fd) &&
                              (live->timeline ? true : live->pending && n <= 1);
        if (!may_wait) {
          CUexternalSemaphore other = static_cast<CUexternalSemaphore>(pk.dead());
          for (const Sem& x : S.sems)
            if (x.h == other) other = nullptr;
          ss[0] = ss[1] = other;
        } else if (!live->timeline && n == 1) {
          live->pending = false;
        }
        const unsigned long long most = may_wait && live->timeline ? (live->pending ? live->floor : 0) : 64;
        p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, most);
        p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
        check_cu(api, cuWaitExternalSemaphoresAsync(ss, p, n, pk.stream()));
      }
      break;
    }
    case 45: {
      api = "cuDestroyExternalSemaphore";
      CUexternalSemaphore s = S.sems.empty() || !in.ConsumeIntegralInRange(0, 3)
                                  ? static_cast<CUexternalSemaphore>(pk.dead())
                                  : S.sems[in.ConsumeIntegral<size_t>() % S.sems.size()].h;
      CUresult r = cuDestroyExternalSemaphore(s);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        S.sems.erase(std::remove_if(S.sems.begin(), S.sems.end(), [&](const Sem& x) { return x.h == s; }), S.sems.end());
        remember_dead(s);
      }
      break;
    }
    case 46: {
      api = "cuPointerGetAttribute/cuMemGetAddressRange";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      if (in.ConsumeBool()) {
        unsigned long long v[4] = {};
        check_cu(api, cuPointerGetAttribute(v, static_cast<CUpointer_attribute>(in.ConsumeIntegralInRange(0, 24)), p));
      } else {
        CUdeviceptr base = 0;
        size_t n = 0;
        check_cu(api, cuMemGetAddressRange(&base, &n, p));
      }
      break;
    }
    default: {  // the runtime's forms of the same objects
      switch (in.ConsumeIntegralInRange(0, 8)) {
        case 0: {
          void* p = nullptr;
          size_t n = pk.size();
          cudaError_t r = cudaMalloc(&p, n);
          check_rt("cudaMalloc", r);
          if (r == cudaSuccess) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::device});
          break;
        }
        case 1: {
          CUdeviceptr p = pk.dptr();
          cudaError_t r = cudaFree(reinterpret_cast<void*>(p));
          check_rt("cudaFree", r);
          if (r == cudaSuccess && p) forget_alloc(p);
          break;
        }
        case 7: {  // NVML on fuzzed handles, lengths and versions: its codes, and no byte written past a buffer
          nvmlDevice_t d = nullptr;
          nvmlReturn_t r = nvmlDeviceGetHandleByIndex_v2(in.ConsumeIntegralInRange(0u, 3u), &d);  // 2 devices
          check_nvml("nvmlDeviceGetHandleByIndex_v2", r);
          switch (in.ConsumeIntegralInRange(0, 3)) {  // a foreign handle instead (NVIDIA's NVML crashes on them)
            case 0: d = nullptr; break;
            case 1: d = reinterpret_cast<nvmlDevice_t>(reinterpret_cast<uintptr_t>(d) + 1); break;  // misaligned
            case 2: d = reinterpret_cast<nvmlDevice_t>(uintptr_t{0x1234}); break;
            default: break;
          }
          unsigned char buf[128];
          std::memset(buf, 0xA5, sizeof buf);
          unsigned len = in.ConsumeIntegralInRange(0u, 96u);
          auto guard_ok = [&](size_t from) {
            for (size_t i = from; i < sizeof buf; ++i)
              if (buf[i] != 0xA5) return false;
            return true;
          };
          switch (in.ConsumeIntegralInRange(0, 5)) {
            case 0: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetName(d, reinterpret_cast<char*>(buf), len)); break;
            case 1: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetUUID(d, reinterpret_cast<char*>(buf), len)); break;
            case 2: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetSerial(d, reinterpret_cast<char*>(buf), len)); break;
            case 3: {
              nvmlMemory_v2_t m{};
              m.version = in.ConsumeBool() ? nvmlMemory_v2 : in.ConsumeIntegral<unsigned>();
              check_nvml("nvmlDeviceGetMemoryInfo", in.ConsumeBool() ? nvmlDeviceGetMemoryInfo_v2(d, in.ConsumeBool() ? &m : nullptr)
                                                                     : nvmlDeviceGetMemoryInfo(d, nullptr));
              len = 0;
              break;
            }
            case 4: {
              nvmlPciInfoExt_t e{};
              e.version = in.ConsumeBool() ? nvmlPciInfoExt_v1 : in.ConsumeIntegral<unsigned>();
              check_nvml("nvmlDeviceGetPciInfoExt", nvmlDeviceGetPciInfoExt(d, in.ConsumeBool() ? &e : nullptr));
              len = 0;
              break;
            }
            default: {
              unsigned count = len / sizeof(nvmlProcessInfo_t);  // entries that fit in len bytes
              unsigned given = count;
              auto* infos = in.ConsumeBool() ? reinterpret_cast<nvmlProcessInfo_t*>(buf) : nullptr;
              check_nvml("nvmlDeviceGetComputeRunningProcesses_v3",
                         nvmlDeviceGetComputeRunningProcesses_v3(d, in.ConsumeBool() ? &count : nullptr, infos));
              len = infos ? given * sizeof(nvmlProcessInfo_t) : 0;
              break;
            }
          }
          if (!guard_ok(len)) die("nvml", "wrote past the buffer it was given");
          break;
        }
        case 2: {
          cudaStream_t s = nullptr;
          cudaError_t r = cudaStreamCreateWithFlags(&s, in.ConsumeIntegral<unsigned>() % 3);
          check_rt("cudaStreamCreateWithFlags", r);
          if (r == cudaSuccess) S.streams.push_back(reinterpret_cast<CUstream>(s));
          break;
        }
        case 3: {
          CUstream s = pk.pick(S.streams);
          cudaError_t r = cudaStreamDestroy(reinterpret_cast<cudaStream_t>(s));
          check_rt("cudaStreamDestroy", r);
          if (r == cudaSuccess) destroyed(S.streams, s);
          break;
        }
        case 4: {
          cudaEvent_t e = nullptr;
          cudaError_t r = cudaEventCreateWithFlags(&e, in.ConsumeIntegral<unsigned>() % 8);
          check_rt("cudaEventCreateWithFlags", r);
          if (r == cudaSuccess) S.events.push_back(reinterpret_cast<CUevent>(e));
          break;
        }
        case 5: {
          CUevent e = pk.pick(S.events);
          cudaError_t r = cudaEventDestroy(reinterpret_cast<cudaEvent_t>(e));
          check_rt("cudaEventDestroy", r);
          if (r == cudaSuccess) destroyed(S.events, e);
          break;
        }
        case 6: {
          void* p = nullptr;
          size_t n = pk.size();
          cudaError_t r = cudaMallocAsync(&p, n, reinterpret_cast<cudaStream_t>(pk.stream()));
          check_rt("cudaMallocAsync", r);
          if (r == cudaSuccess) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::pool});
          break;
        }
        default: {
          CUdeviceptr p = pk.dptr();
          cudaError_t r = cudaFreeAsync(reinterpret_cast<void*>(p), reinterpret_cast<cudaStream_t>(pk.stream()));
          check_rt("cudaFreeAsync", r);
          if (r == cudaSuccess && p) forget_alloc(p);
          break;
        }
      }
      api = "runtime";
    }
  }
  return api;
}

}  // namespace fz
