// The bytes of CopyOp and FillOp: run on the calling thread below a few MiB, split over the
// copy threads (core/parallel) above, so that one large copy moves at the machine's memory
// bandwidth rather than one core's. Each part is a contiguous run of the operation's bytes in
// row order, so 2D/3D copies split like 1D ones; the operation returns when every part is done.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/parallel.hpp"
#include "memory/copy.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace cuda_shim::mem {
namespace {

// Below this an operation runs on the caller alone: waking helpers costs more than it saves.
constexpr size_t kSplitMin = size_t(4) << 20;
// No part smaller than this (a helper's wake-up must be worth it).
constexpr size_t kPartMin = size_t(1) << 20;
// Fills and copies this large stream past the caches: the destination could not stay cached anyway, and
// non-temporal stores skip reading every destination line first (measured faster than glibc's
// memcpy at 256 MiB, one thread and several).
constexpr size_t kStreamMin = size_t(16) << 20;

// Parts above one per thread, where each stays this large: threads claim parts as they go, so a
// helper the OS delayed (or one that runs slower) leaves its remaining parts to the others instead
// of the whole operation waiting for its one fixed share.
constexpr size_t kBalanceMin = size_t(4) << 20;
constexpr size_t kPartsPerThread = 4;
// Rows up to this wide are copied several at a time (copy_rows_stream); wider ones run long
// enough for the prefetchers on their own.
constexpr size_t kNarrowRow = size_t(64) << 10;

size_t parts_for(size_t bytes) {
  if (bytes < kSplitMin) return 1;
  const size_t t = par::threads();
  const size_t n = std::max(std::min(t, bytes / kPartMin), std::min(t * kPartsPerThread, bytes / kBalanceMin));
  return std::max<size_t>(1, n);
}

// Where part i of n starts in [0, total): page-aligned in the destination's address, so no two
// threads write one page (or one cache line). align divides total's unit (1, 2 or 4 bytes).
size_t cut(uintptr_t base, size_t total, size_t i, size_t n, size_t unit) {
  if (i == 0) return 0;
  if (i >= n) return total;
  const size_t raw = static_cast<size_t>((static_cast<unsigned __int128>(total) * i) / n);
  uintptr_t at = (base + raw) & ~uintptr_t(4095);
  size_t off = at > base ? static_cast<size_t>(at - base) : 0;
  off -= off % unit;
  return std::min(off, total);
}

// First touch of a large part: the destination's pages are faulted in one call instead of one
// fault per page during the copy (measured 1.5x faster on fresh memfd pages). Only where the
// part's first page is not resident, so warm destinations pay one mincore per part.
void prefault(char* p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  static const size_t ps = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + ps - 1) / ps * ps;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + n) / ps * ps;
  if (hi <= lo || hi - lo < kPartMin) return;
  unsigned char v = 1;
  if (::mincore(reinterpret_cast<void*>(lo), ps, &v) == 0 && !(v & 1))
    ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);  // a failure: the copy faults them
#else
  (void)p;
  (void)n;
#endif
}

bool overlaps(const char* a, size_t an, const char* b, size_t bn) { return a < b + bn && b < a + an; }

// Calls f(row, offset in row, length) for the bytes [lo, hi) of rows of `width` bytes.
template <class F>
void for_rows(size_t width, size_t lo, size_t hi, F&& f) {
  size_t row = lo / width, off = lo % width;
  while (lo < hi) {
    const size_t n = std::min(width - off, hi - lo);
    f(row, off, n);
    lo += n;
    ++row;
    off = 0;
  }
}

#if defined(__x86_64__)
// One 64-byte line with non-temporal stores (d 16-byte aligned).
inline void line_stream(char* d, const char* s) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
  const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
  _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
}
#endif

// Copies n bytes with non-temporal stores: for rows of a large strided copy, which memcpy
// copies through the caches (each row alone is too small for its own streaming path), reading
// every destination line first. Call fence() once after the last one.
void copy_stream(char* d, const char* s, size_t n) {
#if defined(__x86_64__)
  const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15u)) & 15u;
  if (n < head + 64) {
    std::memcpy(d, s, n);
    return;
  }
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (char* end = d + (n & ~size_t(63)); d < end; d += 64, s += 64) line_stream(d, s);
  std::memcpy(d, s, n & 63);
