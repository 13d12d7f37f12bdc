// The table-driven caller: every CU_ENTRY / RT_ENTRY row of emu/abi/*.def becomes a table entry
// whose arguments are generated from the parameters' C++ types (deduced from the function) and
// names (the row's text), so an entry added to a .def file is fuzzed without more code. Each
// parameter gets a role at start-up (fuzz_roles.cpp); a pointer parameter whose role cannot be
// told from its type and name stops the harness, naming it, until a rule is added there.
// Included by the fuzz_table_*.cpp files only (they see every entry's declaration).
#pragma once
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fuzz.hpp"

namespace fz {

enum class HK : uint8_t {
  none, ctx, stream, event, pool, extmem, extsem, array, mipmap, module, function, library, kernel, link,
  graph, graph_node, graph_exec, user_object
};
template <class T>
struct Kind {
  static constexpr HK k = HK::none;
};
#define FZ_KIND(T, K)                   \
  template <>                           \
  struct Kind<T> {                      \
    static constexpr HK k = HK::K;      \
  };
FZ_KIND(CUcontext, ctx)
FZ_KIND(CUstream, stream)
FZ_KIND(CUevent, event)
FZ_KIND(CUmemoryPool, pool)
FZ_KIND(CUexternalMemory, extmem)
FZ_KIND(cudaExternalMemory_t, extmem)
FZ_KIND(CUexternalSemaphore, extsem)
FZ_KIND(cudaExternalSemaphore_t, extsem)
FZ_KIND(CUarray, array)
FZ_KIND(cudaArray_t, array)
FZ_KIND(cudaArray_const_t, array)
FZ_KIND(CUmipmappedArray, mipmap)
FZ_KIND(cudaMipmappedArray_t, mipmap)
FZ_KIND(cudaMipmappedArray_const_t, mipmap)
FZ_KIND(CUmodule, module)
FZ_KIND(CUfunction, function)
FZ_KIND(CUlibrary, library)
FZ_KIND(CUkernel, kernel)
FZ_KIND(CUlinkState, link)
FZ_KIND(CUgraph, graph)  // cudaGraph_t and the rest are the same types
FZ_KIND(CUgraphNode, graph_node)
FZ_KIND(CUgraphExec, graph_exec)
FZ_KIND(CUuserObject, user_object)
#undef FZ_KIND

// What a parameter's C++ type says about it.
enum class Cat : uint8_t {
  handle,       // an object handle (Kind<T>)
  handle_out,   // where a handle is written
  integer,      // arithmetic, CUdeviceptr included
  enumeration,
  function,     // a callback
  void_ptr, const_void_ptr, void_ptr_ptr, char_ptr, const_char_ptr, const_char_ptr_ptr,
  out_ptr,      // T* of a value or struct: written (or read: see the rules)
  in_ptr,       // const T* of a value or struct: read
  by_value,     // a struct passed by value
};

// What the harness passes for it.
enum class Role : uint8_t {
  handle, out, in, in_array, out_array, out_bytes,
  dev_ptr, uni_ptr, host_in, host_out, reg_host, vmm, flags, dev, count, len, small, value, bytes, pitch, width,
  height, version, le_id, dim, enumeration, callback, user_data, str, path, image, func, symbol, sym_name, bus_id,
  kernel_params, extra, out8, in64, out64, null,
};

struct Sig {
  std::vector<std::string> names;
  std::vector<Role> roles;
  std::vector<Cat> cats;
  bool host = false;  // touches host memory: sizes stay within the host buffer
  void (*effect)(struct Call&) = nullptr;
  void (*before)(struct Call&) = nullptr;
};

// Turns a row's "(T a, const U* b)" into {"a", "b"}.
std::vector<std::string> param_names(const char* params);
// The role of parameter `name` of category `cat` in `entry` (fuzz_roles.cpp); dies when no rule applies.
Role classify(const char* entry, const std::string& name, Cat cat, size_t width, const char* params);
// Suffixes (_ptsz, _ptds, _v2...) off: the name the rules and effects use.
std::string base_name(const char* entry);
void (*find_effect(const std::string& base, bool runtime))(Call&);
void (*find_before(const std::string& base))(Call&);

// One call in progress: its arguments as passed (raw[i]: the value, or the pointer), memory
// handed out (freed afterwards, so ASan sees any access past what the ABI allows).
struct Call {
  Picker& pk;
  const Entry& e;
  const Sig& sig;
  uint64_t raw[16] = {};
  long count = -1;  // elements in this call's arrays, once its count is chosen
  long len = -1;    // bytes of its output buffer, once chosen
  size_t room = ~size_t{0};
  std::vector<std::shared_ptr<void>> keep;
  template <class T>
  T arg(int i) const {
    T v{};
    std::memcpy(&v, &raw[i], sizeof(T) < sizeof raw[i] ? sizeof(T) : sizeof raw[i]);
    return v;
  }
  template <class T>
  T out(int i) const {  // what the call wrote through parameter i
    return raw[i] ? *reinterpret_cast<const T*>(raw[i]) : T{};
  }
  // n zeroed bytes (ASan knows their end); nullptr-free even for 0 bytes.
  void* bytes(size_t n, int fill = 0) {
    auto p = std::shared_ptr<unsigned char[]>(new unsigned char[n ? n : 1]);
    std::memset(p.get(), fill, n ? n : 1);
    keep.push_back(p);
    return p.get();
  }
  template <class T>
  T* objects(size_t n) {
    auto p = std::shared_ptr<T[]>(new T[n]());
    keep.push_back(p);
    return p.get();
  }
  size_t elements() const { return count < 0 ? 1 : static_cast<size_t>(count); }
};

// Scalars and pointers by role (fuzz_roles.cpp).
uint64_t scalar(Call& c, int i, size_t width, bool is_signed);
void* pointer(Call& c, int i);  // void*-like roles: host memory, device addresses, strings, ...
void* handle(Call& c, HK k);

// Struct fillers (fuzz_fill.cpp): one per struct an entry takes.
#define FZ_FILL(T) void fill(Call& c, T& v);
FZ_FILL(CUmemPoolProps)
FZ_FILL(cudaMemPoolProps)
FZ_FILL(CUmemAllocationProp)
FZ_FILL(CUmemAccessDesc)
FZ_FILL(cudaMemAccessDesc)
FZ_FILL(CUmemLocation)
FZ_FILL(cudaMemLocation)
FZ_FILL(CUDA_MEMCPY2D)
FZ_FILL(CUDA_MEMCPY3D)
FZ_FILL(CUDA_MEMCPY3D_PEER)
FZ_FILL(cudaMemcpy3DParms)
FZ_FILL(cudaMemcpy3DPeerParms)
FZ_FILL(CUDA_EXTERNAL_MEMORY_BUFFER_DESC)
FZ_FILL(CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC)
FZ_FILL(CUDA_ARRAY_DESCRIPTOR)
FZ_FILL(CUDA_ARRAY3D_DESCRIPTOR)
FZ_FILL(cudaChannelFormatDesc)
FZ_FILL(CUDA_RESOURCE_DESC)
FZ_FILL(CUDA_TEXTURE_DESC)
FZ_FILL(cudaResourceDesc)
FZ_FILL(cudaTextureDesc)
FZ_FILL(cudaExternalMemoryBufferDesc)
FZ_FILL(cudaExternalMemoryMipmappedArrayDesc)
FZ_FILL(CUlaunchConfig)
FZ_FILL(cudaLaunchConfig_t)
FZ_FILL(CUlogicalEndpointProp)
FZ_FILL(CUctxCreateParams)
FZ_FILL(CUmemPoolPtrExportData)
FZ_FILL(cudaMemPoolPtrExportData)
FZ_FILL(CUipcMemHandle)
FZ_FILL(CUipcEventHandle)
FZ_FILL(cudaIpcMemHandle_t)
FZ_FILL(cudaIpcEventHandle_t)
FZ_FILL(cudaPitchedPtr)
FZ_FILL(cudaExtent)
FZ_FILL(dim3)
FZ_FILL(CUgraphNode)  // a dependency: a node the program made, or another graph's, a dead one, garbage
#undef FZ_FILL

// A callback of exactly the type the entry takes (the sanitizers check indirect calls' types):
// it does nothing, as host functions must make no CUDA calls.
template <class F>
struct Noop;
template <class R, class... A>
struct Noop<R (*)(A...)> {
  static R fn(A...) { return R(); }
};

// ---- From types to categories ----
template <class T>
constexpr Cat category() {
  using P = std::remove_cv_t<std::remove_pointer_t<T>>;
  if constexpr (Kind<T>::k != HK::none) return Cat::handle;
  else if constexpr (std::is_pointer_v<T> && Kind<P>::k != HK::none) return Cat::handle_out;
  else if constexpr (std::is_enum_v<T>) return Cat::enumeration;
  else if constexpr (std::is_arithmetic_v<T>) return Cat::integer;
  else if constexpr (std::is_pointer_v<T> && std::is_function_v<std::remove_pointer_t<T>>) return Cat::function;
  else if constexpr (std::is_same_v<T, void*>) return Cat::void_ptr;
  else if constexpr (std::is_same_v<T, const void*>) return Cat::const_void_ptr;
  else if constexpr (std::is_same_v<T, void**>) return Cat::void_ptr_ptr;
  else if constexpr (std::is_same_v<T, char*>) return Cat::char_ptr;
  else if constexpr (std::is_same_v<T, const char*>) return Cat::const_char_ptr;
  else if constexpr (std::is_same_v<T, const char**>) return Cat::const_char_ptr_ptr;
  else if constexpr (std::is_pointer_v<T> && std::is_const_v<std::remove_pointer_t<T>>) return Cat::in_ptr;
  else if constexpr (std::is_pointer_v<T>) return Cat::out_ptr;
  else return Cat::by_value;
}

// Fills a struct when the harness knows it, else leaves it zeroed (an output).
template <class T>
auto fill_if(Call& c, T& v, int) -> decltype(fill(c, v), void()) {
  fill(c, v);
}
template <class T>
void fill_if(Call&, T&, long) {}

template <class T>
T make(Call& c, int i) {
  constexpr Cat cat = category<T>();
  const Role r = c.sig.roles[i];
  if constexpr (cat == Cat::handle) {
    return (T)(handle(c, Kind<T>::k));
  } else if constexpr (cat == Cat::integer || cat == Cat::enumeration) {
    uint64_t v = scalar(c, i, sizeof(T), std::is_signed_v<T> || cat == Cat::enumeration);
    T out;
    std::memcpy(&out, &v, sizeof out);  // little-endian: the low bytes
    return out;
  } else if constexpr (cat == Cat::by_value) {
    T v{};
    fill_if(c, v, 0);
    return v;
  } else if constexpr (cat == Cat::function) {
    return r == Role::null || c.pk.in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : &Noop<T>::fn;
  } else if constexpr (cat == Cat::in_ptr || cat == Cat::out_ptr || cat == Cat::handle_out ||
                       cat == Cat::const_char_ptr_ptr) {
    using P = std::remove_cv_t<std::remove_pointer_t<T>>;
    if (r == Role::null || (r != Role::in && r != Role::in_array && c.pk.in.ConsumeIntegralInRange(0, 15) == 0) ||
        ((r == Role::in || r == Role::in_array) && c.pk.in.ConsumeIntegralInRange(0, 31) == 0))
      return nullptr;  // NULL where a pointer is required: INVALID_VALUE
    if constexpr (std::is_same_v<P, void*> || std::is_same_v<P, const void*>) {
      if (r != Role::out && r != Role::out_array) return reinterpret_cast<T>(pointer(c, i));
    }
    const size_t n = (r == Role::in_array || r == Role::out_array) ? c.elements() : 1;
    P* p = c.objects<P>(n);
    if (r == Role::in || r == Role::in_array)
      for (size_t k = 0; k < n; ++k) fill_if(c, p[k], 0);
    else if (r == Role::out || r == Role::out_array)
      std::memset(static_cast<void*>(p), 0xA5, sizeof(P) * n);  // what was there before the call
    return p;
  } else {
    return reinterpret_cast<T>(pointer(c, i));
  }
}

// Generates the arguments (counts and lengths first: arrays are sized by them), calls, checks
// the code, and books what the call made or ended.
template <class R, class... A, size_t... I>
void run_with(Picker& pk, const Entry& e, std::index_sequence<I...>) {
  const Sig& sig = *static_cast<const Sig*>(e.sig);
  Call c{pk, e, sig};
  std::tuple<A...> args{};
  auto gen = [&](auto& slot, int i, bool first) {
    const bool sizing = sig.roles[i] == Role::count || sig.roles[i] == Role::len;
    if (sizing != first) return;
    slot = make<std::remove_reference_t<decltype(slot)>>(c, i);
    if constexpr (sizeof(slot) <= 8) std::memcpy(&c.raw[i], &slot, sizeof slot);
  };
  (gen(std::get<I>(args), static_cast<int>(I), true), ...);
  (gen(std::get<I>(args), static_cast<int>(I), false), ...);
  if (sig.before) sig.before(c);
  auto fn = reinterpret_cast<R (*)(A...)>(e.fn);
  R r = std::apply(fn, args);
  check_entry(e.name, e.runtime, static_cast<int>(r));
  if (static_cast<int>(r) == 0 && sig.effect) sig.effect(c);
}

template <class R, class... A>
void run_generic(Picker& pk, const Entry& e) {
  run_with<R, A...>(pk, e, std::index_sequence_for<A...>{});
}

// The type's spelling for messages: the row's own text is enough.
template <class R, class... A>
void add_entry(const char* name, const char* params, R (*fn)(A...), bool runtime,
               void (*custom)(Picker&, const Entry&) = nullptr) {
  static_assert(sizeof...(A) <= 16, "more parameters than Call::raw holds");
  static auto* sigs = new std::vector<std::unique_ptr<Sig>>;  // never destroyed, as the table
  sigs->emplace_back(new Sig);
  Sig* sig = sigs->back().get();
  sig->names = param_names(params);
  if (sig->names.size() != sizeof...(A)) die(name, "its .def row's parameter list does not match its declaration");
  const Cat cats[] = {category<A>()..., Cat::integer};
  const size_t widths[] = {sizeof(A)..., 0};
  const std::string base = base_name(name);
  if (!custom)
    for (size_t i = 0; i < sizeof...(A); ++i) {
      sig->cats.push_back(cats[i]);
      sig->roles.push_back(classify(name, sig->names[i], cats[i], widths[i], params));
      const Role r = sig->roles.back();
      if (r == Role::host_in || r == Role::host_out || r == Role::uni_ptr || r == Role::reg_host) sig->host = true;
    }
  sig->effect = find_effect(base, runtime);
  sig->before = find_before(base);
  table().push_back({name, params, custom ? custom : &run_generic<R, A...>, reinterpret_cast<void*>(fn), runtime, 0, sig});
}

}  // namespace fz
