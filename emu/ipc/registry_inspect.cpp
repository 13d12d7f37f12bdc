#include "ipc/registry_inspect.hpp"

#include <set>

#include "core/config.hpp"
#include "ipc/segment.hpp"

namespace cuda_shim::ipc {
using namespace seg;

std::string inspect_escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == ' ') out += "%20";
    else if (c == '%') out += "%25";
    else if (c == '\n') out += "%0a";
    else out += c;
  }
  return out.empty() ? "-" : out;
}

namespace {

// The segment as a process that does not take part sees it; null with why.
std::unique_ptr<Segment> observe(std::string& why) {
  std::string name = default_name();
  struct stat st {};
  if (::stat(("/dev/shm/" + name).c_str(), &st) != 0) {
    why = fmt::format("no registry segment /dev/shm/{}: no process uses the emulator", name);
    return nullptr;
  }
  auto s = Segment::observe(why);
  if (!s) why = fmt::format("registry segment /dev/shm/{}: {}", name, why);
  return s;
}

const char* kind_word(RecordKind k) {
  switch (k) {
    case RecordKind::legacy_mem: return "legacy_mem";
    case RecordKind::fabric: return "fabric";
    case RecordKind::object: return "object";
  }
  return "?";
}

const char* object_word(ObjectKind k) {
  switch (k) {
    case ObjectKind::pool: return "pool";
    case ObjectKind::vmm: return "vmm";
    case ObjectKind::semaphore: return "semaphore";
  }
  return "object";
}

// Whether pid has ended: gone, or a zombie its parent has not reaped (it holds nothing).
bool ended(int pid) { return process_gone(pid, process_start(pid)); }

}  // namespace

std::string inspect_registry(std::string& why) {
  auto s = observe(why);
  if (!s) return {};
  Layout* l = s->L();
  // Copied under the lock (a few table walks), formatted and checked for liveness after it.
  std::vector<ProcSlot> procs;
  std::vector<std::array<uint64_t, 2>> use;  // per process slot copied: (dev << 32 | ctxs, bytes)
  std::vector<std::pair<uint32_t, uint32_t>> use_at;  // (index in procs, dev)
  std::vector<Record> records;
  std::vector<EventSlot> events;
  std::vector<std::pair<uint32_t, EndpointSlot>> eps;
  std::vector<EndpointAliasSlot> aliases;
  std::vector<EndpointBindSlot> binds;
  const int ndev = Config::get().devices;
  std::vector<uint64_t> dev_used(std::max(ndev, 0));
  {
    Segment::Lock lk(*s);
    for (int d = 0; d < ndev && d < kUsageDevices; ++d) dev_used[d] = std::atomic_ref<uint64_t>(l->dev_used[d]).load();
    for (uint32_t i = 0; i < l->h.proc_hwm && i < kProcs; ++i) {
      const ProcSlot& p = l->procs[i];
      if (p.state != kLive) continue;
      const uint32_t hwm = std::min<uint32_t>(std::atomic_ref<uint32_t>(l->procs[i].dev_hwm).load(), kUsageDevices);
      for (uint32_t d = 0; d < hwm; ++d) {
        uint64_t b = std::atomic_ref<uint64_t>(l->charged[d][i]).load();
        uint32_t c = std::atomic_ref<uint32_t>(l->contexts[d][i]).load();
        if (b || c) {
          use.push_back({(uint64_t(d) << 32) | c, b});
          use_at.emplace_back(static_cast<uint32_t>(procs.size()), d);
        }
      }
      procs.push_back(p);
    }
    if (l->h.shared_used) {
      for (auto& r : l->records)
        if (r.state == kLive) records.push_back(r.rec);
      for (auto& e : l->events)
        if (e.state == kLive || e.state == kOrphan) {
          events.push_back(e);
          auto& w = events.back().words;
          w[0] = std::atomic_ref<uint64_t>(e.words[0]).load();
          w[1] = std::atomic_ref<uint64_t>(e.words[1]).load();
        }
      for (uint32_t i = 0; i < kEndpoints; ++i)
        if (l->le.endpoints[i].state == kLive) eps.emplace_back(i, l->le.endpoints[i]);
      for (auto& a : l->le.aliases)
        if (a.state == kLive) aliases.push_back(a);
      for (auto& b : l->le.binds)
        if (b.state == kLive) binds.push_back(b);
    }
  }
  std::string out = fmt::format("registry name={}\n", inspect_escape(s->name()));
  const auto& cfg = Config::get();
  for (int d = 0; d < ndev; ++d)
    out += fmt::format("device ordinal={} name={} total={} used={}\n", d, inspect_escape(cfg.device[d].name),
                       cfg.device[d].total_mem, dev_used[d]);
  for (size_t i = 0; i < procs.size(); ++i)
    out += fmt::format("proc pid={} start={} channel={} gone={}\n", procs[i].pid, procs[i].start, procs[i].channel,
                       process_gone(procs[i].pid, procs[i].start) ? 1 : 0);
  for (size_t k = 0; k < use.size(); ++k)
    out += fmt::format("use pid={} dev={} bytes={} contexts={}\n", procs[use_at[k].first].pid, use[k][0] >> 32,
                       use[k][1], use[k][0] & 0xffffffffu);
  for (auto& r : records)
    out += fmt::format("export kind={} pid={} token={} object={} size={} device={} what={} gone={}\n", kind_word(r.kind),
                       r.pid, to_hex(r.token), to_hex(r.object), r.size, r.device,
                       r.kind == RecordKind::object ? object_word(r.what) : "-", ended(r.pid) ? 1 : 0);
  for (auto& e : events)
    out += fmt::format("event pid={} token={} state={} issued={} completed={}\n", e.pid, to_hex(e.token),
                       e.state == kOrphan ? "orphan" : "live", e.words[0], e.words[1]);
  for (auto& [i, e] : eps) {
    std::string team;
    for (uint32_t k = 0; k < e.team_count && k < kEndpointTeamMax; ++k)
      team += fmt::format("{}{}", k ? "," : "", e.team_dev[k]);
    out += fmt::format("endpoint index={} token={} type={} size={} owner={} creator={} exported={} team={}\n", i,
                       to_hex(e.token), e.type, e.size, e.owner, e.creator_pid, e.exported ? 1 : 0,
                       team.empty() ? "-" : team);
  }
  for (auto& a : aliases)
    out += fmt::format("alias pid={} endpoint={} id={} imported={}\n", a.pid, a.ep, a.le_id, a.imported ? 1 : 0);
  for (auto& b : binds)
    out += fmt::format("bind pid={} endpoint={} dev={} id={} kind={} offset={} size={} fabric={} what={:#x}\n",
                       b.b.pid, b.ep, b.b.dev, b.b.le_id, b.b.mem_kind, b.b.offset, b.b.size, b.b.fabric ? 1 : 0,
                       b.b.what);
  return out;
}

