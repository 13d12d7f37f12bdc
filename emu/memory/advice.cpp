#include "memory/advice.hpp"

#include <algorithm>
#include <iterator>

#include "memory/backing.hpp"  // page_size()

namespace cuda_shim::mem {

size_t advice_page() { return page_size(); }

AdviceMap::AdviceMap(size_t bytes) : bytes_(bytes) {
  const size_t ps = advice_page();
  pages_ = bytes / ps + (bytes % ps != 0);
  if (pages_ == 0) pages_ = 1;
  runs_.emplace(0, PagePolicy{});
}

std::map<size_t, PagePolicy>::iterator AdviceMap::split(size_t p) {
  if (p >= pages_) return runs_.end();
  auto it = std::prev(runs_.upper_bound(p));
  if (it->first == p) return it;
  return runs_.emplace_hint(std::next(it), p, it->second);
}

void AdviceMap::update(size_t first, size_t last, const std::function<void(PagePolicy&)>& fn) {
  last = std::min(last, pages_);
  if (first >= last) return;
  auto end = split(last);
  auto begin = split(first);
  for (auto it = begin; it != end; ++it) fn(it->second);
  // Coalesce: runs equal to their predecessor disappear, from the run before `first` up to
  // and including the run starting at `last`.
  auto it = begin == runs_.begin() ? begin : std::prev(begin);
  while (it != runs_.end()) {
    auto next = std::next(it);
    if (next == runs_.end()) break;
    const bool past = next->first > last;
    if (past) break;
    if (next->second == it->second) {
      runs_.erase(next);
    } else {
      it = next;
    }
  }
}

namespace {

void report_location(int type, int id, int& value, int& out_type, int& out_id) {
  switch (type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      value = id;
      out_type = type;
      out_id = id;
      return;
    case CU_MEM_LOCATION_TYPE_HOST:
      value = -1;  // CU_DEVICE_CPU
      out_type = type;
      out_id = id;  // -1 as advised or prefetched; 0 as a managed pool's location (both measured)
      return;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      value = -1;  // the host, as a device number; the node is in the _ID attribute
      out_type = type;
      out_id = id;
      return;
    default:
      value = -2;  // CU_DEVICE_INVALID
      out_type = 0;
      out_id = -2;
  }
}

}  // namespace

// Documented and measured: READ_MOSTLY is 1 only when every page is read-mostly; the preferred
// and last-prefetch locations are reported only when every page agrees (else -2, type 0, id -2);
// ACCESSED_BY lists what is set on every page.
RangeAttributes AdviceMap::read(size_t first, size_t last) const {
  RangeAttributes a;
  last = std::min(last, pages_);
  if (first >= last) return a;
  auto it = std::prev(runs_.upper_bound(first));
  const PagePolicy& p0 = it->second;
  bool rm = p0.read_mostly, pl_same = true, lp_same = true;
  std::vector<int> ab = p0.accessed_by;
  for (++it; it != runs_.end() && it->first < last; ++it) {
    const PagePolicy& p = it->second;
    rm = rm && p.read_mostly;
    pl_same = pl_same && p.pl_type == p0.pl_type && p.pl_id == p0.pl_id;
    lp_same = lp_same && p.lp_type == p0.lp_type && p.lp_id == p0.lp_id;
    ab.erase(std::remove_if(ab.begin(), ab.end(),
                            [&](int d) {
                              return std::find(p.accessed_by.begin(), p.accessed_by.end(), d) ==
                                     p.accessed_by.end();
                            }),
             ab.end());
  }
  a.read_mostly = rm ? 1 : 0;
  if (pl_same) report_location(p0.pl_type, p0.pl_id, a.preferred, a.preferred_type, a.preferred_id);
  if (lp_same)
    report_location(p0.lp_type, p0.lp_id, a.last_prefetch, a.last_prefetch_type, a.last_prefetch_id);
  a.accessed_by = std::move(ab);
  return a;
}

AdviceMap& pageable_advice() {
  // The whole (57-bit) address space; leaked, as other process-wide state (workers may outlive main()).
  static auto* m = new AdviceMap(size_t(1) << 57);
  return *m;
}

std::mutex& pageable_advice_mutex() {
  static auto* m = new std::mutex();
  return *m;
}

}  // namespace cuda_shim::mem
