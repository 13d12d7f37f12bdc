// Per-page advice and prefetch state of managed memory (cuMemAdvise, cuMemPrefetchAsync,
// cuMemRangeGetAttribute). Owned by the advise module (memory/api_advise.cpp).
#pragma once
#include <cstddef>

namespace cuda_shim::mem {

class AdviceMap {
 public:
  explicit AdviceMap(size_t bytes) : bytes_(bytes) {}
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
};

}  // namespace cuda_shim::mem
