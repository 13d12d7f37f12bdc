"""cuda.core.PinnedMemoryResource as users drive it: options, properties, errors.

Expected values are the real driver's (REAL_DRIVER.md: cuda.core on an H200, driver 580).
"""
import ctypes
import uuid

import pytest
from cuda.core import (
    DeviceMemoryResource,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)
from cuda.core._utils.cuda_utils import CUDAError

import helpers
from helpers import MIB


def host_numa_id(device):
    from cuda.bindings import driver

    err, value = driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, device.device_id)
    assert err == driver.CUresult.CUDA_SUCCESS
    return value


def test_default_uses_the_drivers_current_pinned_pool(device, stream):
    mr = PinnedMemoryResource()
    assert mr.is_handle_owned is False
    assert mr.is_ipc_enabled is False
    assert mr.is_mapped is False
    assert mr.numa_id == -1
    assert mr.device_id == -1
    assert mr.is_device_accessible is True
    assert mr.is_host_accessible is True
    assert mr.uuid is None
    buf = mr.allocate(4096, stream=stream)
    assert buf.device_id == -1
    buf.close(stream)


def test_two_default_resources_share_one_pool(device):
    a, b = PinnedMemoryResource(), PinnedMemoryResource()
    assert int(a.handle) == int(b.handle)


def test_ipc_enabled_owns_a_pool_on_the_devices_host_numa_node(device, stream):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    assert mr.is_handle_owned is True
    assert mr.is_ipc_enabled is True
    assert mr.is_mapped is False
    assert mr.numa_id == host_numa_id(device)
    assert isinstance(mr.uuid, uuid.UUID)
    assert int(mr.handle) != int(PinnedMemoryResource().handle)
    buf = mr.allocate(4096, stream=stream)
    assert buf.is_host_accessible and buf.is_device_accessible
    buf.close(stream)
    mr.close()


def test_ipc_enabled_with_explicit_numa_id(device):
    numa = host_numa_id(device)
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True, numa_id=numa))
    assert mr.numa_id == numa
    assert mr.is_ipc_enabled is True
    mr.close()


def test_each_ipc_resource_has_its_own_uuid(device):
    a = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    b = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    assert a.uuid != b.uuid
    a.close()
    b.close()


def test_numa_id_without_ipc_owns_a_host_numa_pool(device):
    numa = host_numa_id(device)
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=numa))
    assert mr.is_handle_owned is True
    assert mr.is_ipc_enabled is False
    assert mr.numa_id == numa
    assert mr.uuid is None
    mr.close()


def test_numa_id_of_no_node_is_invalid_value(device):
    with pytest.raises(CUDAError, match="CUDA_ERROR_INVALID_VALUE"):
        PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True, numa_id=99))
    with pytest.raises(CUDAError, match="CUDA_ERROR_INVALID_VALUE"):
        PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=99))


def test_negative_numa_id_is_refused_before_the_driver(device):
    with pytest.raises((ValueError, OverflowError)):
        PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=-2))


def test_max_size_owns_an_os_placed_pool(device, stream):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=4 * MIB))
    assert mr.is_handle_owned is True
    assert mr.numa_id == -1
    assert mr.is_ipc_enabled is False
    buf = mr.allocate(2 * MIB, stream=stream)
    buf.close(stream)
    mr.close()


def test_allocation_past_max_size_is_out_of_memory(device, stream):
    # The driver rounds maxSize up to its 32 MiB reservation chunk (measured), so a 4 MiB
    # pool holds eight 4 MiB buffers and refuses the ninth.
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=4 * MIB))
    bufs = [mr.allocate(4 * MIB, stream=stream) for _ in range(8)]
    with pytest.raises(CUDAError, match="CUDA_ERROR_OUT_OF_MEMORY"):
        mr.allocate(4 * MIB, stream=stream)
    bufs.pop().close(stream)
    stream.sync()
    # Freed in stream order: the pool has room again.
    bufs.append(mr.allocate(4 * MIB, stream=stream))
    for b in bufs:
        b.close(stream)
    mr.close()


def test_host_writes_are_seen_by_device_copies(device, stream):
    mr = PinnedMemoryResource()
    src = mr.allocate(MIB, stream=stream)
    stream.sync()
    data = helpers.pattern(MIB, seed=11)
    ctypes.memmove(int(src.handle), data, MIB)
    dev = DeviceMemoryResource(device).allocate(MIB, stream=stream)
    dev.copy_from(src, stream=stream)
    dst = mr.allocate(MIB, stream=stream)
    dst.copy_from(dev, stream=stream)
    stream.sync()
    assert helpers.host_view(dst) == data
    for b in (src, dev, dst):
        b.close(stream)


def test_allocation_handle_needs_ipc(device):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=4 * MIB))
    with pytest.raises(RuntimeError):
        mr.allocation_handle
    mr.close()


def test_allocation_handle_is_a_posix_fd_of_the_pool(device):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    handle = mr.allocation_handle
    assert handle.handle >= 0
    assert handle.uuid == mr.uuid
    # Cached and owned by the resource.
    assert mr.allocation_handle is handle
    mr.close()


def test_from_allocation_handle_in_the_same_process_maps_the_pool(device, stream):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    mapped = PinnedMemoryResource.from_allocation_handle(mr.allocation_handle)
    assert mapped.is_mapped is True
    assert mapped.is_handle_owned is True
    assert mapped.is_ipc_enabled is True
    assert mapped.uuid == mr.uuid
    # A mapped pool cannot allocate: only its owner does.
    with pytest.raises(TypeError):
        mapped.allocate(4096, stream=stream)
    mapped.close()
    mr.close()


def test_register_and_from_registry(device):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
    mapped = PinnedMemoryResource.from_allocation_handle(mr.allocation_handle)
    # Only mapped resources are registered: under the uuid they share with their owner.
    assert mapped.register(mr.uuid) is mapped
    assert PinnedMemoryResource.from_registry(mr.uuid) is mapped
    with pytest.raises(RuntimeError):
        PinnedMemoryResource.from_registry(uuid.uuid4())
    mapped.close()
    mr.close()


def test_buffer_ipc_descriptor_needs_an_ipc_pool(device, stream):
    buf = PinnedMemoryResource().allocate(4096, stream=stream)
    with pytest.raises(RuntimeError):
        buf.ipc_descriptor
    buf.close(stream)
