// The JIT linker: cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkDestroy.
// NVIDIA's driver compiles and links its inputs into a cubin. Here the kernel engine runs PTX,
// so the linker joins the PTX of its inputs (PTX text, or the PTX a fat binary carries) into one
// module and hands back a fat binary holding that PTX: every loader takes it (cuModuleLoadData,
// cuLibraryLoadData), and clients that treat the "cubin" as opaque bytes, as numba-cuda and
// cuda.core do, load it unchanged. Declarations one input makes and another defines (.extern
// .func, .extern variables) resolve when the engine lowers the joined text.
//
// The joining itself (link_input_ptx, link_ptx: link.hpp) is shared with our libnvJitLink.so.13
// (emu/nvjitlink/), which reaches it through cuShimLinkInputPtx / cuShimLinkPtx
// (cuda_shim_ext.h): one definition for both linkers.
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/registry.hpp"
#include "module/image.hpp"
#include "module/link.hpp"
#include "module/module.hpp"
#include "module/ptx_regs.hpp"

namespace cuda_shim::module {
namespace {

struct LinkState {
  std::mutex m;
  std::vector<std::string> ptx;  // each input's PTX, header directives and all
  int cc = 0;                    // the compute capability the link is for
  std::vector<uint8_t> out;      // the image cuLinkComplete made (owned by the state)
  char* info_log = nullptr;
  size_t info_size = 0;
  char* error_log = nullptr;
  size_t error_size = 0;
  int max_regs = 0;  // CU_JIT_MAX_REGISTERS given to cuLinkCreate: every kernel's limit
};

Registry<LinkState>& links() {
  static auto* r = new Registry<LinkState>;
  return *r;
}

// Writes `text` into a log buffer the caller gave (CU_JIT_*_LOG_BUFFER), NUL-terminated.
void log_to(char* buf, size_t size, const std::string& text) {
  if (!buf || !size) return;
  size_t n = std::min(size - 1, text.size());
  std::memcpy(buf, text.data(), n);
  buf[n] = 0;
}

// Reads the options cuLinkCreate or cuLinkAddData was given; a register limit goes to `max_regs`
// (the whole link's, or one input's).
Errc read_options(LinkState& s, unsigned n, CUjit_option* opts, void** vals, int& max_regs, const char* api) {
  if (n && (!opts || !vals))
    return fail(Errc::invalid_value, "{}: {} options given, but the option or value array is NULL", api, n);
  for (unsigned i = 0; i < n; ++i) {
    switch (opts[i]) {
      case CU_JIT_INFO_LOG_BUFFER: s.info_log = static_cast<char*>(vals[i]); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: s.info_size = reinterpret_cast<uintptr_t>(vals[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER: s.error_log = static_cast<char*>(vals[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: s.error_size = reinterpret_cast<uintptr_t>(vals[i]); break;
      case CU_JIT_TARGET: s.cc = static_cast<int>(reinterpret_cast<uintptr_t>(vals[i])); break;
      case CU_JIT_MAX_REGISTERS: max_regs = static_cast<int>(static_cast<unsigned>(reinterpret_cast<uintptr_t>(vals[i]))); break;
      default:
        if (opts[i] >= CU_JIT_NUM_OPTIONS)
          return fail(Errc::invalid_value, "{}: option {} is not a CUjit_option", api, static_cast<int>(opts[i]));
        break;  // optimisation levels, caches, ...: nothing to do without a JIT
    }
  }
  return Errc::success;
}

Errc lookup(CUlinkState h, const char* api, std::shared_ptr<LinkState>& out) {
  out = h ? links().find(h) : nullptr;
  if (!out) return fail(Errc::invalid_handle, "{}: {} is not a live link state", api, static_cast<void*>(h));
  return Errc::success;
}

bool header_line(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return false;
  line.remove_prefix(i);
  return line.rfind(".version", 0) == 0 || line.rfind(".target", 0) == 0 || line.rfind(".address_size", 0) == 0;
}

// The inputs as one PTX text: the newest .version, the first input's .target, the bodies after.
std::string join(const std::vector<std::string>& inputs) {
  int major = 0, minor = 0;
  std::string target;
  for (const std::string& t : inputs) {
    size_t at = t.find(".version");
    if (at != std::string::npos) {
      int a = 0, b = 0;
      if (std::sscanf(t.c_str() + at, ".version %d.%d", &a, &b) == 2 && (a > major || (a == major && b > minor)))
        major = a, minor = b;
    }
    size_t tg = t.find(".target");
    if (target.empty() && tg != std::string::npos) target = t.substr(tg, t.find('\n', tg) - tg);
  }
  std::string out = fmt::format(".version {}.{}\n{}\n.address_size 64\n", major, minor, target);
  for (const std::string& t : inputs) {
    size_t b = 0;
    while (b < t.size()) {
      size_t e = t.find('\n', b);
      if (e == std::string::npos) e = t.size();
      std::string_view line(t.data() + b, e - b);
      if (!header_line(line)) {
        out.append(line);
        out.push_back('\n');
      }
      b = e + 1;
    }
  }
  return out;
}

// A fat binary container holding one PTX entry for compute capability cc.
std::vector<uint8_t> wrap_ptx(const std::string& ptx, int cc, int ptx_version) {
  const uint64_t payload = (ptx.size() + 1 + 7) & ~uint64_t{7};
  const uint64_t entry = 64 + payload;
  std::vector<uint8_t> out(16 + entry, 0);
  auto put = [&](size_t at, auto v) { std::memcpy(out.data() + at, &v, sizeof v); };
  put(0, uint32_t{0xBA55ED50});
  put(4, uint16_t{1});
  put(6, uint16_t{16});
  put(8, entry);
  uint8_t* h = out.data() + 16;
  (void)h;
  put(16 + 0, uint16_t{1});  // PTX
  put(16 + 2, uint16_t{0x0101});
  put(16 + 4, uint32_t{64});
  put(16 + 8, payload);
  put(16 + 24, static_cast<uint16_t>(ptx_version % 10));
  put(16 + 26, static_cast<uint16_t>(ptx_version / 10));
  put(16 + 28, static_cast<uint32_t>(cc));
  put(16 + 56, static_cast<uint64_t>(ptx.size() + 1));
  std::memcpy(out.data() + 16 + 64, ptx.data(), ptx.size());
  return out;
}

// The device runtime library (libcudadevrt.a) is machine code; what kernels call of it for
// cooperative groups' grid barrier is written here in PTX instead, so a link that adds the library
// (numba-cuda does, for cg.this_grid().sync()) gets these. They follow the grid workspace protocol
// nvcc inlines for grid.sync(): one thread a block adds to the counter at workspace + 4 (block 0 a
// value that flips its top bit once every block has added), then spins until the bit flips.
constexpr const char* kDeviceRuntimePtx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(.param .b32 scope)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %envreg1;
  mov.u32 %r2, %envreg2;
  cvt.u64.u32 %rd1, %r1;
  cvt.u64.u32 %rd2, %r2;
  shl.b64 %rd1, %rd1, 32;
  or.b64 %rd3, %rd1, %rd2;
  st.param.b64 [func_retval0], %rd3;
  ret;
}
.visible .func (.param .b32 func_retval0) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [handle];
  barrier.sync 0;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  or.b32 %r4, %r1, %r2;
  or.b32 %r4, %r4, %r3;
  setp.ne.u32 %p1, %r4, 0;
  @%p1 bra $L_done;
  add.s64 %rd2, %rd1, 4;
  mov.u32 %r5, %nctaid.x;
  mov.u32 %r6, %nctaid.y;
  mov.u32 %r7, %nctaid.z;
  mul.lo.u32 %r8, %r5, %r6;
  mul.lo.u32 %r8, %r8, %r7;
  mov.u32 %r9, %ctaid.x;
  mov.u32 %r10, %ctaid.y;
  mov.u32 %r11, %ctaid.z;
  or.b32 %r12, %r9, %r10;
  or.b32 %r12, %r12, %r11;
  setp.eq.u32 %p2, %r12, 0;
  mov.u32 %r13, -2147483647;
  sub.s32 %r13, %r13, %r8;
  selp.b32 %r14, %r13, 1, %p2;
  atom.add.release.gpu.u32 %r15, [%rd2], %r14;
$L_spin:
  ld.acquire.gpu.u32 %r1, [%rd2];
  xor.b32 %r2, %r1, %r15;
  setp.gt.s32 %p3, %r2, -1;
  @%p3 bra $L_spin;
$L_done:
  barrier.sync 0;
  mov.u32 %r1, 0;
  st.param.b32 [func_retval0], %r1;
  ret;
}
)";

// libcudadevrt.a: an ar archive whose one member is cuda_device_runtime.o (its device symbols lie in
// a compressed fat binary; the member's name is plain).
bool is_device_runtime(const void* data, size_t size) {
  static constexpr std::string_view kMagic = "!<arch>\n", kSymbol = "cuda_device_runtime";
  if (!data || size < kMagic.size() || std::memcmp(data, kMagic.data(), kMagic.size()) != 0) return false;
  std::string_view bytes(static_cast<const char*>(data), size);
  return bytes.find(kSymbol) != std::string_view::npos;
}

}  // namespace

// One input's PTX: the text itself, or what a fat binary carries for compute capability cc.
Errc link_input_ptx(int type, const void* data, size_t size, const char* name, int cc, std::string& out,
                    const char* api) {
  if (!name) name = "input";
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      const char* t = static_cast<const char*>(data);
      out.assign(t, size ? strnlen(t, size) : std::strlen(t));
      Image probe;
      if (Errc e = parse_ptx(out.c_str(), out.size(), probe, api); e != Errc::success)
        return fail(e, "{}: PTX input '{}': {}", api, name, explanation());
      return Errc::success;
    }
    case CU_JIT_INPUT_FATBINARY: {
      Image img;
      if (Errc e = parse_image(data, size, cc, img, api); e != Errc::success)
        return fail(e, "{}: fat binary input '{}': {}", api, name, explanation());
      if (img.ptx.empty())
        return fail(Errc::not_supported, "{}: fat binary '{}' holds machine code and no PTX; the kernel engine links "
                    "and runs PTX only", api, name);
      out = img.ptx;
      return Errc::success;
    }
    case CU_JIT_INPUT_LIBRARY:
      if (is_device_runtime(data, size)) {
        out = kDeviceRuntimePtx;
        return Errc::success;
      }
      [[fallthrough]];
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_OBJECT:
      return fail(Errc::not_supported, "{}: input '{}' is machine code (CUjitInputType {}); the kernel engine links and "
                  "runs PTX only", api, name, type);
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUjitInputType this driver links", api, type);
  }
}

