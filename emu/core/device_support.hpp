// What a device profile takes away also stops working (docs/configuration.md "Device
// profiles"): an entry that needs a feature asks here before using it, and a device whose
// profile reports the feature's attribute as 0 refuses as NVIDIA's driver does on such a
// device (CUDA_ERROR_NOT_SUPPORTED), with an explanation naming the attribute and the profile.
// On the default (measured H200) profile every attribute asked about here is non-zero, so no
// answer changes there.
#pragma once
#include "core/driver.hpp"
#include "core/errc.hpp"

namespace cuda_shim {

// The attribute's value on device `ordinal` (0 when the ordinal is not a device).
inline int device_attribute(int ordinal, int attr) noexcept {
  Driver& d = Driver::get();
  if (ordinal < 0 || ordinal >= d.device_count() || attr < 0 || attr >= Device::kMaxAttr) return 0;
  return d.dev(ordinal).attr[attr];
}

// The refusal, out of line: explanation text stays off the allocators' fast path.
Errc refuse_unsupported(int ordinal, int attr, const char* api, const char* what) noexcept;

// NOT_SUPPORTED when device `ordinal` reports `attr` as 0: "<api>: <what> needs <attribute>,
// which device N reports as 0 (profile P)". `what` names the refused request.
inline Errc require_device_support(int ordinal, int attr, const char* api, const char* what) noexcept {
  if (device_attribute(ordinal, attr) != 0) [[likely]]
    return Errc::success;
  return refuse_unsupported(ordinal, attr, api, what);
}

// Host-located memory (pools on HOST / HOST_NUMA): the host attributes are reported alike by
// every device of a profile; device 0's answer decides (no device: nothing to refuse).
Errc require_host_support(int attr, const char* api, const char* what) noexcept;

}  // namespace cuda_shim
