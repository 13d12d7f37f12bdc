// Table entries whose arguments need more than roles: fds whose ownership may pass to the
// driver, semaphore waits that must end, handles whose form follows their type, buffers
// whose sizes follow an attribute, option arrays whose values are pointers. Templates over the
// entry's function type, so the driver's and the runtime's forms (and _ptsz variants) share
// them. Included by fuzz_table_*.cpp.
#pragma once
#include <sys/mman.h>

#include <cstring>

#include "fuzz_gen.hpp"

namespace fz::custom {

template <class F>
F fn_of(const Entry& e) {
  return reinterpret_cast<F>(e.fn);
}
inline void check(const Entry& e, int r) { check_entry(e.name, e.runtime, r); }
template <class T>
T* maybe(Picker& pk, T* p) {  // NULL now and then, where the driver checks for it
  return pk.in.ConsumeIntegralInRange(0, 15) ? p : nullptr;
}

// cu/cudaSignalExternalSemaphoresAsync: arrays of two (the count may be 0, 1 or 2; the second
// is the same semaphore).
template <class H, class P, class F>
void sem_signal(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  Sem* live = S.sems.empty() || !in.ConsumeIntegralInRange(0, 5) ? nullptr : &S.sems[pk.any(S.sems.size())];
  H s = live ? reinterpret_cast<H>(live->h) : static_cast<H>(pk.dead());
  unsigned n = in.ConsumeIntegralInRange(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 2);
  H ss[2] = {s, s};
  P p[2] = {};
  p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, 64);
  p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
  int r = fn(maybe(pk, ss), maybe(pk, p), n, pk.stream());
  check(e, r);
  if (r == 0 && n && live) {
    live->floor = live->pending && live->timeline ? std::min(live->floor, p[0].params.fence.value) : p[0].params.fence.value;
    live->pending = true;
  }
}

// ... and waits, only where they will end (see Sem); others go to a handle that is not live.
template <class H, class P, class F>
void sem_wait(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  Sem* live = S.sems.empty() || !in.ConsumeIntegralInRange(0, 5) ? nullptr : &S.sems[pk.any(S.sems.size())];
  unsigned n = in.ConsumeIntegralInRange(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 2);
  const bool may_wait = live && live->clean && !S.tainted_sem_objects.count(live->object_fd) &&
                        (live->timeline ? true : live->pending && n <= 1);
  H s = may_wait ? reinterpret_cast<H>(live->h) : nullptr;
  if (!may_wait) {
    s = static_cast<H>(pk.dead());
    for (const Sem& x : S.sems)
      if (reinterpret_cast<void*>(x.h) == static_cast<void*>(s)) s = nullptr;
  } else if (!live->timeline && n == 1) {
    live->pending = false;
  }
  H ss[2] = {s, s};
  P p[2] = {};
  const unsigned long long most = may_wait && live->timeline ? (live->pending ? live->floor : 0) : 64;
  p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, most);
  p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
  // No NULL arrays with a live semaphore: a refused wait would leave `pending` wrong.
  int r = fn(may_wait ? ss : maybe(pk, ss), may_wait ? p : maybe(pk, p), n, pk.stream());
  check(e, r);
  if (r != 0 && may_wait && !live->timeline && n == 1) live->pending = true;
}

// cu/cudaImportExternalMemory: the fd is a copy of one the program owns; ownership passes on
// success (the copy must then be closed in the program's table) and on some refusals.
template <class H, class Desc, class F>
void import_memory(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  Desc d{};
  int k = in.ConsumeIntegralInRange(0, 7);
  d.type = static_cast<decltype(d.type)>(k < 6 ? 1 : in.ConsumeIntegralInRange(0, 10));  // 1: OPAQUE_FD
  int src = pk.fd();
  int fd = src >= 0 && fd_open(src) ? ::dup(src) : src;
  d.handle.fd = fd;
  d.size = in.ConsumeBool() ? (size_t(2) << 20) : pk.size();
  d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
  if (!in.ConsumeIntegralInRange(0, 15)) d.reserved[in.ConsumeIntegralInRange(0, 15)] = 1;
  H m = nullptr;
  int r = fn(maybe(pk, &m), maybe(pk, &d));
  check(e, r);
  if (r == 0) {
    if (d.type == 1 && fd != src && fd_open(fd)) die(e.name, "succeeded but left the fd it now owns open in the caller's table");
    S.extmems.push_back(reinterpret_cast<CUexternalMemory>(m));
  } else if (fd != src && fd_open(fd)) {
    ::close(fd);  // refused before ownership passed: still ours
  }
}

