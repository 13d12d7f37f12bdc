"""Scenarios of cuda.core's own cuda_core/tests/test_memory.py (NVIDIA/cuda-python), rewritten.

Buffers from raw driver allocations (cuMemAlloc, cuMemAllocManaged, cuMemAllocHost, plain host
memory) behind small MemoryResource subclasses, Buffer.from_handle on foreign pointers, DLPack
capsules of buffers, the pool-backed resources (device, pinned, managed) with options and
attributes, IPC refusals of non-IPC pools, VirtualMemoryResource, and StridedMemoryView over
numpy arrays. Expectations are upstream's, that is the real driver's, with cuda.core 1.2.x API
spellings (allocation_handle / ipc_descriptor properties, keyword-only streams).
"""
# Upstream tests of test_memory.py NOT ported, and why:
# - test_package_contents: checks cuda.core's own `__all__` of one release (the list differs
#   between releases), nothing the driver does.
# Every other test of the file is ported; test_vmm_allocator_rdma_unsupported_exception keeps
# upstream's skip on devices that do support GPU Direct RDMA (the emulated H200 does).
import ctypes
import re
import sys

import numpy as np
import pytest
from cuda.bindings import driver
from cuda.core import (
    Buffer,
    Device,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    GraphMemoryResource,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    MemoryResource,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
    VirtualMemoryResource,
    VirtualMemoryResourceOptions,
)
from cuda.core._dlpack import DLDeviceType
from cuda.core._memory._ipc import IPCBufferDescriptor
from cuda.core._utils.cuda_utils import handle_return
from cuda.core.utils import StridedMemoryView

import helpers
from helpers import MIB

POOL_SIZE = 2 * MIB


# --- memory resources over raw driver allocations ---------------------------------------


class _RawResource(MemoryResource):
    """A MemoryResource over a pair of plain allocation functions (no pool, no stream order)."""

    device_accessible = True
    host_accessible = False

    def __init__(self, device=None):
        self.device = device

    def allocate(self, size, *, stream=None):
        return Buffer.from_handle(ptr=self._alloc(size), size=size, mr=self, stream=stream)

    def deallocate(self, ptr, size, stream=None):
        self._free(ptr)

    @property
    def is_device_accessible(self):
        return self.device_accessible

    @property
    def is_host_accessible(self):
        return self.host_accessible

    @property
    def device_id(self):
        return 0 if self.device_accessible else -1


class _CuMemAlloc(_RawResource):
    def _alloc(self, size):
        return handle_return(driver.cuMemAlloc(size))

    def _free(self, ptr):
        handle_return(driver.cuMemFree(ptr))


class _CuMemAllocManaged(_RawResource):
    host_accessible = True

    def _alloc(self, size):
        return handle_return(driver.cuMemAllocManaged(size, driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL.value))

    def _free(self, ptr):
        handle_return(driver.cuMemFree(ptr))


class _CuMemAllocHost(_RawResource):
    host_accessible = True

    def _alloc(self, size):
        return handle_return(driver.cuMemAllocHost(size))

    def _free(self, ptr):
        handle_return(driver.cuMemFreeHost(ptr))


class _PlainHost(_RawResource):
    """Ordinary (pageable, unregistered) host memory: not device-accessible."""

    device_accessible = False
    host_accessible = True

    def __init__(self, device=None):
        super().__init__(device)
        self._arrays = {}

    def _alloc(self, size):
        arr = (ctypes.c_byte * size)()
        self._arrays[ctypes.addressof(arr)] = arr
        return ctypes.addressof(arr)

    def _free(self, ptr):
        self._arrays.pop(int(ptr), None)


class _Inaccessible(_PlainHost):
    """Claims neither host nor device access, which DLPack cannot describe."""

    host_accessible = False


RAW_KINDS = {
    "cuMemAlloc": _CuMemAlloc,
    "cuMemAllocManaged": _CuMemAllocManaged,
    "cuMemAllocHost": _CuMemAllocHost,
    "host": _PlainHost,
}
# The kinds a stream can copy into and fill (upstream's device / unified / pinned).
GPU_KINDS = ["cuMemAlloc", "cuMemAllocManaged", "cuMemAllocHost"]


def _raw_bytes(buf, stream):
    """The buffer's bytes: straight from host memory where it is host-accessible."""
    stream.sync()
    if buf.is_host_accessible:
        return helpers.host_view(buf)
    return helpers.read_bytes(buf, stream)


