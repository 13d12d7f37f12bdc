// Built where NVIDIA's nvml.h exists (CI unpacks it from PyPI): our declared layouts match it.
#include <nvml.h>

#include <cstddef>

#include "abi_sizes.inc"
