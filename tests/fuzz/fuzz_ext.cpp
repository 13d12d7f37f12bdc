// The exports that are not CU_ENTRY / RT_ENTRY rows: cuGetProcAddress and cuGetExportTable,
// the cuShim* extensions, the runtime's error strings and channel descriptors, the
// registration ABI nvcc's host code calls (RT_HOST rows), and the weak stubs that answer
// NOT_SUPPORTED for everything not implemented (one generic caller). Built with
// __CUDA_API_VERSION_INTERNAL, so cuGetProcAddress is the CUDA 11.3 entry (no status).
#include <dlfcn.h>

#include <map>

#include "abi/rt_table.hpp"
#include "fuzz_custom.hpp"

extern "C" {
#define RT_HOST(ret, name, params, args) ret CUDARTAPI name params;
#include "abi/runtime_hosting.def"
#undef RT_HOST
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream);
}

namespace fz {

char g_stub_keys[4];
char g_var_keys[4];
void* g_managed_slots[4];

namespace {
using custom::check;
using custom::maybe;

// A buffer of exactly len bytes for the cuShim* text getters, or NULL with len 0.
struct Text {
  std::unique_ptr<char[]> buf;
  size_t len;
  explicit Text(Picker& pk) : len(pk.in.ConsumeIntegralInRange(0, 3) ? pk.in.ConsumeIntegralInRange<size_t>(1, 600) : 0) {
    if (len) buf.reset(new char[len]);
  }
  char* get() { return buf.get(); }
  // The copy rules of every cuShim* text getter: at most len-1 bytes and a terminator.
  void check_copy(const char* api, size_t full) const {
    if (!len) return;
    size_t n = strnlen(buf.get(), len);
    if (n == len) die(api, "left the buffer without a terminator");
    if (n != std::min(full, len - 1)) die(api, "copied " + std::to_string(n) + " bytes of a message of " + std::to_string(full));
  }
};

template <class F>
void text_getter(Picker& pk, const char* api, F fn) {
  Text t(pk);
  if (t.len) t.buf[0] = 'x';
  size_t full = fn(t.get(), t.len);
  seen(api, 0);
  t.check_copy(api, full);
}

std::string symbol_name(Picker& pk) {
  int k = pk.in.ConsumeIntegralInRange(0, 7);
  if (k < 4) return table()[pk.any(table().size())].name;
  if (k < 6) {
    std::string s = table()[pk.any(table().size())].name;  // a base name, as loaders ask
    return base_name(s.c_str());
  }
  if (k == 6) {
    auto stubs = stub_names(false);
    return stubs.empty() ? "cuNoSuchFunction" : stubs[pk.any(stubs.size())];
  }
  return pk.in.ConsumeRandomLengthString(24);
}

int version(Picker& pk) {
  static const int v[] = {0, 9000, 11030, 12000, 12080, 13000, 13030, 13040, 99999, -1};
  return pk.in.ConsumeIntegralInRange(0, 7) ? v[pk.in.ConsumeIntegralInRange(0, 9)] : pk.in.ConsumeIntegral<int>();
}

void proc_address(Picker& pk, const Entry& e) {
  std::string name = symbol_name(pk);
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  const unsigned long long flags = pk.in.ConsumeIntegralInRange(0, 7) ? pk.in.ConsumeIntegralInRange(0u, 4u)
                                                                      : pk.in.ConsumeIntegral<unsigned long long>();
  const char* sym = pk.in.ConsumeIntegralInRange(0, 15) ? name.c_str() : nullptr;
  if (!std::strcmp(e.name, "cuGetProcAddress_v2"))
    check(e, cuGetProcAddress_v2(sym, maybe(pk, &fn), version(pk), flags, maybe(pk, &status)));
  else
    check(e, cuGetProcAddress(sym, maybe(pk, &fn), version(pk), flags));
}

void export_table(Picker& pk, const Entry& e) {
  CUuuid id{};
  switch (pk.in.ConsumeIntegralInRange(0, 3)) {
    case 0: std::memcpy(&id, &cuda_shim::rt_bridge::kRuntimeTableId, sizeof id); break;
    case 1: break;
    default:
      for (char& b : id.bytes) b = static_cast<char>(pk.in.ConsumeIntegral<unsigned char>());
  }
  const void* t = nullptr;
  check(e, cuGetExportTable(maybe(pk, &t), maybe(pk, &id)));
}

void shim(Picker& pk, const Entry& e) {
  auto& in = pk.in;
  const std::string n = e.name;
  if (n == "cuShimGetLastExplanation") text_getter(pk, e.name, cuShimGetLastExplanation);
  else if (n == "cuShimIpcState") text_getter(pk, e.name, cuShimIpcState);
  else if (n == "cuShimLogicalEndpointState") text_getter(pk, e.name, cuShimLogicalEndpointState);
  else if (n == "cuShimGetLastManagedViolation") text_getter(pk, e.name, cuShimGetLastManagedViolation);
  else if (n == "cuShimGetLastExplanationCode") seen(e.name, cuShimGetLastExplanationCode() < 0 ? -1 : 0);
  else if (n == "cuShimManagedViolations") seen(e.name, (cuShimManagedViolations(), 0));
  else if (n == "cuShimGetVersion") seen(e.name, cuShimGetVersion() > 0 ? 0 : -1);
  else if (n == "cuShimGetLaunchCount") seen(e.name, (cuShimGetLaunchCount(), 0));
  else if (n == "cuShimRegistryCheck") {
    Text t(pk);
    int problems = cuShimRegistryCheck(t.get(), t.len);
    seen(e.name, problems);
    if (problems != 0) die(e.name, "the registry has problems: " + std::string(t.len ? t.get() : ""));
  } else if (n == "cuShimGetObjectCounts") {
    const size_t sizes[] = {0, sizeof(CUshimObjectCounts) - 1, sizeof(CUshimObjectCounts), sizeof(CUshimObjectCounts) + 8};
    size_t size = sizes[in.ConsumeIntegralInRange(0, 3)];
    std::unique_ptr<unsigned char[]> b(new unsigned char[size ? size : 1]);
    int r = cuShimGetObjectCounts(in.ConsumeIntegralInRange(0, 7) ? reinterpret_cast<CUshimObjectCounts*>(b.get()) : nullptr, size);
    seen(e.name, r);
  } else if (n == "cuShimExportableSemaphoreCreate") {
    int fd = -1;
    int r = cuShimExportableSemaphoreCreate(maybe(pk, &fd), in.ConsumeIntegralInRange(0, 3) ? in.ConsumeBool() : in.ConsumeIntegral<int>(),
                                            in.ConsumeIntegralInRange<unsigned long long>(0, 8));
    check(e, static_cast<CUresult>(r));
    if (r == CUDA_SUCCESS) keep_fd(fd);  // the program's: imported later only as a foreign fd
  } else if (n == "cuShimExportableSemaphoreSignal") {
    int fd = pk.fd();
    // Signals only move the objects waits may be on upwards (see Sem): a lower value could
    // leave a wait the program enqueued unsatisfied for good.
    unsigned long long v = holds(S.sem_object_fds, fd) ? (~0ull >> 2) + in.ConsumeIntegralInRange(0u, 8u)
                                                       : in.ConsumeIntegral<unsigned long long>();
    check(e, static_cast<CUresult>(cuShimExportableSemaphoreSignal(fd, v)));
  } else if (n == "cuShimExportableSemaphoreGetValue") {
    unsigned long long v = 0;
    check(e, static_cast<CUresult>(cuShimExportableSemaphoreGetValue(pk.fd(), maybe(pk, &v))));
  } else if (n == "cuShimExportableSemaphoreWait") {
    int fd = pk.fd();
    if (holds(S.sem_object_fds, fd)) fd = -1;  // a binary wait takes the signal a stream's wait was promised
    check(e, static_cast<CUresult>(cuShimExportableSemaphoreWait(fd, in.ConsumeIntegralInRange<unsigned long long>(0, 4),
                                                                  in.ConsumeIntegralInRange(0u, 5u))));
  } else if (n == "cuShimGetManagedAttachment") {
    unsigned flags = 0;
    unsigned long long id = 0;
    check(e, static_cast<CUresult>(cuShimGetManagedAttachment(pk.dptr(), maybe(pk, &flags), maybe(pk, &id))));
  } else if (n == "cuShimLogicalEndpointAccess") {
    size_t size = in.ConsumeIntegralInRange<size_t>(0, 4096);
    std::unique_ptr<unsigned char[]> b(new unsigned char[size ? size : 1]());
    unsigned id = S.le_ids.empty() || !in.ConsumeIntegralInRange(0, 3) ? in.ConsumeIntegral<unsigned>() : pk.one_of(S.le_ids);
    check(e, static_cast<CUresult>(cuShimLogicalEndpointAccess(id, in.ConsumeIntegralInRange(-1, 2),
                                                               in.ConsumeBool() ? 0 : pk.size(), maybe(pk, b.get()),
                                                               size, in.ConsumeBool())));
  } else if (n == "cuShimGetLaunchRecord") {
    unsigned long long count = cuShimGetLaunchCount();
    const unsigned long long idx[] = {0, count ? count - 1 : 0, count, count > 4096 ? count - 4097 : ~0ull};
    CUshimLaunchRecord rec{};
    Text t(pk);
    check(e, static_cast<CUresult>(cuShimGetLaunchRecord(idx[in.ConsumeIntegralInRange(0, 3)], maybe(pk, &rec), t.get(), t.len)));
  } else if (n == "cuShimSetFaults") {
    // Random text, nearly always refused; a spec that parses is removed at once, so that no rule
    // changes what the other entries answer.
    const std::string spec = in.ConsumeRandomLengthString(48);
    int r = cuShimSetFaults(in.ConsumeIntegralInRange(0, 7) ? spec.c_str() : nullptr);
    cuShimSetFaults(nullptr);
    check(e, r);
  } else {
    die(e.name, "no caller");
  }
}

void runtime_special(Picker& pk, const Entry& e) {
  auto& in = pk.in;
  const std::string n = e.name;
  const auto code = static_cast<cudaError_t>(in.ConsumeIntegralInRange(0, 3) ? in.ConsumeIntegralInRange(0, 1000)
                                                                             : in.ConsumeIntegral<int>());
  if (n == "cudaGetErrorName" || n == "cudaGetErrorString") {
    const char* s = n == "cudaGetErrorName" ? cudaGetErrorName(code) : cudaGetErrorString(code);
    if (!s) die(e.name, "returned NULL");
    seen(e.name, 0);
  } else if (n == "cudaGetLastError" || n == "cudaPeekAtLastError") {
    cudaError_t r = n == "cudaGetLastError" ? cudaGetLastError() : cudaPeekAtLastError();
    if (std::strstr(cudaGetErrorName(r), "unrecognized")) die(e.name, "an undefined code");
    seen(e.name, 0);
  } else if (n == "cudaCreateChannelDesc") {
    int x = in.ConsumeIntegral<int>(), y = in.ConsumeIntegral<int>(), z = in.ConsumeIntegral<int>(), w = in.ConsumeIntegral<int>();
    cudaChannelFormatDesc d = cudaCreateChannelDesc(x, y, z, w, static_cast<cudaChannelFormatKind>(code));
    if (d.x != x || d.y != y || d.z != z || d.w != w || d.f != static_cast<cudaChannelFormatKind>(code)) die(e.name, "changed a field");
    seen(e.name, 0);
  } else {
    die(e.name, "no caller");
  }
}

// The registration ABI: fat binaries (the module's text, or text that is none), kernel stubs,
// variables and managed variables under this harness's keys.
void** fatbin_handle(Picker& pk) {
  return !S.fatbins.empty() && pk.in.ConsumeIntegralInRange(0, 7) ? pk.one_of(S.fatbins)
                                                                 : static_cast<void**>(pk.dead());
}
const char* device_name(Picker& pk, std::string& keep) {
  keep = pk.name();
  return pk.in.ConsumeIntegralInRange(0, 15) ? keep.c_str() : nullptr;
}

void hosting(Picker& pk, const Entry& e) {
  auto& in = pk.in;
  const std::string n = e.name;
  std::string name;
  if (n == "__cudaRegisterFatBinary") {
    auto image = std::make_shared<std::string>(in.ConsumeIntegralInRange(0, 3) ? kPtx : in.ConsumeRandomLengthString(64));
    void** h = __cudaRegisterFatBinary(image->data());
    if (!h) die(e.name, "returned NULL");
    S.fatbins.push_back(h);
    S.fatbin_images.push_back(image);
  } else if (n == "__cudaRegisterFatBinaryEnd") {
    __cudaRegisterFatBinaryEnd(fatbin_handle(pk));
  } else if (n == "__cudaUnregisterFatBinary") {
    void** h = fatbin_handle(pk);
    __cudaUnregisterFatBinary(h);
    erase_value(S.fatbins, h);
  } else if (n == "__cudaRegisterFunction") {
    __cudaRegisterFunction(fatbin_handle(pk), &g_stub_keys[in.ConsumeIntegralInRange(0, 3)], nullptr, device_name(pk, name),
                           -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  } else if (n == "__cudaRegisterVar") {
    __cudaRegisterVar(fatbin_handle(pk), &g_var_keys[in.ConsumeIntegralInRange(0, 3)], nullptr, device_name(pk, name), 0,
                      in.ConsumeIntegralInRange<size_t>(0, 64), in.ConsumeBool(), 0);
  } else if (n == "__cudaRegisterManagedVar") {
    __cudaRegisterManagedVar(fatbin_handle(pk), &g_managed_slots[in.ConsumeIntegralInRange(0, 3)], nullptr,
                             device_name(pk, name), 0, in.ConsumeIntegralInRange<size_t>(0, 64), 0, 0);
  } else if (n == "__cudaInitModule") {
    __cudaInitModule(fatbin_handle(pk));
  } else if (n == "__cudaPushCallConfiguration") {
    dim3 g(in.ConsumeIntegralInRange(0u, 4u)), b(in.ConsumeIntegralInRange(0u, 1025u));
    __cudaPushCallConfiguration(g, b, in.ConsumeIntegralInRange<size_t>(0, 100), pk.stream());
  } else {
    die(e.name, "no caller");
  }
  seen(e.name, 0);
  cudaGetLastError();
}

void add(const char* name, void (*run)(Picker&, const Entry&), bool runtime) {
  table().push_back({name, "", run, nullptr, runtime, 0, nullptr});
}

}  // namespace

std::vector<Entry>& table() {
  static auto* t = new std::vector<Entry>;  // never destroyed: reachable until the process ends
  return *t;
}

void register_extra_entries() {
  add("cuGetProcAddress", proc_address, false);
  add("cuGetProcAddress_v2", proc_address, false);
  add("cuGetExportTable", export_table, false);
  for (const char* n : {"cuShimGetLastExplanation", "cuShimGetLastExplanationCode", "cuShimIpcState",
                        "cuShimRegistryCheck", "cuShimLogicalEndpointState", "cuShimLogicalEndpointAccess",
                        "cuShimGetObjectCounts", "cuShimGetVersion", "cuShimExportableSemaphoreCreate",
                        "cuShimExportableSemaphoreSignal", "cuShimExportableSemaphoreGetValue",
                        "cuShimExportableSemaphoreWait", "cuShimGetManagedAttachment", "cuShimManagedViolations",
                        "cuShimGetLastManagedViolation", "cuShimGetLaunchCount", "cuShimGetLaunchRecord",
                        "cuShimSetFaults"})
    add(n, shim, false);
  for (const char* n : {"cudaGetErrorName", "cudaGetErrorString", "cudaGetLastError", "cudaPeekAtLastError",
                        "cudaCreateChannelDesc"})
    add(n, runtime_special, true);
#define RT_HOST(ret, name, params, args) add(#name, hosting, true);
#include "abi/runtime_hosting.def"
#undef RT_HOST
}

std::vector<std::string> stub_names(bool runtime) {
  static std::vector<std::string> names[2];
  static bool done = false;
  if (!done) {
    std::set<std::string> implemented;
    for (const Entry& e : table()) implemented.insert(e.name);
    static const char* const kDriver[] = {
#define CU_SYM(name) #name,
#include "abi/driver_symbols.def"
#undef CU_SYM
    };
    static const char* const kRuntime[] = {
#define RT_SYM(name) #name,
#define RT_SYM_SPECIAL(name)
#include "abi/runtime_symbols.def"
#undef RT_SYM
#undef RT_SYM_SPECIAL
    };
    for (const char* n : kDriver)
      if (!implemented.count(n)) names[0].push_back(n);
    for (const char* n : kRuntime)
      if (!implemented.count(n)) names[1].push_back(n);
    done = true;
  }
  return names[runtime ? 1 : 0];
}

// A weak stub, called as what it is (int f() noexcept): NOT_SUPPORTED with its explanation, and
// for the runtime the last error set to it.
void call_stub(Picker& pk) {
  const bool rt = pk.in.ConsumeBool();
  const std::vector<std::string>& names = stub_names(rt);
  if (names.empty()) return;
  const std::string& n = names[pk.any(names.size())];
  using Stub = int (*)() noexcept;
  auto f = reinterpret_cast<Stub>(::dlsym(RTLD_DEFAULT, n.c_str()));
  if (!f) die(n.c_str(), "is not exported");
  int r = f();
  seen(n, r);
  if (r != CUDA_ERROR_NOT_SUPPORTED) die(n.c_str(), "a stub answered " + std::to_string(r) + ", not NOT_SUPPORTED");
  if (rt ? cudaGetLastError() != cudaErrorNotSupported : cuShimGetLastExplanationCode() != CUDA_ERROR_NOT_SUPPORTED)
    die(n.c_str(), rt ? "did not set the last error" : "recorded no explanation");
}

void le_cleanup() {
  for (unsigned id : S.le_ids) cuLogicalEndpointDestroy(id);
  for (unsigned id : S.le_reserved) cuLogicalEndpointIdRelease(id, 1);
  dim3 g, b;
  size_t shm;
  void* s;
  while (__cudaPopCallConfiguration(&g, &b, &shm, &s) == cudaSuccess) {
  }
  cudaGetLastError();
  for (void*& p : g_managed_slots) p = nullptr;
}

}  // namespace fz
