"""Scenarios of cuda.core's own cuda_core/tests/test_memory.py (NVIDIA/cuda-python), rewritten:
the pool-backed resources (device, pinned, managed) with options and attributes, IPC refusals of
non-IPC pools, VirtualMemoryResource, and StridedMemoryView over numpy arrays. Buffers over raw
driver allocations, Buffer.from_handle and DLPack: test_upstream_memory.py. Expectations are
upstream's, that is the real driver's, with cuda.core 1.2.x API spellings (allocation_handle /
ipc_descriptor properties, keyword-only streams).
"""
# test_vmm_allocator_rdma_unsupported_exception keeps upstream's skip on devices that do support
# GPU Direct RDMA (the emulated H200 does).
import re
import sys

import numpy as np
import pytest
from cuda.core import (
    Buffer,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    GraphMemoryResource,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
    VirtualMemoryResource,
    VirtualMemoryResourceOptions,
)
from cuda.core._memory._ipc import IPCBufferDescriptor
from cuda.core.utils import StridedMemoryView

import helpers
from helpers import MIB

POOL_SIZE = 2 * MIB


def _make_pool(cls, device, **opts):
    if cls is DeviceMemoryResource:
        return DeviceMemoryResource(device, DeviceMemoryResourceOptions(**opts))
    if cls is PinnedMemoryResource:
        return PinnedMemoryResource(PinnedMemoryResourceOptions(**opts))
    opts.pop("max_size", None)
    opts.pop("ipc_enabled", None)
    return ManagedMemoryResource(ManagedMemoryResourceOptions(**opts))


POOL_CLASSES = [DeviceMemoryResource, PinnedMemoryResource, ManagedMemoryResource]
POOL_IDS = ["DeviceMR", "PinnedMR", "ManagedMR"]


# --- pool-backed memory resources --------------------------------------------------


@pytest.mark.parametrize("use_device_object", [True, False])
def test_device_memory_resource_initialization(use_device_object, device, stream):
    """Ports test_memory.py::test_device_memory_resource_initialization."""
    assert device.properties.memory_pools_supported
    mr = DeviceMemoryResource(device if use_device_object else device.device_id)
    assert mr.device_id == device.device_id
    assert mr.is_device_accessible
    assert not mr.is_host_accessible
    assert not mr.is_ipc_enabled
    buf = mr.allocate(1024, stream=stream)
    assert buf.size == 1024
    assert buf.device_id == device.device_id
    buf.close()


def test_pinned_memory_resource_initialization(device, stream):
    """Ports test_memory.py::test_pinned_memory_resource_initialization."""
    assert device.properties.host_memory_pools_supported
    mr = PinnedMemoryResource()
    assert mr.is_device_accessible
    assert mr.is_host_accessible
    buf = mr.allocate(1024, stream=stream)
    assert buf.size == 1024
    assert buf.device_id == -1  # host memory belongs to no GPU
    assert buf.is_host_accessible
    assert buf.memory_resource is mr
    assert buf.is_device_accessible
    buf.close()


def test_managed_memory_resource_initialization(device, stream):
    """Ports test_memory.py::test_managed_memory_resource_initialization."""
    assert device.properties.concurrent_managed_access
    mr = ManagedMemoryResource()
    assert mr.is_device_accessible
    assert mr.is_host_accessible
    buf = mr.allocate(1024, stream=stream)
    assert buf.size == 1024
    assert buf.is_host_accessible
    assert buf.memory_resource is mr
    assert buf.is_device_accessible
    buf.close()


def _exercise_pool(mr, device):
    """Upstream's *_with_options body: allocations, distinct handles, stream order, a copy."""
    s = device.create_stream()
    b1 = mr.allocate(1024, stream=s)
    assert int(b1.handle) != 0
    assert b1.size == 1024
    assert b1.memory_resource is mr
    b1.close()

    b1 = mr.allocate(1024, stream=s)
    b2 = mr.allocate(2048, stream=s)
    assert int(b1.handle) != int(b2.handle)
    assert (b1.size, b2.size) == (1024, 2048)
    b1.close()
    b2.close()

    s2 = device.create_stream()
    b = mr.allocate(1024, stream=s2)
    assert int(b.handle) != 0
    b.close(s2)

    src = mr.allocate(64, stream=s)
    dst = mr.allocate(64, stream=s)
    helpers.write_bytes(src, helpers.pattern(64, 5), s)
    src.copy_to(dst, stream=device.create_stream())
    device.sync()
    assert helpers.read_bytes(dst, s) == helpers.pattern(64, 5)
    dst.close()
    src.close()
    device.sync()


