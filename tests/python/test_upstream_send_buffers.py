"""Scenarios of cuda.core's own cuda_core/tests/memory_ipc/test_send_buffers.py, rewritten.

Buffers of IPC-enabled pools sent to spawned children as process arguments (several pools at
once), and a buffer re-exported by the process that imported it to a third process.
Expectations are upstream's, that is the real driver's, with cuda.core 1.2.x API spellings.
"""
# Upstream tests of memory_ipc/test_send_buffers.py NOT ported: none. Both classes are here
# (TestIpcSendBuffers with upstream's device pools, TestIpcReexport for device and pinned).
from itertools import cycle

import pytest
from cuda.core import (
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)

import helpers
from helpers import MIB

NBYTES = 64
NTASKS = 7
POOL_SIZE = 2 * MIB

KINDS = {
    "DeviceMR": lambda dev: DeviceMemoryResource(
        dev, DeviceMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=True)),
    "PinnedMR": lambda dev: PinnedMemoryResource(
        PinnedMemoryResourceOptions(max_size=POOL_SIZE, ipc_enabled=True)),
}


# --- several children at once ------------------------------------------------------------


def _fill(buf, seed, stream):
    helpers.write_bytes(buf, helpers.pattern(buf.size, seed), stream)


def _holds(buf, seed, stream):
    return helpers.read_bytes(buf, stream) == helpers.pattern(buf.size, seed)


# --- children (module level: spawn imports this module to find them) --------------------


def child_check_and_rewrite(buffers):
    """Checks each buffer's own pattern (seed = its index), rewrites it with index + 100."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    pools = {b.memory_resource.uuid for b in buffers}
    for i, buf in enumerate(buffers):
        assert buf.is_mapped
        assert _holds(buf, i, stream), f"buffer {i} differs"
        _fill(buf, i + 100, stream)
        buf.close(stream)
    stream.sync()
    return len(pools)


def child_forward(buf, q_bc, c_done):
    """Process B: imported the buffer from A; sends it on to C, keeps it open until C is done."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    assert buf.is_mapped
    q_bc.put(buf)
    # The queue pickles in a feeder thread: hold the import until C has its own.
    assert c_done.wait(timeout=helpers.CHILD_TIMEOUT_S), "C never finished"
    buf.close(stream)
    stream.sync()


def child_receive_and_write(q_bc, c_done):
    """Process C: gets the buffer from B (never from A) and writes seed 1."""
    dev = helpers.current_device(0)
    stream = dev.create_stream()
    buf = q_bc.get(timeout=helpers.CHILD_TIMEOUT_S)
    assert buf.is_mapped
    _fill(buf, 1, stream)
    buf.close(stream)
    stream.sync()
    c_done.set()


# --- tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("nmrs", [1, 3])
def test_ipc_send_buffers(nmrs, device, stream):
    """Ports memory_ipc/test_send_buffers.py::TestIpcSendBuffers::test_main."""
    mrs = [KINDS["DeviceMR"](device) for _ in range(nmrs)]
    buffers = []
    try:
        # NTASKS buffers drawn from the pools in turn, each with its own pattern.
        buffers = [mr.allocate(NBYTES, stream=stream) for mr, _ in zip(cycle(mrs), range(NTASKS))]
        for i, buf in enumerate(buffers):
            _fill(buf, i, stream)
        stream.sync()
        (pools_seen,) = helpers.collect(helpers.spawn(child_check_and_rewrite, buffers))
        assert pools_seen == nmrs
        for i, buf in enumerate(buffers):
            assert _holds(buf, i + 100, stream), f"buffer {i} lacks the child's write"
    finally:
        for buf in buffers:
            buf.close(stream)
        stream.sync()
        for mr in mrs:
            mr.close()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_ipc_reexport(kind, device, stream):
    """Ports memory_ipc/test_send_buffers.py::TestIpcReexport::test_main.

    A allocates and fills a buffer and sends it to B; B sends its import on to C; C writes.
    """
    mr = KINDS[kind](device)
    buf = mr.allocate(NBYTES, stream=stream)
    _fill(buf, 0, stream)
    ctx = helpers.spawn_context()
    q_bc = ctx.Queue()
    c_done = ctx.Event()
    b = helpers.spawn(child_forward, buf, q_bc, c_done)
    c = helpers.spawn(child_receive_and_write, q_bc, c_done)
    helpers.collect(c, b)
    assert _holds(buf, 1, stream), "C's write is not visible in A"
    buf.close(stream)
    stream.sync()
    mr.close()
