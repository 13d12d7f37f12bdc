// Device-side printf, assert, malloc and free. vprintf(format, args) reads the format string from global
// memory and the arguments from the caller's buffer (each aligned to its own size, as nvcc lays
// them out); the text is gathered per launch and printed when the grid ends, as the driver
// prints its printf buffer at the next synchronization.
#include "exec/builtins.hpp"

#include "exec/device_heap.hpp"

#include <cstdio>

namespace cuda_shim::exec {
namespace {

// The NUL-terminated string at generic address a (at most 4 KiB), or a placeholder.
std::string read_string(Warp& w, uint64_t a) {
  std::string s;
  if (!a) return "(null)";
  std::string why;
  for (size_t i = 0; i < 4096; ++i) {
    const uint8_t* p;
    const Windows& win = windows();
    if (a + i - win.local < win.local_size) {
      return s;  // strings in local memory: not seen in nvcc's output
    }
    p = w.block->mem->global(a + i, 1, false, why);
    if (!p || !*p) break;
    s.push_back(static_cast<char>(*p));
  }
  return s;
}

// Reads `n` bytes at offset `off` of the argument buffer at generic address a.
bool arg_bytes(Warp& w, unsigned lane, uint64_t a, size_t off, void* out, size_t n) {
  const Windows& win = windows();
  const uint64_t at = a + off;
  if (at - win.local < win.local_size) {
    const uint64_t o = at - win.local;
    if (o + n > w.block->local_stride) return false;
    std::memcpy(out, w.block->local + size_t{w.index * kLanes + lane} * w.block->local_stride + o, n);
    return true;
  }
  std::string why;
  const uint8_t* p = w.block->mem->global(at, static_cast<unsigned>(n), false, why);
  if (!p) return false;
  std::memcpy(out, p, n);
  return true;
}

std::string format(Warp& w, unsigned lane, const std::string& f, uint64_t args) {
  std::string out;
  size_t off = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out.push_back(f[i]);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < f.size() && std::strchr("-+ #0123456789.*", f[j])) ++j;
    const std::string spec = f.substr(i, j - i);  // flags, width and precision: the length is ours
    std::string lenmod;
    while (j < f.size() && std::strchr("hlLzjt", f[j])) lenmod.push_back(f[j++]);
    if (j >= f.size()) break;
    const char conv = f[j];
    char buf[512];
    if (std::strchr("diouxXc", conv)) {
      const bool wide = lenmod.find('l') != std::string::npos || lenmod == "z" || lenmod == "j" || lenmod == "t";
      const size_t n = wide ? 8 : 4;
      off = (off + n - 1) & ~(n - 1);
      uint64_t v = 0;
      arg_bytes(w, lane, args, off, &v, n);
      off += n;
      std::string s = spec + "ll" + conv;
      if (wide) std::snprintf(buf, sizeof buf, s.c_str(), static_cast<long long>(v));
      else if (conv == 'd' || conv == 'i') std::snprintf(buf, sizeof buf, (spec + conv).c_str(), static_cast<int32_t>(v));
      else std::snprintf(buf, sizeof buf, (spec + conv).c_str(), static_cast<uint32_t>(v));
    } else if (std::strchr("feEgGaA", conv)) {
      off = (off + 7) & ~size_t{7};
      double d = 0;
      arg_bytes(w, lane, args, off, &d, 8);
      off += 8;
      std::snprintf(buf, sizeof buf, (spec + conv).c_str(), d);
    } else if (conv == 's' || conv == 'p') {
      off = (off + 7) & ~size_t{7};
      uint64_t v = 0;
      arg_bytes(w, lane, args, off, &v, 8);
      off += 8;
      if (conv == 's') {
        std::string s = read_string(w, v);
        std::snprintf(buf, sizeof buf, (spec + 's').c_str(), s.c_str());
      } else {
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
      }
    } else {
      buf[0] = 0;
    }
    out += buf;
    i = j;
  }
  return out;
}