def _last_device():
    return len(Device.get_all_devices()) - 1


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


# --- Buffer over raw allocations -------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(RAW_KINDS))
def test_buffer_initialization(kind, device, stream):
    """Ports test_memory.py::test_buffer_initialization."""
    mr = RAW_KINDS[kind](device)
    buf = mr.allocate(1024, stream=stream)
    assert int(buf.handle) != 0
    assert buf.size == 1024
    assert buf.memory_resource is mr
    assert buf.is_device_accessible == mr.is_device_accessible
    assert buf.is_host_accessible == mr.is_host_accessible
    assert not buf.is_mapped
    buf.close()


@pytest.mark.parametrize("direction", ["copy_to", "copy_from"])
@pytest.mark.parametrize("kind", GPU_KINDS)
def test_buffer_copy_to_and_from(kind, direction, device, stream):
    """Ports test_memory.py::test_buffer_copy_to and test_memory.py::test_buffer_copy_from."""
    mr = RAW_KINDS[kind](device)
    src = mr.allocate(1024, stream=stream)
    dst = mr.allocate(1024, stream=stream)
    data = bytes(i & 0xFF for i in range(1024))
    helpers.write_bytes(src, data, stream)
    if direction == "copy_to":
        src.copy_to(dst, stream=stream)
    else:
        dst.copy_from(src, stream=stream)
    device.sync()
    assert _raw_bytes(dst, stream) == data
    dst.close()
    src.close()


FILL_SIZE = 64  # divisible by 1, 2 and 4

FILL_CASES = [
    pytest.param(0x42, FILL_SIZE, None, id="int-0x42"),
    pytest.param(-1, FILL_SIZE, OverflowError, id="int-neg"),
    pytest.param(256, FILL_SIZE, OverflowError, id="int-256"),
    pytest.param(1000, FILL_SIZE, OverflowError, id="int-1000"),
    pytest.param("invalid", FILL_SIZE, TypeError, id="bad-type-str"),
    pytest.param(b"\x7f", FILL_SIZE, None, id="bytes-1"),
    pytest.param(b"\x34\x12", FILL_SIZE, None, id="bytes-2"),
    pytest.param(b"\xef\xbe\xad\xde", FILL_SIZE, None, id="bytes-4"),
    pytest.param(b"\x34\x12", FILL_SIZE + 1, ValueError, id="bytes-2-bad-size"),
    pytest.param(b"\xef\xbe\xad\xde", FILL_SIZE + 2, ValueError, id="bytes-4-bad-size"),
    pytest.param(b"", FILL_SIZE, ValueError, id="bytes-0"),
    pytest.param(b"\x01\x02\x03", FILL_SIZE, ValueError, id="bytes-3"),
    pytest.param(np.uint8(0), FILL_SIZE, None, id="np-uint8-0"),
    pytest.param(np.uint8(255), FILL_SIZE, None, id="np-uint8-255"),
    pytest.param(np.int8(-1), FILL_SIZE, None, id="np-int8--1"),
    pytest.param(np.int8(127), FILL_SIZE, None, id="np-int8-127"),
    pytest.param(np.int8(-128), FILL_SIZE, None, id="np-int8--128"),
    pytest.param(np.uint16(0x1234), FILL_SIZE, None, id="np-uint16-0x1234"),
    pytest.param(np.uint16(0xFFFF), FILL_SIZE, None, id="np-uint16-0xFFFF"),
    pytest.param(np.int16(-1), FILL_SIZE, None, id="np-int16--1"),
    pytest.param(np.int16(32767), FILL_SIZE, None, id="np-int16-max"),
    pytest.param(np.int16(-32768), FILL_SIZE, None, id="np-int16-min"),
    pytest.param(np.uint16(0x1234), FILL_SIZE + 1, ValueError, id="np-uint16-bad-size"),
    pytest.param(np.uint32(0xDEADBEEF), FILL_SIZE, None, id="np-uint32-0xDEADBEEF"),
    pytest.param(np.uint32(0xFFFFFFFF), FILL_SIZE, None, id="np-uint32-0xFFFFFFFF"),
    pytest.param(np.int32(-1), FILL_SIZE, None, id="np-int32--1"),
    pytest.param(np.int32(2147483647), FILL_SIZE, None, id="np-int32-max"),
    pytest.param(np.int32(-2147483648), FILL_SIZE, None, id="np-int32-min"),
    pytest.param(np.uint32(0xDEADBEEF), FILL_SIZE + 2, ValueError, id="np-uint32-bad-size"),
    pytest.param(np.float32(1.0), FILL_SIZE, None, id="np-float32-1.0"),
    pytest.param(np.uint64(0), FILL_SIZE, ValueError, id="np-uint64-err"),
    pytest.param(np.int64(0), FILL_SIZE, ValueError, id="np-int64-err"),
    pytest.param(np.float64(0), FILL_SIZE, ValueError, id="np-float64-err"),
]


