// Limits every layer shares (one place, so the emulator, its registry segment and NVML agree).
#pragma once

namespace cuda_shim {

// Devices one process can emulate: as many GPUs as the largest NVLink domains hold (576), so
// that NVL72-class machines and beyond can be modelled (CUDA_SHIM_DEVICES).
constexpr int kMaxDevices = 576;

}  // namespace cuda_shim
