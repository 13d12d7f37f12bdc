// Per-page advice and prefetch state of managed memory (cuMemAdvise, cuMemPrefetchAsync,
// cuMemRangeGetAttribute). Owned by the advise module (memory/advice.cpp, memory/api_advise.cpp).
//  - An AdviceMap covers the pages of one managed allocation (page i = bytes [i*page, +page) from
//    its base, which is page-aligned). The state is kept as runs of equal pages (a map from a run's
//    first page to its policy), so a 64 GiB allocation advised whole costs one entry.
//  - Pageable host memory, on devices with CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, is kept in
//    one process-wide AdviceMap indexed by absolute page number (pageable_advice()).
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace cuda_shim::mem {

// What one page remembers. Locations are stored as the driver reports them back.
struct PagePolicy {
  bool read_mostly = false;
  // SET_PREFERRED_LOCATION: CU_MEM_LOCATION_TYPE_DEVICE (id = ordinal) or _HOST (id = -1);
  // CU_MEM_LOCATION_TYPE_INVALID (0) = none.
  int pl_type = 0;
  int pl_id = -2;
  // SET_ACCESSED_BY, in the order set: device ordinals, -1 for the host.
  std::vector<int> accessed_by;
  // The last cuMemPrefetchAsync: type DEVICE / HOST / HOST_NUMA / HOST_NUMA_CURRENT and its id
  // (ordinal, -1, NUMA node, the calling thread's NUMA node); type 0 = never prefetched.
  int lp_type = 0;
  int lp_id = -2;

  bool operator==(const PagePolicy& o) const {
    return read_mostly == o.read_mostly && pl_type == o.pl_type && pl_id == o.pl_id &&
           accessed_by == o.accessed_by && lp_type == o.lp_type && lp_id == o.lp_id;
  }
  bool operator!=(const PagePolicy& o) const { return !(*this == o); }
};

// The attributes cuMemRangeGetAttribute reports for a range, already combined over its pages.
struct RangeAttributes {
  int read_mostly = 0;        // CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY
  int preferred = -2;         // _PREFERRED_LOCATION (ordinal, -1 host, -2 none or mixed)
  int preferred_type = 0;     // _PREFERRED_LOCATION_TYPE
  int preferred_id = -2;      // _PREFERRED_LOCATION_ID
  std::vector<int> accessed_by;  // _ACCESSED_BY: set on every page, in the first page's order
  int last_prefetch = -2;     // _LAST_PREFETCH_LOCATION
  int last_prefetch_type = 0; // _LAST_PREFETCH_LOCATION_TYPE
  int last_prefetch_id = -2;  // _LAST_PREFETCH_LOCATION_ID
};

class AdviceMap {
 public:
  // A map over `bytes` bytes (rounded up to whole pages), every page with the default policy.
  explicit AdviceMap(size_t bytes);
  size_t bytes() const { return bytes_; }
  size_t pages() const { return pages_; }

  // Applies fn to the policy of every page in [first, last) (page indices, last <= pages()).
  void update(size_t first, size_t last, const std::function<void(PagePolicy&)>& fn);
  // The attributes of pages [first, last), combined (see advice.cpp for the rules).
  RangeAttributes read(size_t first, size_t last) const;
  // Number of runs of equal pages (tests: coalescing works).
  size_t runs() const { return runs_.size(); }

 private:
  // Makes a run start at page p (p < pages_); returns it.
  std::map<size_t, PagePolicy>::iterator split(size_t p);
  size_t bytes_;
  size_t pages_;
  std::map<size_t, PagePolicy> runs_;  // first page of a run -> its policy; covers [0, pages_)
};

// Advice granularity: the CPU page (documented; measured 4 KiB on x86-64: advice on a sub-page
// range covers the whole page).
size_t advice_page();

// The pages an advise or prefetch of [off, off + n) applies to (n > 0): every page it touches.
inline void pages_touched(uintptr_t off, size_t n, size_t& first, size_t& last) {
  const size_t ps = advice_page();
  first = off / ps;
  last = (off + n - 1) / ps + 1;
}
// The pages a range query of [off, off + n) combines (n > 0). Measured on NVIDIA's driver: the
// page holding the range's last byte is left out unless it is also the first page (reading 8 KiB
// that straddle two differently advised pages answers the first page's advice).
inline void pages_queried(uintptr_t off, size_t n, size_t& first, size_t& last) {
  const size_t ps = advice_page();
  first = off / ps;
  const size_t end_page = (off + n - 1) / ps;
  last = end_page > first ? end_page : first + 1;
}

// Pageable host memory's advice (devices with PAGEABLE_MEMORY_ACCESS): one map over the whole
// address space, page index = address / advice_page(), guarded by pageable_advice_mutex().
AdviceMap& pageable_advice();
std::mutex& pageable_advice_mutex();

}  // namespace cuda_shim::mem