// cu/cudaImportExternalSemaphore: mostly a fresh exportable semaphore of its own type (waits
// on it can be made to end), else any fd of the program. A refused import leaves the fd.
template <class H, class Desc, class F>
void import_semaphore(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  int obj = -1;
  bool timeline = in.ConsumeBool(), fresh = false;
  if (in.ConsumeIntegralInRange(0, 3)) {
    fresh = true;
    if (cuShimExportableSemaphoreCreate(&obj, timeline ? 1 : 0, 0) != CUDA_SUCCESS) die(e.name, "no semaphore object");
    keep_fd(obj);
    S.sem_object_fds.push_back(obj);
  } else {
    obj = pk.fd();
  }
  const int own = timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  Desc d{};
  d.type = static_cast<decltype(d.type)>(in.ConsumeIntegralInRange(0, 5) ? own : in.ConsumeIntegralInRange(0, 12));
  int fd = obj >= 0 && fd_open(obj) ? ::dup(obj) : obj;
  d.handle.fd = fd;
  d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
  H s = nullptr;
  int r = fn(maybe(pk, &s), maybe(pk, &d));
  check(e, r);
  const bool clean = fresh && static_cast<int>(d.type) == own;
  if (!clean) S.tainted_sem_objects.insert(obj);
  if (r == 0) S.sems.push_back({reinterpret_cast<CUexternalSemaphore>(s), obj, clean, timeline});
  else if (fd != obj && fd_open(fd)) ::close(fd);
}

// Shareable handles: an fd (POSIX_FILE_DESCRIPTOR) or 64 bytes (FABRIC), in both directions.
template <class Type>
Type handle_type(Picker& pk) {
  return static_cast<Type>(pk.handle_types());
}
// cuMemExportToShareableHandle, cu/cudaMemPoolExportToShareableHandle: (out, object, type, flags).
template <class Obj, class Type, class Flags, class F>
void export_handle(Picker& pk, const Entry& e, F fn, Obj obj) {
  auto& in = pk.in;
  Type type = handle_type<Type>(pk);
  const bool fd = static_cast<int>(type) == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::unique_ptr<unsigned char[]> out(new unsigned char[fd ? sizeof(int) : 64]);  // exactly what the type writes
  int r = fn(maybe(pk, static_cast<void*>(out.get())), obj, type,
             static_cast<Flags>(in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>()));
  check(e, r);
  if (r != 0) return;
  if (fd) {
    int f;
    std::memcpy(&f, out.get(), sizeof f);
    keep_fd(f);
  } else if (static_cast<int>(type) == CU_MEM_HANDLE_TYPE_FABRIC) {
    pk.keep_blob(out.get());
  }
}

// cuMemImportFromShareableHandle, cu/cudaMemPoolImportFromShareableHandle: the fd as a pointer
// value, or the 64 bytes' address; importing never takes the fd.
template <class Type>
void* shareable_source(Picker& pk, Type type, int& fd, std::vector<unsigned char>& b) {
  fd = pk.fd();
  b = pk.blob();
  return static_cast<int>(type) == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(b.data())
                                                              : reinterpret_cast<void*>(static_cast<intptr_t>(fd));
}

// cu/cudaMemPoolGetAttribute / SetAttribute: the value is an int for the reuse flags, a
// cuuint64_t for the rest; exactly that much memory.
template <class Pool, class Attr, class F>
void pool_attribute(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  const int attr = in.ConsumeIntegralInRange(0, 15) ? in.ConsumeIntegralInRange(0, 10) : in.ConsumeIntegral<int>();
  const bool is_int = attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
                      attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
  std::unique_ptr<unsigned char[]> v(new unsigned char[is_int ? sizeof(int) : sizeof(cuuint64_t)]);
  if (is_int) {
    int x = in.ConsumeIntegralInRange(0, 1);
    std::memcpy(v.get(), &x, sizeof x);
  } else {
    cuuint64_t x = in.ConsumeBool() ? 0 : in.ConsumeIntegral<cuuint64_t>();
    std::memcpy(v.get(), &x, sizeof x);
  }
  Pool pool = reinterpret_cast<Pool>(pk.pick(S.pools));
  if (!in.ConsumeIntegralInRange(0, 7)) {  // a default pool
    CUmemoryPool d = nullptr;
    cuDeviceGetDefaultMemPool(&d, in.ConsumeIntegralInRange(0, 1));
    pool = reinterpret_cast<Pool>(d);
  }
  check(e, fn(pool, static_cast<Attr>(attr), maybe(pk, static_cast<void*>(v.get()))));
}

