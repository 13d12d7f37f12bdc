// The inspector's table (abi/inspect_table.hpp): the registry as `cuda-shim smi` reads it.
#include <cstdlib>
#include <cstring>

#include "abi/inspect_table.hpp"
#include "ipc/registry_inspect.hpp"

namespace cuda_shim::inspect_bridge {
namespace {

char* registry(int reap) noexcept {
  std::string out;
  try {
    std::string why;
    out = reap ? ipc::reap_registry(why) : ipc::inspect_registry(why);
    if (!why.empty()) out = "error why=" + ipc::inspect_escape(why) + "\n";
  } catch (const std::exception& e) {
    out = "error why=" + ipc::inspect_escape(e.what()) + "\n";
  } catch (...) {
    out = "error why=unknown\n";
  }
  char* p = static_cast<char*>(std::malloc(out.size() + 1));
  if (p) std::memcpy(p, out.c_str(), out.size() + 1);
  return p;
}

}  // namespace

extern const InspectTable kInspectTable;
const InspectTable kInspectTable{sizeof(InspectTable), kInspectTableVersion, &registry};

}  // namespace cuda_shim::inspect_bridge
