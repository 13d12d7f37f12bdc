// Functions a PTX module declares .extern and the driver provides: vprintf (device-side
// printf) and __assertfail (assert). Run for the lanes that call them.
#pragma once
#include "exec/interp.hpp"

namespace cuda_shim::exec {

void run_builtin(Warp& w, int builtin, const CallSite& cs, uint32_t lanes);
// The builtin a declared function name stands for (kNoBuiltin if none).
int builtin_for(const std::string& name);

}  // namespace cuda_shim::exec