// cu/cudaMemRangeGetAttributes: numAttributes buffers, each exactly dataSizes[i] bytes.
template <class Attr, class Ptr, class F>
void range_attributes(Picker& pk, const Entry& e, F fn) {
  auto& in = pk.in;
  size_t n = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1, 4) : in.ConsumeIntegralInRange(0, 8);
  std::vector<std::unique_ptr<unsigned char[]>> bufs;
  std::vector<void*> data(n ? n : 1);
  std::vector<size_t> sizes(n ? n : 1);
  std::vector<Attr> attrs(n ? n : 1);
  static const size_t kSizes[] = {4, 8, 16, 0, 3, 64};
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = kSizes[in.ConsumeIntegralInRange(0, 5)];
    bufs.emplace_back(new unsigned char[sizes[i] ? sizes[i] : 1]);
    data[i] = bufs.back().get();
    attrs[i] = static_cast<Attr>(in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1, 8) : in.ConsumeIntegral<int>());
  }
  size_t room = 0;
  CUdeviceptr p = pk.dptr(&room);
  check(e, fn(maybe(pk, data.data()), maybe(pk, sizes.data()), maybe(pk, attrs.data()), n, (Ptr)(p),
              in.ConsumeBool() ? room : pk.size()));
}

// Options of cuModuleLoadDataEx / cuLibraryLoad*: only options whose values are numbers, and
// log buffers always with their sizes (the driver writes the logs).
struct JitOptions {
  std::vector<CUjit_option> opt;
  std::vector<void*> val;
  std::vector<std::unique_ptr<char[]>> logs;
};
inline void jit_options(Picker& pk, JitOptions& o) {
  auto& in = pk.in;
  unsigned n = in.ConsumeIntegralInRange(0, 3) ? 0 : in.ConsumeIntegralInRange(0u, 4u);
  for (unsigned i = 0; i < n; ++i) {
    int k = in.ConsumeIntegralInRange(0, 15);
    if (k == 3 || k == 5) {  // CU_JIT_INFO_LOG_BUFFER / CU_JIT_ERROR_LOG_BUFFER with their sizes
      size_t size = in.ConsumeIntegralInRange<size_t>(0, 256);
      o.logs.emplace_back(new char[size ? size : 1]);
      o.opt.push_back(static_cast<CUjit_option>(k));
      o.val.push_back(o.logs.back().get());
      o.opt.push_back(static_cast<CUjit_option>(k + 1));
      o.val.push_back(reinterpret_cast<void*>(size));
    } else if (k != 4 && k != 6) {
      int id = k == 15 ? in.ConsumeIntegralInRange(100, 1000) : k;  // 15: an option that does not exist
      o.opt.push_back(static_cast<CUjit_option>(id));
      o.val.push_back(reinterpret_cast<void*>(uintptr_t{in.ConsumeIntegralInRange(0u, 64u)}));
    }
  }
}

// A file holding the module's text (closed when the holder goes).
struct PtxFile {
  int fd = -1;
  std::string path;
  PtxFile() {
    fd = ::memfd_create("fuzz-ptx", MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, kPtx, std::strlen(kPtx)) < 0) die("memfd", "ptx");
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~PtxFile() { ::close(fd); }
};

// ---- Batch copies, prefetches and discards ----------------------------------------------------
// A batch's lists, in the driver's types (the runtime's have the same layout). Copies go between
// memory the harness owns (uptr: live allocations or the host buffer, never a wild address the
// emulator would read as pageable memory), sized within both ends mostly; attribute and location
// lists are mostly right (first index 0, increasing), sometimes not.
struct Batch {
  std::vector<CUdeviceptr> dst, src;
  std::vector<size_t> sizes, idx;
  std::vector<CUmemcpyAttributes> attrs;
  std::vector<CUmemLocation> locs;
  std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;
  size_t count = 0, n = 0;  // copies/ranges, attributes/locations as passed
};

