// The CUDA 13.3 logical endpoint declarations against NVIDIA's own 13.3 headers (from the
// nvidia-cuda-runtime 13.3.29 wheel, which tools/python-env.sh unpacks beside .venv). One
// translation unit sees NVIDIA's (global namespace) and ours (namespace shim): enumerators,
// the property struct's layout, the attributes and all twelve signatures and PFN typedefs are
// static_asserts, so a mismatch fails the build of this target.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <catch2/catch.hpp>

#include <cstddef>

#include "abi_map.hpp"

static_assert(CUDA_VERSION == 13030, "this test needs NVIDIA's CUDA 13.3 cuda.h");
constexpr int kNvidiaCudaVersion = CUDA_VERSION;
// Our cuda.h says 13000 (the 13.3 additions are opt-in): the one macro the two disagree on.
#undef CUDA_VERSION

#define CUDA_SHIM_ABI_CXX_LINKAGE
#define CUDA_SHIM_ENABLE_13030_API 1
namespace shim {
#include "cuda_shim/cuda.h"
#include "cuda_shim/cudaTypedefs.h"
}  // namespace shim

template <> struct nv<shim::cudaError_enum> { using type = ::cudaError_enum; };
template <> struct nv<shim::CUlogicalEndpointType_enum> { using type = ::CUlogicalEndpointType_enum; };
template <> struct nv<shim::CUlogicalEndpointIpcHandleType_enum> { using type = ::CUlogicalEndpointIpcHandleType_enum; };
template <> struct nv<shim::CUlogicalEndpointFlag_enum> { using type = ::CUlogicalEndpointFlag_enum; };
template <> struct nv<shim::CUlogicalEndpointProp_struct> { using type = ::CUlogicalEndpointProp_struct; };
template <> struct nv<shim::CUlogicalEndpointFabricHandle_st> { using type = ::CUlogicalEndpointFabricHandle_st; };

#define SAME_VALUE(e) static_assert(static_cast<long long>(shim::e) == static_cast<long long>(::e), #e)
SAME_VALUE(CU_LOGICAL_ENDPOINT_TYPE_INVALID);
SAME_VALUE(CU_LOGICAL_ENDPOINT_TYPE_UNICAST);
SAME_VALUE(CU_LOGICAL_ENDPOINT_TYPE_MULTICAST);
SAME_VALUE(CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE);
SAME_VALUE(CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
SAME_VALUE(CU_LOGICAL_ENDPOINT_FLAG_NONE);
SAME_VALUE(CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_MULTICAST_SUPPORTED);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED);
#undef SAME_VALUE

static_assert(std::is_same_v<shim::CUlogicalEndpointId, ::CUlogicalEndpointId>);
static_assert(sizeof(shim::CUlogicalEndpointFabricHandle) == sizeof(::CUlogicalEndpointFabricHandle));
static_assert(sizeof(shim::CUlogicalEndpointProp) == sizeof(::CUlogicalEndpointProp));
static_assert(alignof(shim::CUlogicalEndpointProp) == alignof(::CUlogicalEndpointProp));
#define SAME_OFFSET(f) \
  static_assert(offsetof(shim::CUlogicalEndpointProp, f) == offsetof(::CUlogicalEndpointProp, f), #f)
SAME_OFFSET(type);
SAME_OFFSET(unicast.device);
SAME_OFFSET(multicast.numDevices);
SAME_OFFSET(size);
SAME_OFFSET(ipcHandleTypes);
SAME_OFFSET(flags);
#undef SAME_OFFSET

#define SAME_ENTRY(name)                                                                          \
  static_assert(std::is_same_v<nv_t<decltype(shim::name)>, decltype(::name)>, "signature of " #name); \
  static_assert(std::is_same_v<nv_t<shim::PFN_##name##_v13030>, ::PFN_##name##_v13030>, "PFN_" #name "_v13030")
SAME_ENTRY(cuLogicalEndpointIdReserve);
SAME_ENTRY(cuLogicalEndpointIdRelease);
SAME_ENTRY(cuLogicalEndpointGetLimits);
SAME_ENTRY(cuLogicalEndpointCreate);
SAME_ENTRY(cuLogicalEndpointAddDevice);
SAME_ENTRY(cuLogicalEndpointDestroy);
SAME_ENTRY(cuLogicalEndpointBindAddr);
SAME_ENTRY(cuLogicalEndpointBindMem);
SAME_ENTRY(cuLogicalEndpointUnbind);
SAME_ENTRY(cuLogicalEndpointExport);
SAME_ENTRY(cuLogicalEndpointImport);
SAME_ENTRY(cuLogicalEndpointQuery);
#undef SAME_ENTRY

TEST_CASE("header ABI 13.3: logical endpoint declarations match NVIDIA's 13.3 headers", "[abi][le]") {
  // Everything above is checked at compile time; this records that the build saw 13.3.
  CHECK(kNvidiaCudaVersion == 13030);
  CHECK(CUDA_SHIM_CUDA_VERSION_MAX == kNvidiaCudaVersion);
}
