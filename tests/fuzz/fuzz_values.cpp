// Argument values by role (fuzz_gen.hpp): numbers, handles, and the memory pointers point at.
#include <sys/mman.h>

#include "fuzz_gen.hpp"

namespace fz {
namespace {

// Sizes of copies that touch host memory: any extent they make (pitch x height + width, a
// 1D count) stays inside the host buffer past the offset the pointer has.
constexpr uint64_t kHostBytesMost = uint64_t(8) << 20, kHostPitchMost = 8192, kHostHeightMost = 4096;

uint64_t bytes_value(Call& c, Role r) {
  Picker& pk = c.pk;
  uint64_t v;
  switch (pk.in.ConsumeIntegralInRange(0, 5)) {
    case 0: v = c.room == ~size_t{0} ? pk.size() : c.room; break;  // exactly what is left
    case 1: v = pk.in.ConsumeIntegralInRange<uint64_t>(0, c.room == ~size_t{0} ? 4096 : c.room); break;
    case 2: v = pk.in.ConsumeIntegralInRange<uint64_t>(0, 64); break;
    default: v = pk.size(); break;
  }
  if (!c.sig.host) return v;
  switch (r) {
    case Role::pitch: case Role::width: return std::min<uint64_t>(v, kHostPitchMost);
    case Role::height: return std::min<uint64_t>(v, kHostHeightMost);
    default: return std::min<uint64_t>(v, kHostBytesMost);
  }
}

std::vector<void*> sems() {
  std::vector<void*> v;
  for (const Sem& s : S.sems) v.push_back(s.h);
  return v;
}
std::vector<void*> mipmaps() {
  std::vector<void*> v;
  for (const Mipmap& m : S.mipmaps) v.push_back(m.h);
  return v;
}
template <class H>
std::vector<void*> as_void(const std::vector<H>& in) {
  std::vector<void*> v;
  for (H h : in) v.push_back(reinterpret_cast<void*>(h));
  return v;
}

char* copy_string(Call& c, const std::string& s) {
  char* p = static_cast<char*>(c.bytes(s.size() + 1));
  std::memcpy(p, s.data(), s.size());
  return p;
}

// Memory to pin: pages of the host buffer (or a part of one), or addresses nothing is mapped at.
void* reg_host(Call& c) {
  Picker& pk = c.pk;
  switch (pk.in.ConsumeIntegralInRange(0, 7)) {
    case 0: return nullptr;
    case 1: return reinterpret_cast<void*>(uintptr_t{0x1234});
    case 2: return g_hostmem + pk.in.ConsumeIntegralInRange<size_t>(0, kHostSpan);
    default: return g_hostmem + 4096 * pk.in.ConsumeIntegralInRange<size_t>(0, kHostSpan / 4096);
  }
}

}  // namespace

uint64_t scalar(Call& c, int i, size_t width, bool is_signed) {
  Picker& pk = c.pk;
  auto& in = pk.in;
  switch (c.sig.roles[i]) {
    case Role::dev: return static_cast<uint64_t>(static_cast<int64_t>(pk.device()));
    case Role::flags: {
      uint64_t f = pk.flags();
      return width == 8 && !in.ConsumeIntegralInRange(0, 15) ? in.ConsumeIntegral<uint64_t>() : f;
    }
    case Role::count: {
      c.count = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1, 4) : in.ConsumeIntegralInRange(0, 8);
      return static_cast<uint64_t>(c.count);
    }
    case Role::len: {
      int k = in.ConsumeIntegralInRange(0, 7);
      long n = k == 0 ? (is_signed ? -1 : 0) : k < 4 ? in.ConsumeIntegralInRange(0, 16) : in.ConsumeIntegralInRange(0, 300);
      c.len = n < 0 ? 0 : n;
      return static_cast<uint64_t>(n);
    }
    case Role::small: {
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k == 0) return in.ConsumeIntegral<uint64_t>();
      if (k == 1 && is_signed) return static_cast<uint64_t>(int64_t{-1});
      return in.ConsumeIntegralInRange(0, k < 5 ? 4 : 100000);
    }
    case Role::bytes: case Role::pitch: case Role::width: case Role::height:
      return bytes_value(c, c.sig.roles[i]);
    case Role::version: {
      static const uint64_t v[] = {0, 9000, 11000, 12000, 12080, 13000, 13030, 13040, 99999};
      return in.ConsumeIntegralInRange(0, 7) ? v[in.ConsumeIntegralInRange(0, 8)] : in.ConsumeIntegral<unsigned>();
    }
    case Role::le_id: {
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k < 3 && !S.le_ids.empty()) return pk.one_of(S.le_ids);
      if (k < 6 && !S.le_reserved.empty()) {
        auto it = S.le_reserved.begin();
        std::advance(it, static_cast<long>(pk.any(S.le_reserved.size())));
        return *it;
      }
      return k == 6 ? 0 : in.ConsumeIntegral<unsigned>();
    }
    case Role::dim: {
      static const uint64_t v[] = {1, 1, 1, 2, 4, 32, 256, 1024, 0, 1025, 65536};
      return in.ConsumeIntegralInRange(0, 15) ? v[in.ConsumeIntegralInRange(0, 10)] : in.ConsumeIntegral<unsigned>();
    }
    case Role::enumeration: {  // most enums count from 0 or 1 to a handful
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k < 3) return in.ConsumeIntegralInRange(0, 7);
      if (k < 5) return in.ConsumeIntegralInRange(1, 4);
      if (k == 5) return in.ConsumeIntegralInRange(0, 48);
      if (k == 6) return static_cast<uint64_t>(int64_t{-1});
      return in.ConsumeIntegral<unsigned>();
    }
    case Role::vmm: return pk.vmm();
    case Role::dev_ptr: {
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      c.room = std::min(c.room, room);
      return p;
    }
    case Role::uni_ptr: {
      size_t room = 0;
      void* p = pk.uptr(&room);
      c.room = std::min(c.room, room);
      return reinterpret_cast<uint64_t>(p);
    }
    default: {  // any value
      switch (in.ConsumeIntegralInRange(0, 5)) {
        case 0: return 0;
        case 1: return 1;
        case 2: return ~uint64_t{0};
        case 3: return in.ConsumeIntegralInRange(0, 255);
        default: return in.ConsumeIntegral<uint64_t>();
      }
    }
  }
}

