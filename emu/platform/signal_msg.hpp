// Message building that is safe in a signal handler: a fixed buffer, no allocation, no locale.
// The managed-memory and strict-mode fault handlers report with it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cuda_shim::platform {

template <size_t N>
struct SignalMsg {
  char b[N];
  size_t n = 0;
  void s(const char* t) {  // text
    while (t && *t && n + 1 < sizeof b) b[n++] = *t++;
  }
  void x(uint64_t v) {  // 0x-prefixed hex
    char t[19];
    int i = 18;
    t[i] = 0;
    do {
      t[--i] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v && i > 2);
    t[--i] = 'x';
    t[--i] = '0';
    s(t + i);
  }
  void d(uint64_t v) {  // decimal
    char t[21];
    int i = 20;
    t[i] = 0;
    do {
      t[--i] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v && i > 0);
    s(t + i);
  }
  void call(const char* api, uint64_t id) {  // a call as the trace names it: "cuMemFreeAsync #12"
    if (!api) {
      s("a call made outside the API");
      return;
    }
    s(api);
    s(" #");
    d(id);
  }
};

}  // namespace cuda_shim::platform
