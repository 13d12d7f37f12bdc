#include "ipc/endpoint_table.hpp"

#include <time.h>

#include <algorithm>

#include "ipc/segment.hpp"

namespace cuda_shim::ipc::le {
using namespace seg;

namespace {

// The segment, or the recorded reason it cannot be attached.
Segment* segment(Errc& e, const char* api) { return Segment::get(e, api); }

EndpointSlot* live(Layout* l, uint32_t index, const Token& token) {
  if (index >= kEndpoints) return nullptr;
  EndpointSlot& s = l->le.endpoints[index];
  return s.state == kLive && s.token == token ? &s : nullptr;
}

Endpoint snapshot(uint32_t index, const EndpointSlot& s) {
  Endpoint e;
  e.index = index;
  e.token = s.token;
  e.type = s.type;
  e.owner = s.owner;
  e.num_devices = s.num_devices;
  e.size = s.size;
  e.ipc_types = s.ipc_types;
  e.flags = s.flags;
  e.creator_pid = s.creator_pid;
  e.channel = s.channel;
  e.built_ns = s.built_ns;
  e.exported = s.exported != 0;
  for (uint32_t i = 0; i < s.team_count && i < kEndpointTeamMax; ++i) e.team.push_back(s.team_dev[i]);
  return e;
}

EndpointAliasSlot* free_alias(Layout* l) {
  for (auto& a : l->le.aliases)
    if (a.state != kLive) return &a;
  return nullptr;
}

void publish_alias(EndpointAliasSlot& a, uint32_t index, const Token& token, uint32_t le_id, bool imported,
                   uint64_t built_ns) {
  a = EndpointAliasSlot{};
  a.pid = ::getpid();
  a.ep = index;
  a.le_id = le_id;
  a.imported = imported;
  a.built_ns = built_ns;
  a.ep_token = token;
  std::atomic_ref<uint32_t>(a.state).store(kLive, std::memory_order_release);
}

}  // namespace

uint64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

Errc create(Endpoint& e, uint32_t le_id, bool start_now, uint64_t build_ns, const char* api) {
  Errc err = Errc::success;
  Segment* s = segment(err, api);
  if (!s) return err;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  uint32_t index = kEndpoints;
  for (uint32_t i = 0; i < kEndpoints; ++i)
    if (l->le.endpoints[i].state != kLive) {
      index = i;
      break;
    }
  if (index == kEndpoints) {
    s->sweep();
    for (uint32_t i = 0; i < kEndpoints && index == kEndpoints; ++i)
      if (l->le.endpoints[i].state != kLive) index = i;
  }
  EndpointAliasSlot* a = free_alias(l);
  if (index == kEndpoints || !a)
    return fail(Errc::out_of_memory, "{}: the emulated fabric has no room for another logical endpoint ({} endpoints "
                "and {} ids associated with them, all processes together)", api, kEndpoints, kEndpointAliases);
  EndpointSlot& d = l->le.endpoints[index];
  s->note_shared();
  d = EndpointSlot{};
  d.type = e.type;
  d.token = e.token = random_token();
  d.owner = e.owner;
  d.num_devices = e.num_devices;
  d.size = e.size;
  d.ipc_types = e.ipc_types;
  d.flags = e.flags;
  d.creator_pid = e.creator_pid = ::getpid();
  d.channel = e.channel;
  d.built_ns = e.built_ns = start_now ? now_ns() + build_ns : 0;
  std::atomic_ref<uint32_t>(d.state).store(kLive, std::memory_order_release);
  e.index = index;
  publish_alias(*a, index, e.token, le_id, false, 0);
  return Errc::success;
}

Errc import(const Token& token, uint32_t le_id, uint64_t build_ns, int channel, Endpoint& out,
            const char* api) {
  Errc err = Errc::success;
  Segment* s = segment(err, api);
  if (!s) return err;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  s->sweep();  // an endpoint whose holders were all killed must not be imported
  uint32_t index = kEndpoints;
  for (uint32_t i = 0; i < kEndpoints; ++i)
    if (l->le.endpoints[i].state == kLive && l->le.endpoints[i].token == token) index = i;
  if (index == kEndpoints)
    return fail(Errc::not_supported, "{}: the fabric handle names no live logical endpoint (never exported, or every "
                "process holding it destroyed its id or exited)", api);
  if (l->le.endpoints[index].channel != channel)
    return fail(Errc::not_permitted, "{}: the logical endpoint was exported on IMEX channel {} and this process holds "
                "channel {}: only processes of one IMEX domain share endpoints", api, l->le.endpoints[index].channel,
                channel);
  EndpointAliasSlot* a = free_alias(l);
  if (!a)
    return fail(Errc::out_of_memory, "{}: the emulated fabric holds {} endpoint ids already, its limit", api,
                kEndpointAliases);
  publish_alias(*a, index, token, le_id, true, now_ns() + build_ns);
  out = snapshot(index, l->le.endpoints[index]);
  return Errc::success;
}

std::vector<Binding> drop_alias(uint32_t index, const Token& token, uint32_t le_id) {
  std::vector<Binding> removed;
  Errc err = Errc::success;
  Segment* s = segment(err, "cuLogicalEndpointDestroy");
  if (!s) return removed;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  int me = ::getpid();
  bool others = false;
  for (auto& a : l->le.aliases) {
    if (a.state != kLive || a.ep != index || !(a.ep_token == token)) continue;
    if (a.pid == me && a.le_id == le_id)
      a.state = kFree;
    else
      others = true;
  }
  // The driver's rule: "any memory bound by this process to any device associated with the
  // logical endpoint will be unbound".
  for (auto& b : l->le.binds)
    if (b.state == kLive && b.ep == index && b.ep_token == token && b.b.pid == me) {
      removed.push_back(b.b);
      b.state = kFree;
    }
  if (!others)
    if (EndpointSlot* e = live(l, index, token)) {
      e->state = kFree;
      for (auto& b : l->le.binds)
        if (b.state == kLive && b.ep == index && b.ep_token == token) b.state = kFree;
    }
  return removed;
}

bool get(uint32_t index, const Token& token, Endpoint& out) {
  Errc err = Errc::success;
  Segment* s = segment(err, "logical endpoint");
  if (!s) return false;
  Segment::Lock lk(*s);
  EndpointSlot* e = live(s->L(), index, token);
  if (!e) return false;
  out = snapshot(index, *e);
  return true;
}

bool ready(const std::vector<AliasRef>& ids, uint64_t now) {
  Errc err = Errc::success;
  Segment* s = segment(err, "cuLogicalEndpointQuery");
  if (!s) return false;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  for (const AliasRef& r : ids) {
    EndpointSlot* e = live(l, r.index, r.token);
    if (!e || e->built_ns == 0 || now < e->built_ns) return false;
  }
  // Imports construct too: every alias of the range must have been built by now.
  int me = ::getpid();
  size_t built = 0;
  for (auto& a : l->le.aliases)
    if (a.state == kLive && a.pid == me)
      for (const AliasRef& r : ids)
        if (a.le_id == r.le_id && a.ep == r.index && a.ep_token == r.token) {
          if (now < a.built_ns) return false;
          ++built;
        }
  return built == ids.size();
}

Errc add_device(uint32_t index, const Token& token, int dev, uint64_t build_ns, const char* api) {
  Errc err = Errc::success;
  Segment* s = segment(err, api);
  if (!s) return err;
  Segment::Lock lk(*s);
  EndpointSlot* e = live(s->L(), index, token);
  if (!e) return fail(Errc::invalid_value, "{}: the logical endpoint no longer exists", api);
  for (uint32_t i = 0; i < e->team_count; ++i)
    if (e->team_dev[i] == dev)
      return fail(Errc::invalid_value, "{}: device {} is already in this multicast endpoint's team (added by pid {}); "
                  "membership is permanent and a device joins once", api, dev, e->team_pid[i]);
  if (e->team_count >= e->num_devices)
    return fail(Errc::invalid_value, "{}: the multicast team is complete: all {} devices (CUlogicalEndpointProp::"
                "multicast.numDevices) were added", api, e->num_devices);
  e->team_dev[e->team_count] = dev;
  e->team_pid[e->team_count] = ::getpid();
  ++e->team_count;
  if (e->team_count == e->num_devices) e->built_ns = now_ns() + build_ns;
  return Errc::success;
}

void mark_exported(uint32_t index, const Token& token) {
  Errc err = Errc::success;
  Segment* s = segment(err, "cuLogicalEndpointExport");
  if (!s) return;
  Segment::Lock lk(*s);
  if (EndpointSlot* e = live(s->L(), index, token)) e->exported = 1;
}

Errc bind(uint32_t index, const Token& token, Binding& b, uint32_t limit, const char* api) {
  Errc err = Errc::success;
  Segment* s = segment(err, api);
  if (!s) return err;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  if (!live(l, index, token)) return fail(Errc::invalid_value, "{}: the logical endpoint no longer exists", api);
  uint32_t on_dev = 0;
  EndpointBindSlot* slot = nullptr;
  for (auto& x : l->le.binds) {
    if (x.state != kLive) {
      if (!slot) slot = &x;
      continue;
    }
    if (x.ep != index || !(x.ep_token == token) || x.b.dev != b.dev) continue;
    ++on_dev;
    if (b.offset < x.b.offset + x.b.size && x.b.offset < b.offset + b.size)
      return fail(Errc::invalid_value, "{}: [{:#x}, {:#x}) of the endpoint on device {} overlaps a binding already "
                  "there ([{:#x}, {:#x}), bound by pid {}); unbind it first", api, b.offset, b.offset + b.size, b.dev,
                  x.b.offset, x.b.offset + x.b.size, x.b.pid);
  }
  if (on_dev >= limit)
    return fail(Errc::out_of_memory, "{}: no bind resources left: device {} holds {} bindings of this endpoint, the "
                "limit (CUDA_SHIM_LE_BIND_LIMIT)", api, b.dev, on_dev);
  if (!slot)
    return fail(Errc::out_of_memory, "{}: no bind resources left: the emulated fabric holds {} bindings", api,
                kEndpointBinds);
  b.token = random_token();
  b.pid = ::getpid();
  slot->ep = index;
  slot->ep_token = token;
  slot->b = b;
  std::atomic_ref<uint32_t>(slot->state).store(kLive, std::memory_order_release);
  return Errc::success;
}

Errc unbind(uint32_t index, const Token& token, int dev, uint64_t offset, uint64_t size,
            std::vector<Binding>& removed, const char* api) {
  Errc err = Errc::success;
  Segment* s = segment(err, api);
  if (!s) return err;
  Segment::Lock lk(*s);
  Layout* l = s->L();
  if (!live(l, index, token)) return fail(Errc::invalid_value, "{}: the logical endpoint no longer exists", api);
  int me = ::getpid();
  std::vector<EndpointBindSlot*> mine;
  for (auto& x : l->le.binds)
    if (x.state == kLive && x.ep == index && x.ep_token == token && x.b.dev == dev && x.b.pid == me) mine.push_back(&x);
  std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->b.offset < b->b.offset; });
  auto first = std::find_if(mine.begin(), mine.end(), [&](auto* x) { return x->b.offset == offset; });
  if (first == mine.end())
    return fail(Errc::invalid_value, "{}: no binding of this process starts at offset {:#x} on device {}: the offset "
                "must be one a bind call gave{}", api, offset, dev, mine.empty() ? " (nothing is bound there)" : "");
  // The bindings from `first` on must tile [offset, offset + size) exactly: size is one bind's
  // size or the combined size of adjacent ones, and the range encloses each one fully.
  uint64_t end = offset + size, at = offset;
  auto it = first;
  for (; it != mine.end() && at < end; ++it) {
    if ((*it)->b.offset != at)
      return fail(Errc::invalid_value, "{}: [{:#x}, {:#x}) on device {} is not covered by adjacent bindings: nothing "
                  "is bound at {:#x} (the size must be one bind's or the combined size of adjacent binds)", api,
                  offset, end, dev, at);
    at += (*it)->b.size;
  }
  if (at != end)
    return fail(Errc::invalid_value, "{}: size {:#x} at offset {:#x} on device {} does not end where a binding ends{}: "
                "offset + size must fully enclose every binding it covers", api, size, offset, dev,
                at > end ? fmt::format(" (the binding there ends at {:#x})", at) : std::string(" (nothing is bound past "
                "the last binding)"));
  for (auto j = first; j != it; ++j) {
    removed.push_back((*j)->b);
    (*j)->state = kFree;
  }
  return Errc::success;
}

