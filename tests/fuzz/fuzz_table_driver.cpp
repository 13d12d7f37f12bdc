// Every implemented driver entry (emu/abi/driver_entries.def) as a table entry. Built with
// __CUDA_API_VERSION_INTERNAL, as the driver itself, so that every exported name (the legacy
// forms and the _ptsz/_ptds variants included) is declared under its own name.
#include <map>
#include <typeinfo>

#include "fuzz_custom.hpp"

extern "C" {
#define CU_ENTRY(name, params, args) CUresult CUDAAPI name params;
#include "abi/driver_entries.def"
#undef CU_ENTRY
}

namespace fz {
namespace {
using namespace custom;

void sem_signal_run(Picker& pk, const Entry& e) {
  sem_signal<CUexternalSemaphore, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS>(
      pk, e, fn_of<decltype(&cuSignalExternalSemaphoresAsync)>(e));
}
void sem_wait_run(Picker& pk, const Entry& e) {
  sem_wait<CUexternalSemaphore, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS>(pk, e, fn_of<decltype(&cuWaitExternalSemaphoresAsync)>(e));
}
void import_memory_run(Picker& pk, const Entry& e) {
  import_memory<CUexternalMemory, CUDA_EXTERNAL_MEMORY_HANDLE_DESC>(pk, e, fn_of<decltype(&cuImportExternalMemory)>(e));
}
void import_semaphore_run(Picker& pk, const Entry& e) {
  import_semaphore<CUexternalSemaphore, CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC>(
      pk, e, fn_of<decltype(&cuImportExternalSemaphore)>(e));
}
void mem_export_run(Picker& pk, const Entry& e) {
  export_handle<CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long>(
      pk, e, fn_of<decltype(&cuMemExportToShareableHandle)>(e), pk.vmm());
}
void pool_export_run(Picker& pk, const Entry& e) {
  export_handle<CUmemoryPool, CUmemAllocationHandleType, unsigned long long>(
      pk, e, fn_of<decltype(&cuMemPoolExportToShareableHandle)>(e), pk.pick(S.pools));
}
void mem_import_run(Picker& pk, const Entry& e) {
  auto type = handle_type<CUmemAllocationHandleType>(pk);
  int fd = -1;
  std::vector<unsigned char> b;
  void* src = shareable_source(pk, type, fd, b);
  bool was_open = fd_open(fd);
  CUmemGenericAllocationHandle h = 0;
  CUresult r = fn_of<decltype(&cuMemImportFromShareableHandle)>(e)(maybe(pk, &h), src, type);
  check(e, r);
  if (was_open && !fd_open(fd)) die(e.name, "closed the caller's fd (importing never takes it)");
  if (r == CUDA_SUCCESS) add_vmm(h, size_t(2) << 20);
}
void pool_import_run(Picker& pk, const Entry& e) {
  auto type = handle_type<CUmemAllocationHandleType>(pk);
  int fd = -1;
  std::vector<unsigned char> b;
  void* src = shareable_source(pk, type, fd, b);
  bool was_open = fd_open(fd);
  CUmemoryPool pool = nullptr;
  CUresult r = fn_of<decltype(&cuMemPoolImportFromShareableHandle)>(e)(
      maybe(pk, &pool), src, type, pk.in.ConsumeIntegralInRange(0, 7) ? 0 : pk.in.ConsumeIntegral<unsigned long long>());
  check(e, r);
  if (was_open && !fd_open(fd)) die(e.name, "closed the caller's fd");
  if (r == CUDA_SUCCESS && !holds(S.pools, pool)) S.pools.push_back(pool);
}
void pool_get_run(Picker& pk, const Entry& e) {
  pool_attribute<CUmemoryPool, CUmemPool_attribute>(pk, e, fn_of<decltype(&cuMemPoolGetAttribute)>(e));
}
void pool_set_run(Picker& pk, const Entry& e) {
  pool_attribute<CUmemoryPool, CUmemPool_attribute>(pk, e, fn_of<decltype(&cuMemPoolSetAttribute)>(e));
}
void range_attributes_run(Picker& pk, const Entry& e) {
  range_attributes<CUmem_range_attribute, CUdeviceptr>(pk, e, fn_of<decltype(&cuMemRangeGetAttributes)>(e));
}

// cuPointerGetAttributes: numAttributes attributes, each written to a 64-byte buffer.
void pointer_attributes_run(Picker& pk, const Entry& e) {
  auto& in = pk.in;
  unsigned n = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1u, 4u) : in.ConsumeIntegralInRange(0u, 8u);
  std::vector<CUpointer_attribute> attrs(n ? n : 1);
  std::vector<std::unique_ptr<unsigned char[]>> bufs;
  std::vector<void*> data(n ? n : 1);
  for (unsigned i = 0; i < n; ++i) {
    attrs[i] = static_cast<CUpointer_attribute>(in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1, 24)
                                                                               : in.ConsumeIntegral<int>());
    bufs.emplace_back(new unsigned char[64]);
    data[i] = bufs.back().get();
  }
  check(e, fn_of<decltype(&cuPointerGetAttributes)>(e)(n, maybe(pk, attrs.data()), maybe(pk, data.data()), pk.dptr()));
}

