// cuFuncGetAttribute / cuKernelGetAttribute and their setters: what the image says of a
// kernel, what the device allows, and what the program set.
#pragma once
#include <cuda.h>

#include "core/errc.hpp"
#include "module/image.hpp"
#include "module/module.hpp"

namespace cuda_shim {
struct Device;
}

namespace cuda_shim::module {

Errc get_attribute(const Image& img, const KernelDesc& k, const FuncSettings& s, const Device& d,
                   CUfunction_attribute a, int& out, const char* api);
Errc set_attribute(const KernelDesc& k, FuncSettings& s, const Device& d, CUfunction_attribute a, int v,
                   const char* api);
Errc check_cache_config(CUfunc_cache c, const char* api);
// Most threads a block of this kernel may have on d (the image's bound, else the device's).
int max_threads(const KernelDesc& k, const Device& d);
// Most dynamic shared memory a launch of this kernel may ask for on d.
int max_dynamic_shared(const KernelDesc& k, const FuncSettings& s, const Device& d);

}  // namespace cuda_shim::module
