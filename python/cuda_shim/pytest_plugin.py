"""pytest plugin: runs a test session on cuda-shim's emulated CUDA driver.

Enable it with ``pytest -p cuda_shim`` (also in ``addopts``/PYTEST_ADDOPTS), or with the ini
option ``cuda_shim = true``. The wheel registers it as a ``pytest11`` entry point so that the
ini option can work, which means pytest imports this module in every session of the environment:
unless enabled it does nothing (loads no library, defines no fixtures). With
PYTEST_DISABLE_PLUGIN_AUTOLOAD set, only ``-p cuda_shim`` loads it.

Once enabled, the libraries are loaded (cuda_shim.activate) in pytest_load_initial_conftests,
i.e. before any conftest.py or test module can import cuda.core, cuda.bindings or CuPy.
The driver reads its settings once per process, so the device count and driver version are
session-wide options; a test that needs other settings runs code in a child process through
the ``cuda_shim_subprocess`` fixture.
"""
import os

import pytest

import cuda_shim

# The names under which -p enables the plugin: the entry point's and the module's.
_NAMES = ("cuda_shim", "cuda_shim.pytest_plugin")


def pytest_addoption(parser):
    group = parser.getgroup("cuda-shim", "cuda-shim (emulated CUDA driver; enable with -p cuda_shim)")
    group.addoption("--cuda-shim-devices", type=int, metavar="N", default=None,
                    help="number of emulated devices for the session (CUDA_SHIM_DEVICES)")
    group.addoption("--cuda-shim-driver-version", metavar="V", default=None,
                    help="what cuDriverGetVersion reports: 13030 or 13.3 (CUDA_SHIM_DRIVER_VERSION)")
    group.addoption("--cuda-shim-explain", action="store_true", default=None,
                    help="print why each failing CUDA call failed (CUDA_SHIM_EXPLAIN=1)")
    group.addoption("--cuda-shim-config", metavar="FILE", default=None,
                    help="emulator configuration file (CUDA_SHIM_CONFIG)")
    group.addoption("--cuda-shim-profile", metavar="NAME", default=None,
                    help="device profile: h200 (default), rtx, tcc-no-pools, gb200-nvl72, ... or a .profile "
                         "file (CUDA_SHIM_PROFILE)")
    # Always a value (no optional argument: pytest would take a test path after it as the file).
    group.addoption("--cuda-shim-trace", metavar="1|-|FILE", default=None,
                    help="trace every API call: 1 to stderr, FILE.json a Perfetto timeline, another FILE or - "
                         "JSON lines (CUDA_SHIM_TRACE, docs/trace.md)")
    parser.addini("cuda_shim", type="bool", default=False,
                  help="run the session on cuda-shim's emulated CUDA driver")
    parser.addini("cuda_shim_devices", default="", help="default of --cuda-shim-devices")
    parser.addini("cuda_shim_driver_version", default="", help="default of --cuda-shim-driver-version")
    parser.addini("cuda_shim_explain", default="", help="default of --cuda-shim-explain (true/false)")
    parser.addini("cuda_shim_config", default="", help="default of --cuda-shim-config (relative to the ini file)")
    parser.addini("cuda_shim_profile", default="", help="default of --cuda-shim-profile")
    parser.addini("cuda_shim_trace", default="", help="default of --cuda-shim-trace (1, - or a file)")


def _enabled(config):
    requested = getattr(config.known_args_namespace, "plugins", None) or []
    return any(name in _NAMES for name in requested) or config.getini("cuda_shim")


def _settings(config):
    """activate()'s arguments: the command line's, else the ini file's, else None (the environment's)."""
    opt = config.known_args_namespace

    def ini(name):
        value = config.getini(name)
        return value.strip() if isinstance(value, str) and value.strip() else None

    devices = opt.cuda_shim_devices
    if devices is None and ini("cuda_shim_devices") is not None:
        try:
            devices = int(ini("cuda_shim_devices"))
        except ValueError:
            raise pytest.UsageError(f"cuda_shim_devices = {ini('cuda_shim_devices')!r} is not a number")
    explain = opt.cuda_shim_explain
    if explain is None and ini("cuda_shim_explain") is not None:
        explain = ini("cuda_shim_explain").lower() in ("1", "true", "yes", "on")
    conf = opt.cuda_shim_config
    if conf is None and ini("cuda_shim_config") is not None:
        base = os.path.dirname(str(config.inipath)) if config.inipath else str(config.rootpath)
        conf = os.path.join(base, ini("cuda_shim_config"))
    return dict(devices=devices, explain=explain, config=conf,
                driver_version=opt.cuda_shim_driver_version or ini("cuda_shim_driver_version"),
                profile=opt.cuda_shim_profile or ini("cuda_shim_profile"),
                trace=opt.cuda_shim_trace or ini("cuda_shim_trace"))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # The earliest hook a plugin gets after the ini file and options are read, and before
    # the conftest.py files (which often import CUDA libraries) are imported.
    if not _enabled(early_config):
        given = [o for o in ("--cuda-shim-devices", "--cuda-shim-driver-version", "--cuda-shim-explain",
                             "--cuda-shim-config", "--cuda-shim-profile", "--cuda-shim-trace")
                 if getattr(early_config.known_args_namespace, o[2:].replace("-", "_")) is not None]
        if given:
            raise pytest.UsageError(f"{', '.join(given)} given, but the cuda_shim plugin is not enabled: "
                                    "add -p cuda_shim (or cuda_shim = true in the ini file)")
        return
    settings = _settings(early_config)
    try:
        trace = settings["trace"]
        if trace and trace not in ("-", "0", "1", "on", "off", "true", "false", "yes", "no"):
            # One session, one trace, as `cuda-shim run --trace=FILE` (the driver only appends).
            open(trace, "w").close()
    except OSError as e:
        raise pytest.UsageError(f"--cuda-shim-trace: cannot write {trace!r}: {e.strerror}")
    try:
        cuda_shim.activate(**settings)
    except (cuda_shim.ActivationError, ValueError) as e:
        raise pytest.UsageError(f"cuda_shim plugin: {e}")
    from cuda_shim import _fixtures

    early_config.pluginmanager.register(_fixtures, "cuda_shim-fixtures")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cuda_shim_devices(n): needs at least n emulated devices (skipped with fewer; "
        "run the session with --cuda-shim-devices n)")
