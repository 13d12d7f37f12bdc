"""Installing the wheel must not switch pytest sessions to the emulator: without -p cuda_shim
(or cuda_shim = true) the plugin, autoloaded or not, loads nothing and defines no fixture."""
import os

import pytest

import cuda_shim


def test_plugin_is_inert(request):
    autoload = not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    assert request.config.pluginmanager.has_plugin("cuda_shim") == autoload
    assert not cuda_shim.is_active()
    assert not any("libcuda.so" in line for line in open("/proc/self/maps"))
    assert cuda_shim.libdir() not in os.environ.get("LD_LIBRARY_PATH", "")
    with pytest.raises(pytest.FixtureLookupError):
        request.getfixturevalue("cuda_shim_devices")
