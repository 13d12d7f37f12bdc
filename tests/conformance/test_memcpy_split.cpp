// Large copies and fills, which the emulator splits over several threads: every byte lands where
// it should and no byte beside it moves, whatever the size, offsets, pitches or fill pattern;
// stream order holds for the split operations (a dependent operation sees all of a copy's
// bytes); streams destroyed with split copies still queued finish them. The sizes are past the
// emulator's split and streaming thresholds (4 and 16 MiB) and deliberately odd.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

using Bytes = std::vector<unsigned char>;

CUdeviceptr alloc(size_t n) {
  CUdeviceptr p = 0;
  REQUIRE_CU(cuMemAlloc(&p, n), CUDA_SUCCESS);
  return p;
}

Bytes pattern(size_t n, unsigned seed) {
  Bytes v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

Bytes read_back(CUdeviceptr d, size_t n) {
  Bytes v(n);
  REQUIRE_CU(cuMemcpyDtoH(v.data(), d, n), CUDA_SUCCESS);
  return v;
}

void write(CUdeviceptr d, const Bytes& v) { REQUIRE_CU(cuMemcpyHtoD(d, v.data(), v.size()), CUDA_SUCCESS); }

// The first index where a and b differ, or -1 (Catch2 would print whole vectors otherwise).
long long first_diff(const unsigned char* a, const unsigned char* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<long long>(i);
  return -1;
}

struct Gate {
  std::atomic<bool> open{false};
  static void CUDA_CB wait(void* self) {
    auto* g = static_cast<Gate*>(self);
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void release() { open.store(true); }
};

constexpr size_t MiB = size_t(1) << 20;

}  // namespace

TEST_CASE("large 1D copies with odd sizes and unaligned offsets move exactly their bytes") {
  conformance_primary_ctx();
  const size_t cap = 34 * MiB;
  CUdeviceptr a = alloc(cap), b = alloc(cap);
  void* pinned = nullptr;
  REQUIRE_CU(cuMemAllocHost(&pinned, cap), CUDA_SUCCESS);
  auto* pin = static_cast<unsigned char*>(pinned);
  const Bytes src = pattern(cap, 1), old = pattern(cap, 2);
  struct Case {
    size_t n, so, dof;
  };
  for (Case c : {Case{4 * MiB + 1, 0, 3}, Case{17 * MiB + 13, 1, 4097}, Case{33 * MiB - 7, 63, 1}, Case{5 * MiB, 4096, 0}}) {
    CAPTURE(c.n, c.so, c.dof);
    Bytes want = old;
    std::memcpy(want.data() + c.dof, src.data() + c.so, c.n);
    // HtoD from pageable memory.
    write(b, old);
    REQUIRE_CU(cuMemcpyHtoD(b + c.dof, src.data() + c.so, c.n), CUDA_SUCCESS);
    CHECK(first_diff(read_back(b, cap).data(), want.data(), cap) == -1);
    // DtoD.
    write(a, src);
    write(b, old);
    REQUIRE_CU(cuMemcpyDtoD(b + c.dof, a + c.so, c.n), CUDA_SUCCESS);
    CHECK(first_diff(read_back(b, cap).data(), want.data(), cap) == -1);
    // DtoH into pinned memory, and into pageable memory.
    std::memcpy(pin, old.data(), cap);
    REQUIRE_CU(cuMemcpyDtoH(pin + c.dof, a + c.so, c.n), CUDA_SUCCESS);
    CHECK(first_diff(pin, want.data(), cap) == -1);
    Bytes host = old;
    REQUIRE_CU(cuMemcpyDtoH(host.data() + c.dof, a + c.so, c.n), CUDA_SUCCESS);
    CHECK(first_diff(host.data(), want.data(), cap) == -1);
    // HtoD from pinned memory, through cuMemcpy (unified addressing).
    std::memcpy(pin, src.data(), cap);
    write(b, old);
    REQUIRE_CU(cuMemcpy(b + c.dof, reinterpret_cast<CUdeviceptr>(pin + c.so), c.n), CUDA_SUCCESS);
    CHECK(first_diff(read_back(b, cap).data(), want.data(), cap) == -1);
  }
  CHECK_CU(cuMemFreeHost(pinned), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(b), CUDA_SUCCESS);
}

TEST_CASE("large copies between overlapping device ranges return and leave the memory usable") {
  // Overlap is undefined for cuMemcpy on NVIDIA's driver: only that the call succeeds and
  // nothing outside the destination changes is asked.
  conformance_primary_ctx();
  const size_t cap = 24 * MiB, n = 20 * MiB;
  CUdeviceptr a = alloc(cap);
  const Bytes src = pattern(cap, 3);
  write(a, src);
  CHECK_CU(cuMemcpyDtoD(a + 4096 + 1, a, n), CUDA_SUCCESS);
  CHECK_CU(cuMemcpy(a, a + 3 * MiB, n), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  Bytes back = read_back(a, cap);
  CHECK(first_diff(back.data() + n + 4097, src.data() + n + 4097, cap - n - 4097) == -1);
  write(a, src);
  CHECK(read_back(a, cap) == src);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
}

TEST_CASE("large 2D and 3D pitched copies move each row and leave the pitch gaps alone") {
  conformance_primary_ctx();
  const size_t width = 4099, spitch = 4608, dpitch = 5120, rows = 5000;  // about 20 MiB of rows
  const size_t sx = 5, dx = 11, sy = 2, dy = 3;
  const size_t scap = spitch * (rows + sy), dcap = dpitch * (rows + dy);
  CUdeviceptr s = alloc(scap), d = alloc(dcap);
  const Bytes src = pattern(scap, 4), old = pattern(dcap, 5);
  Bytes want = old;
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(want.data() + (r + dy) * dpitch + dx, src.data() + (r + sy) * spitch + sx, width);
  write(s, src);
  // The 2D copies' shape; each section names its source.
  CUDA_MEMCPY2D c{};
  c.srcPitch = spitch;
  c.srcXInBytes = sx;
  c.srcY = sy;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = dpitch;
  c.dstXInBytes = dx;
  c.dstY = dy;
  c.WidthInBytes = width;
  c.Height = rows;
  SECTION("device to device") {
    write(d, old);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = s;
    REQUIRE_CU(cuMemcpy2D(&c), CUDA_SUCCESS);
    CHECK(first_diff(read_back(d, dcap).data(), want.data(), dcap) == -1);
  }
  SECTION("host to device, async on an idle stream") {
    write(d, old);
    CUstream st = nullptr;
    REQUIRE_CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src.data();
    REQUIRE_CU(cuMemcpy2DAsync(&c, st), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(st), CUDA_SUCCESS);
    CHECK(first_diff(read_back(d, dcap).data(), want.data(), dcap) == -1);
    CHECK_CU(cuStreamDestroy(st), CUDA_SUCCESS);
  }
  SECTION("3D, device to host") {
    // 45 slices of 100 rows (18 MB): slice heights 104 (source) and 101 (destination) rows.
    const size_t h = 100, depth = 45, sh = 104, dh = 101;
    REQUIRE(spitch * (sh * (depth - 1) + h) <= scap);
    Bytes host = pattern(dpitch * dh * depth, 6), want3 = host;
    for (size_t z = 0; z < depth; ++z)
      for (size_t y = 0; y < h; ++y)
        std::memcpy(want3.data() + (z * dh + y) * dpitch + dx, src.data() + (z * sh + y) * spitch + sx, width);
    CUDA_MEMCPY3D c3{};
    c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c3.srcDevice = s;
    c3.srcPitch = spitch;
    c3.srcHeight = sh;
    c3.srcXInBytes = sx;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c3.dstHost = host.data();
    c3.dstPitch = dpitch;
    c3.dstHeight = dh;
    c3.dstXInBytes = dx;
    c3.WidthInBytes = width;
    c3.Height = h;
    c3.Depth = depth;
    REQUIRE_CU(cuMemcpy3D(&c3), CUDA_SUCCESS);
    CHECK(first_diff(host.data(), want3.data(), host.size()) == -1);
  }
  CHECK_CU(cuMemFree(s), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
}

TEST_CASE("large memsets of 8, 16 and 32-bit values at unaligned counts and offsets") {
  conformance_primary_ctx();
  const size_t cap = 36 * MiB;
  CUdeviceptr d = alloc(cap);
  const Bytes old = pattern(cap, 7);
  auto expect = [&](size_t off, size_t count, unsigned elem, unsigned value) {
    Bytes want = old;
    for (size_t i = 0; i < count; ++i)
      for (unsigned k = 0; k < elem; ++k) want[off + i * elem + k] = static_cast<unsigned char>(value >> (8 * k));
    return want;
  };
  struct Case {
    unsigned elem;
    size_t off, count;
    unsigned value;
  };
  for (Case c : {Case{1, 1, 20 * MiB + 5, 0x5a}, Case{2, 2, 12 * MiB + 3, 0x1234}, Case{2, 6, 3 * MiB + 1, 0x4040},
                 Case{4, 4, 5 * MiB + 1, 0xdeadbeef}, Case{4, 12, 8 * MiB - 3, 0}, Case{4, 4096, MiB + 7, 0x01020304}}) {
    CAPTURE(c.elem, c.off, c.count, c.value);
    write(d, old);
    CUresult r = c.elem == 1   ? cuMemsetD8(d + c.off, static_cast<unsigned char>(c.value), c.count)
                 : c.elem == 2 ? cuMemsetD16(d + c.off, static_cast<unsigned short>(c.value), c.count)
                               : cuMemsetD32(d + c.off, c.value, c.count);
    REQUIRE_CU(r, CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(first_diff(read_back(d, cap).data(), expect(c.off, c.count, c.elem, c.value).data(), cap) == -1);
  }
  SECTION("2D, 32-bit, rows narrower than the pitch") {
    const size_t pitch = 8192 + 64, w = 2047, h = 3000;  // 24 MiB of pitch
    write(d, old);
    REQUIRE_CU(cuMemsetD2D32(d + 8, pitch, 0xa1b2c3d4u, w, h), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    Bytes want = old;
    for (size_t y = 0; y < h; ++y)
      for (size_t i = 0; i < w; ++i) {
        const uint32_t v = 0xa1b2c3d4u;
        std::memcpy(want.data() + 8 + y * pitch + i * 4, &v, 4);
      }
    CHECK(first_diff(read_back(d, cap).data(), want.data(), cap) == -1);
  }
  CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
}

TEST_CASE("a large async copy is complete for the next operation on its stream") {
  conformance_primary_ctx();
  const size_t n = 24 * MiB + 12;
  const Bytes src = pattern(n, 8);
  void* pin = nullptr;
  REQUIRE_CU(cuMemAllocHost(&pin, n), CUDA_SUCCESS);
  std::memcpy(pin, src.data(), n);
  CUdeviceptr a = alloc(n), b = alloc(n);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Bytes out(n, 0);
  SECTION("idle stream") {
    CHECK_CU(cuMemcpyHtoDAsync(a, pin, n, s), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoDAsync(b, a, n, s), CUDA_SUCCESS);
    CHECK_CU(cuMemsetD8Async(b + n - 1, 0x99, 1, s), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoHAsync(out.data(), b, n, s), CUDA_SUCCESS);  // pageable: done on return
  }
  SECTION("busy stream") {
    Gate gate;
    REQUIRE_CU(cuLaunchHostFunc(s, &Gate::wait, &gate), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyHtoDAsync(a, pin, n, s), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoDAsync(b, a, n, s), CUDA_SUCCESS);
    CHECK_CU(cuMemsetD8Async(b + n - 1, 0x99, 1, s), CUDA_SUCCESS);
    CHECK_CU(cuMemcpyDtoHAsync(pin, b, n, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    gate.release();
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    std::memcpy(out.data(), pin, n);
  }
  Bytes want = src;
  want[n - 1] = 0x99;
  CHECK(first_diff(out.data(), want.data(), n) == -1);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeHost(pin), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(b), CUDA_SUCCESS);
}

TEST_CASE("a large async copy from pageable memory reads its source before the call returns") {
  conformance_primary_ctx();
  const size_t n = 20 * MiB + 3;
  Bytes src = pattern(n, 9);
  const Bytes keep = src;
  CUdeviceptr d = alloc(n);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Gate gate;  // outlives the stream's work: the host function may read it after the release
  SECTION("idle stream") { CHECK_CU(cuMemcpyHtoDAsync(d, src.data(), n, s), CUDA_SUCCESS); }
  SECTION("busy stream") {
    REQUIRE_CU(cuLaunchHostFunc(s, &Gate::wait, &gate), CUDA_SUCCESS);
    // Whether the driver stages the bytes or waits for the stream, the gate opens in time.
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      gate.release();
    });
    CHECK_CU(cuMemcpyHtoDAsync(d, src.data(), n, s), CUDA_SUCCESS);
    opener.join();
  }
  std::memset(src.data(), 0, n);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(first_diff(read_back(d, n).data(), keep.data(), n) == -1);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
}

TEST_CASE("a stream destroyed with large copies queued still completes them") {
  conformance_primary_ctx();
  const size_t n = 18 * MiB + 1;
  const Bytes src = pattern(n, 10);
  CUdeviceptr a = alloc(n), b = alloc(n), c = alloc(n);
  write(a, src);
  REQUIRE_CU(cuMemsetD8(b, 0, n), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(c, 0, n), CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Gate gate;
  REQUIRE_CU(cuLaunchHostFunc(s, &Gate::wait, &gate), CUDA_SUCCESS);
  REQUIRE_CU(cuMemcpyDtoDAsync(b, a, n, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemcpyDtoDAsync(c, b, n, s), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD32Async(a, 0x0badf00du, n / 4, s), CUDA_SUCCESS);
  CUevent done = nullptr;
  REQUIRE_CU(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  REQUIRE_CU(cuEventRecord(done, s), CUDA_SUCCESS);
  // Another thread copies meanwhile, on its own stream, through the same copy threads.
  std::atomic<bool> other_ok{true};
  std::thread other([&] {
    CUcontext ctx = nullptr;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    CUdeviceptr x = 0, y = 0;
    const Bytes mine = pattern(9 * MiB, 11);
    if (cuMemAlloc(&x, mine.size()) != CUDA_SUCCESS || cuMemAlloc(&y, mine.size()) != CUDA_SUCCESS) {
      other_ok = false;
      return;
    }
    for (int i = 0; i < 4; ++i) {
      Bytes back(mine.size());
      if (cuMemcpyHtoD(x, mine.data(), mine.size()) != CUDA_SUCCESS ||
          cuMemcpyDtoD(y, x, mine.size()) != CUDA_SUCCESS ||
          cuMemcpyDtoH(back.data(), y, back.size()) != CUDA_SUCCESS || back != mine)
        other_ok = false;
    }
    cuMemFree(x);
    cuMemFree(y);
    cuDevicePrimaryCtxRelease(0);
  });
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  gate.release();
  other.join();
  CHECK(other_ok.load());
  CHECK_CU(cuEventSynchronize(done), CUDA_SUCCESS);
  CHECK_CU(cuEventDestroy(done), CUDA_SUCCESS);
  CHECK(first_diff(read_back(c, n).data(), src.data(), n) == -1);
  Bytes back = read_back(a, n / 4 * 4);
  const uint32_t v = 0x0badf00du;
  bool all = true;
  for (size_t i = 0; i + 4 <= back.size(); i += 4) all = all && std::memcmp(back.data() + i, &v, 4) == 0;
  CHECK(all);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(b), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(c), CUDA_SUCCESS);
}
