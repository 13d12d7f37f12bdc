"""cuda.bindings.runtime as cuda.core uses it.

On NVIDIA's driver these calls go through the runtime linked into cuda.bindings; on
cuda-shim through the bridge `cuda-shim run` installs (tools/python). Either way they must
agree with the driver module.
"""
import os
import subprocess
import sys

import pytest
from cuda.bindings import driver as cu
from cuda.bindings import runtime as rt

import helpers

SUCCESS = rt.cudaError_t.cudaSuccess


def test_device_count_matches_the_driver(device):
    err, n = rt.cudaGetDeviceCount()
    assert err == SUCCESS
    assert n == cu.cuDeviceGetCount()[1]


def test_pci_bus_id_matches_the_driver(device):
    err, raw = rt.cudaDeviceGetPCIBusId(13, 0)
    assert err == SUCCESS
    err, want = cu.cuDeviceGetPCIBusId(13, cu.cuDeviceGet(0)[1])
    assert raw.split(b"\0")[0] == want.split(b"\0")[0]
    assert device.pci_bus_id == raw.split(b"\0")[0].decode()


def test_device_synchronize_and_current_device(device):
    assert rt.cudaDeviceSynchronize() == (SUCCESS,)
    assert rt.cudaGetDevice() == (SUCCESS, 0)
    device.sync()


def test_stream_priority_range_matches_the_context(device):
    err, least, greatest = rt.cudaDeviceGetStreamPriorityRange()
    assert err == SUCCESS
    assert (least, greatest) == tuple(cu.cuCtxGetStreamPriorityRange()[1:])


def test_invalid_device_is_sticky_until_read(device):
    assert rt.cudaSetDevice(99) == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaPeekAtLastError() == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaGetLastError() == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaGetLastError() == (SUCCESS,)


def test_attribute_matches_the_driver(device):
    err, numa = rt.cudaDeviceGetAttribute(rt.cudaDeviceAttr.cudaDevAttrHostNumaId, 0)
    assert err == SUCCESS
    assert numa == cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0)[1]


@pytest.mark.shim_only
def test_the_bridge_replaced_what_cuda_core_calls():
    bridged = getattr(rt, "_cuda_shim_bridged", ())
    for name in ("cudaDeviceSynchronize", "cudaGetDeviceCount", "cudaDeviceGetPCIBusId"):
        assert name in bridged


@pytest.mark.shim_only
def test_without_the_bridge_the_static_runtime_fails_and_says_why():
    code = (
        "from cuda.core import Device\n"
        "d = Device(0); d.set_current()\n"
        "try:\n    d.sync()\nexcept Exception as e:\n    print('ERR', e)\n"
    )
    env = dict(os.environ, CUDA_SHIM_PYTHON_BRIDGE="0", CUDA_SHIM_EXPLAIN="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "ERR cudaErrorInvalidValue" in out.stdout
    assert "cuGetExportTable: unknown export table id" in out.stderr
    assert "cuda.bindings.runtime" in out.stderr
