"""NVML through nvidia-ml-py (pynvml) agrees with the driver across processes: a child that
allocates device memory is listed with its usage, the memory counts as used, and both go when
the child exits. Runs unchanged on NVIDIA's driver and NVML."""
import os
import subprocess
import sys
import time

import pytest

pynvml = pytest.importorskip("pynvml")
from cuda.bindings import driver  # noqa: E402


BYTES = 96 << 20

CHILD = r"""
import sys
from cuda.bindings import driver as d
d.cuInit(0)
_, dev = d.cuDeviceGet(0)
_, ctx = d.cuDevicePrimaryCtxRetain(dev)
d.cuCtxSetCurrent(ctx)
err, ptr = d.cuMemAlloc(int(sys.argv[1]))
print(int(err), flush=True)
sys.stdin.readline()
"""


def check(result):
    if not isinstance(result, tuple):  # cuInit: the code alone
        result = (result,)
    err = result[0]
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


@pytest.fixture
def nvml():
    pynvml.nvmlInit()
    yield
    pynvml.nvmlShutdown()


@pytest.fixture
def holder():
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(BYTES)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "0"
        yield child
    finally:
        if child.poll() is None:
            child.stdin.write("\n")
            child.stdin.flush()
            child.wait(timeout=60)


def processes(handle):
    return {p.pid: p.usedGpuMemory for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}


def test_devices_match_the_driver(nvml):
    check(driver.cuInit(0))
    assert pynvml.nvmlDeviceGetCount() == check(driver.cuDeviceGetCount())
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    dev = check(driver.cuDeviceGet(0))
    name = check(driver.cuDeviceGetName(96, dev)).split(b"\0")[0].decode()
    assert pynvml.nvmlDeviceGetName(handle) == name
    raw = bytes(check(driver.cuDeviceGetUuid(dev)).bytes)
    h = raw.hex()
    assert pynvml.nvmlDeviceGetUUID(handle) == f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    bus = check(driver.cuDeviceGetPCIBusId(32, dev)).split(b"\0")[0].decode()
    assert pynvml.nvmlDeviceGetPciInfo(handle).busId.lower().endswith(bus.lower())
    # NVML's total also holds what the driver reserves for itself, which only the v2 struct
    # tells apart (measured: H100, driver 580).
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
    assert mem.total - mem.reserved == check(driver.cuDeviceTotalMem(dev))
    assert pynvml.nvmlDeviceGetMemoryInfo(handle).total == mem.total
    assert pynvml.nvmlSystemGetCudaDriverVersion() == check(driver.cuDriverGetVersion())


def test_a_child_process_is_listed_with_its_memory(nvml, holder):
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    procs = processes(handle)
    assert holder.pid in procs
    assert procs[holder.pid] >= BYTES
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    assert mem.used >= BYTES
    assert mem.free + mem.used <= mem.total
    # What gpustat asks: a number or NOT_SUPPORTED, never a missing function.
    assert pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU) > 0
    assert pynvml.nvmlDeviceGetUtilizationRates(handle).gpu >= 0
    assert pynvml.nvmlDeviceGetPowerUsage(handle) > 0
    assert pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) > 0
    assert len(pynvml.nvmlDeviceGetGraphicsRunningProcesses(handle)) >= 0

    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait(timeout=60)
    deadline = time.monotonic() + 20  # a real driver reclaims a finished process shortly after
    while holder.pid in processes(handle) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert holder.pid not in processes(handle)


@pytest.mark.shim_only
def test_nvml_is_not_a_gpu_process_of_its_own(nvml):
    # NVML creates no context: a process that only asks NVML is not listed (it would be once
    # it makes a CUDA context, as on a GPU).
    code = ("import os, pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0);"
            "print(os.getpid() in {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.stdout.strip() == "False", out.stderr


def test_cuda_core_system_reads_the_same_device(holder):
    # cuda.core's system module asks NVML through cuda.bindings.nvml (nvmlDeviceGetPciInfoExt,
    # nvmlDeviceGetMemoryInfo_v2, the process list): the same answers as the driver's.
    system = pytest.importorskip("cuda.core.system")
    if not getattr(system, "CUDA_BINDINGS_NVML_IS_COMPATIBLE", False):
        pytest.skip("this cuda.bindings has no NVML bindings")
    check(driver.cuInit(0))
    assert system.get_num_devices() == check(driver.cuDeviceGetCount())
    dev = check(driver.cuDeviceGet(0))
    d = system.Device(index=0)
    assert d.name == check(driver.cuDeviceGetName(96, dev)).split(b"\0")[0].decode()
    bus = check(driver.cuDeviceGetPCIBusId(32, dev)).split(b"\0")[0].decode()
    assert d.pci_info.bus_id.lower().endswith(bus.lower())
    mem = d.memory_info
    assert mem.total - mem.reserved == check(driver.cuDeviceTotalMem(dev))
    assert mem.used >= BYTES
    procs = {p.pid: p.used_gpu_memory for p in d.compute_running_processes}
    assert procs.get(holder.pid, 0) >= BYTES
