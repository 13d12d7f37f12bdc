// The kernel engine's face to the launch path: a module's program (compiled from its PTX once,
// at the first launch) and a grid run on the host's threads.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/errc.hpp"
#include "exec/interp.hpp"

namespace cuda_shim::module {
class Module;
}

namespace cuda_shim::exec {

// The module's compiled program, made on first use. Failures explain (CUDA_ERROR_NOT_SUPPORTED
// for machine code alone, CUDA_ERROR_INVALID_PTX for PTX the front end cannot read).
Errc program_for(module::Module& m, std::shared_ptr<const Program>& out, const char* api);

// Why `kernel` (or a function it calls) cannot run, or empty.
std::string unsupported_in(const Program& p, uint32_t kernel);
// Whether the kernel (or a function it can call) reads the grid workspace (%envreg1/%envreg2):
// cooperative groups' grid barrier, whose blocks must all be running at once.
bool reads_grid_workspace(const Program& p, uint32_t kernel);

struct GridResult {
  Fault fault;            // code success: the grid completed
  std::string printf_out; // device-side printf, in completion order
  std::string reports;    // checks (memory freed in stream order, ...), one line each
};

// Runs every block of the launch over the engine's threads and waits for them.
void run_grid(Launch& l, GridResult& r);

}  // namespace cuda_shim::exec
