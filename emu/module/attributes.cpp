// Kernel attributes, from the image and the device. A PTX kernel's registers are an estimate
// (ptx_regs.hpp): reported, but the block size a launch may use is not narrowed by it, since an
// estimate above ptxas's count would refuse launches a GPU runs.
#include "module/attributes.hpp"

#include <algorithm>

#include "core/driver.hpp"

namespace cuda_shim::module {

int max_threads(const KernelDesc& k, const Device& d) {
  int dev_max = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  int bound = k.max_threads;
  if (k.reqntid[0]) bound = k.reqntid[0] * std::max(k.reqntid[1], 1) * std::max(k.reqntid[2], 1);
  // Registers bound it too: a block's threads share the SM's register file.
  if (k.num_regs > 0 && !k.regs_estimated) {
    int by_regs = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK) / k.num_regs;
    by_regs = by_regs / 32 * 32;  // whole warps
    if (by_regs > 0) dev_max = std::min(dev_max, by_regs);
  }
  return bound > 0 ? std::min(bound, dev_max) : dev_max;
}

int max_dynamic_shared(const KernelDesc& k, const FuncSettings& s, const Device& d) {
  if (s.max_dynamic_shared >= 0) return s.max_dynamic_shared;
  // Without opting in, a block gets the default 48 KiB, static shared memory included.
  int def = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) - static_cast<int>(k.shared_bytes);
  return std::max(def, 0);
}

Errc get_attribute(const Image& img, const KernelDesc& k, const FuncSettings& s, const Device& d,
                   CUfunction_attribute a, int& out, const char* api) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: out = max_threads(k, d); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: out = static_cast<int>(k.shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: out = static_cast<int>(k.const_bytes); break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: out = static_cast<int>(k.local_bytes); break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: out = k.num_regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      // The virtual architecture the code was compiled for (a cubin from PTX of its own SM).
      out = img.from_ptx ? img.arch : img.arch;
      break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      // PTX is compiled for the device it loads on.
      out = img.from_ptx ? img.device_cc : img.arch;
      break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: out = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: out = max_dynamic_shared(k, s, d); break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: out = s.carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: out = k.cluster_dim[0] ? 1 : 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: {
      int i = a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH;
      out = k.cluster_dim[i] ? k.cluster_dim[i] : s.required_cluster[i];
      break;
    }
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: out = s.non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: out = s.cluster_policy; break;
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUfunction_attribute (0..{})", api, static_cast<int>(a),
                  static_cast<int>(CU_FUNC_ATTRIBUTE_MAX) - 1);
  }
  return Errc::success;
}

Errc set_attribute(const KernelDesc& k, FuncSettings& s, const Device& d, CUfunction_attribute a, int v,
                   const char* api) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
      int most = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) - static_cast<int>(k.shared_bytes);
      if (v < 0 || v > most)
        return fail(Errc::invalid_value, "{}: MAX_DYNAMIC_SHARED_SIZE_BYTES {} is outside 0..{} (the device's opt-in "
                    "shared memory per block, {}, less the kernel's {} static bytes)", api, v, most,
                    d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), k.shared_bytes);
      s.max_dynamic_shared = v;
      return Errc::success;
    }
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (v < -1 || v > 100)
        return fail(Errc::invalid_value, "{}: PREFERRED_SHARED_MEMORY_CARVEOUT {} is outside -1..100 (percent)", api, v);
      s.carveout = v;
      return Errc::success;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      if (v < 0) return fail(Errc::invalid_value, "{}: a cluster dimension cannot be negative ({})", api, v);
      s.required_cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = v;
      return Errc::success;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      if (v != 0 && v != 1)
        return fail(Errc::invalid_value, "{}: NON_PORTABLE_CLUSTER_SIZE_ALLOWED takes 0 or 1, not {}", api, v);
      s.non_portable_cluster = v;
      return Errc::success;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (v < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT || v > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
        return fail(Errc::invalid_value, "{}: {} is not a CUclusterSchedulingPolicy", api, v);
      s.cluster_policy = v;
      return Errc::success;
    default:
      return fail(Errc::invalid_value, "{}: attribute {} cannot be set (settable: MAX_DYNAMIC_SHARED_SIZE_BYTES, "
                  "PREFERRED_SHARED_MEMORY_CARVEOUT, REQUIRED_CLUSTER_*, NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "
                  "CLUSTER_SCHEDULING_POLICY_PREFERENCE)", api, static_cast<int>(a));
  }
}

Errc check_cache_config(CUfunc_cache c, const char* api) {
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL)
    return fail(Errc::invalid_value, "{}: {} is not a CUfunc_cache (0..3)", api, static_cast<int>(c));
  return Errc::success;
}

}  // namespace cuda_shim::module
