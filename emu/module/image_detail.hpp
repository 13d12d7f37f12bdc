// Internals shared by the image parsers (fatbin.cpp, cubin.cpp, ptx.cpp): bounded
// little-endian reads, the SM variants and the driver's compatibility rules.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "module/image.hpp"

namespace cuda_shim::module::detail {

static_assert(std::endian::native == std::endian::little, "the image formats are little-endian");

template <class T>
T load(const uint8_t* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// [off, off + len) lies inside [0, size), without overflow.
inline bool fits(uint64_t size, uint64_t off, uint64_t len) noexcept { return off <= size && len <= size - off; }

// Nothing in a device image is this large; a size past it is damage, not data.
constexpr uint64_t kMaxPayloadBytes = uint64_t(1) << 30;

// sm_90 (plain), sm_100f (family: runs on the family's later members), sm_90a (arch-specific:
// runs on exactly that SM).
enum class Variant : uint8_t { plain, family, specific };

inline std::string arch_name(const char* prefix, int arch, Variant v) {
  return std::string(prefix) + std::to_string(arch) + (v == Variant::specific ? "a" : v == Variant::family ? "f" : "");
}

// Machine code runs on the same major and an equal or later minor (a family target is no
// narrower than that); arch-specific code only on its own SM.
inline bool can_run(int arch, Variant v, int cc) noexcept {
  if (v == Variant::specific) return arch == cc;
  return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}

// PTX compiles for any later SM; family PTX only within its family, arch-specific PTX only
// for its own SM.
inline bool can_compile(int arch, Variant v, int cc) noexcept {
  if (v == Variant::specific) return arch == cc;
  if (v == Variant::family) return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
  return arch <= cc;
}

// The parsers proper: they fill `out` and report the variant of the target they found.
Errc cubin(const uint8_t* data, size_t size, Image& out, const char* api, Variant& variant);
Errc ptx(const char* text, size_t size, Image& out, const char* api, Variant& variant);

}  // namespace cuda_shim::module::detail
