// libnvJitLink.so.13: the nvJitLink 13 C API (include/cuda_shim/nvJitLink.h) for programs that
// run on cuda-shim. NVIDIA's nvJitLink compiles its inputs to machine code (SASS), which the
// kernel engine cannot run; numba-cuda and cuda.core's Linker use it whenever cuda.pathfinder
// finds a libnvJitLink.so.13. This one links as the driver's cuLink* does: the inputs' PTX is
// joined into one module held by a fat binary (nvJitLinkGetLinkedCubin), which every loader of
// our driver takes. The joining is the driver's own (module/link.hpp), reached through
// cuShimLinkInputPtx / cuShimLinkPtx (cuda_shim_ext.h): one definition for both linkers.
//
// Result codes follow NVIDIA's library 13.0 as measured on it (docs/kernels.md, "Linking"):
// NULL handles and outputs NVJITLINK_ERROR_NULL_INPUT, an unknown option
// NVJITLINK_ERROR_UNRECOGNIZED_OPTION (the handle is still made, holding the log), no -arch
// NVJITLINK_ERROR_MISSING_ARCH, an input type it does not take NVJITLINK_ERROR_INCORRECT_INPUT_TYPE,
// a missing file NVJITLINK_ERROR_INVALID_INPUT, results asked before nvJitLinkComplete and inputs
// added after it NVJITLINK_ERROR_INTERNAL. Machine code inputs fail with an error log saying why.
// LTO-IR (-lto, numba-cuda's default) is compiled to PTX by NVIDIA's nvJitLink when one is
// found (nvidia_jitlink below), and refused with a log otherwise.
#include <dlfcn.h>

#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <unordered_set>
#include <vector>

#include "cuda.h"
#include "cuda_shim_ext.h"
#include "nvJitLink.h"

#define NVJL_EXPORT extern "C" __attribute__((visibility("default")))

struct nvJitLink {
  std::mutex m;
  int cc = 0;                      // from -arch=sm_NN / compute_NN
  int max_regs = 0;                // from -maxrregcount=N
  bool verbose = false;
  bool lto = false;                // -lto: LTO-IR inputs go through NVIDIA's nvJitLink (below)
  std::vector<std::string> options;  // as given, for NVIDIA's nvJitLink
  std::vector<std::pair<std::string, std::string>> ltoir;  // LTO-IR inputs: name, bytes
  std::vector<std::string> ptx;    // each accepted input's PTX
  bool completed = false;
  std::string joined;              // the linked PTX
  std::vector<unsigned char> image;  // the fat binary holding it
  std::string error_log;
  std::string info_log;
};

