// Built only where NVIDIA's nvml.h exists (not on CI): our declared layouts match it.
#include <nvml.h>

#include <cstddef>

#include "abi_sizes.inc"
