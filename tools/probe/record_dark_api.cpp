// Records what NVIDIA's runtime asks of NVIDIA's driver through the private tables, on a GPU
// machine: LD_PRELOAD=librecord_dark_api.so PROGRAM. It interposes dlsym, so the
// cuGetProcAddress the runtime looks up in libcuda.so.1 is ours; that one hands out a
// cuGetExportTable whose tables are copies with every function slot replaced by a thunk that
// calls the real slot and logs "table slot args -> result" to $RECORD_DARK_API (stderr when
// unset). The CUDART_INTERFACE and INTEGRITY_CHECK tables are passed as they are: the
// runtime's integrity check hashes their addresses. Thunks pass six integer arguments on;
// enough for the slots seen so far (none takes floating-point or stack arguments).
// RECORD_DARK_API_MEMORY=1 also logs each table's words and the 32 bytes behind each pointer
// argument before and after every call.
//   g++ -std=c++17 -O1 -shared -fPIC tools/probe/record_dark_api.cpp -o librecord_dark_api.so -ldl
#include <cuda.h>
#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

namespace {

using Fn = uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
constexpr int kTables = 12, kSlots = 128;

struct Wrapped {
  unsigned char id[16];
  const void* real = nullptr;
  void* copy[kSlots];
  Fn slot[kSlots];
  size_t words = 0;
};
Wrapped g_tables[kTables];
int g_count = 0;
std::mutex g_m;
FILE* g_log = nullptr;

FILE* out() {
  if (!g_log) {
    const char* p = getenv("RECORD_DARK_API");
    g_log = p ? fopen(p, "a") : stderr;
    if (!g_log) g_log = stderr;
  }
  return g_log;
}

void hex(FILE* f, const unsigned char* id) {
  for (int i = 0; i < 16; ++i) fprintf(f, "%02x%s", id[i], i % 4 == 3 && i != 15 ? " " : "");
}

// The 32 bytes at an argument that points at readable memory of this process (else false):
// with RECORD_DARK_API_MEMORY set, each call logs them before and after, so what a slot reads
// and writes through its pointers shows.
bool peek(uint64_t p, unsigned char* b) {
  if (p < 0x10000) return false;
  iovec local{b, 32}, remote{reinterpret_cast<void*>(p), 32};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 32;
}
void dump(const char* when, int k, const unsigned char* b) {
  fprintf(out(), "  %s arg%d:", when, k);
  for (int i = 0; i < 32; ++i) fprintf(out(), "%s%02x", i % 8 ? "" : " ", b[i]);
  fprintf(out(), "\n");
}

template <int T, int S>
uint64_t thunk(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
  static const bool memory = getenv("RECORD_DARK_API_MEMORY") != nullptr;
  const uint64_t args[6] = {a, b, c, d, e, f};
  unsigned char before[6][32];
  bool ok[6] = {};
  if (memory)
    for (int k = 0; k < 6; ++k) ok[k] = peek(args[k], before[k]);
  uint64_t r = g_tables[T].slot[S](a, b, c, d, e, f);
  std::lock_guard lk(g_m);
  fprintf(out(), "slot ");
  hex(out(), g_tables[T].id);
  fprintf(out(), " [%d] (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx) -> %lu (%#lx)\n", S, (unsigned long)a, (unsigned long)b,
          (unsigned long)c, (unsigned long)d, (unsigned long)e, (unsigned long)f, (unsigned long)(r & 0xffffffffu),
          (unsigned long)r);
  for (int k = 0; k < 6 && memory; ++k) {
    unsigned char after[32];
    if (!ok[k] || !peek(args[k], after)) continue;
    dump("before", k, before[k]);
    if (memcmp(before[k], after, 32)) dump("after ", k, after);
  }
  fflush(out());
  return r;
}

template <int T, size_t... S>
constexpr void fill(void** dst, std::index_sequence<S...>) {
  ((dst[S] = reinterpret_cast<void*>(&thunk<T, static_cast<int>(S)>)), ...);
}
template <size_t... T>
void thunks_for(int t, void** dst, std::index_sequence<T...>) {
  ((t == static_cast<int>(T) ? fill<static_cast<int>(T)>(dst, std::make_index_sequence<kSlots>()) : void()), ...);
}

const unsigned char kKeep[2][16] = {
    {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
    {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}};
const unsigned char kNoSize[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                   0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};

CUresult (*g_real_export)(const void**, const CUuuid*) = nullptr;

CUresult CUDAAPI export_table(const void** pp, const CUuuid* id) {
  CUresult r = g_real_export(pp, id);
  std::lock_guard lk(g_m);
  fprintf(out(), "table ");
  hex(out(), reinterpret_cast<const unsigned char*>(id->bytes));
  fprintf(out(), " -> %d", static_cast<int>(r));
  if (r != CUDA_SUCCESS || !pp || !*pp) {
    fprintf(out(), "\n");
    return r;
  }
  for (auto& k : kKeep)
    if (!memcmp(k, id->bytes, 16)) {
      fprintf(out(), " size %lu (passed as is)\n", static_cast<unsigned long>(*static_cast<const uint64_t*>(*pp)));
      return r;
    }
  for (int i = 0; i < g_count; ++i)
    if (!memcmp(g_tables[i].id, id->bytes, 16)) {
      fprintf(out(), " (wrapped before)\n");
      *pp = g_tables[i].copy;
      return r;
    }
  if (g_count == kTables) {
    fprintf(out(), " (too many tables; passed as is)\n");
    return r;
  }
  Wrapped& w = g_tables[g_count];
  memcpy(w.id, id->bytes, 16);
  w.real = *pp;
  const uint64_t* words = static_cast<const uint64_t*>(*pp);
  const bool sized = memcmp(kNoSize, id->bytes, 16) != 0 && words[0] % 8 == 0 && words[0] / 8 <= kSlots;
  w.words = sized ? words[0] / 8 : 4;
  fprintf(out(), " size %lu words %zu\n", static_cast<unsigned long>(words[0]), w.words);
  for (size_t s = 0; s < w.words && getenv("RECORD_DARK_API_MEMORY"); ++s) {
    Dl_info info{};
    const bool code = dladdr(reinterpret_cast<void*>(words[s]), &info) && info.dli_fname;
    fprintf(out(), "  word %zu: %#lx%s%s\n", s, static_cast<unsigned long>(words[s]), code ? " in " : "",
            code ? info.dli_fname : "");
  }
  thunks_for(g_count, w.copy, std::make_index_sequence<kTables>());
  for (size_t s = 0; s < w.words; ++s) {
    Dl_info info{};
    const bool code = (!sized || s > 0) && dladdr(reinterpret_cast<void*>(words[s]), &info) && info.dli_fname;
    w.slot[s] = reinterpret_cast<Fn>(words[s]);
    if (!code) w.copy[s] = reinterpret_cast<void*>(words[s]);  // the size word, or data
  }
  ++g_count;
  *pp = w.copy;
  return r;
}

CUresult (*g_real_gpa)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*) = nullptr;

CUresult CUDAAPI get_proc_address(const char* sym, void** pfn, int ver, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* st) {
  CUresult r = g_real_gpa(sym, pfn, ver, flags, st);
  if (r == CUDA_SUCCESS && pfn && *pfn && sym) {
    if (!strcmp(sym, "cuGetExportTable")) {
      g_real_export = reinterpret_cast<decltype(g_real_export)>(*pfn);
      *pfn = reinterpret_cast<void*>(&export_table);
    } else if (!strcmp(sym, "cuGetProcAddress")) {
      *pfn = reinterpret_cast<void*>(&get_proc_address);
    }
  }
  return r;
}

using DlsymFn = void* (*)(void*, const char*);
DlsymFn real_dlsym() {
  static DlsymFn d = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  if (!d) d = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
  return d;
}

}  // namespace

extern "C" void* dlsym(void* h, const char* name) {
  void* p = real_dlsym()(h, name);
  if (!p || !name) return p;
  if (!strcmp(name, "cuGetProcAddress_v2")) {
    g_real_gpa = reinterpret_cast<decltype(g_real_gpa)>(p);
    return reinterpret_cast<void*>(&get_proc_address);
  }
  if (!strcmp(name, "cuGetExportTable")) {
    g_real_export = reinterpret_cast<decltype(g_real_export)>(p);
    return reinterpret_cast<void*>(&export_table);
  }
  return p;
}
