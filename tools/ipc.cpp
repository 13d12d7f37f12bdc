// cuda-shim-ipc: the emulator's shared IPC registry, for people debugging multiprocess
// programs (`cuda-shim ipc`), its logical endpoints (`cuda-shim endpoints`), and a check of
// what this user's registry may be (`cuda-shim gc`): one line per segment, directory or file it
// cannot trust or that serves nobody, saying what it is and what was done (removed, or why not).
#include <cuda_shim_ext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "state";
  bool gc = std::strcmp(what, "gc") == 0;
  size_t (*get)(char*, size_t) = gc ? cuShimCollectGarbage
                                 : std::strcmp(what, "endpoints") == 0 ? cuShimLogicalEndpointState
                                 : std::strcmp(what, "state") == 0 ? cuShimIpcState : nullptr;
  if (!get) {
    std::fprintf(stderr, "usage: cuda-shim-ipc [state | endpoints | gc]\n");
    return 2;
  }
  // gc acts as it reports: one call, into room enough (asking for the length first would
  // remove everything then and report nothing).
  size_t n = gc ? size_t(1) << 20 : get(nullptr, 0);
  std::string s(n + 1, '\0');
  n = get(s.data(), s.size());
  s.resize(std::min(n, s.size() - 1));
  std::fputs(s.empty() && gc ? "nothing to report: this user's registry segments and private directory are sound\n"
                              : s.c_str(), stdout);
  return 0;
}