namespace {

std::mutex g_live_m;
std::unordered_set<nvJitLink*>& live() {
  static auto* s = new std::unordered_set<nvJitLink*>;
  return *s;
}

bool is_live(nvJitLink* h) {
  std::lock_guard lk(g_live_m);
  return live().count(h) != 0;
}

// The error is logged in the handle (one line each, as NVIDIA's library does) and, under
// CUDA_SHIM_EXPLAIN=1, printed like the driver's explanations.
nvJitLinkResult error(nvJitLink* h, nvJitLinkResult r, const std::string& why) {
  std::string line = "cuda-shim nvJitLink: " + why;
  if (h) h->error_log += line + "\n";
  const char* explain = std::getenv("CUDA_SHIM_EXPLAIN");
  if (explain && *explain && std::strcmp(explain, "0") != 0) std::fprintf(stderr, "%s\n", line.c_str());
  return r;
}

// Why the last cuShim* call failed, from the driver.
std::string driver_why() {
  char buf[2048];
  cuShimGetLastExplanation(buf, sizeof buf);
  return buf;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Link-time optimization. LTO-IR is NVIDIA's closed format: only NVIDIA's nvJitLink compiles it.
// numba-cuda turns LTO on by default whenever an nvJitLink (>= 12.3) is found, so -lto links
// hand their LTO-IR inputs to NVIDIA's library, asking for PTX (-lto -ptx), and join that PTX
// with the other inputs'. Its file: CUDA_SHIM_NVJITLINK_LTO (set and empty or 0: none), else
// lib64/ or lib/ under $CUDA_PATH, $CUDA_HOME, /usr/local/cuda. Loaded by path with
// RTLD_DEEPBIND, so that its calls to its own entry points do not reach ours (same names).
struct NvidiaJitLink {
  std::string path;
  decltype(&__nvJitLinkCreate_13_0) create = nullptr;
  decltype(&__nvJitLinkDestroy_13_0) destroy = nullptr;
  decltype(&__nvJitLinkAddData_13_0) add_data = nullptr;
  decltype(&__nvJitLinkComplete_13_0) complete = nullptr;
  decltype(&__nvJitLinkGetLinkedPtxSize_13_0) ptx_size = nullptr;
  decltype(&__nvJitLinkGetLinkedPtx_13_0) ptx = nullptr;
  decltype(&__nvJitLinkGetErrorLogSize_13_0) error_log_size = nullptr;
  decltype(&__nvJitLinkGetErrorLog_13_0) error_log = nullptr;
};

bool same_file(const std::string& a, const std::string& b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a.c_str(), ra) && realpath(b.c_str(), rb) && std::strcmp(ra, rb) == 0;
}

const NvidiaJitLink* nvidia_jitlink() {
  static const NvidiaJitLink* found = [] () -> const NvidiaJitLink* {
    std::vector<std::string> candidates;
    if (const char* e = std::getenv("CUDA_SHIM_NVJITLINK_LTO")) {
      if (!*e || std::strcmp(e, "0") == 0) return nullptr;
      candidates.push_back(e);
    } else {
      for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
        if (const char* root = std::getenv(var); root && *root)
          for (const char* dir : {"/lib64/", "/lib/"}) candidates.push_back(std::string(root) + dir + "libnvJitLink.so.13");
      candidates.push_back("/usr/local/cuda/lib64/libnvJitLink.so.13");
      candidates.push_back("/usr/local/cuda/lib/libnvJitLink.so.13");
    }
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&same_file), &self);
    for (const std::string& c : candidates) {
      if (self.dli_fname && same_file(c, self.dli_fname)) continue;  // ourselves
      void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!lib) continue;
      auto* n = new NvidiaJitLink;
      n->path = c;
      auto get = [&](auto& f, const char* name) { f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name)); return f != nullptr; };
      if (get(n->create, "__nvJitLinkCreate_13_0") && get(n->destroy, "__nvJitLinkDestroy_13_0") &&
          get(n->add_data, "__nvJitLinkAddData_13_0") && get(n->complete, "__nvJitLinkComplete_13_0") &&
          get(n->ptx_size, "__nvJitLinkGetLinkedPtxSize_13_0") && get(n->ptx, "__nvJitLinkGetLinkedPtx_13_0") &&
          get(n->error_log_size, "__nvJitLinkGetErrorLogSize_13_0") && get(n->error_log, "__nvJitLinkGetErrorLog_13_0"))
        return n;
      delete n;
      dlclose(lib);
    }
    return nullptr;
  }();
  return found;
}

// The PTX NVIDIA's nvJitLink makes of the link's LTO-IR inputs (-lto -ptx).
nvJitLinkResult lto_to_ptx(nvJitLink* h, std::string& out) {
  const NvidiaJitLink* nv = nvidia_jitlink();
  if (!nv) return error(h, NVJITLINK_ERROR_INTERNAL, "NVIDIA's nvJitLink is no longer found");
  std::vector<const char*> opts;
  bool ptx = false;
  for (const std::string& o : h->options) {
    if (o == "-verbose") continue;
    ptx |= o == "-ptx";
    opts.push_back(o.c_str());
  }
  if (!ptx) opts.push_back("-ptx");
  nvJitLinkHandle n = nullptr;
  nvJitLinkResult r = nv->create(&n, static_cast<uint32_t>(opts.size()), opts.data());
  for (size_t i = 0; r == NVJITLINK_SUCCESS && i < h->ltoir.size(); ++i)
    r = nv->add_data(n, NVJITLINK_INPUT_LTOIR, h->ltoir[i].second.data(), h->ltoir[i].second.size(),
                     h->ltoir[i].first.c_str());
  if (r == NVJITLINK_SUCCESS) r = nv->complete(n);
  size_t size = 0;
  if (r == NVJITLINK_SUCCESS) r = nv->ptx_size(n, &size);
  if (r == NVJITLINK_SUCCESS) {
    out.assign(size, '\0');
    r = nv->ptx(n, out.data());
    out.resize(strnlen(out.c_str(), out.size()));
  }
  if (r != NVJITLINK_SUCCESS) {
    std::string log;
    if (n && nv->error_log_size(n, &size) == NVJITLINK_SUCCESS && size) {
      log.assign(size, '\0');
      nv->error_log(n, log.data());
      log.resize(strnlen(log.c_str(), log.size()));
    }
    if (n) nv->destroy(&n);
    return error(h, r, "link-time optimization by " + nv->path + " failed: " + log);
  }
  nv->destroy(&n);
  if (h->verbose) h->info_log += "cuda-shim nvJitLink: LTO-IR compiled to PTX by " + nv->path + "\n";
  return NVJITLINK_SUCCESS;
}

