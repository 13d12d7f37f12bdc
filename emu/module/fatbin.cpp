// Fat binaries: nvcc's wrapper, the container it points at, and the entry a driver picks for
// a device. Layouts as nvcc 13.0 and 13.5 write them; the choice as NVIDIA's driver makes it
// (checked on an H100: tests/unit/test_module_image.cpp).
//
// Container: {u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 entries' bytes},
// then entries back to back, each a header followed by its payload:
//   +0 u16 kind (1 PTX, 2 cubin, 8 LTO IR, ...)  +2 u16 version  +4 u32 header size (64 or more)
//   +8 u64 payload size (padded to 8)  +16 u32 compressed size  +24 u16 minor, +26 u16 major
//   (PTX ISA for PTX)  +28 u32 SM  +32 u32 name offset, +36 u32 name length  +40 u64 flags
//   +56 u64 uncompressed size.
#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include "module/image_detail.hpp"

namespace cuda_shim::module {
namespace {

using detail::fits;
using detail::load;
using detail::Variant;

constexpr uint8_t kWrapperMagic[4] = {0xb1, 0x43, 0x62, 0x46};    // 0x466243b1
constexpr uint8_t kContainerMagic[4] = {0x50, 0xed, 0x55, 0xba};  // 0xBA55ED50
constexpr uint16_t kKindPtx = 1, kKindElf = 2;
constexpr uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000;
constexpr uint64_t kFlagArchSpecific = 0x100000, kFlagFamily = 0x200000;  // sm_90a, sm_100f
constexpr uint64_t kEntryHeader = 64;

bool magic(const void* data, const uint8_t (&m)[4]) noexcept {
  // Byte by byte: a shorter NUL-terminated text stops at its NUL (no magic holds a zero byte).
  const auto* p = static_cast<const uint8_t*>(data);
  return p && p[0] == m[0] && p[1] == m[1] && p[2] == m[2] && p[3] == m[3];
}

struct Entry {
  uint64_t at;  // offset in the container
  uint16_t kind;
  int arch;
  Variant variant;
  int ptx_version;
  uint64_t flags, payload, padded, packed, unpacked;

  std::string label() const { return detail::arch_name(kind == kKindPtx ? "compute_" : "sm_", arch, variant); }
};

// Rank of a usable entry: the highest SM, then the most specific variant (the driver takes
// sm_90a over sm_90, whichever comes first).
int rank(const Entry& e) { return e.arch * 4 + static_cast<int>(e.variant); }

Errc unpack(const uint8_t* c, const Entry& e, std::vector<uint8_t>& out, const char* api) {
  const uint8_t* src = c + e.payload;
  out.resize(e.unpacked);
  if (e.flags & kFlagZstd) {
    size_t n = ZSTD_decompress(out.data(), out.size(), src, e.packed);
    if (ZSTD_isError(n))
      return fail(Errc::invalid_image, "{}: fat binary entry at offset {:#x} ({}): zstd data is damaged: {}", api, e.at,
                  e.label(), ZSTD_getErrorName(n));
    if (n != e.unpacked)
      return fail(Errc::invalid_image, "{}: fat binary entry at offset {:#x} ({}): zstd data gives {} bytes, the header says {}",
                  api, e.at, e.label(), n, e.unpacked);
  } else {
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out.data()),
                                static_cast<int>(e.packed), static_cast<int>(e.unpacked));
    if (n < 0 || static_cast<uint64_t>(n) != e.unpacked)
      return fail(Errc::invalid_image, "{}: fat binary entry at offset {:#x} ({}): LZ4 data is damaged or gives other than {} bytes",
                  api, e.at, e.label(), e.unpacked);
  }
  return Errc::success;
}

// A PTX entry's text (unpacked), for the kernel engine; the payload's padding NULs dropped.
Errc entry_text(const uint8_t* c, const Entry& e, std::string& out, const char* api) {
  std::vector<uint8_t> buf;
  const uint8_t* data = c + e.payload;
  uint64_t n = e.padded;
  if (e.flags & (kFlagZstd | kFlagLz4)) {
    TRY(unpack(c, e, buf, api));
    data = buf.data();
    n = buf.size();
  }
  const auto* s = reinterpret_cast<const char*>(data);
  out.assign(s, strnlen(s, n));
  return Errc::success;
}