// Where the input runs out (FuzzedDataProvider then gives 0s), the choices below fall on a call
// that can succeed: a live stream, one element, a valid order; the bad values take input bytes.
inline size_t batch_count(Picker& pk) {
  return pk.in.ConsumeIntegralInRange(0, 7) < 7 ? pk.in.ConsumeIntegralInRange(1, 4) : pk.in.ConsumeIntegralInRange(0, 6);
}
inline CUstream batch_stream(Picker& pk) {
  if (pk.in.ConsumeIntegralInRange(0, 7) < 5)
    return S.streams.empty() ? CU_STREAM_PER_THREAD : S.streams[pk.any(S.streams.size())];
  return pk.stream();
}
// n indices over count items: 0 and increasing, or (now and then) anything small.
inline void batch_indices(Picker& pk, Batch& b, size_t n) {
  b.idx.assign(n ? n : 1, 0);
  for (size_t k = 1; k < n; ++k) b.idx[k] = b.idx[k - 1] + pk.in.ConsumeIntegralInRange(1, 2);
  if (n && pk.in.ConsumeIntegralInRange(0, 7) == 7) b.idx[pk.any(n)] = pk.in.ConsumeIntegralInRange(0, 6);
  b.n = pk.in.ConsumeIntegralInRange(0, 15) < 15 ? n : pk.in.ConsumeIntegralInRange(0, 6);
  if (b.n > n) b.n = n;  // never past the arrays' ends (the driver would read them)
}
inline unsigned small_or_any(Picker& pk, unsigned lo, unsigned hi) {
  return pk.in.ConsumeIntegralInRange(0, 7) < 7 ? pk.in.ConsumeIntegralInRange(lo, hi) : pk.in.ConsumeIntegral<unsigned>();
}
inline unsigned copy_flags(Picker& pk) {
  return pk.in.ConsumeIntegralInRange(0, 7) < 7 ? pk.in.ConsumeIntegralInRange(0, 1) : pk.in.ConsumeIntegral<unsigned>();
}

inline Batch copy_batch(Picker& pk) {
  Batch b;
  b.count = batch_count(pk);
  for (size_t i = 0; i < b.count; ++i) {
    size_t rd = 0, rs = 0;
    b.dst.push_back(reinterpret_cast<CUdeviceptr>(pk.uptr(&rd)));
    b.src.push_back(reinterpret_cast<CUdeviceptr>(pk.uptr(&rs)));
    size_t n = pk.copy_bytes(std::min(rd, rs));
    if (n == 0 && pk.in.ConsumeIntegralInRange(0, 7) < 7) n = std::min<size_t>({rd, rs, 64});
    b.sizes.push_back(n);
  }
  const size_t n = b.count ? pk.in.ConsumeIntegralInRange<size_t>(1, b.count) : pk.in.ConsumeIntegralInRange(0, 1);
  b.attrs.resize(n ? n : 1);
  for (auto& a : b.attrs) {
    a.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(small_or_any(pk, 1, 3));
    a.flags = copy_flags(pk);
    if (pk.in.ConsumeBool()) a.srcLocHint = pk.location();
    if (pk.in.ConsumeBool()) a.dstLocHint = pk.location();
  }
  batch_indices(pk, b, n);
  b.dst.resize(std::max<size_t>(b.count, 1));
  b.src.resize(b.dst.size());
  b.sizes.resize(b.dst.size());
  return b;
}

// One 3D operand: a pointer the harness owns, or an array (live, dead or garbage).
inline CUmemcpy3DOperand operand_3d(Picker& pk, size_t& room, bool& array) {
  CUmemcpy3DOperand o{};
  array = !S.own_arrays.empty() && pk.in.ConsumeIntegralInRange(0, 3) == 0;
  if (array) {
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = pk.pick(S.own_arrays);
    o.op.array.offset = CUoffset3D{pk.in.ConsumeIntegralInRange<size_t>(0, 8), pk.in.ConsumeIntegralInRange<size_t>(0, 2), 0};
    room = SIZE_MAX;
    return o;
  }
  o.type = pk.in.ConsumeIntegralInRange(0, 15) ? CU_MEMCPY_OPERAND_TYPE_POINTER
                                               : static_cast<CUmemcpy3DOperandType>(pk.in.ConsumeIntegralInRange(0, 3));
  o.op.ptr.ptr = reinterpret_cast<CUdeviceptr>(pk.uptr(&room));
  return o;
}

