// Placeholder until the registry segment lands (same series): every byte-handle export
// is refused, explained.
#include "ipc/registry.hpp"

namespace cuda_shim::ipc {

Errc publish(Record& r, const char* api) {
  return fail(Errc::not_supported, "{}: the shared registry is not built yet", api);
}
bool lookup(RecordKind, const Token&, Record&) { return false; }
void withdraw(RecordKind, const Token&) noexcept {}
Errc imex_channel(const char* api, int& channel) {
  channel = -1;
  return fail(Errc::not_permitted, "{}: fabric memory needs an IMEX channel, and this process has none", api);
}
Errc fabric_export(int, const FdInfo&, int, unsigned char*, const char* api) {
  return fail(Errc::not_supported, "{}: the shared registry is not built yet", api);
}
Errc fabric_import(const unsigned char*, int& out_fd, FdInfo&, const char* api) {
  out_fd = -1;
  return fail(Errc::not_supported, "{}: the shared registry is not built yet", api);
}
void fabric_withdraw(const Token&) noexcept {}
std::string segment_name() { return {}; }
std::string dump() { return {}; }
std::string collect_garbage() { return {}; }

}  // namespace cuda_shim::ipc
