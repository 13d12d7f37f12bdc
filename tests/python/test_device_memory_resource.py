"""cuda.core.DeviceMemoryResource as users drive it: options, properties, errors."""
import uuid

import pytest
from cuda.core import Device, DeviceMemoryResource, DeviceMemoryResourceOptions
from cuda.core._utils.cuda_utils import CUDAError

import helpers
from helpers import MIB


def test_default_uses_the_devices_current_pool(device, stream):
    mr = DeviceMemoryResource(device)
    assert mr.is_handle_owned is False
    assert mr.is_ipc_enabled is False
    assert mr.is_mapped is False
    assert mr.device_id == device.device_id
    assert mr.is_device_accessible is True
    assert mr.is_host_accessible is False
    assert mr.uuid is None
    buf = mr.allocate(4096, stream=stream)
    assert buf.device_id == device.device_id
    buf.close(stream)


def test_device_memory_resource_is_the_devices_default(device):
    assert isinstance(device.memory_resource, DeviceMemoryResource)
    assert int(device.memory_resource.handle) == int(DeviceMemoryResource(0).handle)


def test_device_allocate_uses_its_memory_resource(device, stream):
    buf = device.allocate(4096, stream=stream)
    assert buf.memory_resource is device.memory_resource
    assert buf.is_device_accessible and not buf.is_host_accessible
    buf.close(stream)


def test_owned_pool_with_options(device, stream):
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=64 * MIB))
    assert mr.is_handle_owned is True
    assert mr.is_ipc_enabled is False
    assert mr.uuid is None
    assert int(mr.handle) != int(DeviceMemoryResource(device).handle)
    mr.close()


def test_ipc_enabled_pool(device):
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(ipc_enabled=True))
    assert mr.is_handle_owned is True
    assert mr.is_ipc_enabled is True
    assert isinstance(mr.uuid, uuid.UUID)
    handle = mr.allocation_handle
    assert handle.handle >= 0
    assert handle.uuid == mr.uuid
    mr.close()


def test_allocation_past_max_size_is_out_of_memory(device, stream):
    # maxSize is rounded up to the driver's 32 MiB reservation chunk (measured).
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=32 * MIB))
    bufs = [mr.allocate(8 * MIB, stream=stream) for _ in range(4)]
    with pytest.raises(CUDAError, match="CUDA_ERROR_OUT_OF_MEMORY"):
        mr.allocate(8 * MIB, stream=stream)
    for b in bufs:
        b.close(stream)
    mr.close()


def test_invalid_device_ordinal_is_refused(device):
    with pytest.raises(ValueError):
        DeviceMemoryResource(Device.get_all_devices().__len__())


def test_fill_and_copy_round_trip(device, stream):
    mr = DeviceMemoryResource(device)
    a = mr.allocate(3 * MIB, stream=stream)
    b = mr.allocate(3 * MIB, stream=stream)
    a.fill(0xA5, stream=stream)
    b.copy_from(a, stream=stream)
    assert helpers.read_bytes(b, stream) == b"\xa5" * (3 * MIB)
    b.fill(b"\x00\x01", stream=stream)
    assert helpers.read_bytes(b, stream)[:6] == b"\x00\x01" * 3
    a.close(stream)
    b.close(stream)


def test_fill_pattern_must_divide_the_size(device, stream):
    buf = DeviceMemoryResource(device).allocate(6, stream=stream)
    with pytest.raises(ValueError):
        buf.fill(b"\x00\x01\x02\x03", stream=stream)
    buf.close(stream)


def test_peer_accessible_by_self_is_a_no_op(device):
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=32 * MIB))
    mr.peer_accessible_by = []
    assert tuple(mr.peer_accessible_by) == ()
    mr.close()


def test_release_threshold_is_a_pool_attribute(device, stream):
    mr = DeviceMemoryResource(device, DeviceMemoryResourceOptions(max_size=64 * MIB))
    assert mr.attributes.release_threshold == 0
    buf = mr.allocate(4 * MIB, stream=stream)
    buf.close(stream)
    stream.sync()
    # Threshold 0: memory goes back to the system at the next synchronization.
    device.sync()
    assert mr.attributes.reserved_mem_current == 0
    mr.close()


def test_device_sync_waits_for_every_stream(device, stream):
    mr = DeviceMemoryResource(device)
    a = mr.allocate(8 * MIB, stream=stream)
    a.fill(0x3C, stream=stream)
    device.sync()
    b = mr.allocate(8 * MIB, stream=device.default_stream)
    b.copy_from(a, stream=device.default_stream)
    assert helpers.read_bytes(b, device.default_stream)[-4:] == b"\x3c" * 4
    a.close(stream)
    b.close(device.default_stream)
