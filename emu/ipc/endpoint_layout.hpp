// Logical endpoints' shared records (CUDA 13.3 cuLogicalEndpoint*), as they lie in the registry
// segment. An endpoint is shared by every process that created or imported it, so what all of
// them must agree on lives here: the endpoint (type, size, team, when construction completes),
// its aliases (one per id associated with it, in any process: the references that keep it
// alive) and its bindings (which memory backs which offsets on which device). Ids, and whether
// a process has seen its id ready, are per process (ipc/logical_endpoint.cpp).
#pragma once
#include <cstdint>
#include <type_traits>

#include "platform/shareable.hpp"

namespace cuda_shim::ipc {

constexpr uint32_t kEndpoints = 1024;      // live endpoints, all processes together
constexpr uint32_t kEndpointTeamMax = 64;  // devices in a multicast team
constexpr uint32_t kEndpointAliases = 8192;
constexpr uint32_t kEndpointBinds = 8192;

struct EndpointSlot {
  uint32_t state;  // seg::kFree / kLive (segment.hpp)
  uint32_t type;   // CUlogicalEndpointType
  Token token;     // identity; a fabric handle carries it
  int32_t owner;   // unicast: the owner device
  uint32_t num_devices;  // multicast: the team's size
  uint64_t size;
  uint32_t ipc_types, flags;
  int32_t creator_pid;
  int32_t channel;     // the creator's IMEX channel (-1: none)
  uint64_t built_ns;   // CLOCK_MONOTONIC time construction completes; 0: not started (team not full)
  uint32_t exported;   // a fabric handle was made
  uint32_t team_count;
  int32_t team_dev[kEndpointTeamMax];
  int32_t team_pid[kEndpointTeamMax];  // the process that added each device
};

// One id associated with an endpoint in one process (Create or Import).
struct EndpointAliasSlot {
  uint32_t state;
  int32_t pid;
  uint32_t ep;      // index into endpoints
  uint32_t le_id;   // the id in that process
  uint32_t imported;
  uint32_t pad;
  uint64_t built_ns;  // imports construct too: ready from this time on (0 for the creator)
  Token ep_token;
};

// One bind call: [offset, offset + size) of the endpoint on device dev is backed by bytes
// [obj_offset, obj_offset + size) of a memfd object that process pid holds as descriptor fd.
// Callers see it as it lies in the segment (ipc::le::Binding).
struct EndpointBinding {
  Token token;  // the binding's identity
  int32_t pid = 0;
  int32_t dev = 0;
  uint32_t le_id = 0;     // the id the binder used
  uint32_t mem_kind = 0;  // 1: cuMemCreate handle (BindMem), 2: cuMemCreate mapping, 3: pool allocation
  uint64_t offset = 0, size = 0;
  int32_t fd = -1;
  uint32_t fabric = 0;  // the memory is externally shareable (CU_MEM_HANDLE_TYPE_FABRIC)
  uint64_t fdev = 0, ino = 0, obj_offset = 0;
  uint64_t what = 0;  // the handle or address bound (for `cuda-shim endpoints`)
};

struct EndpointBindSlot {
  uint32_t state;
  uint32_t ep;
  Token ep_token;
  EndpointBinding b;
};

static_assert(std::is_trivially_copyable_v<EndpointSlot> && std::is_trivially_copyable_v<EndpointAliasSlot> &&
              std::is_trivially_copyable_v<EndpointBinding> &&
              std::is_trivially_copyable_v<EndpointBindSlot>);

struct EndpointTables {
  EndpointSlot endpoints[kEndpoints];
  EndpointAliasSlot aliases[kEndpointAliases];
  EndpointBindSlot binds[kEndpointBinds];
};

}  // namespace cuda_shim::ipc