std::string reap_registry(std::string& why) {
  auto s = observe(why);
  if (!s) return {};
  Layout* l = s->L();
  struct Reaped {
    int pid;
    unsigned exports = 0, events = 0, aliases = 0, binds = 0;
    uint64_t bytes = 0;
  };
  std::vector<Reaped> reaped;
  Segment::Lock lk(*s);
  std::set<int> dead;
  // Process slots first: a zombie counts as ended (sweep() would keep it until its parent reaps it).
  for (uint32_t i = 0; i < l->h.proc_hwm && i < kProcs; ++i)
    if (ProcSlot& p = l->procs[i]; p.state == kLive && process_gone(p.pid, p.start)) {
      Reaped r{p.pid};
      const uint32_t hwm = std::min<uint32_t>(std::atomic_ref<uint32_t>(p.dev_hwm).load(), kUsageDevices);
      for (uint32_t d = 0; d < hwm; ++d) r.bytes += std::atomic_ref<uint64_t>(l->charged[d][i]).load();
      drop_usage(l, i);
      p.state = kFree;
      dead.insert(p.pid);
      reaped.push_back(r);
    }
  auto entry = [&](int pid) -> Reaped& {
    for (auto& r : reaped)
      if (r.pid == pid) return r;
    dead.insert(pid);
    return reaped.emplace_back(Reaped{pid});
  };
  // What processes without a slot of their own published (a fork()ed child through its
  // parent's attachment) goes too once they ended; object records stay (they outlive their
  // exporter by design: the descriptors handed out still prove what they are).
  std::vector<int> looked;
  auto gone = [&](int pid) {
    if (dead.count(pid)) return true;
    if (std::find(looked.begin(), looked.end(), pid) != looked.end()) return false;
    if (!ended(pid)) {
      looked.push_back(pid);
      return false;
    }
    dead.insert(pid);
    return true;
  };
  if (l->h.shared_used) {
    for (auto& r : l->records)
      if (r.state == kLive && r.rec.kind != RecordKind::object && gone(r.rec.pid)) {
        s->retire(r);
        ++entry(r.rec.pid).exports;
      }
    for (auto& ev : l->events)
      if (ev.state == kLive && gone(ev.pid)) {
        Segment::orphan_event(ev);
        ++entry(ev.pid).events;
      }
    for (auto& a : l->le.aliases)
      if (a.state == kLive && gone(a.pid)) ++entry(a.pid).aliases;
    for (auto& b : l->le.binds)
      if (b.state == kLive && gone(b.b.pid)) ++entry(b.b.pid).binds;
    endpoints_sweep(l->le, gone);
    s->recount();
  }
  std::string out;
  for (auto& r : reaped)
    out += fmt::format("reaped pid={} exports={} events={} aliases={} bindings={} bytes={}\n", r.pid, r.exports,
                       r.events, r.aliases, r.binds, r.bytes);
  return out;
}

}  // namespace cuda_shim::ipc
