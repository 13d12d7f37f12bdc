#include "core/errc.hpp"

#include "core/thread_state.hpp"

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

// The message itself stays until the next failure, so a user can ask after the fact.
__thread bool t_why_set __attribute__((tls_model("initial-exec"))) = false;

void set_explanation(Errc e, std::string msg) noexcept {
  ThreadState& t = ts();
  t.why_e = e;
  t.why_msg = std::move(msg);
  t_why_set = true;
}
const std::string& explanation() noexcept { return ts().why_msg; }
Errc explanation_code() noexcept { return ts().why_e; }

}  // namespace cuda_shim
