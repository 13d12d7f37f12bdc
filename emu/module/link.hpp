// The JIT linker's work, shared by the driver's cuLink* (link.cpp) and our libnvJitLink.so.13
// (emu/nvjitlink/, through cuShimLinkInputPtx / cuShimLinkPtx): the kernel engine runs PTX, so
// linking is joining the inputs' PTX into one module and wrapping it in a fat binary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim::module {

// One link input's PTX, for a link targeting compute capability cc (major*10+minor). `type` is
// a CUjitInputType: PTX text (checked by the PTX parser) or a fat binary carrying PTX (the
// entry the loaders would choose). Machine code (cubin, object, library) is refused with
// Errc::not_supported, other types with Errc::invalid_value; the explanation names the input.
Errc link_input_ptx(int type, const void* data, size_t size, const char* name, int cc, std::string& out,
                    const char* api);

// Joins `inputs` into one PTX module (the newest .version, the first .target, the bodies in
// order) and wraps it in a fat binary holding one PTX entry for cc, which the loaders' parser
// must accept. max_regs > 0 limits every kernel's registers (CU_JIT_MAX_REGISTERS, nvJitLink's
// -maxrregcount) by a .maxnreg directive. Errc::invalid_value when there is no input.
Errc link_ptx(const std::vector<std::string>& inputs, int cc, int max_regs, std::string& joined,
              std::vector<uint8_t>& image, const char* api);

}  // namespace cuda_shim::module