def _fill_pattern(value):
    if isinstance(value, int):
        return bytes([value])
    return bytes(memoryview(value).cast("B"))


@pytest.mark.parametrize("value,size,exc", FILL_CASES)
@pytest.mark.parametrize("kind", GPU_KINDS)
def test_buffer_fill(kind, value, size, exc, device, stream):
    """Ports test_memory.py::test_buffer_fill (every value case, on each kind of memory)."""
    buf = RAW_KINDS[kind](device).allocate(size, stream=stream)
    try:
        if exc is not None:
            with pytest.raises(exc):
                buf.fill(value, stream=stream)
            return
        buf.fill(value, stream=stream)
        device.sync()
        pat = _fill_pattern(value)
        # Upstream checks host-accessible memory only; device memory is read back here too.
        assert _raw_bytes(buf, stream) == pat * (size // len(pat))
    finally:
        buf.close()


@pytest.mark.parametrize("kind", sorted(RAW_KINDS))
def test_buffer_close(kind, device, stream):
    """Ports test_memory.py::test_buffer_close."""
    buf = RAW_KINDS[kind](device).allocate(1024, stream=stream)
    buf.close()
    assert buf.handle == 0
    assert buf.memory_resource is None


# --- Buffer.from_handle on foreign pointers ------------------------------------------


def test_buffer_external_host():
    """Ports test_memory.py::test_buffer_external_host."""
    a = (ctypes.c_byte * 20)()
    buf = Buffer.from_handle(ctypes.addressof(a), 20, owner=a)
    assert not buf.is_device_accessible
    assert buf.is_host_accessible
    assert buf.device_id == -1
    buf.close()


@pytest.mark.parametrize("change_device", [True, False])
def test_buffer_external_device(change_device, device):
    """Ports test_memory.py::test_buffer_external_device."""
    dev_id = _last_device()
    d = helpers.current_device(dev_id)
    owner = d.allocate(32, stream=d.default_stream)
    if change_device:
        helpers.current_device(0)
    buf = Buffer.from_handle(int(owner.handle), 32)
    assert buf.is_device_accessible
    assert not buf.is_host_accessible
    assert buf.device_id == dev_id
    buf.close()
    owner.close()


@pytest.mark.parametrize("change_device", [True, False])
def test_buffer_external_pinned_alloc(change_device, device):
    """Ports test_memory.py::test_buffer_external_pinned_alloc."""
    dev_id = _last_device()
    d = helpers.current_device(dev_id)
    owner = _CuMemAllocHost(d).allocate(32, stream=d.default_stream)
    if change_device:
        helpers.current_device(0)
    buf = Buffer.from_handle(int(owner.handle), 32)
    assert buf.is_device_accessible
    assert buf.is_host_accessible
    assert buf.device_id == dev_id
    buf.close()
    owner.close()


@pytest.mark.parametrize("change_device", [True, False])
def test_buffer_external_pinned_registered(change_device, device):
    """Ports test_memory.py::test_buffer_external_pinned_registered."""
    dev_id = _last_device()
    helpers.current_device(dev_id)
    a = (ctypes.c_byte * 20)()
    ptr = ctypes.addressof(a)
    buf = Buffer.from_handle(ptr, 20, owner=ptr)
    assert not buf.is_device_accessible
    assert buf.is_host_accessible
    assert buf.device_id == -1

    handle_return(driver.cuMemHostRegister(ptr, 20, 0))
    try:
        if change_device:
            helpers.current_device(0)
        buf = Buffer.from_handle(ptr, 20, owner=ptr)
        assert buf.is_device_accessible
        assert buf.is_host_accessible
        assert buf.device_id == dev_id
        buf.close()
    finally:
        handle_return(driver.cuMemHostUnregister(ptr))


@pytest.mark.parametrize("change_device", [True, False])
def test_buffer_external_managed(change_device, device):
    """Ports test_memory.py::test_buffer_external_managed."""
    dev_id = _last_device()
    helpers.current_device(dev_id)
    ptr = handle_return(driver.cuMemAllocManaged(32, driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL.value))
    try:
        if change_device:
            helpers.current_device(0)
        buf = Buffer.from_handle(ptr, 32)
        assert buf.is_device_accessible
        assert buf.is_host_accessible
        assert buf.device_id == dev_id
        buf.close()
    finally:
        handle_return(driver.cuMemFree(ptr))


def test_memory_resource_and_owner_disallowed(device):
    """Ports test_memory.py::test_memory_resource_and_owner_disallowed."""
    a = (ctypes.c_byte * 20)()
    with pytest.raises(ValueError, match="cannot be both specified together"):
        Buffer.from_handle(ctypes.addressof(a), 20, mr=_CuMemAlloc(device), owner=a)


def test_owner_close():
    """Ports test_memory.py::test_owner_close."""
    a = (ctypes.c_byte * 20)()
    before = sys.getrefcount(a)
    buf = Buffer.from_handle(ctypes.addressof(a), 20, owner=a)
    assert sys.getrefcount(a) != before
    buf.close()
    assert sys.getrefcount(a) == before


# --- DLPack of buffers -------------------------------------------------------------


def test_buffer_dunder_dlpack(device, stream):
    """Ports test_memory.py::test_buffer_dunder_dlpack."""
    buf = _CuMemAlloc(device).allocate(1024, stream=stream)
    assert "dltensor" in repr(buf.__dlpack__())
    assert "dltensor" in repr(buf.__dlpack__(max_version=(1, 0)))
    with pytest.raises(BufferError, match=r"^Sorry, not supported: dl_device other than None$"):
        buf.__dlpack__(dl_device=())
    with pytest.raises(BufferError, match=r"^Sorry, not supported: copy=True$"):
        buf.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"^Expected max_version tuple\[int, int\], got \(\)$"):
        buf.__dlpack__(max_version=())
    with pytest.raises(BufferError, match=r"^Expected max_version tuple\[int, int\], got \(9, 8, 7\)$"):
        buf.__dlpack__(max_version=(9, 8, 7))
    buf.close()