void* handle(Call& c, HK k) {
  Picker& pk = c.pk;
  switch (k) {
    case HK::ctx: return pk.context();
    case HK::stream: return pk.stream();
    case HK::event: return pk.pick(S.events);
    case HK::pool: {
      if (pk.in.ConsumeIntegralInRange(0, 7) == 0) {  // a device's default pool
        CUmemoryPool p = nullptr;
        cuDeviceGetDefaultMemPool(&p, pk.in.ConsumeIntegralInRange(0, 1));
        return p;
      }
      return pk.pick(S.pools);
    }
    case HK::extmem: return pk.pick(S.extmems);
    case HK::extsem: return pk.pick(sems());
    case HK::array: return pk.pick(S.arrays);
    case HK::mipmap: return pk.pick(mipmaps());
    case HK::module: {
      std::vector<void*> v = as_void(S.modules);
      for (CUmodule m : S.lib_modules) v.push_back(m);
      return pk.pick(v);
    }
    case HK::function: return pk.pick(S.funcs);
    case HK::library: return pk.pick(S.libs);
    case HK::kernel: return pk.pick(S.kernels);
    case HK::link: return pk.pick(S.links);
    case HK::graph: return pk.pick(S.graphs);
    case HK::graph_node: return pk.pick(S.graph_nodes);
    case HK::graph_exec: return pk.pick(S.graph_execs);
    case HK::user_object: return pk.pick(S.user_objects);
    default: return pk.garbage();
  }
}

