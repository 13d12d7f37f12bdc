// The argument pickers: handles live, destroyed, of another kind or garbage; addresses; sizes;
// fds; export data. What each may hand the driver is what the real driver checks: handles and
// device addresses it looks up may be anything, memory it reads or writes is always memory of
// this program (a wild host pointer crashes NVIDIA's driver as well).
#include "fuzz.hpp"

namespace fz {

const char kPtx[] =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".global .align 4 .b8 dvar[16];\n"
    ".const .align 4 .b8 cvar[8];\n"
    ".global .attribute(.managed) .align 8 .b8 mvar[16];\n"
    ".visible .entry k(\n.param .u64 k_p0,\n.param .u32 k_p1\n)\n.maxntid 256, 1, 1\n{\nret;\n}\n"
    ".visible .entry k0()\n{\nret;\n}\n";

void* Picker::garbage() {
  static int on_stack;
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return reinterpret_cast<void*>(uintptr_t{0x1234});
    case 1: return reinterpret_cast<void*>(~uintptr_t{0});
    case 2: return &on_stack;
    case 3: {
      void* p = std::malloc(64);
      std::free(p);
      return p;
    }
    case 4: return S.events.empty() ? nullptr : S.events[any(S.events.size())];
    case 5: return S.streams.empty() ? nullptr : S.streams[any(S.streams.size())];
    case 6: return S.pools.empty() ? nullptr : S.pools[any(S.pools.size())];
    default: return reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
  }
}

CUstream Picker::stream() {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return nullptr;
    case 1: return CU_STREAM_LEGACY;
    case 2: return CU_STREAM_PER_THREAD;
    default: return pick(S.streams);
  }
}

CUcontext Picker::context() {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return nullptr;
    case 1: case 2: return S.ctx;
    case 3: return g_primary[1];
    default: return pick(S.ctxs);
  }
}

CUmemGenericAllocationHandle Picker::vmm() {
  int k = in.ConsumeIntegralInRange(0, 7);
  if (k < 5 && !S.vmms.empty()) return S.vmms[any(S.vmms.size())].h;
  if (k < 7) return reinterpret_cast<CUmemGenericAllocationHandle>(dead());
  return k == 7 && in.ConsumeBool() ? 0 : reinterpret_cast<CUmemGenericAllocationHandle>(garbage());
}

int Picker::device() {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0: return -1;
    case 1: return 2;  // one past the last
    case 2: return in.ConsumeIntegral<int>();
    case 3: case 4: case 5: return 1;
    default: return 0;
  }
}

size_t Picker::size() {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0: return 0;
    case 1: return in.ConsumeIntegral<size_t>();  // anything, huge included
    case 2: return size_t(2) << 20;               // one granule
    case 3: return (size_t(2) << 20) * in.ConsumeIntegralInRange(1, 4);
    default: return in.ConsumeIntegralInRange<size_t>(1, 1 << 16);
  }
}

CUdeviceptr Picker::dptr(size_t* room) {
  int k = in.ConsumeIntegralInRange(0, 11);
  if (k < 7 && !S.allocs.empty()) {
    const Alloc& a = S.allocs[any(S.allocs.size())];
    size_t off = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(0, a.size);
    if (room) *room = a.size - off;
    return a.p + off;
  }
  if (k == 7 && !S.res.empty()) {  // a reservation, mapped or not
    const Reservation& r = S.res[any(S.res.size())];
    size_t off = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(0, r.size);
    if (room) *room = r.size - off;
    return r.base + off;
  }
  if (room) *room = 4096;
  if (k == 8) return reinterpret_cast<CUdeviceptr>(g_hostmem + in.ConsumeIntegralInRange<size_t>(0, kHostSpan));
  if (k < 11 && !S.dead_ptrs.empty()) return S.dead_ptrs[any(S.dead_ptrs.size())];
  return in.ConsumeBool() ? 0 : in.ConsumeIntegral<CUdeviceptr>();
}

