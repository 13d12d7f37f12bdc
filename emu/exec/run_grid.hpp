// A checked launch becomes a stream operation that runs the grid on the engine.
#pragma once
#include <memory>

#include "core/errc.hpp"
#include "exec/launch.hpp"
#include "module/module.hpp"

namespace cuda_shim {
class Stream;
}

namespace cuda_shim::exec {

// Compiles the module's PTX if needed, refuses what the engine cannot run (naming it), copies
// the parameters and enqueues the grid on `st`. A fault when it runs makes the context sticky.
Errc enqueue_grid(module::Module& m, const module::KernelDesc& k, const module::FuncSettings& s,
                  const module::LaunchArgs& a, const std::shared_ptr<Stream>& st, const char* api);

}  // namespace cuda_shim::exec