void module_load_ex_run(Picker& pk, const Entry& e) {
  JitOptions o;
  jit_options(pk, o);
  const bool image = pk.in.ConsumeIntegralInRange(0, 7) != 0;
  CUmodule m = nullptr;
  CUresult r = fn_of<decltype(&cuModuleLoadDataEx)>(e)(maybe(pk, &m), image ? kPtx : nullptr,
                                                        static_cast<unsigned>(o.opt.size()), o.opt.data(), o.val.data());
  check(e, r);
  if (r == CUDA_SUCCESS) S.modules.push_back(m);
}

// cuLibraryLoadData / FromFile: the JIT options, and library options with number values.
template <class F, class Src>
void library_load(Picker& pk, const Entry& e, F fn, Src src) {
  auto& in = pk.in;
  JitOptions o;
  jit_options(pk, o);
  std::vector<CUlibraryOption> lopt;
  std::vector<void*> lval;
  for (unsigned i = 0, n = in.ConsumeIntegralInRange(0, 3) ? 0 : in.ConsumeIntegralInRange(0u, 2u); i < n; ++i) {
    int k = in.ConsumeIntegralInRange(0, 3);
    lopt.push_back(static_cast<CUlibraryOption>(k == 3 ? in.ConsumeIntegralInRange(2, 100) : k % 2));
    lval.push_back(k == 1 ? reinterpret_cast<void*>(uintptr_t{in.ConsumeIntegralInRange(0u, 1u)}) : nullptr);
  }
  CUlibrary l = nullptr;
  CUresult r = fn(maybe(pk, &l), src, o.opt.data(), o.val.data(), static_cast<unsigned>(o.opt.size()), lopt.data(),
                  lval.data(), static_cast<unsigned>(lopt.size()));
  check(e, r);
  if (r == CUDA_SUCCESS) S.libs.push_back(l);
}
void library_load_data_run(Picker& pk, const Entry& e) {
  library_load(pk, e, fn_of<decltype(&cuLibraryLoadData)>(e), pk.in.ConsumeIntegralInRange(0, 7) ? kPtx : nullptr);
}
void library_load_file_run(Picker& pk, const Entry& e) {
  PtxFile f;
  static const char* const kOther[] = {"/nonexistent", "/dev/null", "", nullptr};
  const int k = pk.in.ConsumeIntegralInRange(0, 7);
  library_load(pk, e, fn_of<decltype(&cuLibraryLoadFromFile)>(e), k < 4 ? f.path.c_str() : kOther[k - 4]);
}