std::vector<Binding> bindings(uint32_t index, const Token& token, int dev) {
  std::vector<Binding> out;
  Errc err = Errc::success;
  Segment* s = segment(err, "logical endpoint");
  if (!s) return out;
  Segment::Lock lk(*s);
  for (auto& x : s->L()->le.binds)
    if (x.state == kLive && x.ep == index && x.ep_token == token && x.b.dev == dev) out.push_back(x.b);
  std::sort(out.begin(), out.end(), [](const Binding& a, const Binding& b) { return a.offset < b.offset; });
  return out;
}

std::string dump() {
  Errc err = Errc::success;
  Segment* s = segment(err, "cuShimLogicalEndpointState");
  if (!s) return explanation() + "\n";
  Segment::Lock lk(*s);
  Layout* l = s->L();
  s->sweep();
  uint64_t now = now_ns();
  std::string out;
  int n = 0;
  static const char* kinds[] = {"?", "handle", "vmm", "pool"};
  for (uint32_t i = 0; i < kEndpoints; ++i) {
    const EndpointSlot& e = l->le.endpoints[i];
    if (e.state != kLive) continue;
    ++n;
    bool built = e.built_ns != 0 && now >= e.built_ns;
    std::string team;
    for (uint32_t k = 0; k < e.team_count; ++k)
      team += fmt::format("{}{} (pid {})", k ? ", " : "", e.team_dev[k], e.team_pid[k]);
    out += fmt::format("endpoint {} {} size {:#x}{}{}, created by pid {}: {}\n", to_hex(e.token).substr(0, 8),
                       e.type == 1 ? fmt::format("unicast owner device {}", e.owner)
                                   : fmt::format("multicast team {}/{} [{}]", e.team_count, e.num_devices, team),
                       e.size, e.ipc_types & 1 ? " fabric" : "", e.flags & 1 ? " counted-ops" : "", e.creator_pid,
                       built ? "constructed" : e.built_ns ? "constructing" : "waiting for devices");
    for (auto& a : l->le.aliases)
      if (a.state == kLive && a.ep == i && a.ep_token == e.token)
        out += fmt::format("  id {} in pid {} ({}{})\n", a.le_id, a.pid, a.imported ? "imported" : "created",
                           built && now >= a.built_ns ? "" : ", not ready");
    std::vector<const EndpointBindSlot*> bs;
    for (auto& b : l->le.binds)
      if (b.state == kLive && b.ep == i && b.ep_token == e.token) bs.push_back(&b);
    std::sort(bs.begin(), bs.end(), [](auto* x, auto* y) { return x->b.dev != y->b.dev ? x->b.dev < y->b.dev : x->b.offset < y->b.offset; });
    for (auto* slot : bs) {
      const EndpointBinding& b = slot->b;
      out += fmt::format("  device {}: [{:#x}, {:#x}) -> {} {:#x}{} by pid {} through id {}\n", b.dev, b.offset,
                         b.offset + b.size, kinds[b.mem_kind < 4 ? b.mem_kind : 0], b.what,
                         b.fabric ? " (fabric)" : "", b.pid, b.le_id);
    }
  }
  if (!n) out = "no logical endpoints\n";
  return out;
}

}  // namespace cuda_shim::ipc::le
