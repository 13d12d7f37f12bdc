// What NVIDIA's NVML answers, next to the driver's view of the same device: run on a GPU
// machine (tools/probe/run_nvml_probe.sh) and kept beside this file as probe_nvml.<gpu>.txt.
// NVML is reached with dlopen/dlsym and declarations written here (NVML's documented ABI), so
// the probe builds without nvml.h. The same binary runs on cuda-shim (cuda-shim run -- ...)
// to compare. One line per question: "name -> code [values]".
#include <cuda.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using nvmlDevice_t = void*;
struct Memory { unsigned long long total, free, used; };
struct MemoryV2 { unsigned int version; unsigned long long total, reserved, free, used; };
struct ProcessInfo { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; };
struct PciInfo { char busIdLegacy[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; };
struct PciInfoExt { unsigned int version, domain, bus, device, pciDeviceId, pciSubSystemId, baseClass, subClass; char busId[32]; };
struct Utilization { unsigned int gpu, memory; };

void* lib = nullptr;
template <class F>
F sym(const char* name) {
  void* p = dlsym(lib, name);
  if (!p) std::printf("%s -> MISSING\n", name);
  return reinterpret_cast<F>(p);
}
using ErrStr = const char* (*)(int);
ErrStr err_string;

void line(const char* what, int rc, const std::string& extra = "") {
  std::printf("%s -> %d (%s)%s%s\n", what, rc, err_string ? err_string(rc) : "?", extra.empty() ? "" : " ", extra.c_str());
}

// The call runs before its values are formatted (a function's arguments have no set order).
#define LINE(what, call, ...)                          \
  do {                                                 \
    int rc_ = (call);                                  \
    line(what, rc_ __VA_OPT__(, ) __VA_ARGS__);        \
  } while (0)

std::string uuid_string(const CUuuid& u) {
  char s[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

// A child with a context and `bytes` allocated on device 0, until killed. Exec'd afresh (CUDA
// does not survive fork() after cuInit); it says "ready" on stdout when it holds the memory.
void child_main(size_t bytes) {
  CUdevice d;
  CUcontext c;
  CUdeviceptr p = 0;
  cuInit(0);
  cuDeviceGet(&d, 0);
  cuDevicePrimaryCtxRetain(&c, d);
  cuCtxSetCurrent(c);
  int rc = bytes ? cuMemAlloc(&p, bytes) : 0;
  char ok = rc == 0 ? 1 : 0;
  (void)!write(1, &ok, 1);
  pause();
  _exit(0);
}

pid_t spawn_user(size_t bytes) {
  int fds[2];
  (void)!pipe(fds);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    std::string arg = std::to_string(bytes);
    execl("/proc/self/exe", "probe_nvml", "child", arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char ok = 0;
  if (read(fds[0], &ok, 1) != 1 || !ok) std::printf("child %d failed to allocate\n", pid);
  close(fds[0]);
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) child_main(std::strtoull(argv[2], nullptr, 10));
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // a crash inside NVML keeps every line before it
  lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::printf("dlopen libnvidia-ml.so.1 failed: %s\n", dlerror());
    return 1;
  }
  err_string = sym<ErrStr>("nvmlErrorString");
  for (int c : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 15, 999, 12345})
    std::printf("nvmlErrorString(%d) = \"%s\"\n", c, err_string(c));

  auto init = sym<int (*)()>("nvmlInit_v2");
  auto init_flags = sym<int (*)(unsigned)>("nvmlInitWithFlags");
  auto shutdown = sym<int (*)()>("nvmlShutdown");
  auto count_v2 = sym<int (*)(unsigned*)>("nvmlDeviceGetCount_v2");
  auto by_index = sym<int (*)(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  auto by_uuid = sym<int (*)(const char*, nvmlDevice_t*)>("nvmlDeviceGetHandleByUUID");
  auto by_pci = sym<int (*)(const char*, nvmlDevice_t*)>("nvmlDeviceGetHandleByPciBusId_v2");
  auto get_name = sym<int (*)(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetName");
  auto get_uuid = sym<int (*)(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetUUID");
  auto get_serial = sym<int (*)(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetSerial");
  auto get_index = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetIndex");
  auto get_minor = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetMinorNumber");
  auto get_pci = sym<int (*)(nvmlDevice_t, PciInfo*)>("nvmlDeviceGetPciInfo_v3");
  auto get_pci_ext = sym<int (*)(nvmlDevice_t, PciInfoExt*)>("nvmlDeviceGetPciInfoExt");
  auto get_mem = sym<int (*)(nvmlDevice_t, Memory*)>("nvmlDeviceGetMemoryInfo");
  auto get_mem2 = sym<int (*)(nvmlDevice_t, MemoryV2*)>("nvmlDeviceGetMemoryInfo_v2");
  auto procs_v3 = sym<int (*)(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v3");
  auto gprocs_v3 = sym<int (*)(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetGraphicsRunningProcesses_v3");
  auto cc = sym<int (*)(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
  auto drv = sym<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
  auto nvmlver = sym<int (*)(char*, unsigned)>("nvmlSystemGetNVMLVersion");
  auto cudaver = sym<int (*)(int*)>("nvmlSystemGetCudaDriverVersion");
  auto cudaver2 = sym<int (*)(int*)>("nvmlSystemGetCudaDriverVersion_v2");
  auto temp = sym<int (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature");
  auto power = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPowerUsage");
  auto plimit = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetEnforcedPowerLimit");
  auto util = sym<int (*)(nvmlDevice_t, Utilization*)>("nvmlDeviceGetUtilizationRates");
  auto fan = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetFanSpeed");
  auto clock = sym<int (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetClockInfo");
  auto maxclock = sym<int (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetMaxClockInfo");
  auto pstate = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetPerformanceState");
  auto brand = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetBrand");
  auto arch = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetArchitecture");
  auto persist = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetPersistenceMode");
  auto cmode = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetComputeMode");
  auto disp = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetDisplayActive");
  auto ecc = sym<int (*)(nvmlDevice_t, int*, int*)>("nvmlDeviceGetEccMode");
  auto enc = sym<int (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetEncoderUtilization");
  auto dec = sym<int (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetDecoderUtilization");
  auto pcie_gen = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetMaxPcieLinkGeneration");
  auto pcie_width = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetMaxPcieLinkWidth");
  auto cur_width = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetCurrPcieLinkWidth");
  auto nvlink_state = sym<int (*)(nvmlDevice_t, unsigned, int*)>("nvmlDeviceGetNvLinkState");
  auto vbios = sym<int (*)(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetVbiosVersion");
  auto board = sym<int (*)(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetBoardPartNumber");
  auto multi = sym<int (*)(nvmlDevice_t, int*)>("nvmlDeviceGetMultiGpuBoard");
  auto numa = sym<int (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetNumaNodeId");
  auto bar1 = sym<int (*)(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetBAR1MemoryInfo");
  auto mig = sym<int (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode");

  // Before init.
  unsigned n = 77;
  LINE("before init: nvmlDeviceGetCount_v2", count_v2(&n), "count=" + std::to_string(n));
  LINE("before init: nvmlShutdown", shutdown());
  char buf[256];
  LINE("before init: nvmlSystemGetDriverVersion", drv(buf, sizeof buf));
  int cv = -1;
  LINE("before init: nvmlSystemGetCudaDriverVersion", cudaver(&cv), "v=" + std::to_string(cv));

  // NVML_INIT_FLAG_NO_GPUS (1): initialised, but no device is seen.
  LINE("nvmlInitWithFlags(NO_GPUS)", init_flags(1));
  n = 77;
  LINE("NO_GPUS: nvmlDeviceGetCount_v2", count_v2(&n), "count=" + std::to_string(n));
  LINE("NO_GPUS: nvmlShutdown", shutdown());
  LINE("nvmlInitWithFlags(0)", init_flags(0));
  LINE("nvmlInit_v2", init());
  LINE("nvmlInit_v2 again", init());
  LINE("nvmlShutdown (one of two)", shutdown());
  LINE("nvmlDeviceGetCount_v2 (still init)", count_v2(&n), "count=" + std::to_string(n));
  LINE("nvmlDeviceGetCount_v2(NULL)", count_v2(nullptr));

  std::memset(buf, 0, sizeof buf);
  LINE("nvmlSystemGetDriverVersion", drv(buf, sizeof buf), buf);
  LINE("nvmlSystemGetDriverVersion(len 1)", drv(buf, 1));
  LINE("nvmlSystemGetDriverVersion(NULL)", drv(nullptr, 80));
  LINE("nvmlSystemGetNVMLVersion", nvmlver(buf, sizeof buf), buf);
  LINE("nvmlSystemGetCudaDriverVersion", cudaver(&cv), "v=" + std::to_string(cv));
  LINE("nvmlSystemGetCudaDriverVersion_v2", cudaver2(&cv), "v=" + std::to_string(cv));
  LINE("nvmlSystemGetCudaDriverVersion(NULL)", cudaver(nullptr));

  nvmlDevice_t dev = nullptr, d2 = nullptr;
  LINE("nvmlDeviceGetHandleByIndex_v2(99)", by_index(99, &d2));
  LINE("nvmlDeviceGetHandleByIndex_v2(0, NULL)", by_index(0, nullptr));
  LINE("nvmlDeviceGetHandleByIndex_v2(0)", by_index(0, &dev));
  LINE("nvmlDeviceGetHandleByIndex_v2(0) again, same handle", by_index(0, &d2), d2 == dev ? "same" : "different");

  cuInit(0);
  CUdevice cud;
  cuDeviceGet(&cud, 0);
  CUuuid cu_uuid;
  cuDeviceGetUuid_v2(&cu_uuid, cud);
  char cu_bus[64];
  cuDeviceGetPCIBusId(cu_bus, sizeof cu_bus, cud);
  std::printf("driver: cuDeviceGetUuid = %s, cuDeviceGetPCIBusId = %s\n", uuid_string(cu_uuid).c_str(), cu_bus);

  LINE("nvmlDeviceGetName", get_name(dev, buf, sizeof buf), buf);
  LINE("nvmlDeviceGetName(len 4)", get_name(dev, buf, 4));
  LINE("nvmlDeviceGetName(NULL dev)", get_name(nullptr, buf, sizeof buf));
  // A garbage handle crashes NVIDIA's NVML (SIGSEGV, measured): not asked.
  LINE("nvmlDeviceGetUUID", get_uuid(dev, buf, sizeof buf), std::string(buf) + (uuid_string(cu_uuid) == buf ? " (= driver)" : " (!= driver)"));
  LINE("nvmlDeviceGetUUID(len 40)", get_uuid(dev, buf, 40));
  LINE("nvmlDeviceGetUUID(len 41)", get_uuid(dev, buf, 41));
  std::string uuid = buf;
  LINE("nvmlDeviceGetUUID(len 80)", get_uuid(dev, buf, 80), buf);
  LINE("nvmlDeviceGetHandleByUUID", by_uuid(uuid.c_str(), &d2), d2 == dev ? "same" : "different");
  LINE("nvmlDeviceGetHandleByUUID(unknown)", by_uuid("GPU-00000000-0000-0000-0000-000000000000", &d2));
  LINE("nvmlDeviceGetHandleByUUID(garbage)", by_uuid("hello", &d2));
  LINE("nvmlDeviceGetHandleByUUID(NULL)", by_uuid(nullptr, &d2));
  LINE("nvmlDeviceGetSerial", get_serial(dev, buf, sizeof buf), buf);
  unsigned u = 0;
  LINE("nvmlDeviceGetIndex", get_index(dev, &u), std::to_string(u));
  LINE("nvmlDeviceGetMinorNumber", get_minor(dev, &u), std::to_string(u));
  PciInfo pci{};
  LINE("nvmlDeviceGetPciInfo_v3", get_pci(dev, &pci),
       std::string("busId=") + pci.busId + " legacy=" + pci.busIdLegacy + " domain=" + std::to_string(pci.domain) +
           " bus=" + std::to_string(pci.bus) + " device=" + std::to_string(pci.device) +
           " id=" + std::to_string(pci.pciDeviceId) + " sub=" + std::to_string(pci.pciSubSystemId));
  PciInfoExt ext{};
  LINE("nvmlDeviceGetPciInfoExt(version 0)", get_pci_ext(dev, &ext));
  ext.version = static_cast<unsigned>(sizeof(PciInfoExt)) | (1u << 24);
  LINE("nvmlDeviceGetPciInfoExt", get_pci_ext(dev, &ext),
       std::string("busId=") + ext.busId + " domain=" + std::to_string(ext.domain) + " bus=" + std::to_string(ext.bus) +
           " device=" + std::to_string(ext.device) + " id=" + std::to_string(ext.pciDeviceId) +
           " sub=" + std::to_string(ext.pciSubSystemId) + " class=" + std::to_string(ext.baseClass) + "/" +
           std::to_string(ext.subClass));
  LINE("nvmlDeviceGetPciInfoExt(NULL)", get_pci_ext(dev, nullptr));
  LINE("nvmlDeviceGetHandleByPciBusId_v2(busId)", by_pci(pci.busId, &d2), d2 == dev ? "same" : "different");
  LINE("nvmlDeviceGetHandleByPciBusId_v2(driver's)", by_pci(cu_bus, &d2), d2 == dev ? "same" : "different");
  LINE("nvmlDeviceGetHandleByPciBusId_v2(unknown)", by_pci("0000:ff:1f.0", &d2));
  int major = 0, minor = 0;
  LINE("nvmlDeviceGetCudaComputeCapability", cc(dev, &major, &minor), std::to_string(major) + "." + std::to_string(minor));

  Memory m{};
  size_t cfree = 0, ctotal = 0;
  LINE("nvmlDeviceGetMemoryInfo (no context here)", get_mem(dev, &m),
       "total=" + std::to_string(m.total) + " free=" + std::to_string(m.free) + " used=" + std::to_string(m.used));
  LINE("nvmlDeviceGetMemoryInfo(NULL)", get_mem(dev, nullptr));
  MemoryV2 m2{};
  m2.version = 0;
  LINE("nvmlDeviceGetMemoryInfo_v2(version 0)", get_mem2(dev, &m2));
  m2.version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);
  LINE("nvmlDeviceGetMemoryInfo_v2", get_mem2(dev, &m2),
       "total=" + std::to_string(m2.total) + " reserved=" + std::to_string(m2.reserved) +
           " free=" + std::to_string(m2.free) + " used=" + std::to_string(m2.used));
  unsigned cnt = 0;
  LINE("procs_v3(count 0, NULL) no processes", procs_v3(dev, &cnt, nullptr), "count=" + std::to_string(cnt));
  LINE("procs_v3(NULL count)", procs_v3(dev, nullptr, nullptr));

  // A second process with 1 GiB, and one with only a context.
  pid_t big = spawn_user(1ull << 30);
  pid_t ctx_only = spawn_user(0);
  std::printf("children: big=%d (1 GiB) ctx_only=%d, self=%d\n", big, ctx_only, getpid());
  std::fflush(stdout);
  if (std::system("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader") != 0)
    std::printf("(no nvidia-smi)\n");
  Memory m3{};
  LINE("nvmlDeviceGetMemoryInfo (children alive)", get_mem(dev, &m3),
       "used=" + std::to_string(m3.used) + " delta=" + std::to_string((long long)(m3.used - m.used)));
  CUcontext c;
  cuDevicePrimaryCtxRetain(&c, cud);
  cuCtxSetCurrent(c);
  cuMemGetInfo(&cfree, &ctotal);
  std::printf("driver: cuMemGetInfo free=%zu total=%zu (total-free=%zu)\n", cfree, ctotal, ctotal - cfree);
  Memory m4{};
  get_mem(dev, &m4);
  std::printf("nvml after own context: used=%llu free=%llu\n", m4.used, m4.free);
  cnt = 0;
  LINE("procs_v3(count 0, NULL) with 3 processes", procs_v3(dev, &cnt, nullptr), "count=" + std::to_string(cnt));
  unsigned one = 1;
  ProcessInfo pi[8]{};
  LINE("procs_v3(count 1)", procs_v3(dev, &one, pi), "count=" + std::to_string(one));
  cnt = 8;
  LINE("procs_v3(count 8)", procs_v3(dev, &cnt, pi), "count=" + std::to_string(cnt));
  for (unsigned i = 0; i < cnt && i < 8; ++i)
    std::printf("  pid=%u%s used=%llu gi=%u ci=%u\n", pi[i].pid,
                pi[i].pid == (unsigned)big ? "(big)" : pi[i].pid == (unsigned)ctx_only ? "(ctx_only)" : pi[i].pid == (unsigned)getpid() ? "(self)" : "",
                pi[i].usedGpuMemory, pi[i].gpuInstanceId, pi[i].computeInstanceId);
  cnt = 8;
  LINE("graphics procs_v3", gprocs_v3(dev, &cnt, pi), "count=" + std::to_string(cnt));
  kill(big, SIGKILL);
  waitpid(big, nullptr, 0);
  usleep(300000);
  Memory m5{};
  get_mem(dev, &m5);
  cnt = 8;
  int rc = procs_v3(dev, &cnt, pi);
  std::printf("after SIGKILL of big: used=%llu procs rc=%d count=%u\n", m5.used, rc, cnt);
  kill(ctx_only, SIGKILL);
  waitpid(ctx_only, nullptr, 0);

  // What gpustat and nvidia-smi-style tools read.
  unsigned t = 0;
  LINE("nvmlDeviceGetTemperature(GPU)", temp(dev, 0, &t), std::to_string(t));
  LINE("nvmlDeviceGetTemperature(99)", temp(dev, 99, &t));
  LINE("nvmlDeviceGetPowerUsage", power(dev, &t), std::to_string(t));
  LINE("nvmlDeviceGetEnforcedPowerLimit", plimit(dev, &t), std::to_string(t));
  Utilization ut{};
  LINE("nvmlDeviceGetUtilizationRates", util(dev, &ut), std::to_string(ut.gpu) + "/" + std::to_string(ut.memory));
  LINE("nvmlDeviceGetFanSpeed", fan(dev, &t), std::to_string(t));
  for (int k = 0; k < 4; ++k) {
    std::string w = "nvmlDeviceGetClockInfo(" + std::to_string(k) + ")";
    LINE(w.c_str(), clock(dev, k, &t), std::to_string(t));
    w = "nvmlDeviceGetMaxClockInfo(" + std::to_string(k) + ")";
    LINE(w.c_str(), maxclock(dev, k, &t), std::to_string(t));
  }
  int iv = -1, iv2 = -1;
  LINE("nvmlDeviceGetPerformanceState", pstate(dev, &iv), std::to_string(iv));
  LINE("nvmlDeviceGetBrand", brand(dev, &iv), std::to_string(iv));
  LINE("nvmlDeviceGetArchitecture", arch(dev, &t), std::to_string(t));
  LINE("nvmlDeviceGetPersistenceMode", persist(dev, &iv), std::to_string(iv));
  LINE("nvmlDeviceGetComputeMode", cmode(dev, &iv), std::to_string(iv));
  LINE("nvmlDeviceGetDisplayActive", disp(dev, &iv), std::to_string(iv));
  LINE("nvmlDeviceGetEccMode", ecc(dev, &iv, &iv2), std::to_string(iv) + "/" + std::to_string(iv2));
  unsigned sp = 0;
  LINE("nvmlDeviceGetEncoderUtilization", enc(dev, &t, &sp), std::to_string(t) + " period " + std::to_string(sp));
  LINE("nvmlDeviceGetDecoderUtilization", dec(dev, &t, &sp), std::to_string(t) + " period " + std::to_string(sp));
  LINE("nvmlDeviceGetMaxPcieLinkGeneration", pcie_gen(dev, &t), std::to_string(t));
  LINE("nvmlDeviceGetMaxPcieLinkWidth", pcie_width(dev, &t), std::to_string(t));
  LINE("nvmlDeviceGetCurrPcieLinkWidth", cur_width(dev, &t), std::to_string(t));
  for (unsigned l : {0u, 1u, 17u, 18u}) {
    std::string w = "nvmlDeviceGetNvLinkState(" + std::to_string(l) + ")";
    LINE(w.c_str(), nvlink_state(dev, l, &iv), std::to_string(iv));
  }
  LINE("nvmlDeviceGetVbiosVersion", vbios(dev, buf, sizeof buf), buf);
  LINE("nvmlDeviceGetBoardPartNumber", board(dev, buf, sizeof buf), buf);
  LINE("nvmlDeviceGetMultiGpuBoard", multi(dev, &iv), std::to_string(iv));
  if (numa) LINE("nvmlDeviceGetNumaNodeId", numa(dev, &t), std::to_string(t));
  unsigned long long b1[3]{};
  LINE("nvmlDeviceGetBAR1MemoryInfo", bar1(dev, b1), std::to_string(b1[0]) + "/" + std::to_string(b1[1]));
  unsigned mg = 0, mg2 = 0;
  LINE("nvmlDeviceGetMigMode", mig(dev, &mg, &mg2), std::to_string(mg) + "/" + std::to_string(mg2));

  LINE("nvmlShutdown", shutdown());
  LINE("nvmlShutdown (last)", shutdown());
  LINE("nvmlShutdown (not initialised)", shutdown());
  LINE("after shutdown: nvmlDeviceGetName", get_name(dev, buf, sizeof buf));
  LINE("after shutdown: nvmlDeviceGetCount_v2", count_v2(&n));
  return 0;
}