// The options NVIDIA's library takes that change nothing when the result is PTX: accepted.
bool ignored_option(std::string_view o) {
  static const char* const exact[] = {"-time", "-ptx", "-g", "-lineinfo", "-optimize-unused-variables", "-no-cache"};
  static const char* const prefixed[] = {"-O", "-ftz=", "-prec-div=", "-prec-sqrt=", "-fma=",
                                         "-kernels-used=", "-variables-used=", "-Xptxas=", "-Xnvvm=",
                                         "-split-compile=", "-split-compile-extended=", "-jump-table-density=",
                                         "-device-stack-protector="};
  for (const char* e : exact)
    if (o == e) return true;
  for (const char* p : prefixed)
    if (starts_with(o, p)) return true;
  return false;
}

// The architectures CUDA 13's nvJitLink knows (sm_75 and newer).
bool known_arch(int cc) {
  static const int known[] = {75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121};
  for (int k : known)
    if (k == cc) return true;
  return false;
}

nvJitLinkResult read_options(nvJitLink* h, uint32_t n, const char* const* options) {
  bool ptx_out = false, lto = false, virtual_arch = false;
  std::string arch;
  for (uint32_t i = 0; i < n; ++i) {
    if (!options[i]) return error(h, NVJITLINK_ERROR_NULL_INPUT, "option " + std::to_string(i) + " is NULL");
    std::string_view o = options[i];
    if (starts_with(o, "-arch=")) {
      arch = std::string(o.substr(6));
      std::string_view a = arch;
      virtual_arch = starts_with(a, "compute_");
      if (!starts_with(a, "sm_") && !virtual_arch)
        return error(h, NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "missing option value (" + std::string(o) + ")");
      a.remove_prefix(virtual_arch ? 8 : 3);
      int cc = 0;
      size_t digits = 0;
      while (digits < a.size() && a[digits] >= '0' && a[digits] <= '9') cc = cc * 10 + (a[digits++] - '0');
      std::string_view suffix = a.substr(digits);
      if (!digits || digits > 3 || !(suffix.empty() || suffix == "a" || suffix == "f"))
        return error(h, NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "missing option value (" + std::string(o) + ")");
      if (!known_arch(cc))
        return error(h, NVJITLINK_ERROR_UNRECOGNIZED_ARCH, "unrecognized architecture (" + arch + ")");
      h->cc = cc;
    } else if (starts_with(o, "-maxrregcount=")) {
      // Kept in the linked PTX as .maxnreg, so the kernels report at most that many registers.
      h->max_regs = std::atoi(std::string(o.substr(14)).c_str());
    } else if (o == "-lto") {
      lto = true;
    } else if (o == "-verbose") {
      h->verbose = true;
    } else if (o == "-ptx") {
      ptx_out = true;
    } else if (!ignored_option(o)) {
      return error(h, NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "unrecognized option: " + std::string(o));
    }
  }
  if (!h->cc) return error(h, NVJITLINK_ERROR_MISSING_ARCH, "option -arch=sm_NN is required");
  if (lto && !nvidia_jitlink())
    return error(h, NVJITLINK_ERROR_INVALID_INPUT,
                 "-lto needs NVIDIA's nvJitLink to compile LTO-IR to PTX, and none was found (CUDA_SHIM_NVJITLINK_LTO, "
                 "$CUDA_PATH, $CUDA_HOME, /usr/local/cuda); link PTX instead (numba-cuda: lto=False, cuda.core: "
                 "LinkerOptions(link_time_optimization=False))");
  h->lto = lto;
  if (virtual_arch && !ptx_out)
    return error(h, NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS, "a virtual architecture (" + arch + ") requires -ptx");
  return NVJITLINK_SUCCESS;
}

