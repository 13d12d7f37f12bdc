// The emulator's error vocabulary. Everything below emu/abi returns Errc; emu/abi
// translates it to CUresult or cudaError_t through errc.def, the one table.
#pragma once
#include <fmt/format.h>
#include <string>

namespace cuda_shim {

enum class Errc : int {
#define ERRC(name, cu, rt) name = ((cu) >= 0 ? (cu) : 100000 + (rt)),
#include "core/errc.def"
#undef ERRC
};

int to_curesult(Errc e) noexcept;    // CUresult value
int to_cuda_error(Errc e) noexcept;  // cudaError_t value
Errc from_curesult(int cu) noexcept; // unknown codes map to Errc::unknown

// Why the current call failed: the rule and the object. Thread-local; the abi layer
// clears it on entry and prints it when CUDA_SHIM_EXPLAIN=1.
// Whether the current call recorded one: its own initial-exec TLS byte, so that clearing it on
// every call is one store (no call, no thread-state lookup).
extern __thread bool t_why_set __attribute__((tls_model("initial-exec")));
void set_explanation(Errc e, std::string msg) noexcept;
const std::string& explanation() noexcept;
inline void clear_explanation() noexcept { t_why_set = false; }
inline bool explanation_set() noexcept { return t_why_set; }
Errc explanation_code() noexcept;  // the Errc the last explanation belongs to

// `return fail(Errc::invalid_value, "dptr is NULL");` records the reason and returns e.
template <class... A>
[[nodiscard]] Errc fail(Errc e, fmt::format_string<A...> f, A&&... a) noexcept {
  try {
    set_explanation(e, fmt::format(f, std::forward<A>(a)...));
  } catch (...) {
  }
  return e;
}

// Argument check every entry starts with: `TRY(need(p, api, "name"));`.
inline Errc need(const void* p, const char* api, const char* what) noexcept {
  if (p) return Errc::success;
  return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
}

}  // namespace cuda_shim

// Returns the Errc of a failing step from the enclosing function.
#define TRY(expr)                                         \
  do {                                                    \
    if (::cuda_shim::Errc e_ = (expr); e_ != ::cuda_shim::Errc::success) return e_; \
  } while (0)
