"""Scenarios of cuda.core's own cuda_core/tests/memory_ipc/test_memory_ipc.py, rewritten.

An IPC-enabled pool (DeviceMemoryResource and PinnedMemoryResource, as upstream's
ipc_memory_resource fixture gives) is shared with spawned children: as the resource object, or
as its allocation handle; its buffers travel as objects or as IPC descriptors. Children check
and write the bytes; the parent checks what they wrote. Expectations are upstream's, that is
the real driver's, with cuda.core 1.2.x API spellings (allocation_handle / ipc_descriptor
properties, keyword-only streams).
"""
# Upstream tests of memory_ipc/test_memory_ipc.py NOT ported: none. All four classes are here,
# for both kinds of pool (upstream's DeviceMR and PinnedMR fixture params).
import pytest
from cuda.core import (
    Buffer,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)

import helpers
from helpers import MIB

NBYTES = 64
POOL_SIZE = 2 * MIB

KINDS = {
    "DeviceMR": lambda dev: DeviceMemoryResource(
        dev, DeviceMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=True)),
    "PinnedMR": lambda dev: PinnedMemoryResource(
        PinnedMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=True)),
}


@pytest.fixture(params=sorted(KINDS))
def ipc_mr(request, device):
    assert device.properties.memory_pools_supported
    assert device.properties.handle_type_posix_file_descriptor_supported
    mr = KINDS[request.param](device)
    assert mr.is_ipc_enabled
    yield mr
    mr.close()
    device.sync()


# --- byte and pool helpers ------------------------------------------------------------------


def _fill(buf, seed, stream):
    helpers.write_bytes(buf, helpers.pattern(buf.size, seed), stream)


def _holds(buf, seed, stream):
    return helpers.read_bytes(buf, stream) == helpers.pattern(buf.size, seed)


def _import_pool(cls_name, alloc_handle, dev):
    if cls_name == "DeviceMemoryResource":
        return DeviceMemoryResource.from_allocation_handle(dev, alloc_handle)
    return PinnedMemoryResource.from_allocation_handle(alloc_handle)


# --- children (module level: spawn imports this module to find them) --------------------


def child_check_then_write(mr, queue):
    """Gets one buffer of mr from the queue, checks seed 1, writes seed 2."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    assert mr.is_mapped
    buf = queue.get(timeout=helpers.CHILD_TIMEOUT_S)
    assert buf.is_mapped
    assert buf.memory_resource is mr
    assert _holds(buf, 1, stream), "the parent's bytes did not arrive"
    _fill(buf, 2, stream)
    buf.close(stream)
    stream.sync()


def child_write_one_of_two(mr, which, seed, queue):
    """Imports both buffers from the queue, writes seed into buffers[which]."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    bufs = [queue.get(timeout=helpers.CHILD_TIMEOUT_S) for _ in range(2)]
    assert all(b.memory_resource is mr for b in bufs)
    _fill(bufs[which], seed, stream)
    for b in bufs:
        b.close(stream)
    stream.sync()


def child_import_descriptor(cls_name, alloc_handle, seed, queue):
    """Imports the pool from its allocation handle and a buffer from its descriptor."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    mr = _import_pool(cls_name, alloc_handle, dev)
    desc = queue.get(timeout=helpers.CHILD_TIMEOUT_S)
    buf = Buffer.from_ipc_descriptor(mr, desc, stream=stream)
    assert buf.size == NBYTES
    _fill(buf, seed, stream)
    buf.close(stream)
    stream.sync()
    mr.close()


def child_import_object(cls_name, alloc_handle, seed, queue):
    """Imports the pool from its allocation handle, then unpickles a buffer object."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    mr = _import_pool(cls_name, alloc_handle, dev)
    # Importing registered the pool under the owner's uuid: the buffer finds it there.
    buf = queue.get(timeout=helpers.CHILD_TIMEOUT_S)
    assert buf.memory_resource is mr
    _fill(buf, seed, stream)
    buf.close(stream)
    stream.sync()


# --- tests -------------------------------------------------------------------------------


def test_ipc_mempool(ipc_mr, device, stream):
    """Ports memory_ipc/test_memory_ipc.py::TestIpcMempool::test_main."""
    assert not ipc_mr.is_mapped
    queue = helpers.spawn_context().Queue()
    child = helpers.spawn(child_check_then_write, ipc_mr, queue)
    buf = ipc_mr.allocate(NBYTES, stream=stream)
    assert not buf.is_mapped
    _fill(buf, 1, stream)
    queue.put(buf)
    helpers.collect(child)
    assert _holds(buf, 2, stream), "the child's write did not land"
    buf.close(stream)


def test_ipc_mempool_multiple(ipc_mr, device, stream):
    """Ports memory_ipc/test_memory_ipc.py::TestIPCMempoolMultiple::test_main."""
    ctx = helpers.spawn_context()
    q1, q2 = ctx.Queue(), ctx.Queue()
    buf1 = ipc_mr.allocate(NBYTES, stream=stream)
    buf2 = ipc_mr.allocate(NBYTES, stream=stream)
    stream.sync()
    for q in (q1, q2):
        q.put(buf1)
        q.put(buf2)
    # Both children import both buffers; each writes a different one.
    helpers.collect(helpers.spawn(child_write_one_of_two, ipc_mr, 0, 31, q1), helpers.spawn(child_write_one_of_two, ipc_mr, 1, 32, q2))
    assert _holds(buf1, 31, stream)
    assert _holds(buf2, 32, stream)
    buf1.close(stream)
    buf2.close(stream)


@pytest.mark.parametrize(
    "child",
    [
        pytest.param(child_import_descriptor, id="descriptors"),
        pytest.param(child_import_object, id="objects"),
    ],
)
def test_ipc_shared_allocation_handle(child, ipc_mr, device, stream):
    """Ports memory_ipc/test_memory_ipc.py::TestIPCSharedAllocationHandleAndBufferDescriptors::test_main
    (child_import_descriptor) and ::TestIPCSharedAllocationHandleAndBufferObjects::test_main
    (child_import_object): one allocation handle serves two children."""
    alloc_handle = ipc_mr.allocation_handle
    cls_name = type(ipc_mr).__name__
    ctx = helpers.spawn_context()
    q1, q2 = ctx.Queue(), ctx.Queue()
    children = [helpers.spawn(child, cls_name, alloc_handle, 41, q1), helpers.spawn(child, cls_name, alloc_handle, 42, q2)]
    buf1 = ipc_mr.allocate(NBYTES, stream=stream)
    buf2 = ipc_mr.allocate(NBYTES, stream=stream)
    stream.sync()
    if child is child_import_descriptor:
        q1.put(buf1.ipc_descriptor)
        q2.put(buf2.ipc_descriptor)
    else:
        q1.put(buf1)
        q2.put(buf2)
    helpers.collect(*children)
    assert _holds(buf1, 41, stream)
    assert _holds(buf2, 42, stream)
    buf1.close(stream)
    buf2.close(stream)