// An input's kind from its first bytes: for NVJITLINK_INPUT_ANY, and to check the type given.
nvJitLinkInputType sniff(const void* data, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  auto u32 = [&] {
    uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
  };
  if (size >= 4 && (u32() == 0xBA55ED50u || u32() == 0x466243B1u)) return NVJITLINK_INPUT_FATBIN;
  if (size >= 4 && std::memcmp(p, "\x7f" "ELF", 4) == 0) return NVJITLINK_INPUT_CUBIN;
  if (size >= 8 && std::memcmp(p, "!<arch>\n", 8) == 0) return NVJITLINK_INPUT_LIBRARY;
  if (size >= 4 && (u32() == 0x7F4E43EDu || std::memcmp(p, "BC\xC0\xDE", 4) == 0)) return NVJITLINK_INPUT_LTOIR;
  std::string_view text(static_cast<const char*>(data), size ? strnlen(static_cast<const char*>(data), size) : 0);
  if (text.find(".version") != std::string_view::npos) return NVJITLINK_INPUT_PTX;
  return NVJITLINK_INPUT_NONE;
}

const char* type_name(nvJitLinkInputType t) {
  switch (t) {
    case NVJITLINK_INPUT_CUBIN: return "NVJITLINK_INPUT_CUBIN";
    case NVJITLINK_INPUT_PTX: return "NVJITLINK_INPUT_PTX";
    case NVJITLINK_INPUT_LTOIR: return "NVJITLINK_INPUT_LTOIR";
    case NVJITLINK_INPUT_FATBIN: return "NVJITLINK_INPUT_FATBIN";
    case NVJITLINK_INPUT_OBJECT: return "NVJITLINK_INPUT_OBJECT";
    case NVJITLINK_INPUT_LIBRARY: return "NVJITLINK_INPUT_LIBRARY";
    case NVJITLINK_INPUT_INDEX: return "NVJITLINK_INPUT_INDEX";
    default: return "?";
  }
}

