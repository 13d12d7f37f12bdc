// Measures how NVIDIA's driver answers the module, library, kernel/function and launch
// entries (cuModule*, cuLibrary*, cuKernel*, cuFunc*, cuLaunchKernel[Ex]) and the runtime's
// symbol and launch calls (cudaMemcpyTo/FromSymbol, cudaGetSymbolAddress/Size,
// cudaFuncGetAttributes, cudaLaunchKernel, <<<>>>, cudaGetFuncBySymbol, cudaFuncGetName,
// cudaGetKernel). Not part of the build: tools/probe/run_module_probe.sh compiles this folder
// with nvcc -arch=sm_90 (runtime.cu, the one file with device code, #includes
// tests/conformance/module_kernels.cu; the others are host C++), together with the images of
// module_kernels.cu (a fat binary, an sm_90 cubin, an sm_100 cubin, PTX) that the driver
// sections load, and runs it on NVIDIA's driver or (--emu BUILD_DIR) on cuda-shim:
//   probe_module IMAGE_DIR
// One line per case: "case-name: CUDA_ERROR_NAME (value) [outputs]". Outputs never hold
// addresses, only relations (same/different, set/null/untouched), codes, sizes and values.
// "out=untouched|null|set" says what a failing call did to its output, preset to a sentinel.
// Every section runs in a child (the binary re-executes itself with --section NAME), so a
// crash or a sticky error spoils one section only; each is reported as
// "section NAME: exit N | CRASH(signal N) | TIMEOUT". PROBE_ONLY=prefix1,prefix2 picks
// sections ("name$": that one alone), PROBE_SKIP=text,... leaves out those containing text,
// PROBE_ALARM=seconds bounds each. tools/probe/probe_module.h200.txt is its output on an H200
// (driver 580, CUDA 13.0), probe_module.eager.h200.txt with CUDA_MODULE_LOADING=EAGER.
// Files: probe.hpp (output, images, helpers), load.cpp (loaders, no context), module_func.cpp
// (cuModule*, cuFunc*), library.cpp (cuLibrary*, cuKernel*, stale and junk handles),
// launch.cpp (cuLaunchKernel[Ex]), runtime.cu (the runtime's symbols and launches).
#include "probe.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

static std::vector<char> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (v.empty()) {
    fprintf(stderr, "cannot read %s\n", path.c_str());
    exit(2);
  }
  v.resize(v.size() + 256, 0);  // NUL padding: reads past an image's end see zeros
  return v;
}
void load_images() {
  g.p_fatbin = g_dir + "/kernels.fatbin";
  g.p_cub90 = g_dir + "/kernels.sm_90.cubin";
  g.p_cub100 = g_dir + "/kernels.sm_100.cubin";
  g.p_ptx = g_dir + "/kernels.ptx";
  g.fatbin = slurp(g.p_fatbin);
  g.cub90 = slurp(g.p_cub90);
  g.cub100 = slurp(g.p_cub100);
  g.ptx = slurp(g.p_ptx);
}

// The comma-separated words of an environment variable (none when unset).
static std::vector<std::string> env_list(const char* var) {
  std::vector<std::string> v;
  const char* o = getenv(var);
  if (!o) return v;
  std::string all = o;
  for (size_t pos = 0; pos <= all.size();) {
    size_t c = all.find(',', pos);
    if (c == std::string::npos) c = all.size();
    if (c > pos) v.push_back(all.substr(pos, c - pos));
    pos = c + 1;
  }
  return v;
}

static bool picked(const std::string& name, const std::vector<std::string>& only,
                   const std::vector<std::string>& skip) {
  for (auto& k : skip)
    if (name.find(k) != std::string::npos) return false;
  if (only.empty()) return true;
  bool pick = false;
  for (auto& o : only)  // "name$": that section alone; else every section the prefix starts
    pick |= o.back() == '$' ? name == o.substr(0, o.size() - 1) : name.rfind(o, 0) == 0;
  return pick;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s IMAGE_DIR [--section NAME]\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  load_images();
  add_load_sections();
  add_module_sections();
  add_library_sections();
  add_launch_sections();
  add_runtime_sections();
  if (argc == 4 && !strcmp(argv[2], "--section")) {
    alarm(getenv("PROBE_ALARM") ? unsigned(atoi(getenv("PROBE_ALARM"))) : 60u);
    for (auto& s : g_sections)
      if (s.name == argv[3]) {
        s.run();
        fflush(stdout);
        return 0;
      }
    return 9;
  }
  std::vector<std::string> only = env_list("PROBE_ONLY");
  {
    int drv = 0;
    cuDriverGetVersion(&drv);
    printf("# driver %d; CUDA_MODULE_LOADING=%s\n", drv, getenv("CUDA_MODULE_LOADING") ? getenv("CUDA_MODULE_LOADING") : "(unset)");
  }
  // PROBE_SKIP=text: sections whose names contain it are left out (the truncated fat binaries
  // NVIDIA's driver 580 hangs on: PROBE_SKIP=fatbin_truncated,fatbin_header).
  std::vector<std::string> skip = env_list("PROBE_SKIP");
  for (auto& s : g_sections) {
    if (!picked(s.name, only, skip)) continue;
    printf("== section %s\n", s.name.c_str());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], argv[1], "--section", s.name.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
      printf("section %s: %s(signal %d)\n", s.name.c_str(), WTERMSIG(st) == SIGALRM ? "TIMEOUT" : "CRASH", WTERMSIG(st));
    else
      printf("section %s: exit %d\n", s.name.c_str(), WEXITSTATUS(st));
    fflush(stdout);
  }
  return 0;
}
