#include "core/errc.hpp"

#include <utility>

namespace cuda_shim {
namespace {
struct Row {
  Errc e;
  int cu;
  int rt;
};
constexpr Row kRows[] = {
#define ERRC(name, cu, rt) {Errc::name, cu, rt},
#include "core/errc.def"
#undef ERRC
};

struct Why {
  Errc e = Errc::success;
  bool set = false;
  std::string msg;
};
thread_local Why t_why;
}  // namespace

int to_curesult(Errc e) noexcept {
  for (const Row& r : kRows)
    if (r.e == e) return r.cu >= 0 ? r.cu : static_cast<int>(Errc::invalid_value);
  return static_cast<int>(Errc::unknown);
}

int to_cuda_error(Errc e) noexcept {
  for (const Row& r : kRows)
    if (r.e == e) return r.rt >= 0 ? r.rt : 999;  // cudaErrorUnknown
  return 999;
}

Errc from_curesult(int cu) noexcept {
  for (const Row& r : kRows)
    if (r.cu == cu) return r.e;
  return Errc::unknown;
}

void set_explanation(Errc e, std::string msg) noexcept {
  t_why.e = e;
  t_why.set = true;
  t_why.msg = std::move(msg);
}
const std::string& explanation() noexcept { return t_why.msg; }
// The message itself stays until the next failure, so a user can ask after the fact.
void clear_explanation() noexcept { t_why.set = false; }
bool explanation_set() noexcept { return t_why.set; }
Errc explanation_code() noexcept { return t_why.e; }

}  // namespace cuda_shim
