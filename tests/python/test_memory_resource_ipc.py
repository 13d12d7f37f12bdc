"""IPC-enabled memory resources shared with other processes (multiprocessing, spawn).

For PinnedMemoryResource and DeviceMemoryResource: the pool's allocation handle (a POSIX
fd) and buffers' IPC descriptors travel to a spawned child, which imports them and checks
and changes the bytes; the parent checks the child's writes.
"""
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

KINDS = {
    "pinned": (PinnedMemoryResource, lambda: PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))),
    "device": (DeviceMemoryResource, lambda: DeviceMemoryResource(0, DeviceMemoryResourceOptions(ipc_enabled=True))),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


@pytest.fixture
def ipc_mr(kind, device):
    mr = KINDS[kind][1]()
    yield mr
    mr.close()


# --- children (module level: spawn imports this module to find them) -----------------


def child_check_and_write(mr, buffers, seeds, new_seed):
    """Checks each buffer's pattern, then overwrites each with new_seed's pattern."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    facts = {"is_mapped": mr.is_mapped, "uuid": mr.uuid, "owned": mr.is_handle_owned,
             "ipc": mr.is_ipc_enabled, "same_mr": all(b.memory_resource is mr for b in buffers)}
    for buf, seed in zip(buffers, seeds):
        assert helpers.read_bytes(buf, stream) == helpers.pattern(buf.size, seed), f"buffer {seed} differs"
        helpers.write_bytes(buf, helpers.pattern(buf.size, new_seed), stream)
    stream.sync()
    try:
        mr.allocate(4096, stream=stream)
        facts["allocate"] = "allowed"
    except TypeError:
        facts["allocate"] = "refused"
    for buf in buffers:
        buf.close(stream)
    stream.sync()
    return facts


def child_import_by_hand(cls_name, alloc_fd_handle, descriptor, size, seed):
    """Imports the pool from its allocation handle and the buffer from its descriptor."""
    from cuda.core import DeviceMemoryResource, PinnedMemoryResource

    dev = helpers.current_device(0)
    stream = dev.create_stream()
    if cls_name == "DeviceMemoryResource":
        mr = DeviceMemoryResource.from_allocation_handle(dev, alloc_fd_handle)
    else:
        mr = PinnedMemoryResource.from_allocation_handle(alloc_fd_handle)
    buf = Buffer.from_ipc_descriptor(mr, descriptor, stream=stream)
    assert buf.size == size
    ok = helpers.read_bytes(buf, stream) == helpers.pattern(size, seed)
    buf.close(stream)
    mr.close()
    return ok


def child_registry(mr, buf):
    """Unpickling a buffer finds its resource in the registry, under the owner's uuid."""
    from cuda.core import DeviceMemoryResource, PinnedMemoryResource

    helpers.current_device(0)
    cls = type(mr)
    assert cls in (DeviceMemoryResource, PinnedMemoryResource)
    found = cls.from_registry(mr.uuid)
    result = (found is mr, buf.memory_resource is mr)
    buf.close()
    return result


# --- tests ----------------------------------------------------------------------------


def test_resource_and_buffers_travel_to_a_child(kind, ipc_mr, stream):
    sizes = [4096, MIB, 3 * MIB + 5]
    buffers = [ipc_mr.allocate(n, stream=stream) for n in sizes]
    seeds = [21, 22, 23]
    for buf, seed in zip(buffers, seeds):
        helpers.write_bytes(buf, helpers.pattern(buf.size, seed), stream)
    stream.sync()
    facts = helpers.run_child(child_check_and_write, ipc_mr, buffers, seeds, 99)
    assert facts == {"is_mapped": True, "uuid": ipc_mr.uuid, "owned": True, "ipc": True,
                     "same_mr": True, "allocate": "refused"}
    # The child's writes landed in the parent's buffers.
    for buf in buffers:
        assert helpers.read_bytes(buf, stream) == helpers.pattern(buf.size, 99)
        buf.close(stream)


def test_allocation_handle_and_descriptor_imported_by_hand(kind, ipc_mr, stream):
    buf = ipc_mr.allocate(2 * MIB, stream=stream)
    helpers.write_bytes(buf, helpers.pattern(buf.size, 7), stream)
    handle = ipc_mr.allocation_handle
    ok = helpers.run_child(child_import_by_hand, KINDS[kind][0].__name__, handle, buf.ipc_descriptor, buf.size, 7)
    assert ok is True
    buf.close(stream)


def test_unpickled_buffers_find_their_resource_in_the_registry(kind, ipc_mr, stream):
    buf = ipc_mr.allocate(4096, stream=stream)
    stream.sync()
    assert helpers.run_child(child_registry, ipc_mr, buf) == (True, True)
    buf.close(stream)


def test_buffer_survives_the_childs_close(kind, ipc_mr, stream):
    buf = ipc_mr.allocate(MIB, stream=stream)
    helpers.write_bytes(buf, helpers.pattern(MIB, 1), stream)
    helpers.run_child(child_check_and_write, ipc_mr, [buf], [1], 2)
    # The child closed its import; the parent's buffer and pool are untouched.
    assert helpers.read_bytes(buf, stream) == helpers.pattern(MIB, 2)
    again = ipc_mr.allocate(MIB, stream=stream)
    again.close(stream)
    buf.close(stream)


def test_two_children_share_one_buffer_in_turn(kind, ipc_mr, stream):
    buf = ipc_mr.allocate(64 * 1024, stream=stream)
    helpers.write_bytes(buf, helpers.pattern(buf.size, 40), stream)
    helpers.run_child(child_check_and_write, ipc_mr, [buf], [40], 41)
    helpers.run_child(child_check_and_write, ipc_mr, [buf], [41], 42)
    assert helpers.read_bytes(buf, stream) == helpers.pattern(buf.size, 42)
    buf.close(stream)
