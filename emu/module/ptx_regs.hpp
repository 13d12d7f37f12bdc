// Registers per thread of PTX kernels, as a driver's JIT (ptxas) would report them in
// CU_FUNC_ATTRIBUTE_NUM_REGS. ptxas does not run here, so the count is estimated from the PTX:
// the largest number of 32-bit registers live at once (a 64-bit value counts two, predicates
// none), with values defined before a loop and used inside it live around the whole loop, plus
// what ptxas adds for addressing and for the calling convention. Checked against ptxas 13.0 on
// nvcc, numba-cuda and generated kernels (docs/kernels.md, "Attributes"): close, not exact, so
// the loader never refuses a launch on the strength of an estimate (attributes.cpp).
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>

namespace cuda_shim::module {

// Estimated registers of every .entry and .func defined in `ptx`, by name. A function's count
// covers the functions it calls, as ptxas's does.
std::unordered_map<std::string, int> estimate_registers(std::string_view ptx);

// `ptx` with every kernel limited to `max_regs` registers: a `.maxnreg` directive added to each
// .entry that has none, or lowered where it is larger. How a link or load option
// (CU_JIT_MAX_REGISTERS, nvJitLink's -maxrregcount) reaches the loader through PTX.
std::string limit_registers(std::string_view ptx, int max_regs);

}  // namespace cuda_shim::module