// One container at `c`; `size` bounds it (0: its header's size is trusted).
Errc container(const uint8_t* c, uint64_t size, int cc, Image& out, const char* api) {
  if (size != 0 && size < 16) return fail(Errc::invalid_image, "{}: {} bytes cannot hold a fat binary header (16)", api, size);
  if (!magic(c, kContainerMagic))
    return fail(Errc::invalid_image, "{}: no fat binary at {} (magic {:#x}, expected 0xba55ed50)", api, fmt::ptr(c), load<uint32_t>(c));
  uint16_t version = load<uint16_t>(c + 4), hsize = load<uint16_t>(c + 6);
  uint64_t body = load<uint64_t>(c + 8);
  if (version != 1) return fail(Errc::invalid_image, "{}: fat binary, offset 0x4: version {}, expected 1", api, version);
  if (hsize < 16) return fail(Errc::invalid_image, "{}: fat binary, offset 0x6: header size {} is under 16", api, hsize);
  if (body > ~uint64_t(0) - hsize) return fail(Errc::invalid_image, "{}: fat binary, offset 0x8: size {:#x} overflows", api, body);
  uint64_t total = hsize + body;
  if (size != 0 && total > size)
    return fail(Errc::invalid_image, "{}: fat binary, offset 0x8: {} bytes of entries after a {}-byte header run past the image's {} bytes",
                api, body, hsize, size);

  std::vector<Entry> entries;
  std::string seen;  // what the image holds, for the no-binary explanation
  for (uint64_t at = hsize; at < total;) {
    if (!fits(total, at, kEntryHeader))
      return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: entry header cut short ({} bytes left of {})", api, at,
                  total - at, kEntryHeader);
    const uint8_t* h = c + at;
    Entry e{};
    e.at = at;
    e.kind = load<uint16_t>(h);
    uint32_t ehsize = load<uint32_t>(h + 4);
    e.padded = load<uint64_t>(h + 8);
    if (ehsize < kEntryHeader || !fits(total, at, ehsize))
      return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: entry header size {} (at least {}, within the {}-byte container)",
                  api, at + 4, ehsize, kEntryHeader, total);
    e.payload = at + ehsize;
    if (!fits(total, e.payload, e.padded))
      return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: payload of {} bytes at {:#x} runs past the container's end ({:#x})",
                  api, at + 8, e.padded, e.payload, total);
    e.packed = load<uint32_t>(h + 16);
    e.ptx_version = load<uint16_t>(h + 26) * 10 + load<uint16_t>(h + 24);
    e.arch = static_cast<int>(load<uint32_t>(h + 28));
    e.flags = load<uint64_t>(h + 40);
    e.unpacked = load<uint64_t>(h + 56);
    e.variant = (e.flags & kFlagArchSpecific) ? Variant::specific : (e.flags & kFlagFamily) ? Variant::family : Variant::plain;
    at = e.payload + e.padded;
    if (e.kind != kKindPtx && e.kind != kKindElf) continue;  // LTO IR and others: not for loading
    if ((e.flags & kFlagZstd) && (e.flags & kFlagLz4))
      return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: flags {:#x} ask for both zstd and LZ4", api, e.at + 40, e.flags);
    if (e.flags & (kFlagZstd | kFlagLz4)) {
      if (e.packed == 0 || e.packed > e.padded)
        return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: compressed size {} does not fit the {}-byte payload", api,
                    e.at + 16, e.packed, e.padded);
      if (e.unpacked == 0 || e.unpacked > detail::kMaxPayloadBytes || ((e.flags & kFlagLz4) && e.unpacked > INT32_MAX))
        return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: uncompressed size {} is out of range", api, e.at + 56,
                    e.unpacked);
    }
    if (e.arch < 10 || e.arch > 1000)
      return fail(Errc::invalid_image, "{}: fat binary, offset {:#x}: SM {} is not one", api, e.at + 28, e.arch);
    seen += (seen.empty() ? "" : ", ") + e.label();
    entries.push_back(e);
  }

  // Machine code the device runs, else PTX it compiles (the driver JITs it).
  const Entry* pick = nullptr;
  for (const Entry& e : entries)
    if (e.kind == kKindElf && detail::can_run(e.arch, e.variant, cc) && (!pick || rank(e) > rank(*pick))) pick = &e;
  const Entry* ptx = nullptr;
  for (const Entry& e : entries)
    if (e.kind == kKindPtx && detail::can_compile(e.arch, e.variant, cc) && (!ptx || rank(e) > rank(*ptx))) ptx = &e;
  if (!pick) pick = ptx;
  if (!pick)
    return fail(Errc::no_binary_for_gpu, "{}: the fat binary holds {}; a device of compute capability {}.{} can run none of them",
                api, seen.empty() ? std::string("no cubin or PTX") : seen, cc / 10, cc % 10);

  std::vector<uint8_t> buf;
  const uint8_t* data = c + pick->payload;
  uint64_t n = pick->padded;
  if (pick->flags & (kFlagZstd | kFlagLz4)) {
    TRY(unpack(c, *pick, buf, api));
    data = buf.data();
    n = buf.size();
  }
  Image img;
  Variant v;
  if (pick->kind == kKindElf) {
    if (n < 4 || !magic(data, {0x7f, 'E', 'L', 'F'}))
      return fail(Errc::invalid_image, "{}: fat binary entry at offset {:#x} ({}) holds no ELF image", api, pick->at, pick->label());
    TRY(detail::cubin(data, n, img, api, v));
    if (ptx) {
      img.ptx_version = ptx->ptx_version;
      TRY(entry_text(c, *ptx, img.ptx, api));
    }
  } else {
    if (n == 0) return fail(Errc::invalid_image, "{}: fat binary entry at offset {:#x} ({}) is empty", api, pick->at, pick->label());
    TRY(detail::ptx(reinterpret_cast<const char*>(data), n, img, api, v));
  }
  out = std::move(img);
  return Errc::success;
}

