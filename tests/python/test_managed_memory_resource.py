"""cuda.core.ManagedMemoryResource as users drive it: options, properties, host access."""
import ctypes

import pytest
from cuda.bindings import driver
from cuda.core import ManagedMemoryResource, ManagedMemoryResourceOptions

import helpers
from helpers import MIB


def is_managed(ptr):
    err, value = driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr)
    assert err == driver.CUresult.CUDA_SUCCESS
    return bool(value)


def test_default_uses_the_drivers_current_managed_pool(device, stream):
    mr = ManagedMemoryResource()
    assert mr.is_handle_owned is False
    assert mr.is_ipc_enabled is False
    assert mr.is_mapped is False
    assert mr.is_managed is True
    assert mr.is_device_accessible is True
    assert mr.is_host_accessible is True
    assert mr.device_id == -1
    assert mr.uuid is None
    assert mr.preferred_location is None
    buf = mr.allocate(MIB, stream=stream)
    stream.sync()
    assert buf.is_managed
    assert is_managed(int(buf.handle))
    buf.close(stream)


def test_options_own_a_pool(device):
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions())
    assert mr.is_handle_owned is True
    assert int(mr.handle) != int(ManagedMemoryResource().handle)
    mr.close()


@pytest.mark.parametrize(
    "options, expected",
    [
        (dict(preferred_location=0), ("device", 0)),
        (dict(preferred_location=-1), ("host", None)),
        (dict(preferred_location_type="host"), ("host", None)),
        (dict(preferred_location_type="device", preferred_location=0), ("device", 0)),
        (dict(preferred_location_type="host_numa"), ("host_numa", "device's")),
        (dict(preferred_location_type="host_numa", preferred_location=0), ("host_numa", 0)),
    ],
)
def test_preferred_location(device, stream, options, expected):
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions(**options))
    kind, where = mr.preferred_location
    assert kind.value == expected[0]
    if expected[1] == "device's":
        err, numa = driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0)
        assert where == numa
    else:
        assert where == expected[1]
    buf = mr.allocate(MIB, stream=stream)
    stream.sync()
    assert is_managed(int(buf.handle))
    buf.close(stream)
    mr.close()


def test_invalid_preferred_location_is_refused(device):
    with pytest.raises(ValueError):
        ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location_type="device"))
    with pytest.raises(ValueError):
        ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location_type="host", preferred_location=0))
    with pytest.raises(ValueError):
        ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location_type="nowhere"))


def test_host_and_device_see_the_same_bytes(device, stream):
    mr = ManagedMemoryResource()
    buf = mr.allocate(2 * MIB, stream=stream)
    buf.fill(0x11, stream=stream)
    stream.sync()
    # The host reads the device's memset through the same pointer...
    assert helpers.host_view(buf)[:4] == b"\x11" * 4
    # ...and device copies see the host's writes.
    data = helpers.pattern(2 * MIB, seed=5)
    ctypes.memmove(int(buf.handle), data, len(data))
    other = mr.allocate(2 * MIB, stream=stream)
    other.copy_from(buf, stream=stream)
    stream.sync()
    assert helpers.host_view(other) == data
    buf.close(stream)
    other.close(stream)


def test_managed_pools_are_not_shareable(device):
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions())
    assert mr.is_ipc_enabled is False
    assert not hasattr(mr, "allocation_handle")
    mr.close()