void* Picker::uptr(size_t* room) {
  int k = in.ConsumeIntegralInRange(0, 15);
  if (k < 8 && !S.allocs.empty()) {
    // Only memory that is there now: the emulator reads an address it does not know as the
    // program's own pageable memory, as NVIDIA's driver does.
    const Alloc& a = S.allocs[any(S.allocs.size())];
    CUdeviceptr base = 0;
    size_t n = 0;
    if (cuMemGetAddressRange(&base, &n, a.p) == CUDA_SUCCESS && base <= a.p && a.p - base < n) {
      size_t left = n - (a.p - base);
      size_t off = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(0, left);
      if (room) *room = left - off;
      return reinterpret_cast<void*>(a.p + off);
    }
  }
  if (k == 15) {
    if (room) *room = 0;
    return nullptr;
  }
  return host(room);
}

void* Picker::host(size_t* room) {
  int k = in.ConsumeIntegralInRange(0, 15);
  if (k == 0) {
    if (room) *room = 0;
    return nullptr;
  }
  if (k == 1)
    for (const Alloc& a : S.allocs)
      if (a.kind == Alloc::host) {
        CUdeviceptr base = 0;
        size_t n = 0;  // still allocated?
        if (cuMemGetAddressRange(&base, &n, a.p) != CUDA_SUCCESS || base != a.p) break;
        if (room) *room = n;
        return reinterpret_cast<void*>(a.p);
      }
  size_t off = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(0, kHostSpan);
  if (room) *room = kHostBytes - off;
  return g_hostmem + off;
}

size_t Picker::copy_bytes(size_t room) {
  constexpr size_t kMost = size_t(8) << 20;  // room for any copy the ABI allows, quickly
  size_t n = in.ConsumeBool() ? std::min(room, kMost) : in.ConsumeIntegralInRange<size_t>(0, 8192);
  return std::min(n, kMost);
}

int Picker::fd() {
  int k = in.ConsumeIntegralInRange(0, 9);
  if (k < 6 && !S.fds.empty()) return S.fds[any(S.fds.size())];
  if (k < 8) {  // a number that is closed right now
    int f = ::dup(g_devnull);
    ::close(f);
    return f;
  }
  return k == 8 ? -1 : g_devnull;
}

std::vector<unsigned char> Picker::blob() {
  std::vector<unsigned char> b(64);
  int k = in.ConsumeIntegralInRange(0, 3);
  if (k < 3 && !S.blobs.empty()) {
    b = S.blobs[any(S.blobs.size())];
    if (k == 2) b[in.ConsumeIntegralInRange(0, 63)] ^= static_cast<unsigned char>(1u << in.ConsumeIntegralInRange(0, 7));
  } else {
    for (auto& x : b) x = in.ConsumeIntegral<unsigned char>();
  }
  return b;
}

void Picker::keep_blob(const void* p) {
  if (S.blobs.size() > 16) S.blobs.erase(S.blobs.begin());
  S.blobs.emplace_back(static_cast<const unsigned char*>(p), static_cast<const unsigned char*>(p) + 64);
}

CUmemLocation Picker::location() {
  CUmemLocation l{};
  static const CUmemLocationType types[] = {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST,
                                            CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_LOCATION_TYPE_INVALID};
  int k = in.ConsumeIntegralInRange(0, 6);
  l.type = k < 4 ? types[k == 3 ? 0 : k] : (k == 4 ? types[3] : static_cast<CUmemLocationType>(in.ConsumeIntegral<int>()));
  l.id = in.ConsumeIntegralInRange(0, 3) == 0 ? in.ConsumeIntegral<int>() : in.ConsumeIntegralInRange(0, 1);
  return l;
}

CUmemAllocationHandleType Picker::handle_types() {
  static const CUmemAllocationHandleType t[] = {CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                CU_MEM_HANDLE_TYPE_FABRIC, CU_MEM_HANDLE_TYPE_WIN32};
  int k = in.ConsumeIntegralInRange(0, 4);
  return k < 4 ? t[k] : static_cast<CUmemAllocationHandleType>(in.ConsumeIntegral<int>());
}

unsigned Picker::flags() {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: case 1: case 2: case 3: return 0;
    case 4: case 5: return 1u << in.ConsumeIntegralInRange(0, 5);
    case 6: return in.ConsumeIntegralInRange(0u, 15u);
    default: return in.ConsumeIntegral<unsigned>();
  }
}

std::string Picker::name() {
  static const char* const kNames[] = {"k", "k0", "dvar", "cvar", "mvar", "", "nope", "k_p0"};
  if (in.ConsumeIntegralInRange(0, 7)) return kNames[in.ConsumeIntegralInRange(0, 7)];
  return in.ConsumeRandomLengthString(12);
}

}  // namespace fz
