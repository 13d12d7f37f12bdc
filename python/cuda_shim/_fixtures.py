"""Fixtures of the cuda_shim pytest plugin; registered only once the plugin has activated the emulator."""
import os
import subprocess
import sys

import pytest

import cuda_shim
from cuda_shim import ext


@pytest.fixture(scope="session")
def cuda_shim_libdir():
    """The folder of the libcuda.so.1 / libcudart.so.13 this session runs on."""
    return cuda_shim.libdir()


@pytest.fixture(scope="session")
def cuda_shim_devices():
    """The number of emulated devices of this session (cuInit + cuDeviceGetCount)."""
    return ext.device_count()


@pytest.fixture(scope="session")
def cuda_shim_driver_version():
    """What cuDriverGetVersion reports in this session (13030 for 13.3)."""
    return ext.driver_version()


@pytest.fixture(scope="session")
def cuda_shim_profile():
    """The device profile this session runs on (--cuda-shim-profile, CUDA_SHIM_PROFILE): its name,
    or the file's absolute path; "h200" when none was chosen."""
    return os.environ.get("CUDA_SHIM_PROFILE") or "h200"


@pytest.fixture
def cuda_shim_explanation():
    """A function returning Explanation(code, message): why the last failing CUDA call on the
    calling thread failed ((0, "") when none did). Works without CUDA_SHIM_EXPLAIN."""
    return ext.last_explanation


class Faults:
    """Injected system conditions, undone when the test ends.

    set(spec): fault-injection rules for this test (CUDA_SHIM_FAULTS syntax, docs/faults.md,
    e.g. "cuMemAllocAsync:CUDA_ERROR_OUT_OF_MEMORY@2"); counts start at the call, and the rules
    are removed after the test.
    The driver reads these variables at each call, so they apply in this process at once:
      logical_endpoint_illegal_state(): CUDA_SHIM_LE_FAULT=illegal_state (logical endpoint binds,
                                        unbinds, queries and limits fail with ILLEGAL_STATE)
      imex_daemon_not_ready():          CUDA_SHIM_IMEX_DAEMON=not_ready (fabric handles and fabric
                                        endpoints fail with SYSTEM_NOT_READY)
    Managed memory faults (host access to memory the device owns) are counted per process:
    managed_violations() is how many happened since the test started, last_managed_violation()
    the latest one's explanation. How they are reported (CUDA_SHIM_MANAGED_FAULT=quiet/abort) is
    read once per process: use cuda_shim_subprocess(..., env={"CUDA_SHIM_MANAGED_FAULT": ...}).
    """

    def __init__(self, monkeypatch):
        self._monkeypatch = monkeypatch
        self._violations_at_start = ext.managed_violations()
        self._rules = False

    def set(self, spec):
        ext.set_faults(spec)
        self._rules = True

    def logical_endpoint_illegal_state(self):
        self._monkeypatch.setenv("CUDA_SHIM_LE_FAULT", "illegal_state")

    def imex_daemon_not_ready(self):
        self._monkeypatch.setenv("CUDA_SHIM_IMEX_DAEMON", "not_ready")

    def managed_violations(self):
        return ext.managed_violations() - self._violations_at_start

    def last_managed_violation(self):
        return ext.last_managed_violation()


@pytest.fixture
def cuda_shim_faults(monkeypatch):
    """Fault injection for one test (see Faults)."""
    faults = Faults(monkeypatch)
    yield faults
    if faults._rules:
        ext.set_faults(None)


@pytest.fixture
def cuda_shim_subprocess():
    """run(args, devices=None, driver_version=None, explain=None, config=None, env=None, profile=None,
    **kwargs):
    runs a command on the emulator in a child process with other settings than the session's
    (e.g. another device count or device profile, fixed once the driver initializes in a process).
    args may be a list or, as a string, Python code run with this interpreter. Output is captured
    as text; returns subprocess.CompletedProcess (check it yourself, or pass check=True)."""

    def run(args, devices=None, driver_version=None, explain=None, config=None, env=None, profile=None,
            **kwargs):
        if isinstance(args, str):
            args = [sys.executable, "-c", args]
        child_env = dict(os.environ)  # has LD_LIBRARY_PATH and the session's settings already
        child_env.update(cuda_shim._settings_env(devices, explain, driver_version, config, None, None, env,
                                                    profile))
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 300)
        return subprocess.run(args, env=child_env, **kwargs)

    return run


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("cuda_shim_devices")
    if marker is not None:
        need = int(marker.args[0])
        have = ext.device_count()
        if have < need:
            pytest.skip(f"needs {need} emulated devices, the session has {have} (--cuda-shim-devices {need})")