def test_device_memory_resource_with_options(device):
    """Ports test_memory.py::test_device_memory_resource_with_options."""
    mr = DeviceMemoryResource(device, options=DeviceMemoryResourceOptions(max_size=POOL_SIZE))
    assert mr.device_id == device.device_id
    assert mr.is_device_accessible
    assert not mr.is_host_accessible
    assert not mr.is_ipc_enabled
    _exercise_pool(mr, device)
    mr.close()


def test_pinned_memory_resource_with_options(device):
    """Ports test_memory.py::test_pinned_memory_resource_with_options."""
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=POOL_SIZE))
    assert mr.device_id == -1
    assert mr.is_device_accessible
    assert mr.is_host_accessible
    assert not mr.is_ipc_enabled
    _exercise_pool(mr, device)
    mr.close()


def test_managed_memory_resource_with_options(device):
    """Ports test_memory.py::test_managed_memory_resource_with_options."""
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions())
    assert mr.is_device_accessible
    assert mr.is_host_accessible
    assert not mr.is_ipc_enabled
    _exercise_pool(mr, device)
    mr.close()


# --- IPC on pools that are not IPC-enabled, and the pinned IPC pool --------------------


def _assert_ipc_refused(mr, stream):
    buf = mr.allocate(64, stream=stream)
    with pytest.raises(RuntimeError, match="Memory resource is not IPC-enabled"):
        mr.allocation_handle
    with pytest.raises(RuntimeError, match="Memory resource is not IPC-enabled"):
        buf.ipc_descriptor
    with pytest.raises(RuntimeError, match="Memory resource is not IPC-enabled"):
        Buffer.from_ipc_descriptor(mr, IPCBufferDescriptor._init(b"", 0), stream=stream)
    buf.close()


def test_mempool_ipc_errors(device, stream):
    """Ports test_memory.py::test_mempool_ipc_errors."""
    mr = DeviceMemoryResource(device, options=DeviceMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=False))
    _assert_ipc_refused(mr, stream)
    mr.close()


def test_pinned_mempool_ipc_basic(device, stream):
    """Ports test_memory.py::test_pinned_mempool_ipc_basic."""
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=True))
    assert mr.is_ipc_enabled
    assert mr.is_device_accessible
    assert mr.is_host_accessible
    # An IPC-enabled host pool sits on a NUMA node: the current device's host NUMA node (the
    # older upstream spelled this `device_id == 0`; 1.2.x reports numa_id, device_id is -1).
    assert mr.numa_id == device.properties.host_numa_id
    assert mr.device_id == -1
    assert mr.allocation_handle is not None
    buf = mr.allocate(1024, stream=stream)
    assert buf.size == 1024
    assert buf.is_device_accessible
    assert buf.is_host_accessible
    desc = buf.ipc_descriptor
    assert desc is not None
    assert desc.size == 1024
    buf.close()
    mr.close()


def test_pinned_mempool_ipc_errors(device, stream):
    """Ports test_memory.py::test_pinned_mempool_ipc_errors."""
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=False))
    assert not mr.is_ipc_enabled
    assert mr.device_id == -1
    assert mr.numa_id == -1  # not IPC: OS-managed placement
    _assert_ipc_refused(mr, stream)
    mr.close()


# --- pool attributes ----------------------------------------------------------------

ATTRIBUTES = [
    ("reuse_follow_event_dependencies", bool),
    ("reuse_allow_opportunistic", bool),
    ("reuse_allow_internal_dependencies", bool),
    ("release_threshold", int),
    ("reserved_mem_current", int),
    ("reserved_mem_high", int),
    ("used_mem_current", int),
    ("used_mem_high", int),
]

