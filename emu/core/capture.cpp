// The open capture sequences and the rules every room applies before it queues, synchronizes or
// allocates while one is open (capture.hpp). Codes measured on an H200 (tests/probe/cases/graph.cases).
#include "core/capture.hpp"

#include <mutex>

#include "core/stream.hpp"

namespace cuda_shim::cap {
namespace {

struct Open {
  std::mutex m;
  std::vector<std::weak_ptr<Sequence>> seqs;
};
Open& open_seqs() {
  static auto* o = new Open;  // never destroyed: captures may end in threads outliving main
  return *o;
}

// The open sequences, as strong references, taken under the lock and used outside it.
std::vector<std::shared_ptr<Sequence>> snapshot() {
  std::vector<std::shared_ptr<Sequence>> v;
  Open& o = open_seqs();
  std::lock_guard lk(o.m);
  for (auto& w : o.seqs)
    if (auto s = w.lock()) v.push_back(std::move(s));
  return v;
}

thread_local Mode t_mode = Mode::global;

}  // namespace

void opened(const std::shared_ptr<Sequence>& s) {
  Open& o = open_seqs();
  std::lock_guard lk(o.m);
  o.seqs.push_back(s);
  g_open.fetch_add(1, std::memory_order_acq_rel);
}

void closed(const Sequence* s) {
  Open& o = open_seqs();
  std::lock_guard lk(o.m);
  for (size_t i = 0; i < o.seqs.size(); ++i) {
    auto p = o.seqs[i].lock();
    if (p && p.get() != s) continue;
    o.seqs.erase(o.seqs.begin() + static_cast<std::ptrdiff_t>(i));
    if (p) {
      g_open.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    --i;  // a sequence that died unclosed: drop its entry and go on looking
  }
}

Errc intercept(Stream& s, const char* api, std::shared_ptr<Sequence>& seq) {
  if (g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  if (auto c = s.capture()) {
    seq = std::move(c);
    return Errc::success;
  }
  if (s.kind() != StreamKind::legacy) return Errc::success;
  // The legacy stream orders itself after every blocking stream of its context: with one of them
  // capturing, that ordering cannot be captured.
  Errc e = Errc::success;
  for (auto& q : snapshot())
    if (q->active() && q->context() == s.ctx() && q->origin_blocking())
      e = q->refuse(Errc::stream_capture_implicit, api, "the legacy default stream synchronizes implicitly with a "
                    "blocking stream that is capturing");
  return e;
}

Errc refuse_if_capturing(Stream& s, const char* api) {
  if (g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  if (auto c = s.capture())
    return c->refuse(Errc::stream_capture_unsupported, api, "the stream is capturing; a capture cannot wait for itself");
  return Errc::success;
}

Errc refuse_if_context_captures(const Context* ctx, const char* api) {
  if (g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  Errc e = Errc::success;
  for (auto& q : snapshot())
    if (q->context() == ctx)
      e = q->refuse(Errc::stream_capture_unsupported, api, "a stream of the context is capturing");
  return e;
}

Errc check_unsafe(const char* api) {
  if (g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  const Mode mine = t_mode;
  if (mine == Mode::relaxed) return Errc::success;
  const auto me = std::this_thread::get_id();
  Errc e = Errc::success;
  for (auto& q : snapshot()) {
    if (!q->active()) continue;
    const bool own = q->thread() == me && q->mode() != Mode::relaxed;
    const bool global = mine == Mode::global && q->mode() == Mode::global;
    if (own || global)
      e = q->refuse(Errc::stream_capture_unsupported, api, "a potentially unsafe call during a stream capture that is "
                    "not in relaxed mode (cuThreadExchangeStreamCaptureMode)");
  }
  return e;
}

Mode thread_mode() { return t_mode; }
void set_thread_mode(Mode m) { t_mode = m; }

}  // namespace cuda_shim::cap
