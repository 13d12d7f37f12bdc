"""cuda-shim: NVIDIA's CUDA driver (libcuda.so.1) and runtime (libcudart.so.13) emulated on the CPU.

The wheel carries the libraries in ``cuda_shim/lib`` and the ``cuda-shim`` launcher in
``cuda_shim/bin``. Three ways to run CUDA clients on them:

* ``cuda-shim run -- CMD`` (console command): CMD runs with LD_LIBRARY_PATH on our libraries.
* ``cuda_shim.activate()`` at the top of a program, before any CUDA library is imported.
* ``pytest -p cuda_shim`` (or ``cuda_shim = true`` in the ini file): the same, for a test session.

Why activate() works without LD_LIBRARY_PATH: the dynamic loader reads LD_LIBRARY_PATH only when
the process starts, but it also answers ``dlopen("libcuda.so.1")`` with any library already loaded
whose SONAME is libcuda.so.1. Loading ours by absolute path first therefore makes every later
``dlopen("libcuda.so.1")`` in this process (cuda.pathfinder, cuda.bindings, NVIDIA's runtime inside
cuda.bindings.runtime or CuPy) return ours.
"""
import ctypes
import os
import re

__all__ = ["activate", "is_active", "libdir", "bindir", "ActivationError", "__version__"]


def _version():
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8 is not supported anyway
        return "0+unknown"
    try:
        return version("cuda-shim")
    except PackageNotFoundError:  # run from a source checkout (PYTHONPATH=python)
        return "0+unknown"


__version__ = _version()

# The libraries activate() loads, in order: the driver first, as the runtime links against it.
# libnvidia-ml.so.1 (NVML) is optional: loaded when the build has it.
_DRIVER = "libcuda.so.1"
_RUNTIME = "libcudart.so.13"
_NVML = "libnvidia-ml.so.1"
# Our nvJitLink (optional too). numba-cuda and cuda.core's Linker link through nvJitLink when
# cuda.pathfinder finds one: NVIDIA's makes machine code the kernel engine cannot run, ours keeps
# the PTX. cuda.pathfinder looks for a library already loaded in the process before anything else
# (then NVIDIA's wheels in site-packages, conda, the system search that LD_LIBRARY_PATH steers,
# CUDA_PATH): loading ours here makes it the one every client gets (docs/kernels.md, "Linking").
_NVJITLINK = "libnvJitLink.so.13"

# Handles of the libraries we loaded: kept for the life of the process so they are never unloaded.
_handles = {}


class ActivationError(RuntimeError):
    """The emulator cannot be activated in this process (see the message for why and what to do)."""


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def libdir():
    """The folder holding our libcuda.so.1 and libcudart.so.13.

    CUDA_SHIM_LIBDIR overrides it, as for the launcher (e.g. to try a build tree's build/lib)."""
    override = os.environ.get("CUDA_SHIM_LIBDIR")
    candidates = [override] if override else [os.path.join(_package_dir(), d) for d in ("lib", "lib64")]
    for d in candidates:
        if os.path.exists(os.path.join(d, _DRIVER)):
            return os.path.realpath(d)
    where = "CUDA_SHIM_LIBDIR=" + override if override else " or ".join(candidates)
    raise ActivationError(f"cuda-shim: no {_DRIVER} in {where}: is the cuda-shim wheel built and installed?")


def bindir():
    """The folder holding the packaged ``cuda-shim`` launcher and its tools (cuda-shim-info, ...)."""
    return os.path.join(_package_dir(), "bin")


def _loaded_files(prefix):
    """Real paths of the files mapped into this process whose name starts with prefix."""
    found = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    if os.path.basename(path).startswith(prefix):
                        found.add(os.path.realpath(path))
    except OSError:  # no /proc: nothing to compare with
        pass
    return found


def _is_loaded(soname):
    """Whether a library answering to soname is loaded, asked the way dlopen() will match it later."""
    try:
        ctypes.CDLL(soname, mode=getattr(os, "RTLD_NOLOAD", 4))
        return True
    except OSError:
        return False


