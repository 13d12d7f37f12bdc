"""The cuda_shim pytest plugin's own fixtures, run from the installed wheel by tests/wheel/run.sh
with 2 emulated devices (--cuda-shim-devices 2, or cuda_shim_devices = 2 in the ini file), and
without LD_LIBRARY_PATH: the plugin alone puts the emulator in place."""
import os

import pytest

import cuda_shim
from cuda.bindings import driver as cu

OK = cu.CUresult.CUDA_SUCCESS
assert cu.cuInit(0)[0] == OK  # every call below needs an initialized driver


def test_libraries_come_from_the_wheel(cuda_shim_libdir):
    assert cuda_shim.is_active()
    assert cuda_shim_libdir == os.path.realpath(os.path.join(os.path.dirname(cuda_shim.__file__), "lib"))
    mapped = {line.split()[-1] for line in open("/proc/self/maps") if "libcuda.so" in line}
    assert mapped == {os.path.join(cuda_shim_libdir, "libcuda.so.1")}
    # Children get the emulator through the environment.
    assert os.environ["LD_LIBRARY_PATH"].split(":")[0] == cuda_shim_libdir


def test_device_count(cuda_shim_devices):
    assert cuda_shim_devices == 2
    assert cu.cuDeviceGetCount() == (OK, 2)


def test_driver_version(cuda_shim_driver_version):
    assert cuda_shim_driver_version == 13030
    assert cu.cuDriverGetVersion() == (OK, 13030)


def test_explanation(cuda_shim_explanation):
    err, _ = cu.cuDeviceGet(7)
    assert err == cu.CUresult.CUDA_ERROR_INVALID_DEVICE
    why = cuda_shim_explanation()
    assert why.code == int(err)
    assert "7" in why.message, why.message


def _limits():
    p = cu.CUlogicalEndpointProp()
    p.type = cu.CUlogicalEndpointType.CU_LOGICAL_ENDPOINT_TYPE_UNICAST
    p.unicast.device = 0
    p.size = 0
    return cu.cuLogicalEndpointGetLimits(p)[0]


def test_fault_injection(cuda_shim_faults, cuda_shim_explanation):
    assert _limits() == OK
    cuda_shim_faults.logical_endpoint_illegal_state()
    assert _limits() == cu.CUresult.CUDA_ERROR_ILLEGAL_STATE
    assert "CUDA_SHIM_LE_FAULT" in cuda_shim_explanation().message
    assert cuda_shim_faults.managed_violations() == 0


def test_fault_is_undone_after_the_test():
    assert "CUDA_SHIM_LE_FAULT" not in os.environ
    assert _limits() == OK


def test_subprocess_with_other_settings(cuda_shim_subprocess):
    code = ("from cuda.bindings import driver as cu; cu.cuInit(0); "
            "print(cu.cuDeviceGetCount()[1], cu.cuDriverGetVersion()[1])")
    run = cuda_shim_subprocess(code, devices=4, driver_version="13.0")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["4", "13000"]


@pytest.mark.cuda_shim_devices(2)
def test_marker_with_enough_devices(cuda_shim_devices):
    assert cuda_shim_devices >= 2


@pytest.mark.cuda_shim_devices(3)
def test_marker_with_too_few_devices():
    pytest.fail("a test that needs 3 devices ran in a session of 2")


def test_fault_rules(cuda_shim_faults, cuda_shim_explanation):
    cuda_shim_faults.set("cuDeviceGetCount:CUDA_ERROR_NOT_PERMITTED@2")
    assert cu.cuDeviceGetCount() == (OK, 2)
    assert cu.cuDeviceGetCount()[0] == cu.CUresult.CUDA_ERROR_NOT_PERMITTED
    assert "injected by" in cuda_shim_explanation().message
    assert cu.cuDeviceGetCount() == (OK, 2)
    with pytest.raises(ValueError, match="cuNoSuchEntry"):
        cuda_shim_faults.set("cuNoSuchEntry:CUDA_ERROR_UNKNOWN")


def test_fault_rules_are_removed_after_the_test():
    assert all(cu.cuDeviceGetCount() == (OK, 2) for _ in range(3))


def test_activate_with_a_profile(cuda_shim_subprocess):
    # A fresh process: the profile is read once, when the driver initializes. tcc-no-pools
    # refuses the pool entries as a device without memory pools does.
    code = ("import cuda_shim; cuda_shim.activate(profile='tcc-no-pools'); import os; "
            "from cuda.bindings import driver as cu; cu.cuInit(0); "
            "a = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED; "
            "print(os.environ['CUDA_SHIM_PROFILE'], cu.cuDeviceGetAttribute(a, 0)[1], "
            "int(cu.cuDeviceGetDefaultMemPool(0)[0]))")
    run = cuda_shim_subprocess(code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["tcc-no-pools", "0", str(int(cu.CUresult.CUDA_ERROR_NOT_SUPPORTED))]


def test_subprocess_with_a_profile(cuda_shim_subprocess, cuda_shim_profile):
    assert cuda_shim_profile == "h200"  # the session chose none
    code = ("from cuda.bindings import driver as cu; cu.cuInit(0); "
            "a = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED; "
            "print(cu.cuDeviceGetAttribute(a, 0)[1], cu.cuDeviceGetName(64, 0)[1].split(b'\\0')[0].decode())")
    run = cuda_shim_subprocess(code, profile="rtx")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0 NVIDIA GeForce RTX 4090"


def test_profile_and_trace_settings():
    env = cuda_shim._settings_env(None, None, None, None, "t.json", None, None, "rtx")
    assert env == {"CUDA_SHIM_PROFILE": "rtx", "CUDA_SHIM_TRACE": os.path.abspath("t.json")}
    assert cuda_shim._settings_env(None, None, None, None, True, None, None)["CUDA_SHIM_TRACE"] == "1"
    assert cuda_shim._settings_env(None, None, None, None, "-", None, None)["CUDA_SHIM_TRACE"] == "-"
    with pytest.raises(ValueError, match="profile: cannot read"):
        cuda_shim._settings_env(None, None, None, None, None, None, None, "./no-such.profile")
