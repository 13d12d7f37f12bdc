// cuda-shim-ipc: the emulator's shared IPC registry, for people debugging multiprocess
// programs (`cuda-shim ipc`), its logical endpoints (`cuda-shim endpoints`), and removal of
// what crashed runs left behind (`cuda-shim gc`).
#include <cuda_shim_ext.h>

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
  size_t n = get(nullptr, 0);
  std::string s(n + 1, '\0');
  n = get(s.data(), s.size());
  s.resize(n);
  std::fputs(s.empty() && gc ? "nothing to remove\n" : s.c_str(), stdout);
  return 0;
}
