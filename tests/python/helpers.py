"""Helpers shared by the tests and by the children they spawn (children cannot use fixtures).

Everything here goes through cuda.core / cuda.bindings only, so the same code runs on
cuda-shim and on NVIDIA's driver. Host access to a buffer's bytes goes through a
cudaMallocHost-style staging buffer, because device memory is not host-accessible on a GPU.
"""
import ctypes
import multiprocessing
import os

from cuda.core import Device, LegacyPinnedMemoryResource

KIB = 1024
MIB = 1024 * KIB

# A child that hangs (a lost fd, a deadlock) must fail the test, not stall CI.
CHILD_TIMEOUT_S = float(os.environ.get("CUDA_SHIM_PY_CHILD_TIMEOUT", "120"))


def on_cuda_shim():
    """True when the process runs on cuda-shim's libcuda.so.1 rather than NVIDIA's."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return hasattr(lib, "cuShimGetVersion")


def current_device(ordinal=0):
    dev = Device(ordinal)
    dev.set_current()
    return dev


def _staging(size):
    return LegacyPinnedMemoryResource().allocate(size)


def read_bytes(buf, stream, size=None):
    """The buffer's bytes, whatever memory it is, copied out in stream order."""
    size = buf.size if size is None else size
    stage = _staging(buf.size)
    try:
        stage.copy_from(buf, stream=stream)
        stream.sync()
        return ctypes.string_at(int(stage.handle), size)
    finally:
        stage.close()


def write_bytes(buf, data, stream):
    """Sets the buffer's first len(data) bytes (the rest is copied back unchanged)."""
    stage = _staging(buf.size)
    try:
        stage.copy_from(buf, stream=stream)
        stream.sync()
        ctypes.memmove(int(stage.handle), data, len(data))
        buf.copy_from(stage, stream=stream)
        stream.sync()
    finally:
        stage.close()


def pattern(size, seed):
    """A byte pattern that differs per seed and per position (catches offset mistakes)."""
    return bytes((i * 7 + seed) & 0xFF for i in range(size))


def host_view(buf):
    """The bytes of a host-accessible buffer, read through its pointer directly."""
    assert buf.is_host_accessible
    return ctypes.string_at(int(buf.handle), buf.size)


def spawn_context():
    return multiprocessing.get_context("spawn")


def spawn(target, *args):
    """Starts target(*args) in a spawned child; its outcome comes back on a queue of its own.

    The child puts ("ok", value) or ("error", traceback text), so a failure in the child
    shows up as the child's own traceback in the parent's assertion message.
    """
    ctx = spawn_context()
    results = ctx.Queue()
    p = ctx.Process(target=_child_main, args=(target, args, results))
    p.start()
    return p, results


def collect(*children):
    """Waits for every child (spawn's results); fails with a child's own traceback if one
    failed or hung; returns their values in order."""
    values, problems = [], []
    for p, results in children:
        try:
            status, value = results.get(timeout=CHILD_TIMEOUT_S)
        except Exception:
            status, value = "error", f"no answer from pid {p.pid}"
        p.join(timeout=CHILD_TIMEOUT_S)
        if p.is_alive():
            p.kill()
            p.join()
        if status != "ok":
            problems.append(value)
        elif p.exitcode != 0:
            problems.append(f"pid {p.pid} exited with {p.exitcode}")
        values.append(value)
    assert not problems, "\n".join(problems)
    return values


def run_child(target, *args):
    """Runs target(*args) in a spawned process and returns its value."""
    return collect(spawn(target, *args))[0]


def _child_main(target, args, q):
    import traceback

    try:
        q.put(("ok", target(*args)))
    except BaseException:  # report everything, SystemExit included
        q.put(("error", traceback.format_exc()))
