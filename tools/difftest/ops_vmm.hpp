// difftest ops of the vmm family, for the probe cases in tests/probe/cases/vmm*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
#pragma once

namespace difftest {

inline bool ops_vmm(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  (void)op; (void)r;
  return false;
}

}  // namespace difftest
