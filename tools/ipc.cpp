// cuda-shim-ipc: the emulator's shared IPC registry, for people debugging multiprocess
// programs (`cuda-shim ipc`), and removal of what crashed runs left behind (`cuda-shim gc`).
#include <cuda_shim_ext.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  bool gc = argc > 1 && std::strcmp(argv[1], "gc") == 0;
  if (argc > 1 && !gc && std::strcmp(argv[1], "state") != 0) {
    std::fprintf(stderr, "usage: cuda-shim-ipc [state | gc]\n");
    return 2;
  }
  size_t n = gc ? cuShimCollectGarbage(nullptr, 0) : cuShimIpcState(nullptr, 0);
  std::string s(n + 1, '\0');
  n = gc ? cuShimCollectGarbage(s.data(), s.size()) : cuShimIpcState(s.data(), s.size());
  s.resize(n);
  std::fputs(s.empty() && gc ? "nothing to remove\n" : s.c_str(), stdout);
  return 0;
}