// 3D batch operations whose boxes fit the pointer operands' room: the pointers' memory may be
// the harness's own host buffer, whose end the driver cannot see. Element sizes reach 16 bytes.
inline Batch copy_3d_batch(Picker& pk) {
  Batch b;
  b.count = batch_count(pk);
  b.ops.resize(std::max<size_t>(b.count, 1));
  for (size_t i = 0; i < b.count; ++i) {
    CUDA_MEMCPY3D_BATCH_OP& op = b.ops[i];
    size_t rs = 0, rd = 0;
    bool sa = false, da = false;
    op.src = operand_3d(pk, rs, sa);
    op.dst = operand_3d(pk, rd, da);
    const size_t room = std::min(rs, rd) / (sa || da ? 16 : 1);
    size_t w = std::min<size_t>(pk.in.ConsumeIntegralInRange(0, 64), room);
    size_t h = pk.in.ConsumeIntegralInRange(0, 4), d = pk.in.ConsumeIntegralInRange(0, 2);
    while (h > 1 && w * h * (d ? d : 1) > room) --h;
    while (d > 1 && w * h * d > room) --d;
    op.extent = CUextent3D{w, h, d};
    for (CUmemcpy3DOperand* o : {&op.src, &op.dst})  // tight rows and layers, or too short ones
      if (o->type == CU_MEMCPY_OPERAND_TYPE_POINTER && !pk.in.ConsumeIntegralInRange(0, 7)) {
        o->op.ptr.rowLength = pk.in.ConsumeIntegralInRange<size_t>(0, w);
        o->op.ptr.layerHeight = pk.in.ConsumeIntegralInRange<size_t>(0, h);
      }
    op.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(small_or_any(pk, 1, 3));
    op.flags = copy_flags(pk);
  }
  return b;
}

// Ranges of prefetches and discards: only looked up, so any device address will do.
inline Batch range_batch(Picker& pk, bool locations) {
  Batch b;
  b.count = batch_count(pk);
  std::vector<const Alloc*> managed;
  for (const Alloc& a : S.allocs)
    if (a.kind == Alloc::managed) managed.push_back(&a);
  for (size_t i = 0; i < b.count; ++i) {
    size_t room = 0;
    if (!managed.empty() && pk.in.ConsumeIntegralInRange(0, 3) < 3) {  // mostly a managed range
      const Alloc& a = *managed[pk.any(managed.size())];
      const size_t off = pk.in.ConsumeIntegralInRange(0, 3) < 3 ? 0 : pk.in.ConsumeIntegralInRange<size_t>(0, a.size);
      b.dst.push_back(a.p + off);
      room = a.size - off;
    } else {
      b.dst.push_back(pk.dptr(&room));
    }
    b.sizes.push_back(pk.in.ConsumeIntegralInRange(0, 3) < 3 ? room : pk.size());
  }
  b.dst.resize(std::max<size_t>(b.count, 1));
  b.sizes.resize(b.dst.size());
  if (!locations) return b;
  const size_t n = b.count ? pk.in.ConsumeIntegralInRange<size_t>(1, b.count) : pk.in.ConsumeIntegralInRange(0, 1);
  b.locs.resize(n ? n : 1);
  for (auto& l : b.locs) {
    l = pk.location();
    if (pk.in.ConsumeIntegralInRange(0, 3) < 3) l.id = 0;  // mostly a place that exists
  }
  batch_indices(pk, b, n);
  return b;
}
template <class T>
T* bmaybe(Picker& pk, T* p) {  // as maybe(), but an exhausted input keeps the pointer
  return pk.in.ConsumeIntegralInRange(0, 15) < 15 ? p : nullptr;
}
inline unsigned long long batch_flags(Picker& pk) {
  return pk.in.ConsumeIntegralInRange(0, 15) < 15 ? 0 : pk.in.ConsumeIntegral<unsigned long long>();
}

