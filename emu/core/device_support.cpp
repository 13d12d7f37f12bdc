#include "core/device_support.hpp"

#include "core/profile.hpp"

namespace cuda_shim {

Errc refuse_unsupported(int ordinal, int attr, const char* api, const char* what) noexcept {
  const Config& c = Driver::get().config();
  const char* name = attribute_name(attr);
  return fail(Errc::not_supported, "{}: {} needs CU_DEVICE_ATTRIBUTE_{}, which device {} reports as 0 (profile {}, "
              "{}); NVIDIA's driver refuses it on such a device with CUDA_ERROR_NOT_SUPPORTED", api, what,
              name ? name : "?", ordinal, c.profile,
              c.profile_origin == "built-in" ? "profiles/" + c.profile + ".profile" : c.profile_origin);
}

Errc require_host_support(int attr, const char* api, const char* what) noexcept {
  if (Driver::get().device_count() == 0) return Errc::success;
  return require_device_support(0, attr, api, what);
}

}  // namespace cuda_shim
