// Objects an input may start with, chosen by its first bytes: without them most entries would
// only ever see handles that are not there (a kernel to launch needs a module loaded, with a
// function got from it, in the same input). Each is made through the public API and booked
// like any other; a fixture that cannot be made is simply absent.
#include "fuzz.hpp"

namespace fz {
namespace {

void memory() {
  CUdeviceptr d = 0;
  if (cuMemAlloc(&d, 65536) == CUDA_SUCCESS) S.allocs.push_back({d, 65536, Alloc::device});
  void* h = nullptr;
  if (cuMemAllocHost(&h, 65536) == CUDA_SUCCESS) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(h), 65536, Alloc::host});
  if (cuMemAllocManaged(&d, 65536, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS) S.allocs.push_back({d, 65536, Alloc::managed});
  if (cuMemAllocAsync(&d, 4096, nullptr) == CUDA_SUCCESS) S.allocs.push_back({d, 4096, Alloc::pool});
  void* page = g_hostmem + kHostSpan - 4096;  // a registered page of the host buffer
  if (cuMemHostRegister(page, 4096, 0) == CUDA_SUCCESS)
    S.allocs.push_back({reinterpret_cast<CUdeviceptr>(page), 4096, Alloc::registered});
}

void streams_events() {
  CUstream s = nullptr;
  if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) S.streams.push_back(s);
  if (cuStreamCreate(&s, 0) == CUDA_SUCCESS) S.streams.push_back(s);
  CUevent e = nullptr;
  if (cuEventCreate(&e, 0) == CUDA_SUCCESS) S.events.push_back(e);
  if (cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
    S.events.push_back(e);
    CUipcEventHandle h;
    if (cuIpcGetEventHandle(&h, e) == CUDA_SUCCESS) S.blobs.emplace_back(h.reserved, h.reserved + 64);
  }
}

// A pool sharable by fd, its handle exported, an allocation from it and its export data.
void pool() {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool pool = nullptr;
  if (cuMemPoolCreate(&pool, &p) != CUDA_SUCCESS) return;
  S.pools.push_back(pool);
  int fd = -1;
  if (cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS) keep_fd(fd);
  CUdeviceptr d = 0;
  if (cuMemAllocFromPoolAsync(&d, 8192, pool, nullptr) != CUDA_SUCCESS) return;
  S.allocs.push_back({d, 8192, Alloc::pool});
  CUmemPoolPtrExportData x;
  if (cuMemPoolExportPointer(&x, d) == CUDA_SUCCESS) S.blobs.emplace_back(x.reserved, x.reserved + 64);
  CUipcMemHandle ih;
  CUdeviceptr plain = 0;
  for (const Alloc& a : S.allocs)
    if (a.kind == Alloc::device) plain = a.p;
  if (plain && cuIpcGetMemHandle(&ih, plain) == CUDA_SUCCESS) S.blobs.emplace_back(ih.reserved, ih.reserved + 64);
}

// Two granules of physical memory, exported by fd, mapped into a reservation with access; and
// the fd imported as external memory, with a buffer and a mipmapped array mapped from it.
void vmm() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  const size_t n = size_t(4) << 20;
  CUmemGenericAllocationHandle h = 0;
  if (cuMemCreate(&h, n, &p, 0) != CUDA_SUCCESS) return;
  add_vmm(h, n);
  CUdeviceptr base = 0;
  if (cuMemAddressReserve(&base, 2 * n, 0, 0, 0) == CUDA_SUCCESS) {
    S.res.push_back({base, 2 * n, {}, {}});
    if (cuMemMap(base, n, 0, h, 0) == CUDA_SUCCESS) {
      S.res.back().mapped.push_back(base);
      S.res.back().mapped_size.push_back(n);
      CUmemAccessDesc a{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
      cuMemSetAccess(base, n, &a, 1);
    }
  }
  int fd = -1;
  if (cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS) return;
  keep_fd(fd);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = ::dup(fd);
  d.size = n;
  CUexternalMemory m = nullptr;
  if (cuImportExternalMemory(&m, &d) != CUDA_SUCCESS) {
    if (fd_open(d.handle.fd)) ::close(d.handle.fd);
    return;
  }
  S.extmems.push_back(m);
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.size = 65536;
  CUdeviceptr buf = 0;
  if (cuExternalMemoryGetMappedBuffer(&buf, m, &b) == CUDA_SUCCESS) S.allocs.push_back({buf, 65536, Alloc::ext_buffer});
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md{};
  md.offset = size_t(2) << 20;
  md.arrayDesc = {64, 32, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0};
  md.numLevels = 3;
  CUmipmappedArray mm = nullptr;
  if (cuExternalMemoryGetMappedMipmappedArray(&mm, m, &md) == CUDA_SUCCESS) {
    S.mipmaps.push_back({mm, 3});
    CUarray a = nullptr;
    for (unsigned l = 0; l < 3; ++l)
      if (cuMipmappedArrayGetLevel(&a, mm, l) == CUDA_SUCCESS) S.arrays.push_back(a);
  }
}