// Whether the text begins, after white space and comments, with a PTX directive.
bool looks_like_ptx(const char* s, size_t size) {
  size_t i = 0, n = size ? size : SIZE_MAX;
  while (i < n && s[i]) {
    char ch = s[i];
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
      ++i;
    } else if (ch == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] && s[i] != '\n') ++i;
    } else if (ch == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i < n && s[i] && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) ++i;
      i += 2;
    } else {
      return ch == '.';
    }
  }
  return false;
}

}  // namespace

bool is_fatbin_wrapper(const void* data) noexcept { return magic(data, kWrapperMagic); }
bool is_fatbin(const void* data) noexcept { return magic(data, kContainerMagic); }

Errc parse_image(const void* data, size_t size, int cc, Image& out, const char* api) {
  try {
    if (!data) return fail(Errc::invalid_value, "{}: image is NULL", api);
    const auto* p = static_cast<const uint8_t*>(data);
    if (size != 0 && size < 4) return fail(Errc::invalid_image, "{}: {} bytes are no device code image", api, size);
    if (is_fatbin_wrapper(p)) {
      // {u32 magic, u32 version, const void* data, void* filename_or_fatbins}; it points at
      // the container, whose size only its own header knows.
      if (size != 0 && size < 16) return fail(Errc::invalid_image, "{}: {} bytes cannot hold a fat binary wrapper (16)", api, size);
      uint32_t version = load<uint32_t>(p + 4);
      if (version != 1 && version != 2)
        return fail(Errc::invalid_image, "{}: fat binary wrapper, offset 0x4: version {}, expected 1 or 2", api, version);
      const auto* c = load<const uint8_t*>(p + 8);
      if (!c) return fail(Errc::invalid_image, "{}: fat binary wrapper, offset 0x8: its data pointer is NULL", api);
      return container(c, 0, cc, out, api);
    }
    if (is_fatbin(p)) return container(p, size, cc, out, api);
    Image img;
    detail::Variant v;
    if (is_elf(p)) {
      TRY(detail::cubin(p, size, img, api, v));
      if (!detail::can_run(img.arch, v, cc))
        return fail(Errc::no_binary_for_gpu, "{}: the cubin is {}; a device of compute capability {}.{} cannot run it", api,
                    detail::arch_name("sm_", img.arch, v), cc / 10, cc % 10);
    } else if (looks_like_ptx(reinterpret_cast<const char*>(p), size)) {
      TRY(detail::ptx(reinterpret_cast<const char*>(p), size, img, api, v));
      // The driver's JIT fails on PTX for a later SM: CUDA_ERROR_INVALID_PTX, as on NVIDIA's.
      if (!detail::can_compile(img.arch, v, cc))
        return fail(Errc::invalid_ptx, "{}: the PTX targets {}, which a device of compute capability {}.{} cannot compile", api,
                    detail::arch_name("sm_", img.arch, v), cc / 10, cc % 10);
    } else {
      return fail(Errc::invalid_image, "{}: not a fat binary, cubin or PTX (first bytes {:02x} {:02x} {:02x} {:02x})", api, p[0],
                  p[0] ? p[1] : 0, p[0] && p[1] ? p[2] : 0, p[0] && p[1] && p[2] ? p[3] : 0);
    }
    out = std::move(img);
    return Errc::success;
  } catch (const std::bad_alloc&) {
    return fail(Errc::out_of_memory, "{}: out of host memory reading a device code image", api);
  }
}

}  // namespace cuda_shim::module