// ---- Stream memory operations -----------------------------------------------------------------
// A wait must end: waits that can succeed go to a pinned word of the harness's own, which the
// same stream sets to 0 just before (cuStreamWriteValue32), with a condition 0 satisfies (GEQ 0,
// EQ 0, NOR 0). Every other wait the harness makes is refused before anything is queued (bad
// flags, NULL, unaligned, pageable memory). Writes go anywhere the harness owns.
inline CUdeviceptr memop_word() {
  void*& word = S.memop_word;
  unsigned f = 0;
  if (!word || cuMemHostGetFlags(&f, word) != CUDA_SUCCESS) {  // made again after a reset freed it
    word = nullptr;
    // Portable pinned memory of the harness's own primary context, whatever is current now.
    if (!S.ctx || cuCtxPushCurrent(S.ctx) != CUDA_SUCCESS) return 0;
    if (cuMemHostAlloc(&word, 64, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) word = nullptr;
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    if (!word) return 0;
    std::memset(word, 0, 64);
  }
  return reinterpret_cast<CUdeviceptr>(word);
}
// kind: 0 a write, 1 a wait, else any operation.
inline CUstreamBatchMemOpParams memop(Picker& pk, bool& waits, int kind = -1) {
  auto& in = pk.in;
  CUstreamBatchMemOpParams p;
  std::memset(&p, 0, sizeof p);
  const int k = kind == 0 ? 0 : kind == 1 ? 4 : in.ConsumeIntegralInRange(0, 9);
  const CUdeviceptr word = memop_word();
  if (k < 4) {  // a write: somewhere the harness owns, mostly aligned
    p.operation = in.ConsumeBool() ? CU_STREAM_MEM_OP_WRITE_VALUE_32 : CU_STREAM_MEM_OP_WRITE_VALUE_64;
    size_t room = 0;
    p.writeValue.address = reinterpret_cast<CUdeviceptr>(pk.uptr(&room));
    if (room < 8 || p.writeValue.address == word) p.writeValue.address = word + 8;  // never the wait word
    p.writeValue.address &= ~CUdeviceptr{in.ConsumeIntegralInRange(0, 7) < 7 ? 7u : 0u};
    p.writeValue.value64 = in.ConsumeIntegral<uint64_t>();
    p.writeValue.flags = in.ConsumeIntegralInRange(0, 7) < 7 ? 0 : in.ConsumeIntegral<unsigned>();
  } else if (k < 8) {  // a wait on the word, which is 0 when the stream gets there
    p.operation = in.ConsumeBool() ? CU_STREAM_MEM_OP_WAIT_VALUE_64 : CU_STREAM_MEM_OP_WAIT_VALUE_32;
    static const unsigned kMet[] = {CU_STREAM_WAIT_VALUE_GEQ, CU_STREAM_WAIT_VALUE_EQ, CU_STREAM_WAIT_VALUE_NOR};
    p.waitValue.flags = kMet[in.ConsumeIntegralInRange(0, 2)];
    p.waitValue.address = word;
    switch (in.ConsumeIntegralInRange(0, 15)) {  // refused ones (nothing is queued) take input bytes
      case 12: p.waitValue.flags = 4 + in.ConsumeIntegralInRange(0, 100); break;
      case 13: p.waitValue.flags |= CU_STREAM_WAIT_VALUE_FLUSH; break;
      case 14: p.waitValue.address = word + 2; break;
      case 15: p.waitValue.address = reinterpret_cast<CUdeviceptr>(g_hostmem); break;
      default: waits = true;
    }
  } else {
    p.operation = k == 8 ? CU_STREAM_MEM_OP_BARRIER : static_cast<CUstreamBatchMemOpType>(in.ConsumeIntegralInRange(0, 8));
    p.memoryBarrier.flags = in.ConsumeIntegralInRange(0, 3);
    if (p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 || p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
        p.operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 || p.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
      p.operation = CU_STREAM_MEM_OP_BARRIER;  // the value forms are made above, with their rules
  }
  return p;
}
// Sets the wait word to 0 in `s`'s order before a wait that may succeed there.
inline void memop_zero(CUstream s) {
  if (CUdeviceptr w = memop_word()) cuStreamWriteValue32_v2(s, w, 0, 0);
}

}  // namespace fz::custom
