// The entry points of nvml_unsupported.def. Declared without parameters: under the x86-64 and
// AArch64 calling conventions the caller owns its arguments, so one body serves every signature.
#include "nvml/nvml_internal.hpp"

#define NVML_UNSUPPORTED(name) \
  NVML_EXPORT nvmlReturn_t name() { return cuda_shim::nvml::table() ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_UNINITIALIZED; }
#include "nvml/nvml_unsupported.def"
#undef NVML_UNSUPPORTED
