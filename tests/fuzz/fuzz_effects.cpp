// What a successful table call made or ended, in the program's books (fuzz.hpp), by entry
// (suffixes off: every variant of an entry has the same parameters). An entry that makes or
// ends an object and has no effect here shows up at once: the books' check after the call
// finds the emulator holding more (or fewer) objects than the program.
#include <map>

#include "fuzz_gen.hpp"

namespace fz {
namespace {

using Effect = void (*)(Call&);

template <class H>
void add_unique(std::vector<H>& v, H h) {
  if (h && !holds(v, h)) v.push_back(h);
}
void alloc(Call& c, Alloc::Kind k, size_t size) {
  CUdeviceptr p = c.out<CUdeviceptr>(0);
  if (p) S.allocs.push_back({p, size ? size : 1, k});
}
void device_alloc(Call& c) { alloc(c, Alloc::device, c.arg<size_t>(1)); }
void host_alloc(Call& c) { alloc(c, Alloc::host, c.arg<size_t>(1)); }
void managed_alloc(Call& c) { alloc(c, Alloc::managed, c.arg<size_t>(1)); }
void pool_alloc(Call& c) { alloc(c, Alloc::pool, c.arg<size_t>(1)); }
void pool_import(Call& c) { alloc(c, Alloc::pool_imported, 1); }
void ipc_open(Call& c) { alloc(c, Alloc::ipc_opened, 1); }
void pitch_alloc(Call& c) { alloc(c, Alloc::device, c.out<size_t>(1) * c.arg<size_t>(3)); }
void registered(Call& c) {
  S.allocs.push_back({c.arg<CUdeviceptr>(0), c.arg<size_t>(1), Alloc::registered});
}
void free_arg0(Call& c) { forget_alloc(c.arg<CUdeviceptr>(0)); }
void blob_out0(Call& c) {
  if (c.raw[0]) c.pk.keep_blob(reinterpret_cast<const void*>(c.raw[0]));
}
void global(Call& c) {
  if (c.raw[0] && c.raw[1]) S.allocs.push_back({c.out<CUdeviceptr>(0), c.out<size_t>(1), Alloc::global});
}
void ext_buffer(Call& c) {
  auto* d = reinterpret_cast<const CUDA_EXTERNAL_MEMORY_BUFFER_DESC*>(c.raw[2]);  // the runtime's has the same head
  S.allocs.push_back({c.out<CUdeviceptr>(0), static_cast<size_t>(d->size), Alloc::ext_buffer});
}
void mipmap(Call& c) {
  auto m = c.out<CUmipmappedArray>(0);
  unsigned levels = 0;
  for (CUarray a = nullptr; levels < 64 && cuMipmappedArrayGetLevel(&a, m, levels) == CUDA_SUCCESS;) ++levels;
  S.mipmaps.push_back({m, levels});
}
void mipmap_gone(Call& c) {
  auto m = c.arg<CUmipmappedArray>(0);
  S.mipmaps.erase(std::remove_if(S.mipmaps.begin(), S.mipmaps.end(), [&](const Mipmap& x) { return x.h == m; }),
                  S.mipmaps.end());
  remember_dead(m);
}
void level(Call& c) { add_unique(S.arrays, c.out<CUarray>(0)); }
void array_made(Call& c) {
  add_unique(S.arrays, c.out<CUarray>(0));
  add_unique(S.own_arrays, c.out<CUarray>(0));
}
// Destroying a mipmap level succeeds and leaves it alive: only an array of its own goes.
void array_gone(Call& c) {
  auto a = c.arg<CUarray>(0);
  if (std::find(S.own_arrays.begin(), S.own_arrays.end(), a) == S.own_arrays.end()) return;
  S.arrays.erase(std::remove(S.arrays.begin(), S.arrays.end(), a), S.arrays.end());
  destroyed(S.own_arrays, a);
}
void texture_made(Call& c) { S.textures.push_back(c.out<unsigned long long>(0)); }
void texture_gone(Call& c) {
  auto t = c.arg<unsigned long long>(0);
  S.textures.erase(std::remove(S.textures.begin(), S.textures.end(), t), S.textures.end());
}
void surface_made(Call& c) { S.surfaces.push_back(c.out<unsigned long long>(0)); }
void surface_gone(Call& c) {
  auto t = c.arg<unsigned long long>(0);
  S.surfaces.erase(std::remove(S.surfaces.begin(), S.surfaces.end(), t), S.surfaces.end());
}
void stream_made(Call& c) { S.streams.push_back(c.out<CUstream>(0)); }
void stream_gone(Call& c) { destroyed(S.streams, c.arg<CUstream>(0)); }
void event_made(Call& c) { S.events.push_back(c.out<CUevent>(0)); }
void event_gone(Call& c) { destroyed(S.events, c.arg<CUevent>(0)); }
void pool_made(Call& c) { add_unique(S.pools, c.out<CUmemoryPool>(0)); }
void pool_gone(Call& c) { destroyed(S.pools, c.arg<CUmemoryPool>(0)); }
void extmem_gone(Call& c) { destroyed(S.extmems, c.arg<CUexternalMemory>(0)); }
void sem_gone(Call& c) {
  auto s = c.arg<CUexternalSemaphore>(0);
  S.sems.erase(std::remove_if(S.sems.begin(), S.sems.end(), [&](const Sem& x) { return x.h == s; }), S.sems.end());
  remember_dead(s);
}
void module_made(Call& c) { S.modules.push_back(c.out<CUmodule>(0)); }
void module_gone(Call& c) {
  auto m = c.arg<CUmodule>(0);
  erase_value(S.modules, m);
  erase_value(S.lib_modules, m);
  remember_dead(m);
}
void library_made(Call& c) { S.libs.push_back(c.out<CUlibrary>(0)); }
void library_gone(Call& c) { destroyed(S.libs, c.arg<CUlibrary>(0)); }
void link_made(Call& c) { S.links.push_back(c.out<CUlinkState>(3)); }
void link_gone(Call& c) { destroyed(S.links, c.arg<CUlinkState>(0)); }
void function_got(Call& c) { add_unique(S.funcs, c.out<CUfunction>(0)); }
void kernel_got(Call& c) { add_unique(S.kernels, c.out<CUkernel>(0)); }
void module_got(Call& c) {
  auto m = c.out<CUmodule>(0);
  if (!holds(S.modules, m)) add_unique(S.lib_modules, m);
}
void functions_got(Call& c) {  // the entries written hold functions; the rest keep the old bytes
  auto* f = reinterpret_cast<CUfunction*>(c.raw[0]);
  for (unsigned i = 0; f && i < c.arg<unsigned>(1); ++i) {
    const char* n = nullptr;
    if (cuFuncGetName(&n, f[i]) == CUDA_SUCCESS) add_unique(S.funcs, f[i]);
  }
}
void kernels_got(Call& c) {
  auto* k = reinterpret_cast<CUkernel*>(c.raw[0]);
  for (unsigned i = 0; k && i < c.arg<unsigned>(1); ++i) {
    const char* n = nullptr;
    if (cuKernelGetName(&n, k[i]) == CUDA_SUCCESS) add_unique(S.kernels, k[i]);
  }
}
void ctx_made(Call& c) { S.ctxs.push_back(c.out<CUcontext>(0)); }
void ctx_gone(Call& c) { destroyed(S.ctxs, c.arg<CUcontext>(0)); }
void touched(Call&) { S.touched = true; }
void retained(Call& c) {
  int d = c.arg<int>(1);
  if (d == 0 || d == 1) ++S.primary_net[d];
}
void released(Call& c) {
  int d = c.arg<int>(0);
  if (d == 0 || d == 1) --S.primary_net[d];
  S.touched = true;
}
void vmm_made(Call& c) { add_vmm(c.out<CUmemGenericAllocationHandle>(0), c.arg<size_t>(1)); }
void vmm_retained(Call& c) { add_vmm(c.out<CUmemGenericAllocationHandle>(0), size_t(2) << 20); }
void vmm_gone(Call& c) {
  auto h = c.arg<CUmemGenericAllocationHandle>(0);
  if (release_vmm(h)) remember_dead(reinterpret_cast<void*>(h));
}
void reserved(Call& c) { S.res.push_back({c.out<CUdeviceptr>(0), c.arg<size_t>(1), {}, {}}); }
void reservation_gone(Call& c) {
  auto p = c.arg<CUdeviceptr>(0);
  S.res.erase(std::remove_if(S.res.begin(), S.res.end(), [&](const Reservation& r) { return r.base == p; }), S.res.end());
}
void mapped(Call& c) {
  auto p = c.arg<CUdeviceptr>(0);
  for (Reservation& r : S.res)
    if (p >= r.base && p - r.base < r.size) {
      r.mapped.push_back(p);
      r.mapped_size.push_back(c.arg<size_t>(1));
    }
}
void unmapped(Call& c) {
  auto p = c.arg<CUdeviceptr>(0);
  auto n = c.arg<size_t>(1);
  for (Reservation& r : S.res)
    for (size_t i = r.mapped.size(); i-- > 0;)
      if (r.mapped[i] >= p && r.mapped[i] - p < n) {
        r.mapped.erase(r.mapped.begin() + static_cast<long>(i));
        r.mapped_size.erase(r.mapped_size.begin() + static_cast<long>(i));
      }
}
void le_reserved(Call& c) {
  auto base = c.out<CUlogicalEndpointId>(0);
  for (unsigned i = 0; i < c.arg<unsigned>(1); ++i) S.le_reserved.insert(base + i);
}
void le_released(Call& c) {
  auto base = c.arg<unsigned>(0);
  for (unsigned i = 0; i < c.arg<unsigned>(1); ++i) S.le_reserved.erase(base + i);
}
void le_made(Call& c) { add_unique(S.le_ids, c.arg<unsigned>(0)); }
void le_gone(Call& c) { erase_value(S.le_ids, c.arg<unsigned>(0)); }

void graph_made(Call& c) { add_unique(S.graphs, c.out<CUgraph>(0)); }
void graph_gone(Call& c) { destroyed(S.graphs, c.arg<CUgraph>(0)); }
void graph_node_made(Call& c) { add_unique(S.graph_nodes, c.out<CUgraphNode>(0)); }
void graph_node_gone(Call& c) { destroyed(S.graph_nodes, c.arg<CUgraphNode>(0)); }
void graph_exec_made(Call& c) { add_unique(S.graph_execs, c.out<CUgraphExec>(0)); }
void graph_exec_gone(Call& c) { destroyed(S.graph_execs, c.arg<CUgraphExec>(0)); }
void user_object_made(Call& c) { add_unique(S.user_objects, c.out<CUuserObject>(0)); }
void captured_graph(Call& c) { add_unique(S.graphs, c.out<CUgraph>(1)); }
// A capture the table began ends at once, in the same step: left open, it would turn the calls
// after it (cuMemAlloc, synchronizations) into capture errors their lists do not allow. What it
// captured in between is nothing; the graph is booked.
void capture_begun(Call& c) {
  auto s = c.arg<CUstream>(0);
  const std::string n = c.e.name;
  if (!s && n.size() > 5 && n.compare(n.size() - 5, 5, "_ptsz") == 0) s = CU_STREAM_PER_THREAD;  // the _ptsz forms' NULL
  CUgraph g = nullptr;
  if (cuStreamEndCapture(s, &g) == CUDA_SUCCESS) add_unique(S.graphs, g);
}

const std::map<std::string, Effect> kDriver = {
    {"cuDevicePrimaryCtxRetain", retained}, {"cuDevicePrimaryCtxRelease", released},
    {"cuDevicePrimaryCtxReset", touched}, {"cuDevicePrimaryCtxSetFlags", touched}, {"cuCtxSetFlags", touched},
    {"cuCtxCreate", ctx_made}, {"cuCtxDestroy", ctx_gone},
    {"cuStreamCreate", stream_made}, {"cuStreamCreateWithPriority", stream_made}, {"cuStreamDestroy", stream_gone},
    {"cuEventCreate", event_made}, {"cuEventDestroy", event_gone}, {"cuIpcOpenEventHandle", event_made},
    {"cuMemAlloc", device_alloc}, {"cuMemAllocPitch", pitch_alloc}, {"cuMemAllocHost", host_alloc},
    {"cuMemHostAlloc", host_alloc}, {"cuMemAllocManaged", managed_alloc}, {"cuMemHostRegister", registered},
    {"cuMemFree", free_arg0}, {"cuMemFreeHost", free_arg0}, {"cuMemHostUnregister", free_arg0},
    {"cuMemPoolCreate", pool_made}, {"cuMemPoolDestroy", pool_gone},
    {"cuMemAllocAsync", pool_alloc}, {"cuMemAllocFromPoolAsync", pool_alloc}, {"cuMemFreeAsync", free_arg0},
    {"cuMemPoolImportPointer", pool_import}, {"cuMemPoolExportPointer", blob_out0},
    {"cuIpcGetMemHandle", blob_out0}, {"cuIpcGetEventHandle", blob_out0}, {"cuIpcOpenMemHandle", ipc_open},
    {"cuIpcCloseMemHandle", free_arg0},
    {"cuMemCreate", vmm_made}, {"cuMemRetainAllocationHandle", vmm_retained}, {"cuMemRelease", vmm_gone},
    {"cuMemAddressReserve", reserved}, {"cuMemAddressFree", reservation_gone}, {"cuMemMap", mapped},
    {"cuMemUnmap", unmapped},
    {"cuExternalMemoryGetMappedBuffer", ext_buffer}, {"cuExternalMemoryGetMappedMipmappedArray", mipmap},
    {"cuDestroyExternalMemory", extmem_gone}, {"cuDestroyExternalSemaphore", sem_gone},
    {"cuMipmappedArrayGetLevel", level}, {"cuMipmappedArrayDestroy", mipmap_gone},
    {"cuMipmappedArrayCreate", mipmap}, {"cuArrayCreate", array_made}, {"cuArray3DCreate", array_made},
    {"cuArrayDestroy", array_gone},
    {"cuTexObjectCreate", texture_made}, {"cuTexObjectDestroy", texture_gone},
    {"cuSurfObjectCreate", surface_made}, {"cuSurfObjectDestroy", surface_gone},
    {"cuModuleLoad", module_made}, {"cuModuleLoadData", module_made}, {"cuModuleLoadDataEx", module_made},
    {"cuModuleLoadFatBinary", module_made}, {"cuModuleUnload", module_gone}, {"cuModuleGetFunction", function_got},
    {"cuModuleEnumerateFunctions", functions_got}, {"cuModuleGetGlobal", global},
    {"cuLibraryLoadData", library_made}, {"cuLibraryLoadFromFile", library_made}, {"cuLibraryUnload", library_gone},
    {"cuLinkCreate", link_made}, {"cuLinkCreate_v2", link_made}, {"cuLinkDestroy", link_gone},
    {"cuLibraryGetKernel", kernel_got}, {"cuLibraryEnumerateKernels", kernels_got}, {"cuLibraryGetModule", module_got},
    {"cuLibraryGetGlobal", global}, {"cuLibraryGetManaged", global}, {"cuKernelGetFunction", function_got},
    {"cuFuncGetModule", module_got},
    {"cuLogicalEndpointIdReserve", le_reserved}, {"cuLogicalEndpointIdRelease", le_released},
    {"cuLogicalEndpointCreate", le_made}, {"cuLogicalEndpointImport", le_made}, {"cuLogicalEndpointDestroy", le_gone},
    {"cuLogicalEndpointExport", blob_out0},
    {"cuGraphCreate", graph_made}, {"cuGraphClone", graph_made}, {"cuGraphDestroy", graph_gone},
    {"cuStreamEndCapture", captured_graph}, {"cuStreamBeginCapture", capture_begun},
    {"cuStreamBeginCaptureToGraph", capture_begun},
    {"cuGraphAddEmptyNode", graph_node_made}, {"cuGraphAddHostNode", graph_node_made},
    {"cuGraphAddKernelNode", graph_node_made}, {"cuGraphAddMemcpyNode", graph_node_made},
    {"cuGraphAddMemsetNode", graph_node_made}, {"cuGraphAddChildGraphNode", graph_node_made},
    {"cuGraphAddEventRecordNode", graph_node_made}, {"cuGraphAddEventWaitNode", graph_node_made},
    {"cuGraphAddMemAllocNode", graph_node_made}, {"cuGraphAddMemFreeNode", graph_node_made},
    {"cuGraphAddNode", graph_node_made}, {"cuGraphDestroyNode", graph_node_gone},
    {"cuGraphAddExternalSemaphoresSignalNode", graph_node_made},
    {"cuGraphAddExternalSemaphoresWaitNode", graph_node_made},
    {"cuGraphInstantiate", graph_exec_made}, {"cuGraphInstantiateWithFlags", graph_exec_made},
    {"cuGraphInstantiateWithParams", graph_exec_made}, {"cuGraphExecDestroy", graph_exec_gone},
    {"cuUserObjectCreate", user_object_made},
};

const std::map<std::string, Effect> kRuntime = {
    {"cudaSetDevice", touched}, {"cudaInitDevice", touched}, {"cudaSetDeviceFlags", touched}, {"cudaDeviceReset", touched},
    {"cudaStreamCreate", stream_made}, {"cudaStreamCreateWithFlags", stream_made},
    {"cudaStreamCreateWithPriority", stream_made}, {"cudaStreamDestroy", stream_gone},
    {"cudaEventCreate", event_made}, {"cudaEventCreateWithFlags", event_made}, {"cudaEventDestroy", event_gone},
    {"cudaIpcGetEventHandle", blob_out0}, {"cudaIpcOpenEventHandle", event_made}, {"cudaIpcGetMemHandle", blob_out0},
    {"cudaIpcOpenMemHandle", ipc_open}, {"cudaIpcCloseMemHandle", free_arg0},
    {"cudaMalloc", device_alloc}, {"cudaFree", free_arg0}, {"cudaMallocHost", host_alloc}, {"cudaFreeHost", free_arg0},
    {"cudaHostAlloc", host_alloc}, {"cudaHostRegister", registered}, {"cudaHostUnregister", free_arg0},
    {"cudaMallocPitch", pitch_alloc}, {"cudaMallocManaged", managed_alloc},
    {"cudaMallocAsync", pool_alloc}, {"cudaMallocFromPoolAsync", pool_alloc}, {"cudaFreeAsync", free_arg0},
    {"cudaMemPoolCreate", pool_made}, {"cudaMemPoolDestroy", pool_gone}, {"cudaMemPoolImportPointer", pool_import},
    {"cudaMemPoolExportPointer", blob_out0},
    {"cudaExternalMemoryGetMappedBuffer", ext_buffer}, {"cudaExternalMemoryGetMappedMipmappedArray", mipmap},
    {"cudaDestroyExternalMemory", extmem_gone}, {"cudaDestroyExternalSemaphore", sem_gone},
    {"cudaGetMipmappedArrayLevel", level}, {"cudaFreeMipmappedArray", mipmap_gone},
    {"cudaMallocMipmappedArray", mipmap}, {"cudaMallocArray", array_made}, {"cudaMalloc3DArray", array_made},
    {"cudaFreeArray", array_gone},
    {"cudaCreateTextureObject", texture_made}, {"cudaDestroyTextureObject", texture_gone},
    {"cudaCreateSurfaceObject", surface_made}, {"cudaDestroySurfaceObject", surface_gone},
    {"cudaGetKernel", kernel_got}, {"__cudaGetKernel", kernel_got}, {"cudaGetFuncBySymbol", function_got},
    {"cudaGraphCreate", graph_made}, {"cudaGraphClone", graph_made}, {"cudaGraphDestroy", graph_gone},
    {"cudaStreamEndCapture", captured_graph}, {"cudaStreamBeginCapture", capture_begun},
    {"cudaStreamBeginCaptureToGraph", capture_begun},
    {"cudaGraphAddEmptyNode", graph_node_made}, {"cudaGraphAddHostNode", graph_node_made},
    {"cudaGraphAddKernelNode", graph_node_made}, {"cudaGraphAddMemcpyNode1D", graph_node_made},
    {"cudaGraphAddMemsetNode", graph_node_made}, {"cudaGraphAddChildGraphNode", graph_node_made},
    {"cudaGraphAddEventRecordNode", graph_node_made}, {"cudaGraphAddEventWaitNode", graph_node_made},
    {"cudaGraphAddMemAllocNode", graph_node_made}, {"cudaGraphAddMemFreeNode", graph_node_made},
    {"cudaGraphDestroyNode", graph_node_gone},
    {"cudaGraphInstantiate", graph_exec_made}, {"cudaGraphInstantiateWithFlags", graph_exec_made},
    {"cudaGraphExecDestroy", graph_exec_gone},
};

// Calls that wait for streams: a semaphore wait the program enqueued is released first.
const std::set<std::string> kWaits = {
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuCtxDestroy", "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxReset", "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaDeviceReset"};
void waits(Call&) { release_waits(); }

}  // namespace

void (*find_effect(const std::string& base, bool runtime))(Call&) {
  const auto& m = runtime ? kRuntime : kDriver;
  auto it = m.find(base);
  return it == m.end() ? nullptr : it->second;
}

void (*find_before(const std::string& base))(Call&) { return kWaits.count(base) ? &waits : nullptr; }

}  // namespace fz
