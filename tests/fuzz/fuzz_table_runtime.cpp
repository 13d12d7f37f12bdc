// Every implemented runtime entry (emu/abi/runtime_entries.def) as a table entry, called
// through libcudart.so.13 as programs call it. Built with __CUDA_API_VERSION_INTERNAL, so the
// _ptsz/_ptds variants are declared under their own names.
#include <map>
#include <typeinfo>

#include "fuzz_custom.hpp"

extern "C" {
#define RT_ENTRY(name, params, args) cudaError_t CUDARTAPI name params;
#include "abi/runtime_entries.def"
#undef RT_ENTRY
}

namespace fz {
namespace {
using namespace custom;

void sem_signal_run(Picker& pk, const Entry& e) {
  sem_signal<cudaExternalSemaphore_t, cudaExternalSemaphoreSignalParams>(
      pk, e, fn_of<decltype(&cudaSignalExternalSemaphoresAsync)>(e));
}
void sem_wait_run(Picker& pk, const Entry& e) {
  sem_wait<cudaExternalSemaphore_t, cudaExternalSemaphoreWaitParams>(pk, e,
                                                                     fn_of<decltype(&cudaWaitExternalSemaphoresAsync)>(e));
}
void import_memory_run(Picker& pk, const Entry& e) {
  import_memory<cudaExternalMemory_t, cudaExternalMemoryHandleDesc>(pk, e, fn_of<decltype(&cudaImportExternalMemory)>(e));
}
void import_semaphore_run(Picker& pk, const Entry& e) {
  import_semaphore<cudaExternalSemaphore_t, cudaExternalSemaphoreHandleDesc>(
      pk, e, fn_of<decltype(&cudaImportExternalSemaphore)>(e));
}
void pool_export_run(Picker& pk, const Entry& e) {
  export_handle<cudaMemPool_t, cudaMemAllocationHandleType, unsigned>(
      pk, e, fn_of<decltype(&cudaMemPoolExportToShareableHandle)>(e), pk.pick(S.pools));
}
void pool_import_run(Picker& pk, const Entry& e) {
  auto type = handle_type<cudaMemAllocationHandleType>(pk);
  int fd = -1;
  std::vector<unsigned char> b;
  void* src = shareable_source(pk, type, fd, b);
  bool was_open = fd_open(fd);
  cudaMemPool_t pool = nullptr;
  cudaError_t r = fn_of<decltype(&cudaMemPoolImportFromShareableHandle)>(e)(
      maybe(pk, &pool), src, type, pk.in.ConsumeIntegralInRange(0, 7) ? 0 : pk.in.ConsumeIntegral<unsigned>());
  check(e, r);
  if (was_open && !fd_open(fd)) die(e.name, "closed the caller's fd");
  if (r == cudaSuccess && !holds(S.pools, pool)) S.pools.push_back(pool);
}
void pool_get_run(Picker& pk, const Entry& e) {
  pool_attribute<cudaMemPool_t, cudaMemPoolAttr>(pk, e, fn_of<decltype(&cudaMemPoolGetAttribute)>(e));
}
void pool_set_run(Picker& pk, const Entry& e) {
  pool_attribute<cudaMemPool_t, cudaMemPoolAttr>(pk, e, fn_of<decltype(&cudaMemPoolSetAttribute)>(e));
}
void range_attributes_run(Picker& pk, const Entry& e) {
  range_attributes<cudaMemRangeAttribute, const void*>(pk, e, fn_of<decltype(&cudaMemRangeGetAttributes)>(e));
}

// The batch calls, in the runtime's types (laid out as the driver's).
void copy_batch_run(Picker& pk, const Entry& e) {
  Batch b = copy_batch(pk);
  auto v = [](std::vector<CUdeviceptr>& p) { return reinterpret_cast<void**>(p.data()); };
  check(e, fn_of<decltype(&cudaMemcpyBatchAsync)>(e)(
               bmaybe(pk, v(b.dst)), bmaybe(pk, v(b.src)), bmaybe(pk, b.sizes.data()), b.count,
               bmaybe(pk, reinterpret_cast<cudaMemcpyAttributes*>(b.attrs.data())), bmaybe(pk, b.idx.data()), b.n,
               batch_stream(pk)));
}
void copy_3d_batch_run(Picker& pk, const Entry& e) {
  Batch b = copy_3d_batch(pk);
  check(e, fn_of<decltype(&cudaMemcpy3DBatchAsync)>(e)(
               b.count, bmaybe(pk, reinterpret_cast<cudaMemcpy3DBatchOp*>(b.ops.data())), batch_flags(pk), batch_stream(pk)));
}
template <class F>
void prefetch_batch(Picker& pk, const Entry& e, F fn) {
  Batch b = range_batch(pk, true);
  check(e, fn(bmaybe(pk, reinterpret_cast<void**>(b.dst.data())), bmaybe(pk, b.sizes.data()), b.count,
              bmaybe(pk, reinterpret_cast<cudaMemLocation*>(b.locs.data())), bmaybe(pk, b.idx.data()), b.n,
              batch_flags(pk), batch_stream(pk)));
}
void prefetch_batch_run(Picker& pk, const Entry& e) {
  prefetch_batch(pk, e, fn_of<decltype(&cudaMemPrefetchBatchAsync)>(e));
}
void discard_prefetch_batch_run(Picker& pk, const Entry& e) {
  prefetch_batch(pk, e, fn_of<decltype(&cudaMemDiscardAndPrefetchBatchAsync)>(e));
}
void discard_batch_run(Picker& pk, const Entry& e) {
  Batch b = range_batch(pk, false);
  check(e, fn_of<decltype(&cudaMemDiscardBatchAsync)>(e)(bmaybe(pk, reinterpret_cast<void**>(b.dst.data())),
                                                         bmaybe(pk, b.sizes.data()), b.count, batch_flags(pk),
                                                         batch_stream(pk)));
}

struct Custom {
  void (*run)(Picker&, const Entry&);
  const std::type_info* sig;
};
#define FZ_CUSTOM(base, runner) {#base, {&runner, &typeid(decltype(&base))}}
const std::map<std::string, Custom> kCustom = {
    FZ_CUSTOM(cudaSignalExternalSemaphoresAsync, sem_signal_run),
    FZ_CUSTOM(cudaWaitExternalSemaphoresAsync, sem_wait_run),
    FZ_CUSTOM(cudaImportExternalMemory, import_memory_run),
    FZ_CUSTOM(cudaImportExternalSemaphore, import_semaphore_run),
    FZ_CUSTOM(cudaMemPoolExportToShareableHandle, pool_export_run),
    FZ_CUSTOM(cudaMemPoolImportFromShareableHandle, pool_import_run),
    FZ_CUSTOM(cudaMemPoolGetAttribute, pool_get_run),
    FZ_CUSTOM(cudaMemPoolSetAttribute, pool_set_run),
    FZ_CUSTOM(cudaMemRangeGetAttributes, range_attributes_run),
    FZ_CUSTOM(cudaMemcpyBatchAsync, copy_batch_run),
    FZ_CUSTOM(cudaMemcpy3DBatchAsync, copy_3d_batch_run),
    FZ_CUSTOM(cudaMemPrefetchBatchAsync, prefetch_batch_run),
    FZ_CUSTOM(cudaMemDiscardBatchAsync, discard_batch_run),
    FZ_CUSTOM(cudaMemDiscardAndPrefetchBatchAsync, discard_prefetch_batch_run),
};
#undef FZ_CUSTOM

template <class R, class... A>
void add(const char* name, const char* params, R (*fn)(A...)) {
  void (*run)(Picker&, const Entry&) = nullptr;
  if (auto it = kCustom.find(base_name(name)); it != kCustom.end()) {
    if (*it->second.sig != typeid(fn)) die(name, "its custom caller expects another signature");
    run = it->second.run;
  }
  add_entry(name, params, fn, true, run);
}

}  // namespace

void register_runtime_entries() {
#define RT_ENTRY(name, params, args) add(#name, #params, &::name);
#include "abi/runtime_entries.def"
#undef RT_ENTRY
}

}  // namespace fz