#else
  std::memcpy(d, s, n);
#endif
}


// Rows [r0, r1) of `width` bytes (at most kNarrowRow), streamed kRowGroup rows at a time, a line
// of each in turn. Copied one after another, short rows with gaps between them defeat the
// hardware prefetchers (each row restarts a stream): measured 2x slower than one contiguous
// copy of the same bytes for 4 KiB rows in a 4.5 KiB pitch; interleaved, several streams are in
// flight at once (as glibc's large memcpy does across pages). Call fence() after the last one.
template <class RowAt>
void copy_rows_stream(size_t r0, size_t r1, size_t width, RowAt&& row_at) {
#if defined(__x86_64__)
  constexpr size_t kRowGroup = 8;
  for (size_t r = r0; r < r1; r += kRowGroup) {
    const size_t k = std::min(kRowGroup, r1 - r);
    char* d[kRowGroup];
    const char* s[kRowGroup];
    size_t lines[kRowGroup], tail[kRowGroup], most = 0;
    for (size_t j = 0; j < k; ++j) {
      auto [dj, sj] = row_at(r + j);
      // Lines start 64-byte aligned in the destination: the head goes through the caches.
      const size_t head = std::min(width, (64 - (reinterpret_cast<uintptr_t>(dj) & 63u)) & 63u);
      std::memcpy(dj, sj, head);
      d[j] = dj + head;
      s[j] = sj + head;
      lines[j] = (width - head) / 64;
      tail[j] = (width - head) % 64;
      most = std::max(most, lines[j]);
    }
    for (size_t x = 0; x < most; ++x)
      for (size_t j = 0; j < k; ++j)
        if (x < lines[j]) line_stream(d[j] + 64 * x, s[j] + 64 * x);
    for (size_t j = 0; j < k; ++j) std::memcpy(d[j] + lines[j] * 64, s[j] + lines[j] * 64, tail[j]);
  }
#else
  for (size_t r = r0; r < r1; ++r) {
    auto [d, s] = row_at(r);
    std::memcpy(d, s, width);
  }
#endif
}

// Orders non-temporal stores before whatever publishes the operation's completion.
void fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// ------------------------------------------------------------------ fills

// A value repeated over 8 bytes; elem divides 8, so its phase is the same at every 8-byte boundary.
uint64_t pattern64(unsigned value, unsigned elem) {
  if (elem == 1) return 0x0101010101010101ull * (value & 0xffu);
  if (elem == 2) return 0x0001000100010001ull * (value & 0xffffu);
  return 0x0000000100000001ull * static_cast<uint32_t>(value);
}

// Cached stores of pat over [p, p + n & ~63), p 64-byte aligned: as wide as the CPU allows
// (memset's own stores are that wide; 16-byte ones reach half its speed in the caches).
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void store_lines(char* p, size_t n, uint64_t pat) {
  typedef uint64_t line __attribute__((vector_size(64), aligned(64)));
  const line v = {pat, pat, pat, pat, pat, pat, pat, pat};
  for (char* end = p + (n & ~size_t(63)); p < end; p += 64) *reinterpret_cast<line*>(p) = v;
}

// n bytes at p (elem-aligned, n a multiple of elem) filled with the little-endian pattern.
void fill_bytes(char* p, size_t n, unsigned value, unsigned elem, bool stream) {
  const uint64_t pat = pattern64(value, elem);
  // One byte repeated (0, 0xffffffff, 0x4040...): memset is the fastest fill there is.
  if (pat == 0x0101010101010101ull * (pat & 0xffu)) {
    std::memset(p, static_cast<int>(pat & 0xffu), n);
    return;
  }
  // Head, up to 64-byte alignment; elem-aligned p keeps the pattern's phase.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 63u)) {
    std::memcpy(p, &pat, elem);
    p += elem;
    n -= elem;
  }
#if defined(__x86_64__)
  const __m128i v = _mm_set1_epi64x(static_cast<long long>(pat));
  if (stream) {
    // Non-temporal: a large fill would only evict the caches and read every line first.
    char* end = p + (n & ~size_t(63));
    for (; p < end; p += 64) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(p), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + 16), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + 32), v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + 48), v);
    }
    fence();
    n &= 63;
  }
