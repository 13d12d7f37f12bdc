// The PTX front end's second stage: the syntax tree to the internal form (ir.hpp). Registers
// become frame slots, immediates and symbol addresses module constants, labels program
// counters, and each instruction gets the handler its opcode, types and modifiers select.
// An instruction the engine cannot run does not fail the module: it marks its function
// (Func::unsupported), and a launch that can reach it is refused naming it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "exec/ir.hpp"
#include "exec/ptx_ast.hpp"

namespace cuda_shim::exec {

// The device address of a module-scope .global/.const variable: the module's allocation, or
// memory made for it (size bytes, starting with `init`) where the module has none of that name
// (internal variables such as printf's format strings). False when none can be had.
using GlobalAddress =
    std::function<bool(const std::string& name, uint64_t size, const std::vector<uint8_t>& init, uint64_t& addr)>;

Errc lower(const ast::Module& m, const GlobalAddress& globals, Program& out, const char* api);

// Shorthand: parse and lower PTX text.
Errc compile(std::string_view ptx, const GlobalAddress& globals, Program& out, const char* api);

}  // namespace cuda_shim::exec