nvJitLinkResult add(nvJitLink* h, nvJitLinkInputType type, const void* data, size_t size, const char* name) {
  std::string label = name ? name : "(unnamed)";
  if (h->completed)
    return error(h, NVJITLINK_ERROR_INTERNAL, "input '" + label + "' added after nvJitLinkComplete");
  if (type == NVJITLINK_INPUT_ANY) type = sniff(data, size);
  // The bytes must be of the type given, as NVIDIA's library checks (an object is an ELF file,
  // as a cubin is).
  if (type >= NVJITLINK_INPUT_CUBIN && type <= NVJITLINK_INPUT_LIBRARY &&
      sniff(data, size) != (type == NVJITLINK_INPUT_OBJECT ? NVJITLINK_INPUT_CUBIN : type))
    return error(h, NVJITLINK_ERROR_INCORRECT_INPUT_TYPE,
                 "input '" + label + "' does not match its type (" + type_name(type) + ")");
  switch (type) {
    case NVJITLINK_INPUT_PTX:
    case NVJITLINK_INPUT_FATBIN:
    case NVJITLINK_INPUT_LIBRARY: {  // a library: only the device runtime's, which comes as PTX (link.cpp)
      char* ptx = nullptr;
      size_t n = 0;
      const int cu_type = type == NVJITLINK_INPUT_PTX      ? CU_JIT_INPUT_PTX
                          : type == NVJITLINK_INPUT_FATBIN ? CU_JIT_INPUT_FATBINARY
                                                           : CU_JIT_INPUT_LIBRARY;
      int r = cuShimLinkInputPtx(cu_type, data, size, label.c_str(), h->cc, &ptx, &n);
      switch (r) {
        case CUDA_SUCCESS:
          h->ptx.emplace_back(ptx, n);
          std::free(ptx);
          if (h->verbose) h->info_log += "cuda-shim nvJitLink: added '" + label + "' (PTX)\n";
          return NVJITLINK_SUCCESS;
        case CUDA_ERROR_INVALID_PTX: return error(h, NVJITLINK_ERROR_PTX_COMPILE, driver_why());
        case CUDA_ERROR_NO_BINARY_FOR_GPU: return error(h, NVJITLINK_ERROR_ARCH_MISMATCH, driver_why());
        case CUDA_ERROR_NOT_SUPPORTED: return error(h, NVJITLINK_ERROR_INVALID_INPUT, driver_why());
        case CUDA_ERROR_INVALID_IMAGE: return error(h, NVJITLINK_ERROR_INCORRECT_INPUT_TYPE, driver_why());
        default: return error(h, NVJITLINK_ERROR_INTERNAL, driver_why());
      }
    }
    case NVJITLINK_INPUT_LTOIR:
      if (!h->lto) return error(h, NVJITLINK_ERROR_LTO_NOT_ENABLED, "input '" + label + "' is LTO-IR, which needs -lto");
      h->ltoir.emplace_back(label, std::string(static_cast<const char*>(data), size));
      return NVJITLINK_SUCCESS;
    case NVJITLINK_INPUT_CUBIN:
    case NVJITLINK_INPUT_OBJECT:
    case NVJITLINK_INPUT_INDEX:
      return error(h, NVJITLINK_ERROR_INVALID_INPUT,
                   "input '" + label + "' (" + type_name(type) + ") is machine code or refers to it; cuda-shim's "
                   "kernel engine links and runs PTX only (PTX text, or a fat binary carrying PTX)");
    default:
      return error(h, NVJITLINK_ERROR_INCORRECT_INPUT_TYPE, "unsupported input type: " + label);
  }
}

nvJitLinkResult complete(nvJitLink* h) {
  if (h->completed) return error(h, NVJITLINK_ERROR_INTERNAL, "nvJitLinkComplete called twice");
  if (!h->ltoir.empty()) {
    std::string ptx;
    if (nvJitLinkResult r = lto_to_ptx(h, ptx); r != NVJITLINK_SUCCESS) return r;
    h->ptx.insert(h->ptx.begin(), std::move(ptx));
    h->ltoir.clear();
  }
  std::vector<const char*> texts;
  for (const std::string& t : h->ptx) texts.push_back(t.c_str());
  char* joined = nullptr;
  void* image = nullptr;
  size_t joined_size = 0, image_size = 0;
  int r = cuShimLinkPtx(texts.data(), static_cast<unsigned>(texts.size()), h->cc, h->max_regs, &joined, &joined_size,
                        &image, &image_size);
  if (r != CUDA_SUCCESS)
    return error(h, r == CUDA_ERROR_INVALID_VALUE ? NVJITLINK_ERROR_INVALID_INPUT : NVJITLINK_ERROR_PTX_COMPILE,
                 driver_why());
  h->joined.assign(joined, joined_size);
  h->image.assign(static_cast<unsigned char*>(image), static_cast<unsigned char*>(image) + image_size);
  std::free(joined);
  std::free(image);
  h->completed = true;
  h->info_log += "cuda-shim nvJitLink: linked " + std::to_string(h->ptx.size()) + " PTX input(s) for sm_" +
                 std::to_string(h->cc) + " into a fat binary holding PTX (the kernel engine runs PTX)\n";
  return NVJITLINK_SUCCESS;
}

// Runs `body` on a live handle under its lock: NULL is NVJITLINK_ERROR_NULL_INPUT, anything not
// made by nvJitLinkCreate (or destroyed) NVJITLINK_ERROR_INVALID_INPUT.
template <class F>
nvJitLinkResult with(nvJitLinkHandle h, F&& body) {
  if (!h) return NVJITLINK_ERROR_NULL_INPUT;
  if (!is_live(h)) return NVJITLINK_ERROR_INVALID_INPUT;
  try {
    std::lock_guard lk(h->m);
    return body(*h);
  } catch (...) {
    return NVJITLINK_ERROR_INTERNAL;
  }
}

