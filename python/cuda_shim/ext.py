"""The emulator-only API of cuda_shim_ext.h, through ctypes.

These functions exist only in cuda-shim's libcuda.so.1; each call goes to the library that
activate() loaded (activating with the environment's settings if nothing did yet).
Explanations are per thread: call last_explanation() on the thread that made the failing call.
"""
import ctypes
from collections import namedtuple

import cuda_shim

Explanation = namedtuple("Explanation", "code message")
Explanation.__doc__ = "Why the last failing call on this thread failed: its CUresult code and the reason."


def _lib():
    cuda_shim.activate()
    return cuda_shim._handles[cuda_shim._DRIVER]


def _text(fn, *args):
    """Calls one of the `size_t f(..., char *buf, size_t len)` functions: they return the full length."""
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        n = fn(*args, buf, ctypes.c_size_t(size))
        if n < size:
            return buf.value.decode("utf-8", "replace")
        size = n + 1


def _sized(name):
    fn = getattr(_lib(), name)
    fn.restype = ctypes.c_size_t
    return fn


def version():
    """cuda-shim's version as MAJOR*10000 + MINOR*100 + PATCH (cuShimGetVersion)."""
    return _lib().cuShimGetVersion()


def last_explanation():
    """Explanation(code, message) of the most recent failing driver/runtime call on this thread;
    (0, "") when none failed."""
    lib = _lib()
    return Explanation(lib.cuShimGetLastExplanationCode(), _text(_sized("cuShimGetLastExplanation")))


def set_faults(spec):
    """Replaces the fault-injection rules (CUDA_SHIM_FAULTS syntax, docs/faults.md) and restarts
    their call counts; None or "" removes them. Raises ValueError, with the explanation, for a
    spec that does not parse (the rules in force stay)."""
    lib = _lib()
    fn = lib.cuShimSetFaults
    fn.argtypes = [ctypes.c_char_p]
    rc = fn(spec.encode() if spec else None)
    if rc != 0:
        raise ValueError(last_explanation().message)


def managed_violations():
    """How many host accesses to managed memory the device owned were caught (CUDA_SHIM_MANAGED_FAULT)."""
    fn = _lib().cuShimManagedViolations
    fn.restype = ctypes.c_ulonglong
    return fn()


def last_managed_violation():
    """The explanation of the most recent managed memory violation ("" when none)."""
    return _text(_sized("cuShimGetLastManagedViolation"))


def ipc_state():
    """The shared IPC registry as text (what `cuda-shim ipc` prints)."""
    return _text(_sized("cuShimIpcState"))


def logical_endpoint_state():
    """Every logical endpoint of the emulated fabric as text (what `cuda-shim endpoints` prints)."""
    return _text(_sized("cuShimLogicalEndpointState"))


class ObjectCounts(ctypes.Structure):
    """CUshimObjectCounts: what this process holds now (for leak checks)."""
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "contexts", "streams", "events", "memPools", "vmmHandles", "vmmReservations",
        "externalMemories", "externalSemaphores", "arrays", "addressRanges", "deviceBytesCharged")]

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_}


def object_counts():
    """Live handles of each kind, address ranges and device bytes charged, as a dict."""
    counts = ObjectCounts()
    if _lib().cuShimGetObjectCounts(ctypes.byref(counts), ctypes.c_size_t(ctypes.sizeof(counts))) != 0:
        raise RuntimeError("cuShimGetObjectCounts failed")
    return counts.as_dict()


def launch_count():
    """How many kernel launches passed the driver's checks so far (refused or skipped)."""
    fn = _lib().cuShimGetLaunchCount
    fn.restype = ctypes.c_ulonglong
    return fn()


def driver_version():
    """What cuDriverGetVersion reports (CUDA_SHIM_DRIVER_VERSION; no cuInit needed)."""
    v = ctypes.c_int()
    rc = _lib().cuDriverGetVersion(ctypes.byref(v))
    if rc != 0:
        raise RuntimeError(f"cuDriverGetVersion failed: CUresult {rc}")
    return v.value


def device_count():
    """cuInit(0) then cuDeviceGetCount: the number of emulated devices in this process."""
    lib = _lib()
    n = ctypes.c_int()
    for rc in (lib.cuInit(0), lib.cuDeviceGetCount(ctypes.byref(n))):
        if rc != 0:
            raise RuntimeError(f"cuInit/cuDeviceGetCount failed: CUresult {rc}: {last_explanation().message}")
    return n.value
