// The shared side of logical endpoints: records in the registry segment that every process
// holding an endpoint sees (endpoint_layout.hpp). Each call takes the segment's lock once;
// callers pass the endpoint's (index, token) pair, so a slot reused by a newer endpoint is
// never mistaken for the old one. Failures are recorded (fail()) with the rule broken.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/errc.hpp"
#include "ipc/endpoint_layout.hpp"
#include "platform/shareable.hpp"

namespace cuda_shim::ipc::le {

// CLOCK_MONOTONIC nanoseconds: comparable between processes of one machine.
uint64_t now_ns() noexcept;

struct Endpoint {
  uint32_t index = 0;
  Token token;
  uint32_t type = 0;
  int owner = -1;
  uint32_t num_devices = 0;
  uint64_t size = 0;
  uint32_t ipc_types = 0, flags = 0;
  int creator_pid = 0;
  int channel = -1;
  uint64_t built_ns = 0;
  bool exported = false;
  std::vector<int> team;  // devices added, in order
  bool team_full() const { return team.size() >= num_devices; }
};

using Binding = EndpointBinding;  // endpoint_layout.hpp

// A new endpoint `e` (its token, index, creator and built_ns are filled in) with this process's
// alias `le_id`; construction, when it starts now (unicast), takes build_ns from the moment the
// record exists. OUT_OF_MEMORY when the tables are full.
Errc create(Endpoint& e, uint32_t le_id, bool start_now, uint64_t build_ns, const char* api);
// Adds this process's alias `le_id` to the live endpoint with `token`; NOT_SUPPORTED when no
// such endpoint lives (never exported, or destroyed by all its holders), NOT_PERMITTED when it
// was made on another IMEX channel than `channel`. The import constructs for build_ns.
Errc import(const Token& token, uint32_t le_id, uint64_t build_ns, int channel, Endpoint& out,
            const char* api);
// Removes this process's alias `le_id` and every binding this process made on the endpoint;
// frees the endpoint when that was its last alias. Returns the bindings removed (their fds
// are the caller's to close).
std::vector<Binding> drop_alias(uint32_t index, const Token& token, uint32_t le_id);
// A snapshot of the live endpoint; false when it is gone.
bool get(uint32_t index, const Token& token, Endpoint& out);
// An id of this process and the endpoint it names.
struct AliasRef {
  uint32_t index = 0;
  Token token;
  uint32_t le_id = 0;
};
// Whether construction finished, at time `now`, for every one of this process's aliases `ids`
// (one lock and one pass over the aliases: clients poll this in a loop).
bool ready(const std::vector<AliasRef>& ids, uint64_t now);
// Adds device dev to the multicast team; when that fills it, construction starts and takes
// build_ns. INVALID_VALUE for a full team or a device already in it.
Errc add_device(uint32_t index, const Token& token, int dev, uint64_t build_ns, const char* api);
void mark_exported(uint32_t index, const Token& token);
// Records a binding (token, pid filled in) unless it overlaps another on its device
// (INVALID_VALUE) or the device's bind resources are used up (OUT_OF_MEMORY, limit per
// endpoint and device).
Errc bind(uint32_t index, const Token& token, Binding& b, uint32_t limit, const char* api);
// Unbinds, per cuLogicalEndpointUnbind's note, this process's bindings on dev enclosed by
// [offset, offset + size): offset must start one, and the bindings must tile the range.
Errc unbind(uint32_t index, const Token& token, int dev, uint64_t offset, uint64_t size,
            std::vector<Binding>& removed, const char* api);
// Every live binding of the endpoint on dev (any process), by offset.
std::vector<Binding> bindings(uint32_t index, const Token& token, int dev);
// `cuda-shim endpoints`: every endpoint, its aliases, team, readiness and bindings.
std::string dump();

}  // namespace cuda_shim::ipc::le