@pytest.mark.parametrize(
    "kind,expected",
    [
        ("cuMemAlloc", (DLDeviceType.kDLCUDA, 0)),
        ("host", (DLDeviceType.kDLCPU, 0)),
        # cuda.core 1.2.x asks the driver (CU_POINTER_ATTRIBUTE_IS_MANAGED) and reports managed
        # memory as such; the older upstream expected kDLCUDAHost here.
        ("cuMemAllocManaged", (DLDeviceType.kDLCUDAManaged, 0)),
        ("cuMemAllocHost", (DLDeviceType.kDLCUDAHost, 0)),
    ],
)
def test_buffer_dunder_dlpack_device_success(kind, expected, device, stream):
    """Ports test_memory.py::test_buffer_dunder_dlpack_device_success."""
    buf = RAW_KINDS[kind](device).allocate(1024, stream=stream)
    assert buf.__dlpack_device__() == expected
    buf.close()


def test_buffer_dunder_dlpack_device_failure():
    """Ports test_memory.py::test_buffer_dunder_dlpack_device_failure."""
    buf = _Inaccessible().allocate(1024)
    with pytest.raises(BufferError, match=r"^buffer is neither device-accessible nor host-accessible$"):
        buf.__dlpack_device__()
    buf.close()


def test_buffer_dlpack_failure_clean_up():
    """Ports test_memory.py::test_buffer_dlpack_failure_clean_up."""
    buf = _Inaccessible().allocate(1024)
    before = sys.getrefcount(buf)
    # (1.2.x words the refusal as __dlpack_device__ does; older releases said "invalid buffer")
    with pytest.raises(BufferError, match="neither device-accessible nor host-accessible"):
        buf.__dlpack__()
    # The half-made capsule released its reference to the buffer.
    assert sys.getrefcount(buf) == before
    buf.close()


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