// The batch copies: CUDA 13's _v2 forms, and CUDA 12.8's with failIdx (the un-suffixed names).
void copy_batch_run(Picker& pk, const Entry& e) {
  Batch b = copy_batch(pk);
  check(e, fn_of<decltype(&cuMemcpyBatchAsync_v2)>(e)(bmaybe(pk, b.dst.data()), bmaybe(pk, b.src.data()),
                                                      bmaybe(pk, b.sizes.data()), b.count, bmaybe(pk, b.attrs.data()),
                                                      bmaybe(pk, b.idx.data()), b.n, batch_stream(pk)));
}
void copy_batch_v1_run(Picker& pk, const Entry& e) {
  Batch b = copy_batch(pk);
  size_t fail = 0;
  check(e, fn_of<decltype(&cuMemcpyBatchAsync)>(e)(bmaybe(pk, b.dst.data()), bmaybe(pk, b.src.data()),
                                                   bmaybe(pk, b.sizes.data()), b.count, bmaybe(pk, b.attrs.data()),
                                                   bmaybe(pk, b.idx.data()), b.n, bmaybe(pk, &fail), batch_stream(pk)));
}
void copy_3d_batch_run(Picker& pk, const Entry& e) {
  Batch b = copy_3d_batch(pk);
  check(e, fn_of<decltype(&cuMemcpy3DBatchAsync_v2)>(e)(b.count, bmaybe(pk, b.ops.data()), batch_flags(pk), batch_stream(pk)));
}
void copy_3d_batch_v1_run(Picker& pk, const Entry& e) {
  Batch b = copy_3d_batch(pk);
  size_t fail = 0;
  check(e, fn_of<decltype(&cuMemcpy3DBatchAsync)>(e)(b.count, bmaybe(pk, b.ops.data()), bmaybe(pk, &fail),
                                                     batch_flags(pk), batch_stream(pk)));
}
template <class F>
void prefetch_batch(Picker& pk, const Entry& e, F fn) {
  Batch b = range_batch(pk, true);
  check(e, fn(bmaybe(pk, b.dst.data()), bmaybe(pk, b.sizes.data()), b.count, bmaybe(pk, b.locs.data()),
              bmaybe(pk, b.idx.data()), b.n, batch_flags(pk), batch_stream(pk)));
}
void prefetch_batch_run(Picker& pk, const Entry& e) {
  prefetch_batch(pk, e, fn_of<decltype(&cuMemPrefetchBatchAsync)>(e));
}
void discard_prefetch_batch_run(Picker& pk, const Entry& e) {
  prefetch_batch(pk, e, fn_of<decltype(&cuMemDiscardAndPrefetchBatchAsync)>(e));
}
void discard_batch_run(Picker& pk, const Entry& e) {
  Batch b = range_batch(pk, false);
  check(e, fn_of<decltype(&cuMemDiscardBatchAsync)>(e)(bmaybe(pk, b.dst.data()), bmaybe(pk, b.sizes.data()), b.count,
                                                       batch_flags(pk), batch_stream(pk)));
}

// CUDA 13.2's single copies with attributes: a batch of one, as the batch runners make it.
void copy_with_attributes_run(Picker& pk, const Entry& e) {
  Batch b = copy_batch(pk);
  check(e, fn_of<decltype(&cuMemcpyWithAttributesAsync)>(e)(b.dst[0], b.src[0], b.sizes[0], bmaybe(pk, b.attrs.data()),
                                                            batch_stream(pk)));
}
void copy_3d_with_attributes_run(Picker& pk, const Entry& e) {
  Batch b = copy_3d_batch(pk);
  check(e, fn_of<decltype(&cuMemcpy3DWithAttributesAsync)>(e)(bmaybe(pk, b.ops.data()), batch_flags(pk),
                                                              batch_stream(pk)));
}

// Stream memory operations: waits that end, or that are refused (fuzz_custom.hpp).
template <class T, class F>
void mem_value(Picker& pk, const Entry& e, F fn, bool write) {
  bool waits = false;
  CUstreamBatchMemOpParams p = memop(pk, waits, write ? 0 : 1);
  const CUstream s = batch_stream(pk);
  if (waits) memop_zero(s);
  check(e, fn(s, write ? p.writeValue.address : p.waitValue.address, static_cast<T>(p.writeValue.value64 * !waits),
              write ? p.writeValue.flags : p.waitValue.flags));
}
void write32_run(Picker& pk, const Entry& e) { mem_value<cuuint32_t>(pk, e, fn_of<decltype(&cuStreamWriteValue32_v2)>(e), true); }
void write64_run(Picker& pk, const Entry& e) { mem_value<cuuint64_t>(pk, e, fn_of<decltype(&cuStreamWriteValue64_v2)>(e), true); }
void wait32_run(Picker& pk, const Entry& e) { mem_value<cuuint32_t>(pk, e, fn_of<decltype(&cuStreamWaitValue32_v2)>(e), false); }
void wait64_run(Picker& pk, const Entry& e) { mem_value<cuuint64_t>(pk, e, fn_of<decltype(&cuStreamWaitValue64_v2)>(e), false); }
void batch_memop_run(Picker& pk, const Entry& e) {
  bool waits = false;
  std::vector<CUstreamBatchMemOpParams> ps(batch_count(pk));
  for (auto& p : ps) p = memop(pk, waits);
  ps.resize(std::max<size_t>(ps.size(), 1));
  const unsigned n = static_cast<unsigned>(ps.size()) * (pk.in.ConsumeIntegralInRange(0, 15) < 15);
  const CUstream s = batch_stream(pk);
  if (waits) memop_zero(s);
  check(e, fn_of<decltype(&cuStreamBatchMemOp_v2)>(e)(s, n, ps.data(), pk.in.ConsumeIntegralInRange(0, 15) < 15 ? 0 : 1));
}