ATTRIBUTE_POOLS = [
    pytest.param(cls, ipc, id=f"{name}-{'ipc' if ipc else 'noipc'}")
    for cls, name in zip(POOL_CLASSES, POOL_IDS)
    for ipc in (True, False)
    if not (cls is ManagedMemoryResource and ipc)  # managed pools cannot be IPC-enabled
]


@pytest.mark.parametrize("name,expected_type", ATTRIBUTES, ids=[a[0] for a in ATTRIBUTES])
@pytest.mark.parametrize("cls,ipc_enabled", ATTRIBUTE_POOLS)
def test_mempool_attributes(cls, ipc_enabled, name, expected_type, device, stream):
    """Ports test_memory.py::test_mempool_attributes."""
    mr = _make_pool(cls, device, max_size=POOL_SIZE, ipc_enabled=ipc_enabled)
    assert mr.is_ipc_enabled == ipc_enabled
    value = getattr(mr.attributes, name)
    assert isinstance(value, expected_type)
    if expected_type is int:
        assert value >= 0
    if name in ("reserved_mem_current", "used_mem_current"):
        buf = mr.allocate(1024, stream=stream)
        try:
            assert getattr(mr.attributes, name) >= value
        finally:
            buf.close()
    if name.endswith("_high"):
        assert value >= getattr(mr.attributes, name.replace("_high", "_current"))
    mr.close()


@pytest.mark.parametrize("cls", POOL_CLASSES, ids=POOL_IDS)
def test_mempool_attributes_repr(cls, device, stream):
    """Ports test_memory.py::test_mempool_attributes_repr."""
    mr = _make_pool(cls, device, max_size=2048)
    b1 = mr.allocate(64, stream=stream)
    b2 = mr.allocate(64, stream=stream)
    b1.close()
    assert re.match(
        r".*Attributes\(release_threshold=\d+, reserved_mem_current=\d+, reserved_mem_high=\d+, "
        r"reuse_allow_internal_dependencies=(True|False), reuse_allow_opportunistic=(True|False), "
        r"reuse_follow_event_dependencies=(True|False), used_mem_current=\d+, used_mem_high=\d+\)",
        str(mr.attributes),
    )
    b2.close()
    mr.close()


@pytest.mark.parametrize("cls", POOL_CLASSES, ids=POOL_IDS)
def test_mempool_attributes_ownership(cls, device, stream):
    """Ports test_memory.py::test_mempool_attributes_ownership.

    Upstream (cuda.core 0.x) expected the bundle to expire with its resource. In cuda.core 1.2.x
    the bundle holds its own reference to the pool, so it keeps reporting that pool, and only
    that pool, after the resource is closed and dropped and another pool is made.
    """
    mr = _make_pool(cls, device, max_size=POOL_SIZE)
    attributes = mr.attributes
    mr.close()
    del mr
    assert attributes.used_mem_current == 0
    high = attributes.used_mem_high

    other = _make_pool(cls, device, max_size=POOL_SIZE)
    buf = other.allocate(MIB, stream=stream)
    stream.sync()
    assert other.attributes.used_mem_current >= MIB
    assert attributes.used_mem_current == 0
    assert attributes.used_mem_high == high
    buf.close()
    other.close()


# --- VirtualMemoryResource ------------------------------------------------------------


@pytest.fixture
def vmm_device(device):
    if not device.properties.virtual_memory_management_supported:
        pytest.skip("virtual memory management is not supported on this device")
    return device


@pytest.mark.parametrize("use_device_object", [True, False])
def test_vmm_allocator_basic_allocation(use_device_object, vmm_device, stream):
    """Ports test_memory.py::test_vmm_allocator_basic_allocation (posix_fd handles)."""
    device = vmm_device
    options = VirtualMemoryResourceOptions(handle_type="posix_fd")
    mr = VirtualMemoryResource(device if use_device_object else device.device_id, config=options)
    buf = mr.allocate(4096, stream=stream)
    assert buf.size >= 4096  # rounded up to the granularity
    assert buf.device_id == device.device_id
    assert buf.memory_resource is mr
    buf.close()

    bufs = [mr.allocate(1024 * (i + 1), stream=stream) for i in range(5)]
    for i, b in enumerate(bufs):
        assert b.size >= 1024 * (i + 1)
    for b in bufs:
        b.close()


