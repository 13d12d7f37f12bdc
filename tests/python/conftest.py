"""Fixtures for the cuda.core / cuda.bindings tests.

The tests run unchanged on cuda-shim (ctest sets LD_LIBRARY_PATH through `cuda-shim run`)
and on NVIDIA's driver (a GPU machine, no LD_LIBRARY_PATH): expected values are the real
driver's. Checks of emulator-only features are marked `shim_only`.
"""
import gc
import multiprocessing

import pytest

import helpers


def pytest_configure(config):
    config.addinivalue_line("markers", "shim_only: checks a cuda-shim feature the real driver lacks")
    config.addinivalue_line("markers", "kernels: launches kernels and checks what they computed (issue 38)")
    # Children are started with spawn, as cuda.core requires for CUDA state.
    try:
        multiprocessing.set_start_method("spawn")
    except RuntimeError:
        pass


def pytest_report_header(config):
    return f"libcuda.so.1: {'cuda-shim' if helpers.on_cuda_shim() else 'NVIDIA driver'}"


def pytest_collection_modifyitems(config, items):
    if helpers.on_cuda_shim():
        return
    skip = pytest.mark.skip(reason="cuda-shim feature; this run is on NVIDIA's driver")
    for item in items:
        if "shim_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device():
    dev = helpers.current_device(0)
    yield dev
    dev.sync()


@pytest.fixture
def stream(device):
    s = device.create_stream()
    yield s
    s.sync()
    s.close()


@pytest.fixture(autouse=True)
def _collect_between_tests():
    # Buffers and resources free their CUDA objects when collected: make that happen inside
    # the test that made them, so one test's leftovers never land in the next.
    yield
    gc.collect()
