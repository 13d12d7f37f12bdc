// Catch2's main, plus the multiprocess tests' child mode (tests/conformance/multiprocess.hpp):
// `test_binary --mp-child NAME FD` runs child NAME instead of the tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace mp {
bool run_child_if_asked(int argc, char** argv, int& rc) __attribute__((weak));
}

int main(int argc, char** argv) {
  int rc = 0;
  if (mp::run_child_if_asked && mp::run_child_if_asked(argc, argv, rc)) return rc;
  // Each test binary (and the children it starts) shares state through its own registry
  // segment, so parallel test runs never meet. Ignored by the real driver.
  if (!std::getenv("CUDA_SHIM_REGISTRY"))
    setenv("CUDA_SHIM_REGISTRY", ("cuda-shim-test-" + std::to_string(getpid())).c_str(), 1);
  return Catch::Session().run(argc, argv);
}