void* pointer(Call& c, int i) {
  Picker& pk = c.pk;
  auto& in = pk.in;
  switch (c.sig.roles[i]) {
    case Role::null: return nullptr;
    case Role::out: return in.ConsumeIntegralInRange(0, 15) ? c.bytes(8, 0xA5) : nullptr;
    case Role::out8: return c.bytes(8, 0xA5);
    case Role::out64: return in.ConsumeIntegralInRange(0, 15) ? c.bytes(64, 0xA5) : nullptr;
    case Role::in64: {
      if (!in.ConsumeIntegralInRange(0, 15)) return nullptr;
      void* p = c.bytes(64);
      std::vector<unsigned char> b = pk.blob();
      std::memcpy(p, b.data(), 64);
      return p;
    }
    case Role::out_bytes: return in.ConsumeIntegralInRange(0, 15) ? c.bytes(static_cast<size_t>(c.len < 0 ? 0 : c.len), 0xA5) : nullptr;
    case Role::dev_ptr: return reinterpret_cast<void*>(scalar(c, i, 8, false));
    case Role::uni_ptr: case Role::host_in: case Role::host_out: {
      size_t room = 0;
      void* p = c.sig.roles[i] == Role::uni_ptr ? pk.uptr(&room) : pk.host(&room);
      c.room = std::min(c.room, room);
      return p;
    }
    case Role::reg_host: return reg_host(c);
    case Role::user_data: return reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
    case Role::str: return in.ConsumeIntegralInRange(0, 15) ? copy_string(c, pk.name()) : nullptr;
    case Role::sym_name: {
      if (!in.ConsumeIntegralInRange(0, 15)) return nullptr;
      const Entry& e = table()[pk.any(table().size())];
      return copy_string(c, in.ConsumeIntegralInRange(0, 5) ? std::string(e.name) : in.ConsumeRandomLengthString(24));
    }
    case Role::bus_id: {
      static const char* const kIds[] = {"0000:01:00.0", "0000:02:00.0", "00000000:01:00.0", "0000:1:0.0", "01:00.0",
                                         "", "0000:ff:1f.7", "zzzz:01:00.0"};
      if (!in.ConsumeIntegralInRange(0, 15)) return nullptr;
      return copy_string(c, in.ConsumeIntegralInRange(0, 7) ? kIds[in.ConsumeIntegralInRange(0, 7)]
                                                            : in.ConsumeRandomLengthString(20));
    }
    case Role::path: {
      static const char* const kPaths[] = {"/nonexistent/x.ptx", "/dev/null", "/", "", "/proc/self/status"};
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k == 0) return nullptr;
      if (k < 4) {  // the module's text, as a file
        int fd = ::memfd_create("fuzz-ptx", MFD_CLOEXEC);
        if (fd < 0 || ::write(fd, kPtx, std::strlen(kPtx)) < 0) die("memfd", "ptx");
        auto owner = std::shared_ptr<int>(new int(fd), [](int* f) {
          ::close(*f);
          delete f;
        });
        c.keep.push_back(owner);
        return copy_string(c, "/proc/self/fd/" + std::to_string(fd));
      }
      return copy_string(c, kPaths[in.ConsumeIntegralInRange(0, 4)]);
    }
    case Role::image: {
      // The module's text, or text that is no image. In-memory images carry no size: a damaged
      // one may be read past its end (by NVIDIA's driver as well), so none is damaged here.
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k == 0) return nullptr;
      if (k < 5) return copy_string(c, kPtx);
      std::string t = in.ConsumeRandomLengthString(64);
      t.erase(std::remove(t.begin(), t.end(), '\0'), t.end());
      if (!t.empty() && (t[0] == 0x7f || static_cast<unsigned char>(t[0]) == 0x50 || static_cast<unsigned char>(t[0]) == 0xb1))
        t[0] = '.';  // no ELF, fat binary or wrapper magic
      return copy_string(c, t);
    }
    case Role::func: {
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k < 3) return &g_stub_keys[in.ConsumeIntegralInRange(0, 3)];
      if (k < 5) return pk.pick(S.kernels);
      if (k < 7) return pk.pick(S.funcs);
      return pk.garbage();
    }
    case Role::symbol: {
      c.room = std::min<size_t>(c.room, 16);  // the module's variables' size
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k < 4) return &g_var_keys[in.ConsumeIntegralInRange(0, 3)];
      if (k < 6) return g_managed_slots[in.ConsumeIntegralInRange(0, 3)];  // a managed variable's memory
      return k == 6 ? nullptr : pk.garbage();
    }
    case Role::kernel_params: {
      if (!in.ConsumeIntegralInRange(0, 7)) return nullptr;
      void** p = c.objects<void*>(8);  // more than any kernel of the module takes
      for (int k = 0; k < 8; ++k) p[k] = c.bytes(256);
      return p;
    }
    case Role::extra: {
      int k = in.ConsumeIntegralInRange(0, 7);
      if (k < 5) return nullptr;
      void** p = c.objects<void*>(5);
      if (k == 5) {
        p[0] = CU_LAUNCH_PARAM_END;
        return p;
      }
      auto* size = static_cast<size_t*>(c.bytes(sizeof(size_t)));
      *size = in.ConsumeIntegralInRange<size_t>(0, 256);
      p[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
      p[1] = c.bytes(256);
      p[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
      p[3] = size;
      p[4] = CU_LAUNCH_PARAM_END;
      return p;
    }
    default: die(c.e.name, "a pointer role without a maker");
  }
}

}  // namespace fz