def test_vmm_allocator_policy_configuration(vmm_device, stream):
    """Ports test_memory.py::test_vmm_allocator_policy_configuration."""
    device = vmm_device
    if not device.properties.gpu_direct_rdma_supported:
        pytest.skip("needs a device that supports GPU Direct RDMA")
    config = VirtualMemoryResourceOptions(
        allocation_type="pinned",
        location_type="device",
        granularity="minimum",
        gpu_direct_rdma=True,
        handle_type="posix_fd",
        peers=(),
        self_access="rw",
        peer_access="rw",
    )
    mr = VirtualMemoryResource(device, config=config)
    assert mr.config == config
    assert mr.config.gpu_direct_rdma is True
    assert mr.config.granularity == "minimum"

    buf = mr.allocate(8192, stream=stream)
    assert buf.size >= 8192
    assert buf.device_id == device.device_id

    read_only = VirtualMemoryResourceOptions(
        allocation_type="pinned",
        location_type="device",
        granularity="recommended",
        gpu_direct_rdma=False,
        handle_type="posix_fd",
        peers=(),
        self_access="r",
        peer_access="r",
    )
    grown = mr.modify_allocation(buf, 16384, config=read_only)
    assert grown.size >= 16384
    assert mr.config == read_only
    assert mr.config.self_access == "r"
    grown.close()


def test_vmm_allocator_grow_allocation(vmm_device, stream):
    """Ports test_memory.py::test_vmm_allocator_grow_allocation (posix_fd handles)."""
    mr = VirtualMemoryResource(vmm_device, config=VirtualMemoryResourceOptions(handle_type="posix_fd"))
    buf = mr.allocate(2 * MIB, stream=stream)
    original = buf.size
    grown = mr.modify_allocation(buf, 4 * MIB)
    assert grown.size >= 4 * MIB
    assert grown.size > original
    assert grown.handle is not None  # the base may move (slow path); a pointer it has
    # Same or smaller sizes leave the allocation as it is.
    assert mr.modify_allocation(grown, 4 * MIB).size == grown.size
    assert mr.modify_allocation(grown, 2 * MIB).size == grown.size
    grown.close()


def test_vmm_allocator_rdma_unsupported_exception(vmm_device):
    """Ports test_memory.py::test_vmm_allocator_rdma_unsupported_exception."""
    if vmm_device.properties.gpu_direct_rdma_supported:
        pytest.skip("needs a device without GPU Direct RDMA")
    with pytest.raises(RuntimeError, match="GPU Direct RDMA is not supported on this device"):
        VirtualMemoryResource(vmm_device, config=VirtualMemoryResourceOptions(gpu_direct_rdma=True))


# --- StridedMemoryView over host arrays, GraphMemoryResource ----------------------------


def test_strided_memory_view_leak():
    """Ports test_memory.py::test_strided_memory_view_leak."""
    arr = np.zeros(MIB, dtype=np.uint8)
    before = sys.getrefcount(arr)
    for _ in range(10):
        StridedMemoryView.from_any_interface(arr, stream_ptr=-1)
    assert sys.getrefcount(arr) == before


def test_strided_memory_view_refcnt():
    """Ports test_memory.py::test_strided_memory_view_refcnt."""
    a = np.zeros((64, 4), dtype=np.uint8, order="F")  # Fortran order: strides are used
    view = StridedMemoryView.from_any_interface(a, stream_ptr=-1)
    assert view.shape[0] == 64
    assert sys.getrefcount(view.shape) >= 2
    assert view.strides == (1, 64)
    assert sys.getrefcount(view.strides) >= 2


def test_graph_memory_resource_object(device):
    """Ports test_memory.py::test_graph_memory_resource_object."""
    g1 = GraphMemoryResource(device)
    g2 = GraphMemoryResource(device)
    g3 = GraphMemoryResource(device.device_id)
    assert g1 is g2 is g3  # interned per device
    assert g1 == g2 == g3