uint64_t arg64(Warp& w, const CallSite& cs, unsigned lane, size_t i) {
  uint64_t v = 0;
  if (i < cs.arg_off.size())
    std::memcpy(&v, w.block->local + size_t{w.index * kLanes + lane} * w.block->local_stride + w.local_base + cs.arg_off[i],
                std::min<size_t>(8, cs.arg_size[i]));
  return v;
}

void vprintf_lanes(Warp& w, const CallSite& cs, uint32_t lanes) {
  Launch& L = *w.launch;
  for_lanes(lanes, [&](unsigned l) {
    std::string text = format(w, l, read_string(w, arg64(w, cs, l, 0)), arg64(w, cs, l, 1));
    while (L.printf_lock.test_and_set(std::memory_order_acquire)) {
    }
    L.printf_out += text;
    L.printf_lock.clear(std::memory_order_release);
  });
}

// __assertfail(message, file, line, function, charSize): the message NVIDIA's runtime prints,
// then the launch fails with CUDA_ERROR_ASSERT.
void assert_lanes(Warp& w, const CallSite& cs, uint32_t lanes) {
  const unsigned l = static_cast<unsigned>(__builtin_ctz(lanes));
  const std::string msg = read_string(w, arg64(w, cs, l, 0)), file = read_string(w, arg64(w, cs, l, 1)),
                    fn = read_string(w, arg64(w, cs, l, 3));
  const uint32_t line = static_cast<uint32_t>(arg64(w, cs, l, 2));
  Launch& L = *w.launch;
  const Block& b = *w.block;
  const unsigned t = w.index * kLanes + l;
  std::string text = fmt::format("{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.\n", file, line, fn,
                                 b.ctaid[0], b.ctaid[1], b.ctaid[2], t % L.block[0], (t / L.block[0]) % L.block[1],
                                 t / (L.block[0] * L.block[1]), msg);
  while (L.printf_lock.test_and_set(std::memory_order_acquire)) {
  }
  L.printf_out += text;
  L.printf_lock.clear(std::memory_order_release);
  raise(w, l, Errc::assert, fmt::format("device-side assert: {}:{}: {}: Assertion `{}` failed", file, line, fn, msg));
}

// Writes `v` to the call's first result variable, in lane l's frame.
void set_ret64(Warp& w, const CallSite& cs, unsigned lane, uint64_t v) {
  if (cs.ret_off.empty()) return;
  std::memcpy(w.block->local + size_t{w.index * kLanes + lane} * w.block->local_stride + w.local_base + cs.ret_off[0],
              &v, std::min<size_t>(8, cs.ret_size[0]));
}

// malloc(size) / free(ptr): the context's device heap (device_heap.hpp), lane by lane.
void malloc_lanes(Warp& w, const CallSite& cs, uint32_t lanes) {
  for_lanes(lanes, [&](unsigned l) { set_ret64(w, cs, l, device_malloc(*w.launch->ctx, arg64(w, cs, l, 0))); });
}
void free_lanes(Warp& w, const CallSite& cs, uint32_t lanes) {
  for_lanes(lanes, [&](unsigned l) { device_free(*w.launch->ctx, arg64(w, cs, l, 0)); });
}

}  // namespace

int builtin_for(const std::string& name) {
  if (name == "vprintf") return kVprintf;
  if (name == "__assertfail") return kAssertFail;
  if (name == "malloc") return kMalloc;
  if (name == "free") return kFree;
  return kNoBuiltin;
}

void run_builtin(Warp& w, int builtin, const CallSite& cs, uint32_t lanes) {
  switch (builtin) {
    case kVprintf: vprintf_lanes(w, cs, lanes); break;
    case kAssertFail: assert_lanes(w, cs, lanes); break;
    case kMalloc: malloc_lanes(w, cs, lanes); break;
    case kFree: free_lanes(w, cs, lanes); break;
    default: break;
  }
}

}  // namespace cuda_shim::exec
