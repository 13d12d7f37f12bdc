// The integrity check NVIDIA's runtime runs on the driver (table d4082055..., slot 1).
//
// The runtime calls slot 1 three times during its initialisation, with version = its own
// version times ten-ish plus 0, 1 and 2 (13.0: 13000, 13001, 13002), the current Unix time and
// a 16-byte out buffer, and compares the answers with what it computes itself. Versions ending
// in 0 and 1 have fixed answers. A version ending in 2 or more asks for a keyed digest (HMAC
// with MD2, RFC 1319/2104; 16-byte key, 16-byte block) of a 48-byte record describing this
// call (driver version, the version asked, process and thread ids, the addresses of the
// CUDART_INTERFACE table, of the integrity table and of the slot itself, the time) followed
// by a 28-byte record per device (UUID, PCI domain, bus and device ids). The runtime knows
// every one of those values (it holds the tables and asks the driver for the rest), so the
// digest proves the tables came from a driver that knows the key. docs/dark-api.md has the
// layout; the algorithm was documented by the ZLUDA project's interoperability work.
#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "abi/call.hpp"
#include "abi/driver_api.hpp"
#include "hosting/hosting.hpp"

namespace cuda_shim::hosting {
namespace {

// MD2's substitution table (RFC 1319, section 3.2: a permutation built from the digits of pi).
constexpr unsigned char kPiSubst[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20};

class Md2 {
 public:
  void update(const unsigned char* p, size_t n) noexcept {
    for (size_t i = 0; i < n; ++i) byte(p[i]);
  }
  void finish(unsigned char out[16]) noexcept {
    const unsigned char pad = static_cast<unsigned char>(16 - fill_);
    for (unsigned i = 0; i < pad; ++i) byte(pad);
    unsigned char sum[16];
    std::memcpy(sum, checksum_, 16);
    update(sum, 16);
    std::memcpy(out, x_, 16);
  }

 private:
  void byte(unsigned char b) noexcept {
    x_[16 + fill_] = b;
    x_[32 + fill_] = static_cast<unsigned char>(b ^ x_[fill_]);
    checksum_[fill_] ^= kPiSubst[b ^ last_];
    last_ = checksum_[fill_];
    if (++fill_ < 16) return;
    fill_ = 0;
    unsigned t = 0;
    for (unsigned round = 0; round < 18; ++round) {
      for (unsigned char& v : x_) t = v ^= kPiSubst[t];
      t = (t + round) & 0xff;
    }
  }

  unsigned char x_[48] = {};
  unsigned char checksum_[16] = {};
  unsigned char last_ = 0;
  unsigned fill_ = 0;
};

// The key NVIDIA's runtime and driver share.
constexpr unsigned char kKey[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                    0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

// What is hashed first: this call and this driver (48 bytes, no padding).
struct CallRecord {
  uint32_t driver_version;
  uint32_t version;
  uint32_t pid;
  uint32_t thread;  // the low 32 bits of pthread_self()
  const void* cudart_table;
  const void* integrity_table;
  const void* slot;
  uint64_t unix_seconds;
};
static_assert(sizeof(CallRecord) == 48);

// Then one per device, in ordinal order (28 bytes).
struct DeviceRecord {
  unsigned char uuid[16];
  int32_t pci_domain;
  int32_t pci_bus;
  int32_t pci_device;
};
static_assert(sizeof(DeviceRecord) == 28);

}  // namespace

void md2(const unsigned char* message, size_t len, unsigned char out[16]) noexcept {
  Md2 h;
  h.update(message, len);
  h.finish(out);
}

void integrity_digest(const unsigned char* message, size_t len, unsigned char out[16]) noexcept {
  unsigned char pad[16], inner[16];
  Md2 in;
  for (int i = 0; i < 16; ++i) pad[i] = kKey[i] ^ 0x36;
  in.update(pad, 16);
  in.update(message, len);
  in.finish(inner);
  Md2 outer;
  for (int i = 0; i < 16; ++i) pad[i] = kKey[i] ^ 0x5c;
  outer.update(pad, 16);
  outer.update(inner, 16);
  outer.finish(out);
}

CUresult CUDAAPI integrity_check(unsigned version, unsigned long long unix_seconds, unsigned long long* result) {
  return static_cast<CUresult>(abi::driver_call("INTEGRITY_CHECK[1] (integrity check)", [&]() -> Errc {
    TRY(need(result, "INTEGRITY_CHECK[1]", "result"));
    switch (version % 10) {
      case 0:  // fixed answers, as the real driver gives them
        result[0] = 0x3341181c03cb675cull;
        result[1] = 0x8ed383aa1f4cd1e8ull;
        return Errc::success;
      case 1:
        result[0] = 0x1841181c03cb675cull;
        result[1] = 0x8ed383aa1f4cd1e8ull;
        return Errc::success;
      default:
        break;
    }
    int driver_version = 0, count = 0;
    TRY(api::cuDriverGetVersion(&driver_version));
    TRY(api::cuDeviceGetCount(&count));
    CallRecord call{};
    call.driver_version = static_cast<uint32_t>(driver_version);
    call.version = version;
    call.pid = static_cast<uint32_t>(getpid());
    call.thread = static_cast<uint32_t>(pthread_self());
    call.cudart_table = cudart_interface_table();
    call.integrity_table = integrity_check_table();
    call.slot = integrity_check_slot();
    call.unix_seconds = unix_seconds;
    std::vector<unsigned char> msg(sizeof call + sizeof(DeviceRecord) * static_cast<size_t>(count));
    std::memcpy(msg.data(), &call, sizeof call);
    for (int d = 0; d < count; ++d) {
      DeviceRecord r{};
      CUuuid u{};
      TRY(api::cuDeviceGetUuid_v2(&u, d));
      std::memcpy(r.uuid, u.bytes, 16);
      TRY(api::cuDeviceGetAttribute(&r.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d));
      TRY(api::cuDeviceGetAttribute(&r.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d));
      TRY(api::cuDeviceGetAttribute(&r.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d));
      std::memcpy(msg.data() + sizeof call + sizeof r * static_cast<size_t>(d), &r, sizeof r);
    }
    unsigned char digest[16];
    integrity_digest(msg.data(), msg.size(), digest);
    std::memcpy(result, digest, 16);
    return Errc::success;
  }));
}

}  // namespace cuda_shim::hosting