def _foreign(soname, ours):
    """Paths of libraries loaded under soname's name that are not ours (empty when none is)."""
    if not _is_loaded(soname):
        return set()
    stem = soname.split(".so")[0] + ".so"  # libcuda.so.1 -> libcuda.so (NVIDIA's file: libcuda.so.580.x)
    others = _loaded_files(stem) - {os.path.realpath(ours)}
    # Loaded, yet no mapped file of that name: some other file carries the SONAME; say so.
    if not others and os.path.realpath(ours) not in _loaded_files(stem):
        others = {f"(a library whose SONAME is {soname})"}
    return others


def _bool_env(value):
    return "1" if value else "0"


def _driver_version_env(value):
    """13030 or "13030" as is; "13.3" (major.minor) as 13030, like the launcher's --driver-version."""
    text = str(value)
    if text.isdigit():
        return text
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"driver_version {value!r} is neither a number (13030) nor major.minor ('13.3')")
    return str(int(m.group(1)) * 1000 + int(m.group(2)) * 10)


def _trace_env(value):
    """True/False as 1/0; a string as CUDA_SHIM_TRACE takes it (docs/trace.md): 1/0, - (JSON lines on
    stdout), or a file (FILE.json a Perfetto timeline, any other name JSON lines), made absolute
    because children may change directory."""
    if isinstance(value, bool):
        return _bool_env(value)
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if not text:
        raise ValueError("trace must be True/False, '-' or a file name, not an empty string")
    if text in ("-", "0", "1", "on", "off", "true", "false", "yes", "no"):
        return text
    return os.path.abspath(text)


