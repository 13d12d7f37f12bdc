"""Scenarios of cuda.core's own cuda_core/tests/test_memory.py (NVIDIA/cuda-python), rewritten.

Buffers from raw driver allocations (cuMemAlloc, cuMemAllocManaged, cuMemAllocHost, plain host
memory) behind small MemoryResource subclasses, Buffer.from_handle on foreign pointers, and DLPack
capsules of buffers. The pool-backed resources, VirtualMemoryResource and StridedMemoryView:
test_upstream_memory_pools.py. Expectations are upstream's, that is the real driver's, with
cuda.core 1.2.x API spellings (allocation_handle / ipc_descriptor properties, keyword-only
streams).
"""
# Upstream tests of test_memory.py NOT ported, and why:
# - test_package_contents: checks cuda.core's own `__all__` of one release (the list differs
#   between releases), nothing the driver does.
# Every other test of the file is ported, here or in test_upstream_memory_pools.py.
import ctypes
import sys

import numpy as np
import pytest
from cuda.bindings import driver
from cuda.core import Buffer, Device, MemoryResource
from cuda.core._dlpack import DLDeviceType
from cuda.core._utils.cuda_utils import handle_return

import helpers


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
