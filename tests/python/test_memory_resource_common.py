"""What every cuda.core pool-backed memory resource does the same way, run over each kind.

Kinds: the driver's current pool and an owned pool of each of PinnedMemoryResource,
DeviceMemoryResource and ManagedMemoryResource, plus the IPC-enabled pinned and device pools.
"""
import pytest
from cuda.core import (
    Buffer,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)
from cuda.core._utils.cuda_utils import CUDAError

import helpers
from helpers import KIB, MIB

KINDS = {
    "pinned-current": lambda: PinnedMemoryResource(),
    "pinned-owned": lambda: PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=64 * MIB)),
    "pinned-ipc": lambda: PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True)),
    "device-current": lambda: DeviceMemoryResource(0),
    "device-owned": lambda: DeviceMemoryResource(0, DeviceMemoryResourceOptions(max_size=64 * MIB)),
    "device-ipc": lambda: DeviceMemoryResource(0, DeviceMemoryResourceOptions(ipc_enabled=True)),
    "managed-current": lambda: ManagedMemoryResource(),
    "managed-owned": lambda: ManagedMemoryResource(ManagedMemoryResourceOptions()),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


@pytest.fixture
def mr(kind, device):
    resource = KINDS[kind]()
    yield resource
    resource.close()


def family(kind):
    return kind.split("-")[0]


def test_allocate_returns_buffer_of_the_size_and_resource(kind, mr, stream):
    buf = mr.allocate(4096, stream=stream)
    assert isinstance(buf, Buffer)
    assert buf.size == 4096
    assert int(buf.handle) != 0
    assert buf.memory_resource is mr
    assert buf.is_device_accessible == mr.is_device_accessible
    assert buf.is_host_accessible == mr.is_host_accessible
    assert buf.is_managed == (family(kind) == "managed")
    buf.close(stream)
    assert buf.is_closed


def test_accessibility_per_kind(kind, mr):
    assert mr.is_device_accessible is True
    assert mr.is_host_accessible is (family(kind) != "device")
    assert mr.is_managed is (family(kind) == "managed")
    assert mr.is_mapped is False


def test_handle_owned_only_for_pools_it_created(kind, mr):
    assert mr.is_handle_owned is not kind.endswith("-current")


def test_uuid_only_with_ipc(kind, mr):
    if kind.endswith("-ipc"):
        assert mr.is_ipc_enabled is True
        assert mr.uuid is not None
    else:
        assert mr.is_ipc_enabled is False
        assert mr.uuid is None


@pytest.mark.parametrize("size", [1, 255, 4096, 2 * MIB + 3])
def test_round_trip_through_device_memory_keeps_every_byte(mr, stream, size):
    src = mr.allocate(size, stream=stream)
    data = helpers.pattern(size, seed=size)
    helpers.write_bytes(src, data, stream)
    dev = DeviceMemoryResource(0).allocate(size, stream=stream)
    dev.copy_from(src, stream=stream)
    back = mr.allocate(size, stream=stream)
    dev.copy_to(back, stream=stream)
    assert helpers.read_bytes(back, stream) == data
    for b in (src, dev, back):
        b.close(stream)


def test_host_accessible_buffers_are_the_host_bytes(mr, stream):
    if not mr.is_host_accessible:
        pytest.skip("device memory is not host-accessible")
    buf = mr.allocate(64 * KIB, stream=stream)
    stream.sync()
    data = helpers.pattern(buf.size, seed=3)
    import ctypes

    ctypes.memmove(int(buf.handle), data, len(data))
    assert helpers.read_bytes(buf, stream) == data
    buf.close(stream)


def test_copy_between_buffers_of_different_sizes_is_refused(mr, stream):
    a = mr.allocate(4096, stream=stream)
    b = mr.allocate(8192, stream=stream)
    with pytest.raises(ValueError):
        a.copy_from(b, stream=stream)
    a.close(stream)
    b.close(stream)


def test_fill_with_byte_value(kind, mr, stream):
    buf = mr.allocate(4096, stream=stream)
    if family(kind) == "pinned":
        # Host-located pool memory is host memory: cuMemsetD8Async refuses it (as measured on
        # an H200 for cuMemsetD8 on a host pool), so Buffer.fill raises.
        with pytest.raises(CUDAError, match="CUDA_ERROR_INVALID_VALUE"):
            buf.fill(0x5A, stream=stream)
    else:
        buf.fill(0x5A, stream=stream)
        assert helpers.read_bytes(buf, stream) == b"\x5a" * 4096
        buf.fill(b"\x01\x02\x03\x04", stream=stream)
        assert helpers.read_bytes(buf, stream)[:8] == b"\x01\x02\x03\x04" * 2
    buf.close(stream)


def test_freed_memory_is_reused_in_stream_order(mr, stream):
    a = mr.allocate(MIB, stream=stream)
    pa = int(a.handle)
    a.close(stream)
    b = mr.allocate(MIB, stream=stream)
    # Same stream, the free ordered before: the pool reuses the block (both drivers do).
    assert int(b.handle) == pa
    b.close(stream)


def test_usage_attributes_follow_allocations(kind, mr, stream):
    if kind.endswith("-current"):
        pytest.skip("the current pool is shared with everything else in the process")
    attrs = mr.attributes
    assert attrs.used_mem_current == 0
    bufs = [mr.allocate(MIB, stream=stream) for _ in range(3)]
    stream.sync()
    assert attrs.used_mem_current >= 3 * MIB
    assert attrs.reserved_mem_current >= attrs.used_mem_current
    assert attrs.used_mem_high >= attrs.used_mem_current
    for b in bufs:
        b.close(stream)
    stream.sync()
    assert attrs.used_mem_current == 0
    assert attrs.used_mem_high >= 3 * MIB


def test_close_rejects_new_allocations_but_keeps_old_buffers(mr, stream):
    buf = mr.allocate(4096, stream=stream)
    helpers.write_bytes(buf, b"kept", stream)
    mr.close()
    assert mr.is_closed
    with pytest.raises(Exception):
        mr.allocate(4096, stream=stream)
    # Outstanding buffers stay valid, and deallocation still works after close.
    assert helpers.read_bytes(buf, stream, 4) == b"kept"
    buf.close(stream)
    mr.close()  # closing twice is harmless


def test_zero_size_allocation(mr, stream):
    buf = mr.allocate(0, stream=stream)
    assert buf.size == 0
    buf.close(stream)