def _profile_env(value):
    """A profile's name as is (the driver looks it up: built in, then the user's directory); a path
    (it holds a '/') absolute, as the driver reads it after children may have changed directory."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if not text:
        raise ValueError("profile must name a profile (h200, rtx, tcc-no-pools, ...) or a .profile file")
    if "/" in text or isinstance(value, os.PathLike):
        path = os.path.abspath(text)
        if not os.access(path, os.R_OK):
            raise ValueError(f"profile: cannot read {path}")
        return path
    return text


def _settings_env(devices, explain, driver_version, config, trace, kernels, env, profile=None):
    """The CUDA_SHIM_* variables that the given settings mean (None: leave the variable alone)."""
    out = {}
    if profile is not None:
        out["CUDA_SHIM_PROFILE"] = _profile_env(profile)
    if devices is not None:
        if isinstance(devices, bool) or not isinstance(devices, int) or devices < 0:
            raise ValueError(f"devices must be a non-negative integer, not {devices!r}")
        out["CUDA_SHIM_DEVICES"] = str(devices)
    if explain is not None:
        out["CUDA_SHIM_EXPLAIN"] = _bool_env(explain)
    if trace is not None:
        out["CUDA_SHIM_TRACE"] = _trace_env(trace)
    if driver_version is not None:
        out["CUDA_SHIM_DRIVER_VERSION"] = _driver_version_env(driver_version)
    if config is not None:
        path = os.path.abspath(os.fspath(config))  # absolute: children may change directory
        if not os.access(path, os.R_OK):
            raise ValueError(f"config: cannot read {path}")
        out["CUDA_SHIM_CONFIG"] = path
    if kernels is not None:
        if kernels not in ("run", "refuse", "skip"):
            raise ValueError(f"kernels must be 'run', 'refuse' or 'skip', not {kernels!r}")
        out["CUDA_SHIM_KERNELS"] = kernels
    for key, value in (env or {}).items():
        if not key.startswith("CUDA_SHIM_"):
            raise ValueError(f"env: {key} is not a CUDA_SHIM_* variable")
        out[key] = str(value)
    return out


# What clients need to hand the kernel engine PTX, set unless the user set them (the launcher sets
# the same): CuPy compiles its kernels to PTX instead of machine code, and uses its own reduction
# kernels instead of CUB's precompiled ones (whose fat binary carries no PTX a device of compute
# capability 9.0 can run).
CLIENT_ENV = {"CUPY_COMPILE_WITH_PTX": "1", "CUPY_ACCELERATORS": ""}


def is_active():
    """Whether activate() has loaded our libraries into this process."""
    return _DRIVER in _handles


def activate(devices=None, explain=None, driver_version=None, config=None, trace=None, kernels=None,
             env=None, nvml=True, profile=None, nvjitlink=True):
    """Loads cuda-shim's libraries into this process and exports its environment to child processes.

    Call it before anything loads a CUDA library (importing cuda.core, cuda.bindings, CuPy, ...).
    Settings left as None keep whatever the environment says (else the emulator's defaults):

    devices         number of emulated devices (CUDA_SHIM_DEVICES)
    explain         print why each failing call failed (CUDA_SHIM_EXPLAIN)
    driver_version  what cuDriverGetVersion reports: 13030 or "13.3" (CUDA_SHIM_DRIVER_VERSION)
    config          a key = value configuration file (CUDA_SHIM_CONFIG)
    trace           True: print every API call; a file name: write the trace there (FILE.json a
                    Perfetto timeline, other names or "-" JSON lines; CUDA_SHIM_TRACE, docs/trace.md)
    kernels         "run" (default), "refuse" or "skip" kernel launches (CUDA_SHIM_KERNELS)
    env             any other CUDA_SHIM_* variables, e.g. {"CUDA_SHIM_IMEX_CHANNEL": 0}
    nvml            also load libnvidia-ml.so.1 when the package has it
    nvjitlink       also load our libnvJitLink.so.13 when the package has it, so that numba-cuda and
                    cuda.core's Linker link PTX the engine runs rather than NVIDIA's machine code
    profile         the emulated machine: "h200" (default), "h100", "a100", "b200", "gb200-nvl72",
                    "rtx", "tcc-no-pools", "cc7-no-concurrent-managed", or a .profile file
                    (CUDA_SHIM_PROFILE; what it lacks is refused, docs/configuration.md)

    The settings become environment variables, because that is what the driver reads, once,
    when it initializes; children (subprocess, multiprocessing's spawn) inherit them together
    with LD_LIBRARY_PATH, so they run on the emulator too.

    Returns the library folder. Raises ActivationError when another libcuda.so.1 (NVIDIA's) is
    already loaded, or when the emulator is active already with different settings.
    """
    lib = libdir()
    settings = _settings_env(devices, explain, driver_version, config, trace, kernels, env, profile)
    ours = os.path.join(lib, _DRIVER)

    others = _foreign(_DRIVER, ours)
    if others:
        raise ActivationError(
            f"cuda-shim: another {_DRIVER} is already loaded in this process: {', '.join(sorted(others))}. "
            f"Every later dlopen('{_DRIVER}') would get that one, so the emulator cannot take over. "
            "Call cuda_shim.activate() (or enable the pytest plugin) before anything imports a CUDA "
            "library, or start the program with `cuda-shim run -- ...`.")

    if is_active():
        changed = {k: v for k, v in settings.items() if os.environ.get(k) != v}
        if changed:
            raise ActivationError(
                f"cuda-shim: already active with other settings; the driver reads them once, when it "
                f"initializes, so {', '.join(f'{k}={v}' for k, v in sorted(changed.items()))} cannot apply "
                "now. Pass them to the first activate(), or run the code in a subprocess with them.")
        return lib

    # Settings first: the driver reads its environment when it initializes, which may be as
    # soon as it is loaded.
    os.environ.update(settings)
    for key, value in CLIENT_ENV.items():
        os.environ.setdefault(key, value)
    path = os.environ.get("LD_LIBRARY_PATH", "")
    if path.split(":")[0] != lib:
        os.environ["LD_LIBRARY_PATH"] = lib + (":" + path if path else "")

    names = [_DRIVER, _RUNTIME] + ([_NVML] if nvml else []) + ([_NVJITLINK] if nvjitlink else [])
    for name in names:
        file = os.path.join(lib, name)
        if not os.path.exists(file):
            if name in (_NVML, _NVJITLINK):
                continue  # optional: not every build has them
            raise ActivationError(f"cuda-shim: {file} is missing: the installation is incomplete")
        if name != _DRIVER and _foreign(name, file):
            # NVIDIA's runtime / NVML / nvJitLink already loaded: the first two run on our driver,
            # which is what matters; loading ours beside them would only give the process two
            # copies (and cuda.pathfinder has already handed NVIDIA's nvJitLink out).
            continue
        # RTLD_GLOBAL: its symbols serve libraries loaded later, as when the loader put it there.
        _handles[name] = ctypes.CDLL(file, mode=ctypes.RTLD_GLOBAL)
    return lib
