// Driver entries: peer access between contexts and the P2P attributes of device pairs.
// Measured on two H100s joined by NVLink (driver 580, tests/conformance/test_multidevice.cpp):
// every pair of distinct devices may reach each other, with atomics and arrays, at rank 0.
// Peer access changes no copy (copies between devices never need it); it lets a context's
// device fill another device's memory (memory/copy.cpp, check_fill_access).
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"

namespace cuda_shim::api {

namespace {

// The current context and the live peer context h (both required, INVALID_CONTEXT otherwise).
Errc peer_pair(CUcontext h, const char* api, std::shared_ptr<Context>& cur, std::shared_ptr<Context>& peer) {
  TRY(require_context(api, cur));
  peer = contexts().find(h);
  if (!peer) return fail(Errc::invalid_context, "{}: peerContext {} is not a live context", api, static_cast<void*>(h));
  return Errc::success;
}

}  // namespace

Errc cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) noexcept {
  const char* api = "cuCtxEnablePeerAccess";
  std::shared_ptr<Context> cur, peer;
  TRY(peer_pair(peerContext, api, cur, peer));
  if (Flags != 0) return fail(Errc::invalid_value, "{}: Flags must be 0 (got {:#x})", api, Flags);
  if (peer->ordinal() == cur->ordinal())
    return fail(Errc::peer_access_unsupported, "{}: the peer context is on device {}, the current context's own "
                "device; peer access joins two different devices", api, cur->ordinal());
  if (!cur->set_peer(peer->id(), true))
    return fail(Errc::peer_access_already_enabled, "{}: the current context (device {}) already has peer access "
                "to this context of device {}", api, cur->ordinal(), peer->ordinal());
  return Errc::success;
}

Errc cuCtxDisablePeerAccess(CUcontext peerContext) noexcept {
  const char* api = "cuCtxDisablePeerAccess";
  std::shared_ptr<Context> cur, peer;
  TRY(peer_pair(peerContext, api, cur, peer));
  if (!cur->set_peer(peer->id(), false))
    return fail(Errc::peer_access_not_enabled, "{}: the current context (device {}) has no peer access to this "
                "context of device {} (access is one-way: each side enables its own)", api, cur->ordinal(),
                peer->ordinal());
  return Errc::success;
}

Errc cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                             CUdevice dstDevice) noexcept {
  const char* api = "cuDeviceGetP2PAttribute";
  TRY(Driver::get().require_init(api));
  TRY(need(value, api, "value"));
  Device* a = nullptr;
  Device* b = nullptr;
  TRY(Driver::get().device(srcDevice, a, api));
  TRY(Driver::get().device(dstDevice, b, api));
  int v = 0;
  switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: v = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: v = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: v = 0; break;
    default:
      return fail(Errc::invalid_value, "{}: attrib {} is not a CUdevice_P2PAttribute", api, static_cast<int>(attrib));
  }
  if (srcDevice == dstDevice)
    return fail(Errc::invalid_device, "{}: srcDevice and dstDevice are both device {}; P2P attributes describe two "
                "different devices", api, srcDevice);
  *value = v;
  return Errc::success;
}

}  // namespace cuda_shim::api