// A result of nvJitLinkComplete, which `put` writes into `out`: NVJITLINK_ERROR_INTERNAL before
// the link completed, as NVIDIA's library answers.
template <class Put>
nvJitLinkResult linked(nvJitLinkHandle h, const void* out, const char* what, Put put) {
  return with(h, [&](nvJitLink& s) {
    if (!out) return NVJITLINK_ERROR_NULL_INPUT;
    if (!s.completed)
      return error(&s, NVJITLINK_ERROR_INTERNAL, std::string("no linked ") + what + ": nvJitLinkComplete has not succeeded");
    put(s);
    return NVJITLINK_SUCCESS;
  });
}

// The size of a log as NVIDIA's library reports it: with its NUL, 0 when empty.
size_t log_size(const std::string& log) { return log.empty() ? 0 : log.size() + 1; }

template <class Pick>
nvJitLinkResult get_log_size(nvJitLinkHandle h, size_t* size, Pick pick) {
  return with(h, [&](nvJitLink& s) {
    if (!size) return NVJITLINK_ERROR_NULL_INPUT;
    *size = log_size(pick(s));
    return NVJITLINK_SUCCESS;
  });
}

template <class Pick>
nvJitLinkResult get_log(nvJitLinkHandle h, char* out, Pick pick) {
  return with(h, [&](nvJitLink& s) {
    if (!out) return NVJITLINK_ERROR_NULL_INPUT;
    const std::string& log = pick(s);
    std::memcpy(out, log.c_str(), log.size() + 1);
    return NVJITLINK_SUCCESS;
  });
}

const std::string& errors_of(nvJitLink& s) { return s.error_log; }
const std::string& info_of(nvJitLink& s) { return s.info_log; }

}  // namespace

NVJL_EXPORT nvJitLinkResult __nvJitLinkCreate_13_0(nvJitLinkHandle* handle, uint32_t numOptions,
                                                   const char* const* options) {
  if (!handle || !numOptions || !options) return NVJITLINK_ERROR_NULL_INPUT;
  try {
    auto* h = new nvJitLink;
    {
      std::lock_guard lk(g_live_m);
      live().insert(h);
    }
    // The handle is made even when an option is refused, so that its error log can be read.
    *handle = h;
    for (uint32_t i = 0; i < numOptions; ++i)
      if (options[i]) h->options.emplace_back(options[i]);
    return read_options(h, numOptions, options);
  } catch (...) {
    return NVJITLINK_ERROR_INTERNAL;
  }
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkDestroy_13_0(nvJitLinkHandle* handle) {
  if (!handle || !*handle) return NVJITLINK_ERROR_NULL_INPUT;
  nvJitLink* h = *handle;
  {
    std::lock_guard lk(g_live_m);
    if (!live().erase(h)) return NVJITLINK_ERROR_INVALID_INPUT;
  }
  delete h;
  *handle = nullptr;
  return NVJITLINK_SUCCESS;
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkAddData_13_0(nvJitLinkHandle handle, nvJitLinkInputType inputType,
                                                    const void* data, size_t size, const char* name) {
  return with(handle, [&](nvJitLink& s) {
    if (!data) return error(&s, NVJITLINK_ERROR_NULL_INPUT, "the data of input '" + std::string(name ? name : "") +
                                                                "' is NULL");
    return add(&s, inputType, data, size, name);
  });
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkAddFile_13_0(nvJitLinkHandle handle, nvJitLinkInputType inputType,
                                                    const char* fileName) {
  return with(handle, [&](nvJitLink& s) {
    if (!fileName) return NVJITLINK_ERROR_NULL_INPUT;
    std::ifstream f(fileName, std::ios::binary);
    if (!f) return error(&s, NVJITLINK_ERROR_INVALID_INPUT, std::string("no such file: ") + fileName);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return add(&s, inputType, bytes.data(), bytes.size(), fileName);
  });
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle handle) {
  return with(handle, [&](nvJitLink& s) { return complete(&s); });
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkGetLinkedCubinSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return linked(handle, size, "image", [&](nvJitLink& s) { *size = s.image.size(); });
}
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetLinkedCubin_13_0(nvJitLinkHandle handle, void* cubin) {
  return linked(handle, cubin, "image", [&](nvJitLink& s) { std::memcpy(cubin, s.image.data(), s.image.size()); });
}
// The joined PTX (NVIDIA's library has linked PTX only with -lto -ptx; here every link has it).
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetLinkedPtxSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return linked(handle, size, "PTX", [&](nvJitLink& s) { *size = s.joined.size() + 1; });
}
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetLinkedPtx_13_0(nvJitLinkHandle handle, char* ptx) {
  return linked(handle, ptx, "PTX", [&](nvJitLink& s) { std::memcpy(ptx, s.joined.c_str(), s.joined.size() + 1); });
}

NVJL_EXPORT nvJitLinkResult __nvJitLinkGetErrorLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return get_log_size(handle, size, errors_of);
}
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetErrorLog_13_0(nvJitLinkHandle handle, char* log) {
  return get_log(handle, log, errors_of);
}
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetInfoLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return get_log_size(handle, size, info_of);
}
NVJL_EXPORT nvJitLinkResult __nvJitLinkGetInfoLog_13_0(nvJitLinkHandle handle, char* log) {
  return get_log(handle, log, info_of);
}

