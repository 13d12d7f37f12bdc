// difftest ops shared by every probe family: conditions a case needs from the machine.
#pragma once

namespace difftest {

inline bool ops_core(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  if (op == "need_devices") {  // need_devices N: the case ends here (recorded as a skip) on fewer
    int n = 0;
    DT_CALL(e, r, cuDeviceGetCount, &n);
    if (e.rc == 0 && n < static_cast<int>(e.num(1))) { r.ks("skip", std::to_string(n) + " devices"); e.stop = true; }
    return true;
  }
  if (op == "dev_attr") {  // dev_attr ATTR DEV: a device attribute's value
    int v = 0x5a5a5a5a;
    DT_CALL(e, r, cuDeviceGetAttribute, &v, static_cast<CUdevice_attribute>(e.num(1)), static_cast<CUdevice>(e.num(2)));
    if (e.rc == 0) r.kv("v", v);
    return true;
  }
  return false;
}

}  // namespace difftest