struct Custom {
  void (*run)(Picker&, const Entry&);
  const std::type_info* sig;  // the function type the runner casts to
};
#define FZ_CUSTOM_AS(base, fn, runner) {#base, {&runner, &typeid(decltype(&fn))}}
#define FZ_CUSTOM(fn, runner) FZ_CUSTOM_AS(fn, fn, runner)
// By base name; where one base names two signatures (cuMemcpyBatchAsync: CUDA 12.8's and _v2),
// the entry's own signature picks its caller.
const std::multimap<std::string, Custom> kCustom = {
    FZ_CUSTOM(cuSignalExternalSemaphoresAsync, sem_signal_run),
    FZ_CUSTOM(cuWaitExternalSemaphoresAsync, sem_wait_run),
    FZ_CUSTOM(cuImportExternalMemory, import_memory_run),
    FZ_CUSTOM(cuImportExternalSemaphore, import_semaphore_run),
    FZ_CUSTOM(cuMemExportToShareableHandle, mem_export_run),
    FZ_CUSTOM(cuMemPoolExportToShareableHandle, pool_export_run),
    FZ_CUSTOM(cuMemImportFromShareableHandle, mem_import_run),
    FZ_CUSTOM(cuMemPoolImportFromShareableHandle, pool_import_run),
    FZ_CUSTOM(cuMemPoolGetAttribute, pool_get_run),
    FZ_CUSTOM(cuMemPoolSetAttribute, pool_set_run),
    FZ_CUSTOM(cuMemRangeGetAttributes, range_attributes_run),
    FZ_CUSTOM(cuPointerGetAttributes, pointer_attributes_run),
    FZ_CUSTOM(cuModuleLoadDataEx, module_load_ex_run),
    FZ_CUSTOM(cuLibraryLoadData, library_load_data_run),
    FZ_CUSTOM(cuLibraryLoadFromFile, library_load_file_run),
    FZ_CUSTOM_AS(cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2, copy_batch_run),
    FZ_CUSTOM_AS(cuMemcpyBatchAsync, cuMemcpyBatchAsync, copy_batch_v1_run),
    FZ_CUSTOM_AS(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_v2, copy_3d_batch_run),
    FZ_CUSTOM_AS(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, copy_3d_batch_v1_run),
    FZ_CUSTOM(cuMemPrefetchBatchAsync, prefetch_batch_run),
    FZ_CUSTOM(cuMemDiscardBatchAsync, discard_batch_run),
    FZ_CUSTOM(cuMemDiscardAndPrefetchBatchAsync, discard_prefetch_batch_run),
    FZ_CUSTOM(cuMemcpyWithAttributesAsync, copy_with_attributes_run),
    FZ_CUSTOM(cuMemcpy3DWithAttributesAsync, copy_3d_with_attributes_run),
    FZ_CUSTOM_AS(cuStreamWriteValue32, cuStreamWriteValue32_v2, write32_run),
    FZ_CUSTOM_AS(cuStreamWriteValue64, cuStreamWriteValue64_v2, write64_run),
    FZ_CUSTOM_AS(cuStreamWaitValue32, cuStreamWaitValue32_v2, wait32_run),
    FZ_CUSTOM_AS(cuStreamWaitValue64, cuStreamWaitValue64_v2, wait64_run),
    FZ_CUSTOM_AS(cuStreamBatchMemOp, cuStreamBatchMemOp_v2, batch_memop_run),
};
#undef FZ_CUSTOM
#undef FZ_CUSTOM_AS

template <class R, class... A>
void add(const char* name, const char* params, R (*fn)(A...)) {
  void (*run)(Picker&, const Entry&) = nullptr;
  auto [lo, hi] = kCustom.equal_range(base_name(name));
  for (auto it = lo; it != hi; ++it)
    if (*it->second.sig == typeid(fn)) run = it->second.run;
  if (lo != hi && !run) die(name, "its custom caller expects another signature");
  add_entry(name, params, fn, false, run);
}

}  // namespace

void register_driver_entries() {
#define CU_ENTRY(name, params, args) add(#name, #params, &::name);
#include "abi/driver_entries.def"
#undef CU_ENTRY
}

}  // namespace fz
