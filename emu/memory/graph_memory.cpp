// Graph memory (graph_memory.hpp) and the entries cuDeviceGetGraphMemAttribute,
// cuDeviceSetGraphMemAttribute and cuDeviceGraphMemTrim.
#include "memory/graph_memory.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/device_alloc.hpp"

namespace cuda_shim::mem {
namespace {

// Measured: a device's "used" graph memory is what launched allocation nodes hold while their
// graphs exist (a free node does not lower it); "reserved" adds what released graphs held,
// until cuDeviceGraphMemTrim. Separately, an allocation is live from its launch until freed.
struct Alloc {
  size_t bytes = 0;
  int ordinal = 0;
  bool launched = false;  // counted in used
  bool live = false;      // allocated by a launch, not freed since
};

struct Usage {
  uint64_t used = 0, used_high = 0, retained = 0, reserved_high = 0;
  uint64_t reserved() const { return used + retained; }
  void peak() {
    used_high = std::max(used_high, used);
    reserved_high = std::max(reserved_high, reserved());
  }
};

struct Table {
  std::mutex m;
  std::unordered_map<CUdeviceptr, Alloc> allocs;
  std::unordered_map<int, Usage> usage;
};
Table& table() {
  static auto* t = new Table;  // never destroyed: graphs may be released at exit
  return *t;
}

Errc launch_alloc(CUdeviceptr p) {
  Table& t = table();
  std::lock_guard lk(t.m);
  auto it = t.allocs.find(p);
  if (it == t.allocs.end()) return Errc::success;
  Alloc& a = it->second;
  Usage& u = t.usage[a.ordinal];
  if (!a.launched) u.used += a.bytes;
  a.launched = a.live = true;
  u.peak();
  return Errc::success;
}

Errc check_not_live(CUdeviceptr p) {
  Table& t = table();
  std::lock_guard lk(t.m);
  auto it = t.allocs.find(p);
  if (it != t.allocs.end() && it->second.live)
    return fail(Errc::invalid_value, "cuGraphLaunch: the graph's allocation at {:#x} is still live from an earlier "
                "launch; free it (a free node, cuMemFreeAsync or cuMemFree) before launching the graph again", p);
  return Errc::success;
}

void release(CUdeviceptr p) {
  {
    Table& t = table();
    std::lock_guard lk(t.m);
    auto it = t.allocs.find(p);
    if (it == t.allocs.end()) return;
    Alloc& a = it->second;
    if (a.launched) {  // reserved until a trim
      Usage& u = t.usage[a.ordinal];
      u.used -= a.bytes;
      u.retained += a.bytes;
    }
    t.allocs.erase(it);
  }
  free_owned(p);
}

}  // namespace

Errc graph_alloc_spec(const CUDA_MEM_ALLOC_NODE_PARAMS& p, const std::shared_ptr<Context>& ctx, cap::Spec& out,
                      const char* api) {
  if (p.bytesize == 0) return fail(Errc::invalid_value, "{}: bytesize is 0", api);
  if (p.poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
    return fail(Errc::invalid_value, "{}: poolProps.allocType must be CU_MEM_ALLOCATION_TYPE_PINNED", api);
  if (p.poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE || p.poolProps.location.id != ctx->ordinal())
    return fail(Errc::invalid_value, "{}: poolProps.location must be the current context's device {}", api,
                ctx->ordinal());
  CUdeviceptr d = 0;
  TRY(alloc_device(ctx, p.bytesize, api, d, /*module_owned=*/true));
  {
    Table& t = table();
    std::lock_guard lk(t.m);
    t.allocs[d] = Alloc{p.bytesize, ctx->ordinal()};
  }
  out.kind = cap::Kind::mem_alloc;
  out.alloc = p;
  out.alloc.dptr = d;
  out.alloc.accessDescs = nullptr;
  out.alloc.accessDescCount = 0;
  out.keep = std::shared_ptr<void>(nullptr, [d](void*) { release(d); });
  out.precheck = [d] { return check_not_live(d); };
  out.issue = [d](CUstream) { return launch_alloc(d); };
  return Errc::success;
}

Errc graph_free_spec(CUdeviceptr p, bool captured, cap::Spec& out, const char* api) {
  out.kind = cap::Kind::mem_free;
  out.free_ptr = p;
  if (is_graph_memory(p)) {
    out.issue = [p](CUstream) {
      graph_memory_freed(p);
      return Errc::success;
    };
    return Errc::success;
  }
  if (!captured || !p)
    return fail(Errc::invalid_value, "{}: {:#x} is not the memory of an allocation node", api, p);
  out.issue = [p](CUstream s) { return api::cuMemFreeAsync(p, s); };
  return Errc::success;
}

bool is_graph_memory(CUdeviceptr p) {
  Table& t = table();
  std::lock_guard lk(t.m);
  return t.allocs.count(p) != 0;
}

void graph_memory_freed(CUdeviceptr p) {
  Table& t = table();
  std::lock_guard lk(t.m);
  if (auto it = t.allocs.find(p); it != t.allocs.end()) it->second.live = false;
}

}  // namespace cuda_shim::mem

namespace cuda_shim::api {
namespace {

Errc graph_mem_args(CUdevice dev, int attr, const void* value, const char* api) {
  TRY(Driver::get().require_init(api));
  if (dev < 0 || dev >= Driver::get().device_count())
    return fail(Errc::invalid_device, "{}: device {} does not exist", api, dev);
  if (attr < CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT || attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
    return fail(Errc::invalid_value, "{}: attr {} is not a CUgraphMem_attribute", api, attr);
  return need(value, api, "value");
}

}  // namespace

Errc cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void* value) noexcept {
  TRY(graph_mem_args(dev, attr, value, "cuDeviceGetGraphMemAttribute"));
  auto& t = mem::table();
  std::lock_guard lk(t.m);
  const auto& u = t.usage[dev];
  const uint64_t v[] = {u.used, u.used_high, u.reserved(), u.reserved_high};
  *static_cast<cuuint64_t*>(value) = v[attr];
  return Errc::success;
}

// Measured: only the two high watermarks can be set, and only to 0 (which resets them).
Errc cuDeviceSetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void* value) noexcept {
  const char* api = "cuDeviceSetGraphMemAttribute";
  TRY(graph_mem_args(dev, attr, value, api));
  if (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
    return fail(Errc::invalid_value, "{}: only CU_GRAPH_MEM_ATTR_USED_MEM_HIGH and _RESERVED_MEM_HIGH can be reset",
                api);
  if (*static_cast<const cuuint64_t*>(value) != 0)
    return fail(Errc::invalid_value, "{}: a high watermark can only be reset, to 0", api);
  auto& t = mem::table();
  std::lock_guard lk(t.m);
  auto& u = t.usage[dev];
  if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
    u.used_high = u.used;
  else
    u.reserved_high = u.reserved();
  return Errc::success;
}

Errc cuDeviceGraphMemTrim(CUdevice dev) noexcept {
  const char* api = "cuDeviceGraphMemTrim";
  TRY(Driver::get().require_init(api));
  if (dev < 0 || dev >= Driver::get().device_count())
    return fail(Errc::invalid_device, "{}: device {} does not exist", api, dev);
  auto& t = mem::table();
  std::lock_guard lk(t.m);
  t.usage[dev].retained = 0;
  return Errc::success;
}

}  // namespace cuda_shim::api