// Unversioned names: what dlsym users (cuda.bindings) and programs linked against them call.
// nvJitLinkCreate takes `const char**` (NVIDIA's declaration), hence a function of its own.
NVJL_EXPORT nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle* handle, uint32_t numOptions, const char** options) {
  return __nvJitLinkCreate_13_0(handle, numOptions, options);
}
// The other plain names are the versioned functions themselves (aliases: one address each).
#define NVJL_ALIAS(name) \
  NVJL_EXPORT decltype(__##name##_13_0) name __attribute__((alias("__" #name "_13_0")));
NVJL_ALIAS(nvJitLinkDestroy)
NVJL_ALIAS(nvJitLinkAddData)
NVJL_ALIAS(nvJitLinkAddFile)
NVJL_ALIAS(nvJitLinkComplete)
NVJL_ALIAS(nvJitLinkGetLinkedCubinSize)
NVJL_ALIAS(nvJitLinkGetLinkedCubin)
NVJL_ALIAS(nvJitLinkGetLinkedPtxSize)
NVJL_ALIAS(nvJitLinkGetLinkedPtx)
NVJL_ALIAS(nvJitLinkGetErrorLogSize)
NVJL_ALIAS(nvJitLinkGetErrorLog)
NVJL_ALIAS(nvJitLinkGetInfoLogSize)
NVJL_ALIAS(nvJitLinkGetInfoLog)
#undef NVJL_ALIAS

// LTO-IR output needs -lto, which this library refuses at nvJitLinkCreate.
NVJL_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle handle, size_t* size) {
  return with(handle, [&](nvJitLink& s) {
    return error(&s, NVJITLINK_ERROR_LTO_NOT_ENABLED, "no linked LTO-IR: -lto is not supported (the engine runs PTX)");
  });
}
NVJL_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIR(nvJitLinkHandle handle, void* ltoir) {
  return with(handle, [&](nvJitLink& s) {
    return error(&s, NVJITLINK_ERROR_LTO_NOT_ENABLED, "no linked LTO-IR: -lto is not supported (the engine runs PTX)");
  });
}

// numba-cuda turns link-time optimization on whenever nvJitLinkVersion answers (>= 12.3), and
// cuda.core links with nvJitLink then. Without NVIDIA's nvJitLink to compile LTO-IR, this library
// cannot do what numba then asks; it answers NVJITLINK_ERROR_INTERNAL instead, and both fall back
// to the driver's cuLink* (the same PTX joining, module/link.hpp).
NVJL_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  if (!major || !minor) return NVJITLINK_ERROR_NULL_INPUT;
  if (!nvidia_jitlink()) return NVJITLINK_ERROR_INTERNAL;
  *major = 13;
  *minor = 0;
  return NVJITLINK_SUCCESS;
}