// The PTX module loaded, as a module and as a library, with their functions, kernels and globals.
void device_code() {
  CUmodule m = nullptr;
  if (cuModuleLoadData(&m, kPtx) == CUDA_SUCCESS) {
    S.modules.push_back(m);
    CUfunction f = nullptr;
    for (const char* k : {"k", "k0"})
      if (cuModuleGetFunction(&f, m, k) == CUDA_SUCCESS) S.funcs.push_back(f);
    CUdeviceptr g = 0;
    size_t n = 0;
    if (cuModuleGetGlobal(&g, &n, m, "dvar") == CUDA_SUCCESS) S.allocs.push_back({g, n, Alloc::global});
  }
  CUlibrary l = nullptr;
  if (cuLibraryLoadData(&l, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS) {
    S.libs.push_back(l);
    CUkernel k = nullptr;
    for (const char* n : {"k", "k0"})
      if (cuLibraryGetKernel(&k, l, n) == CUDA_SUCCESS) S.kernels.push_back(k);
    CUmodule lm = nullptr;
    if (cuLibraryGetModule(&lm, l) == CUDA_SUCCESS) S.lib_modules.push_back(lm);
  }
}

// The runtime's registrations: the module as a fat binary, its kernel under a stub key, its
// variables under variable keys.
void registrations() {
  auto image = std::make_shared<std::string>(kPtx);
  void** h = __cudaRegisterFatBinary(image->data());
  if (!h) return;
  S.fatbins.push_back(h);
  S.fatbin_images.push_back(image);
  __cudaRegisterFunction(h, &g_stub_keys[0], nullptr, "k", -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  __cudaRegisterFunction(h, &g_stub_keys[1], nullptr, "k0", -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  __cudaRegisterVar(h, &g_var_keys[0], nullptr, "dvar", 0, 16, 0, 0);
  __cudaRegisterVar(h, &g_var_keys[1], nullptr, "cvar", 0, 8, 1, 0);
  __cudaRegisterManagedVar(h, &g_managed_slots[0], nullptr, "mvar", 0, 16, 0, 0);
}

// A timeline semaphore object imported as its own type (waits on it can be made to end).
void semaphore() {
  int obj = -1;
  if (cuShimExportableSemaphoreCreate(&obj, 1, 0) != CUDA_SUCCESS) return;
  keep_fd(obj);
  S.sem_object_fds.push_back(obj);
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  d.handle.fd = ::dup(obj);
  CUexternalSemaphore s = nullptr;
  if (cuImportExternalSemaphore(&s, &d) == CUDA_SUCCESS) S.sems.push_back({s, obj, true, true});
  else if (fd_open(d.handle.fd)) ::close(d.handle.fd);
}

// Two logical endpoint ids, one a unicast endpoint of device 0 that may be shared.
void endpoint() {
  CUlogicalEndpointId base = 0;
  if (cuLogicalEndpointIdReserve(&base, 2) != CUDA_SUCCESS) return;
  S.le_reserved.insert(base);
  S.le_reserved.insert(base + 1);
  CUlogicalEndpointProp p{};
  p.type = CU_LOGICAL_ENDPOINT_TYPE_UNICAST;
  p.unicast.device = 0;
  p.size = size_t(2) << 20;
  p.ipcHandleTypes = CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC;
  if (cuLogicalEndpointCreate(base, &p) == CUDA_SUCCESS) S.le_ids.push_back(base);
}

// A context of device 1 of the program's own (made current by its creation; popped).
void context() {
  CUcontext c = nullptr;
  if (cuCtxCreate(&c, nullptr, 0, 1) != CUDA_SUCCESS) return;
  S.ctxs.push_back(c);
  cuCtxPopCurrent(&c);
}

}  // namespace

void make_fixtures(Picker& pk) {
  const unsigned mask = pk.in.ConsumeIntegral<uint16_t>();
  if (mask & 0x001) memory();
  if (mask & 0x002) streams_events();
  if (mask & 0x004) pool();
  if (mask & 0x008) vmm();
  if (mask & 0x010) device_code();
  if (mask & 0x020) registrations();
  if (mask & 0x040) semaphore();
  if (mask & 0x080) endpoint();
  if (mask & 0x100) context();
  cuCtxSetCurrent(S.ctx);
  cuShimGetLastExplanationCode();
}

}  // namespace fz
