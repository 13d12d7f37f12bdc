// Fault injection at the ABI door (CUDA_SHIM_FAULTS, cuShimSetFaults; docs/faults.md).
// call.hpp asks inject_slow() before running an entry's body, only while g_fault_check is set:
// with no rules the door pays one relaxed load and a predictable branch.
#pragma once
#include <atomic>

#include "core/errc.hpp"

namespace cuda_shim::abi {

// True until the settings have been read, then only while a rule set is installed.
extern std::atomic<bool> g_fault_check;

// Errc::success: run the entry. Anything else: the call fails with it, before its body runs;
// the explanation ("injected by ...") is recorded already.
Errc inject_slow(const char* api, bool runtime) noexcept;

// Replaces every rule (NULL or blank clears them); counting restarts. A malformed spec changes
// nothing and returns invalid_value with the offending rule and position as the explanation.
Errc set_faults(const char* spec) noexcept;

}  // namespace cuda_shim::abi
