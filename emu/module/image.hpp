// What a device code image tells the host: its kernels (names, parameter layout, the
// attributes cuFuncGetAttribute reports) and its global variables (name, size, initial
// bytes, memory space). Device code itself never runs here; this is all the driver needs
// to load modules, resolve symbols, give variables real memory and check launches.
//
// Accepted input is whatever cuModuleLoadData / cuLibraryLoadData accept:
//   - a fat binary: the wrapper nvcc emits (magic 0x466243b1, pointing at the container),
//     or the container itself (magic 0xBA55ED50), entries possibly compressed;
//   - a cubin (an ELF image of machine code for one SM);
//   - PTX text (NUL-terminated).
// From a fat binary the entry is chosen as the driver chooses for a device of compute
// capability `cc`: machine code the device can run, else PTX it can compile.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim::module {

struct Param {
  uint32_t offset = 0;  // in the kernel's parameter buffer
  uint32_t size = 0;
};

struct KernelDesc {
  std::string name;             // as in the image (mangled for C++)
  std::vector<Param> params;    // in ordinal order
  uint32_t param_bytes = 0;     // size of the parameter buffer
  int num_regs = 0;             // registers per thread (a cubin's; PTX: estimated, ptx_regs.hpp)
  bool regs_estimated = false;  // num_regs is an estimate (PTX): reported, never used to refuse a launch
  int max_regs = 0;             // .maxnreg; 0: none
  uint32_t shared_bytes = 0;    // static shared memory
  uint32_t const_bytes = 0;     // user constant memory the kernel uses
  uint32_t local_bytes = 0;     // local memory (stack frame) per thread
  int max_threads = 0;          // .maxntid / EIATTR_MAX_THREADS product; 0: none in the image
  int reqntid[3] = {0, 0, 0};   // .reqntid / EIATTR_REQNTID; 0: none
  int cluster_dim[3] = {0, 0, 0};  // .reqnctapercluster / __cluster_dims__; 0: none
};

enum class Space { global, constant, managed };

struct GlobalDesc {
  std::string name;
  uint64_t size = 0;
  Space space = Space::global;
  std::vector<uint8_t> init;  // initial bytes; shorter than size (or empty) means zeros follow
};

struct Image {
  bool from_ptx = false;  // the chosen entry is PTX (the driver would compile it)
  int arch = 0;           // SM of the chosen entry, major*10+minor (75, 90, ...)
  int ptx_version = 0;    // PTX ISA version major*10+minor when known (PTX, or a fat binary's PTX entry)
  int device_cc = 0;      // the compute capability the entry was chosen for (set by the loader)
  std::vector<KernelDesc> kernels;
  std::vector<GlobalDesc> globals;
  // The PTX the kernel engine (emu/exec/) runs: the chosen entry's text when it is PTX, else the
  // fat binary's newest PTX the device could compile beside the machine code (nvcc keeps
  // compute_XX PTX by default). Empty for machine code alone, which the engine refuses.
  std::string ptx;
};

// Parses `data` (see above) for a device of compute capability `cc` (major*10+minor).
// Failures record an explanation and return the driver's code:
//   Errc::invalid_value       data is null
//   Errc::invalid_image       not a fat binary, cubin or PTX, or a damaged one
//   Errc::no_binary_for_gpu   a valid image with nothing this device can run or compile
//   Errc::invalid_ptx         PTX the parser cannot read
// `size` bounds the read when the caller knows it (cuModuleLoadData does not: 0 = unknown,
// then the formats' own sizes are trusted, as the driver trusts them).
Errc parse_image(const void* data, size_t size, int cc, Image& out, const char* api);

// Format-level pieces, exposed for tests and for the runtime's fat-binary registration.
bool is_fatbin_wrapper(const void* data) noexcept;
bool is_fatbin(const void* data) noexcept;
bool is_elf(const void* data) noexcept;
Errc parse_cubin(const uint8_t* data, size_t size, Image& out, const char* api);
Errc parse_ptx(const char* text, size_t size, Image& out, const char* api);

}  // namespace cuda_shim::module
