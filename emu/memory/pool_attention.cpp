#include "memory/pool_attention.hpp"

#include <mutex>

#include "core/events.hpp"
#include "core/spinlock.hpp"

namespace cuda_shim::mem {
namespace {
struct Entry {
  std::weak_ptr<Pool> pool;
  AttentionSlot* slot;
};
struct List {
  SpinLock m;
  std::vector<Entry> v;
};
List& list() {
  static auto* l = new List();  // never destroyed: other threads may outlive main()
  return *l;
}
// Under the list's lock: the count and the event's bit change in the order of the calls.
void note_count(size_t n) {
  const size_t was = g_attention.exchange(n, std::memory_order_release);
  if ((was != 0) != (n != 0)) ev::host_synchronised.want(n != 0);
}
}  // namespace

void attention_add(std::weak_ptr<Pool> pool, AttentionSlot& slot) {
  List& l = list();
  std::lock_guard lk(l.m);
  if (slot.listed()) return;
  l.v.push_back(Entry{std::move(pool), &slot});
  slot.index.store(l.v.size() - 1, std::memory_order_relaxed);
  note_count(l.v.size());
}

void attention_remove(AttentionSlot& slot) {
  List& l = list();
  std::lock_guard lk(l.m);
  const size_t i = slot.index.load(std::memory_order_relaxed);
  if (i == AttentionSlot::npos) return;
  if (i + 1 != l.v.size()) {
    l.v[i] = std::move(l.v.back());
    l.v[i].slot->index.store(i, std::memory_order_relaxed);
  }
  l.v.pop_back();
  slot.index.store(AttentionSlot::npos, std::memory_order_relaxed);
  note_count(l.v.size());
}


void attention_snapshot(std::vector<std::shared_ptr<Pool>>& out) {
  List& l = list();
  std::lock_guard lk(l.m);
  out.reserve(l.v.size());
  for (auto& e : l.v)
    if (auto p = e.pool.lock()) out.push_back(std::move(p));
}

}  // namespace cuda_shim::mem
