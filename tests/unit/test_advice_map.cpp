// AdviceMap (emu/memory/advice.cpp), compiled in from source: the run-length page map behind
// cuMemAdvise / cuMemPrefetchAsync / cuMemRangeGetAttribute, checked against a plain
// one-entry-per-page model under random updates, and for coalescing.
#include <catch2/catch.hpp>
#include <random>

#include "memory/advice.hpp"

namespace cuda_shim::mem {
size_t page_size() noexcept { return 4096; }  // advice.cpp's only outside need
}  // namespace cuda_shim::mem

using cuda_shim::mem::AdviceMap;
using cuda_shim::mem::PagePolicy;
using cuda_shim::mem::RangeAttributes;

namespace {
// The reference: every page on its own.
RangeAttributes model_read(const std::vector<PagePolicy>& pages, size_t first, size_t last) {
  RangeAttributes a;
  bool rm = true, pl = true, lp = true;
  std::vector<int> ab = pages[first].accessed_by;
  for (size_t i = first; i < last; ++i) {
    const PagePolicy& p = pages[i];
    rm = rm && p.read_mostly;
    pl = pl && p.pl_type == pages[first].pl_type && p.pl_id == pages[first].pl_id;
    lp = lp && p.lp_type == pages[first].lp_type && p.lp_id == pages[first].lp_id;
    std::vector<int> keep;
    for (int d : ab)
      if (std::find(p.accessed_by.begin(), p.accessed_by.end(), d) != p.accessed_by.end()) keep.push_back(d);
    ab = keep;
  }
  a.read_mostly = rm;
  const PagePolicy& p0 = pages[first];
  if (pl && p0.pl_type) {
    a.preferred = p0.pl_type == CU_MEM_LOCATION_TYPE_DEVICE ? p0.pl_id : -1;
    a.preferred_type = p0.pl_type;
    a.preferred_id = p0.pl_id;
  }
  if (lp && p0.lp_type) {
    a.last_prefetch = p0.lp_type == CU_MEM_LOCATION_TYPE_DEVICE ? p0.lp_id : -1;
    a.last_prefetch_type = p0.lp_type;
    a.last_prefetch_id = p0.lp_id;
  }
  a.accessed_by = ab;
  return a;
}
bool same(const RangeAttributes& x, const RangeAttributes& y) {
  return x.read_mostly == y.read_mostly && x.preferred == y.preferred && x.preferred_type == y.preferred_type &&
         x.preferred_id == y.preferred_id && x.accessed_by == y.accessed_by && x.last_prefetch == y.last_prefetch &&
         x.last_prefetch_type == y.last_prefetch_type && x.last_prefetch_id == y.last_prefetch_id;
}
}  // namespace

TEST_CASE("AdviceMap: random updates read back as a page-by-page model does", "[advice]") {
  std::mt19937 rng(12345);
  const size_t pages = 64;
  AdviceMap m(pages * 4096 - 100);  // a partial last page counts as a page
  REQUIRE(m.pages() == pages);
  std::vector<PagePolicy> model(pages);
  for (int step = 0; step < 20000; ++step) {
    size_t a = rng() % pages, b = rng() % pages;
    if (a > b) std::swap(a, b);
    ++b;
    const int kind = rng() % 6, dev = static_cast<int>(rng() % 3) - 1;
    auto fn = [&](PagePolicy& p) {
      switch (kind) {
        case 0: p.read_mostly = !p.read_mostly; break;
        case 1: p.pl_type = dev < 0 ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE, p.pl_id = dev; break;
        case 2: p.pl_type = 0, p.pl_id = -2; break;
        case 3:
          if (std::find(p.accessed_by.begin(), p.accessed_by.end(), dev) == p.accessed_by.end())
            p.accessed_by.push_back(dev);
          break;
        case 4: p.accessed_by.erase(std::remove(p.accessed_by.begin(), p.accessed_by.end(), dev), p.accessed_by.end()); break;
        case 5: p.lp_type = dev < 0 ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE, p.lp_id = dev; break;
      }
    };
    m.update(a, b, fn);
    for (size_t i = a; i < b; ++i) fn(model[i]);
    size_t q1 = rng() % pages, q2 = rng() % pages;
    if (q1 > q2) std::swap(q1, q2);
    ++q2;
    INFO("step " << step << " query [" << q1 << ", " << q2 << ")");
    REQUIRE(same(m.read(q1, q2), model_read(model, q1, q2)));
    // Runs are maximal: as many as the model has changes from one page to the next, plus one.
    size_t runs = 1;
    for (size_t i = 1; i < pages; ++i) runs += model[i] != model[i - 1];
    REQUIRE(m.runs() == runs);
  }
}

TEST_CASE("AdviceMap: a huge allocation advised whole stays one run", "[advice]") {
  AdviceMap m(size_t(64) << 30);
  m.update(0, m.pages(), [](PagePolicy& p) { p.read_mostly = true; });
  CHECK(m.runs() == 1);
  m.update(5, 7, [](PagePolicy& p) { p.read_mostly = false; });
  CHECK(m.runs() == 3);
  m.update(5, 7, [](PagePolicy& p) { p.read_mostly = true; });
  CHECK(m.runs() == 1);
  CHECK(m.read(0, m.pages()).read_mostly == 1);
}

TEST_CASE("pages a query combines: the page of the last byte only when it is also the first", "[advice]") {
  size_t f = 0, l = 0;
  cuda_shim::mem::pages_queried(0, 8192, f, l);  // two whole pages: the first only (measured)
  CHECK((f == 0 && l == 1));
  cuda_shim::mem::pages_queried(10, 1, f, l);
  CHECK((f == 0 && l == 1));
  cuda_shim::mem::pages_queried(0, 3 * 4096, f, l);
  CHECK((f == 0 && l == 2));
  cuda_shim::mem::pages_touched(1, 100, f, l);
  CHECK((f == 0 && l == 1));
  cuda_shim::mem::pages_touched(4095, 2, f, l);
  CHECK((f == 0 && l == 2));
}
