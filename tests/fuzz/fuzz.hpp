// What the harness's translation units share: the program's state (every object it holds, so
// that each call can be checked against the emulator's own books), the argument pickers and the
// checks of each call's code. fuzz_api.cpp holds the driver loop; fuzz_steps.cpp the stateful
// hand-written calls; fuzz_table_*.cpp every exported entry, driven by emu/abi/*.def.
#pragma once
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "cuda_shim_ext.h"

// The registration ABI (crt/host_runtime.h), which no public header declares.
extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun, const char* deviceName,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bDim, dim3* gDim, int* wSize);
void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress, const char* deviceName, int ext,
                       size_t size, int constant, int global);
void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant, int global);
}

namespace fz {

[[noreturn]] void die(const char* what, const std::string& detail);

// ---- What the program holds ----
struct Alloc {
  CUdeviceptr p;
  size_t size;
  enum Kind { device, host, managed, pool, ipc_opened, pool_imported, ext_buffer, registered, global } kind;  // global: a module's
};
struct Vmm {
  CUmemGenericAllocationHandle h;
  size_t size;
  unsigned refs = 1;  // cuMemRetainAllocationHandle hands out the same handle again
};
struct Reservation {
  CUdeviceptr base;
  size_t size;
  std::vector<CUdeviceptr> mapped;  // mapping bases (whole allocations)
  std::vector<size_t> mapped_size;
};
struct Sem {
  CUexternalSemaphore h;
  int object_fd;  // our end: cuShimExportableSemaphore*
  // What lets a wait end. A wait no signal satisfies blocks its stream for good, and every
  // synchronizing call after it (as on a GPU), so waits go only where they will end: on a
  // handle imported as its fresh object's own type (`clean`), whose object no other import
  // reached, for at most the lowest value signaled (timeline: a signal stores its value, and
  // signals on several streams land in any order) or once per signal (binary).
  bool clean = false, timeline = false;
  unsigned long long floor = 0;  // timeline: the lowest value signaled, once `pending`
  bool pending = false;          // a signal was enqueued (binary: and no wait consumed it)
};
struct Mipmap {
  CUmipmappedArray h;
  unsigned levels;  // each level is an array of its own in the emulator's books
};

struct State {
  CUcontext ctx = nullptr;  // device 0's primary context: the harness holds one reference
  void* memop_word = nullptr;  // pinned, portable: the only word stream waits may wait on (fuzz_custom.hpp)
  std::vector<Alloc> allocs;
  std::vector<CUstream> streams;
  std::vector<CUevent> events;
  std::vector<CUmemoryPool> pools;  // created or imported
  std::vector<Vmm> vmms;
  std::vector<Reservation> res;
  std::vector<CUexternalMemory> extmems;
  std::vector<Sem> sems;
  std::vector<CUcontext> ctxs;  // cuCtxCreate's
  std::vector<Mipmap> mipmaps;
  std::vector<CUarray> arrays;  // levels handed out (they die with their mipmapped array) and own_arrays
  std::vector<CUarray> own_arrays;  // made by cuArrayCreate/cuArray3DCreate/cudaMalloc*Array
  std::vector<unsigned long long> textures, surfaces;  // texture and surface objects (they hold arrays)
  std::vector<CUmodule> modules;  // loaded by the program
  std::vector<CUlibrary> libs;
  std::vector<CUmodule> lib_modules;  // a library's, not the program's to unload
  std::vector<CUfunction> funcs;
  std::vector<CUkernel> kernels;
  std::vector<CUlinkState> links;  // cuLinkCreate's
  std::vector<CUgraph> graphs;     // created, cloned or captured
  std::vector<CUgraphNode> graph_nodes;
  std::vector<CUgraphExec> graph_execs;
  std::vector<CUuserObject> user_objects;
  std::set<unsigned> le_reserved;  // logical endpoint ids reserved
  std::vector<unsigned> le_ids;    // ids with an endpoint (created or imported)
  std::vector<void**> fatbins;   // registered with __cudaRegisterFatBinary
  std::vector<std::shared_ptr<std::string>> fatbin_images;  // what they point at, until unregistered
  int primary_net[2] = {0, 0};   // the program's primary-context retains minus releases
  bool touched = false;          // a primary was reset, re-flagged or torn down, or the runtime moved
  std::vector<int> fds;                           // fds this program owns
  std::vector<std::vector<unsigned char>> blobs;  // 64-byte export data seen
  std::vector<void*> dead;                        // handles destroyed (any kind)
  std::vector<CUdeviceptr> dead_ptrs;
  std::vector<int> sem_object_fds;
  std::set<int> tainted_sem_objects;  // imported other than cleanly (see Sem)
};
extern State S;

// Host memory the driver may read or write: a 64 MiB mapping (untouched pages cost nothing)
// with a guard page after it. Host pointers are handed out in its first MiB and sizes are kept
// so that no access the ABI allows leaves it.
constexpr size_t kHostBytes = size_t(64) << 20, kHostSpan = size_t(1) << 20;
extern unsigned char* g_hostmem;
extern int g_devnull;
extern CUcontext g_primary[2];  // the devices' primary contexts (stable handles)
// Keys the program registers with the runtime (__cudaRegisterFunction / __cudaRegisterVar /
// __cudaRegisterManagedVar): a kernel stub's and a variable's address, a managed variable's slot.
extern char g_stub_keys[4];
extern char g_var_keys[4];
extern void* g_managed_slots[4];
extern unsigned long long g_ops;

// A PTX module with a kernel (two parameters), a __device__, a __constant__ and a __managed__
// variable: what module, library, kernel and symbol entries work on.
extern const char kPtx[];

// ---- Codes ----
void check_cu(const char* api, CUresult r);
void check_rt(const char* api, cudaError_t r);
// Table entries: `name` is the exported symbol; codes any call of its family may return are
// in fuzz_codes.cpp.
void check_entry(const char* name, bool runtime, int code);
void seen(const std::string& api, int code);
void dump_codes();  // CUDA_SHIM_FUZZ_CODES=file: appends "call code name" for every code seen

// ---- Book-keeping ----
template <class T>
void erase_value(std::vector<T>& v, const T& x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
}
template <class T>
bool holds(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
void remember_dead(void* h);
void forget_alloc(CUdeviceptr p);
void keep_fd(int fd);
bool fd_open(int fd);
void add_vmm(CUmemGenericAllocationHandle h, size_t size);
bool release_vmm(CUmemGenericAllocationHandle h);  // true when the handle died
template <class H>
void destroyed(std::vector<H>& live, H h) {
  erase_value(live, h);
  remember_dead(reinterpret_cast<void*>(h));
}
// After a call that may end objects it does not name (a context's teardown, an unload), drops
// the ones that died from the lists, asking the emulator about each.
void prune();
// Lets semaphore waits end before a call that waits for every stream of a context.
void release_waits();

// ---- Argument pickers ----
struct Picker {
  FuzzedDataProvider& in;

  size_t any(size_t n) { return n ? in.ConsumeIntegral<size_t>() % n : 0; }
  template <class T>
  T one_of(const std::vector<T>& v) {
    return v[any(v.size())];
  }
  // A garbage pointer for a handle: small numbers, all ones, a stack or freed heap address, a
  // handle of another kind.
  void* garbage();
  void* dead() { return S.dead.empty() ? garbage() : S.dead[any(S.dead.size())]; }
  // live (mostly), destroyed, garbage or NULL
  template <class H>
  H pick(const std::vector<H>& live) {
    int k = in.ConsumeIntegralInRange(0, 15);
    if (k < 11 && !live.empty()) return live[any(live.size())];
    if (k < 13) return (H)(dead());
    if (k < 15) return (H)(garbage());
    return nullptr;
  }
  CUstream stream();
  CUcontext context();
  CUmemGenericAllocationHandle vmm();
  int device();
  size_t size();
  // A device address the driver looks up: a live allocation plus an offset, a freed one, a
  // host pointer, or anything. `room`: the bytes from there to the allocation's end.
  CUdeviceptr dptr(size_t* room = nullptr);
  // Memory the driver touches as host or device memory depending on the address (cuMemcpy,
  // cudaMemcpyDefault): only live allocations, the host buffer or NULL.
  void* uptr(size_t* room = nullptr);
  // Host memory (the host buffer, a pinned allocation) or NULL.
  void* host(size_t* room = nullptr);
  // A byte count for a copy: within `room` mostly, never past the host buffer.
  size_t copy_bytes(size_t room);
  // An fd this program owns (never one of libFuzzer's or the emulator's own), a closed number
  // or a negative one.
  int fd();
  std::vector<unsigned char> blob();
  void keep_blob(const void* p);
  CUmemLocation location();
  CUmemAllocationHandleType handle_types();
  unsigned flags();
  std::string name();  // a symbol name: the module's, a near miss, empty or random
};

// ---- The calls ----
void make_fixtures(Picker& pk);  // fuzz_fixtures.cpp: the objects an input starts with
const char* step_stateful(Picker& pk);  // fuzz_steps.cpp: one of the hand-written calls
// The table of every implemented export (fuzz_table_*.cpp).
struct Entry {
  const char* name;
  const char* params;  // the .def row's parameter list, as text
  void (*run)(Picker&, const Entry&);
  void* fn;
  bool runtime;
  unsigned long long calls = 0;
  const void* sig = nullptr;  // the generic caller's view of its parameters (fuzz_gen.hpp)
};
std::vector<Entry>& table();
void register_driver_entries();
void register_runtime_entries();
void register_extra_entries();  // fuzz_ext.cpp: cuShim*, cuGetProcAddress, error strings, ...
void call_stub(Picker& pk);     // fuzz_ext.cpp: one of the weak NOT_SUPPORTED stubs
std::vector<std::string> stub_names(bool runtime);
void le_cleanup();  // fuzz_ext.cpp: ends the program's logical endpoints and ids
}  // namespace fz