#endif
  store_lines(p, n, pat);
  p += n & ~size_t(63);
  n &= 63;
  for (; n >= 8; p += 8, n -= 8) std::memcpy(p, &pat, 8);
  for (; n >= elem; p += elem, n -= elem) std::memcpy(p, &pat, elem);
}

}  // namespace

void CopyOp::run() const {
  if (width == 0 || height == 0 || depth == 0) return;
  const size_t rows = height * depth, total = width * rows;
  const bool dc = (height == 1 || dst.pitch == width) && (depth == 1 || dst.slice == width * height);
  const bool sc = (height == 1 || src.pitch == width) && (depth == 1 || src.slice == width * height);
  auto row_at = [&](const Side& s, size_t r) { return s.p + (r / height) * s.slice + (r % height) * s.pitch; };
  const size_t dspan = (depth - 1) * dst.slice + (height - 1) * dst.pitch + width;
  const size_t sspan = (depth - 1) * src.slice + (height - 1) * src.pitch + width;
  const size_t parts = parts_for(total);
  // Overlapping ranges (undefined on a GPU) keep memmove's answer: one thread, in order.
  if (parts <= 1 || overlaps(dst.p, dspan, src.p, sspan)) {
    if (dc && sc) {
      std::memmove(dst.p, src.p, total);
      return;
    }
    for (size_t r = 0; r < rows; ++r) std::memmove(row_at(dst, r), row_at(src, r), width);
    return;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(dst.p);
  const bool stream = total >= kStreamMin;
  if (dc && sc) {
    par::run(parts, [&](size_t i) {
      const size_t lo = cut(base, total, i, parts, 1), hi = cut(base, total, i + 1, parts, 1);
      if (hi <= lo) return;
      prefault(dst.p + lo, hi - lo);
      if (!stream) {
        std::memcpy(dst.p + lo, src.p + lo, hi - lo);
        return;
      }
      copy_stream(dst.p + lo, src.p + lo, hi - lo);
      fence();
    });
    return;
  }
  // Strided, narrow rows: parts are runs of whole rows.
  if (stream && width <= kNarrowRow) {
    auto at = [&](size_t r) { return std::pair<char*, const char*>(row_at(dst, r), row_at(src, r)); };
    par::run(parts, [&](size_t i) {
      copy_rows_stream(rows * i / parts, rows * (i + 1) / parts, width, at);
      fence();
    });
    return;
  }
  // Strided: parts are runs of the row-major byte sequence (whole rows, mostly).
  par::run(parts, [&](size_t i) {
    const size_t lo = total * i / parts, hi = total * (i + 1) / parts;
    for_rows(width, lo, hi, [&](size_t r, size_t off, size_t n) {
      if (stream) copy_stream(row_at(dst, r) + off, row_at(src, r) + off, n);
      else std::memcpy(row_at(dst, r) + off, row_at(src, r) + off, n);
    });
    if (stream) fence();
  });
}

void FillOp::run() const {
  if (width == 0 || height == 0) return;
  const size_t row_bytes = width * elem, total = row_bytes * height;
  const size_t parts = parts_for(total);
  const bool stream = total >= kStreamMin;
  if (parts <= 1) {
    for (size_t y = 0; y < height; ++y) fill_bytes(dst.p + y * dst.pitch, row_bytes, value, elem, stream);
    return;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(dst.p);
  if (height == 1 || dst.pitch == row_bytes) {
    par::run(parts, [&](size_t i) {
      const size_t lo = cut(base, total, i, parts, elem), hi = cut(base, total, i + 1, parts, elem);
      if (hi <= lo) return;
      prefault(dst.p + lo, hi - lo);
      fill_bytes(dst.p + lo, hi - lo, value, elem, stream);
    });
    return;
  }
  par::run(parts, [&](size_t i) {
    // Cut on element boundaries of the row-major sequence.
    const size_t lo = total / elem * i / parts * elem, hi = total / elem * (i + 1) / parts * elem;
    for_rows(row_bytes, lo, hi, [&](size_t r, size_t off, size_t n) { fill_bytes(dst.p + r * dst.pitch + off, n, value, elem, stream); });
  });
}

void zero_bytes(char* p, size_t n) {
  FillOp f;
  f.dst.p = p;
  f.dst.pitch = n;
  f.width = n;
  f.run();
}

}  // namespace cuda_shim::mem