// The inputs joined into one PTX module, and a fat binary holding it for compute capability cc,
// checked by the loaders' own parser.
Errc link_ptx(const std::vector<std::string>& inputs, int cc, int max_regs, std::string& joined,
              std::vector<uint8_t>& image, const char* api) {
  if (inputs.empty()) return fail(Errc::invalid_value, "{}: nothing was added to the link", api);
  joined = join(inputs);
  if (max_regs > 0) joined = limit_registers(joined, max_regs);
  int version = 0;
  if (size_t at = joined.find(".version"); at != std::string::npos) {
    int a = 0, b = 0;
    if (std::sscanf(joined.c_str() + at, ".version %d.%d", &a, &b) == 2) version = a * 10 + b;
  }
  image = wrap_ptx(joined, cc, version);
  Image check;
  return parse_image(image.data(), image.size(), cc, check, api);
}

}  // namespace cuda_shim::module

namespace cuda_shim::api {
using module::LinkState;

Errc cuLinkCreate_v2(unsigned int n, CUjit_option* opts, void** vals, CUlinkState* out) noexcept {
  const char* api = "cuLinkCreate";
  TRY(need(out, api, "stateOut"));
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  auto s = std::make_shared<LinkState>();
  s->cc = module::compute_capability(*ctx);
  TRY(module::read_options(*s, n, opts, vals, s->max_regs, api));
  *out = reinterpret_cast<CUlinkState>(module::links().add_fresh(std::move(s)));
  return Errc::success;
}
Errc cuLinkCreate(unsigned int n, CUjit_option* opts, void** vals, CUlinkState* out) noexcept {
  return api::cuLinkCreate_v2(n, opts, vals, out);
}

Errc cuLinkAddData_v2(CUlinkState h, CUjitInputType type, void* data, size_t size, const char* name, unsigned int n,
                      CUjit_option* opts, void** vals) noexcept {
  const char* api = "cuLinkAddData";
  std::shared_ptr<LinkState> s;
  TRY(module::lookup(h, api, s));
  TRY(need(data, api, "data"));
  std::lock_guard lk(s->m);
  int max_regs = 0;  // this input's own limit
  TRY(module::read_options(*s, n, opts, vals, max_regs, api));
  std::string ptx;
  if (Errc e = module::link_input_ptx(type, data, size, name, s->cc, ptx, api); e != Errc::success) {
    module::log_to(s->error_log, s->error_size, explanation());
    return e;
  }
  if (max_regs > 0) ptx = module::limit_registers(ptx, max_regs);
  s->ptx.push_back(std::move(ptx));
  return Errc::success;
}
Errc cuLinkAddData(CUlinkState h, CUjitInputType type, void* data, size_t size, const char* name, unsigned int n,
                   CUjit_option* opts, void** vals) noexcept {
  return api::cuLinkAddData_v2(h, type, data, size, name, n, opts, vals);
}

Errc cuLinkAddFile_v2(CUlinkState h, CUjitInputType type, const char* path, unsigned int n, CUjit_option* opts,
                      void** vals) noexcept {
  const char* api = "cuLinkAddFile";
  std::shared_ptr<LinkState> s;
  TRY(module::lookup(h, api, s));
  TRY(need(path, api, "path"));
  std::ifstream f(path, std::ios::binary);
  if (!f) return fail(Errc::file_not_found, "{}: cannot open '{}'", api, path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return api::cuLinkAddData_v2(h, type, bytes.data(), bytes.size(), path, n, opts, vals);
}
Errc cuLinkAddFile(CUlinkState h, CUjitInputType type, const char* path, unsigned int n, CUjit_option* opts,
                   void** vals) noexcept {
  return api::cuLinkAddFile_v2(h, type, path, n, opts, vals);
}

Errc cuLinkComplete(CUlinkState h, void** image, size_t* size) noexcept {
  const char* api = "cuLinkComplete";
  std::shared_ptr<LinkState> s;
  TRY(module::lookup(h, api, s));
  TRY(need(image, api, "cubinOut"));
  TRY(need(size, api, "sizeOut"));
  std::lock_guard lk(s->m);
  std::string joined;
  if (Errc e = module::link_ptx(s->ptx, s->cc, s->max_regs, joined, s->out, api); e != Errc::success) {
    module::log_to(s->error_log, s->error_size, explanation());
    return e;
  }
  module::log_to(s->info_log, s->info_size, fmt::format("cuda-shim: linked {} PTX input(s)", s->ptx.size()));
  *image = s->out.data();
  *size = s->out.size();
  return Errc::success;
}

Errc cuLinkDestroy(CUlinkState h) noexcept {
  const char* api = "cuLinkDestroy";
  if (!h || !module::links().remove(h)) return fail(Errc::invalid_handle, "{}: {} is not a live link state", api,
                                                    static_cast<void*>(h));
  return Errc::success;
}

}  // namespace cuda_shim::api
