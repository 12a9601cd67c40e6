"""Pick the GPU backend before anything imports ``numba.cuda``.

Three backends, chosen in this order unless ``AAG_BACKEND`` says otherwise:

- ``cuda``: an NVIDIA driver answers ``cuInit`` and reports at least one device -> numba-cuda;
- ``hip``: ROCm is present (``/dev/kfd``) and numba-hip is installed -> numba-hip posing as
  ``numba.cuda``;
- ``cpu``: CPU mode, the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) with the course's own
  extensions (see :mod:`autograder.cpu_mode`).

The probe for NVIDIA talks to ``libcuda`` through ctypes, so it needs neither Numba nor the CUDA
toolkit wheels; ``doctor`` reuses the same facts to explain the machine.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import warnings
from dataclasses import dataclass, field

BACKEND_ENV = "AAG_BACKEND"
WARP_SIZE_ENV = "AAG_WARP_SIZE"
BACKENDS = ("cuda", "hip", "cpu")
_ALIASES = {"nvidia": "cuda", "gpu": "cuda", "rocm": "hip", "amd": "hip", "sim": "cpu",
            "simulator": "cpu", "cudasim": "cpu"}

# Numba's performance warnings are advice for library authors; in a notebook they are noise, and in
# an nbgrader test cell any stderr output scores a correct answer 0 (seen on the H200).
_QUIET_ENV = {"NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS": "0", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY": "0"}


@dataclass(frozen=True)
class NvidiaProbe:
    """What the NVIDIA driver says about this machine (all empty when there is no driver)."""

    library: str | None = None      # the libcuda that loaded
    error: str | None = None        # why there is no usable device, in words
    driver_version: int | None = None   # e.g. 13000 for CUDA 13.0
    devices: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return bool(self.devices)

    @property
    def driver_cuda(self) -> str | None:
        if not self.driver_version:
            return None
        return f"{self.driver_version // 1000}.{self.driver_version % 1000 // 10}"


@dataclass(frozen=True)
class RocmProbe:
    kfd: bool = False               # /dev/kfd: the ROCm kernel driver is loaded
    numba_hip: bool = False         # numba-hip is installed

    @property
    def usable(self) -> bool:
        return self.kfd and self.numba_hip


@dataclass(frozen=True)
class Backend:
    name: str                       # "cuda", "hip" or "cpu"
    reason: str                     # one sentence: why this backend
    warp_size: int = 32
    nvidia: NvidiaProbe = field(default_factory=NvidiaProbe)
    rocm: RocmProbe = field(default_factory=RocmProbe)

    @property
    def is_gpu(self) -> bool:
        return self.name != "cpu"

    @property
    def label(self) -> str:
        return {"cuda": "NVIDIA GPU (numba-cuda)", "hip": "AMD GPU (numba-hip)",
                "cpu": "CPU mode (CUDA simulator)"}[self.name]

    def banner(self) -> str:
        extra = ""
        if self.name == "cpu":
            extra = "; correctness only, timing needs a GPU"
        elif self.name == "cuda" and self.nvidia.devices:
            extra = f"; {self.nvidia.devices[0]}"
        return (f"All About GPUs: {self.label}: {self.reason}{extra} "
                f"(set {BACKEND_ENV}=cuda|hip|cpu to override)")


def probe_nvidia() -> NvidiaProbe:
    """Ask the NVIDIA driver, through ctypes, whether it sees a GPU."""
    names = {"linux": ["libcuda.so.1", "libcuda.so"], "win32": ["nvcuda.dll"]}.get(sys.platform, [])
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        why = ("macOS has no CUDA driver" if sys.platform == "darwin"
               else "no NVIDIA driver library (libcuda) on this machine")
        return NvidiaProbe(error=why)
    version = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(version))
    rc = lib.cuInit(0)
    if rc != 0:
        return NvidiaProbe(library=name, driver_version=version.value or None,
                           error=f"the NVIDIA driver is installed but cuInit failed (error {rc}): "
                                 "no usable GPU")
    count = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    devices = []
    for i in range(count.value):
        dev = ctypes.c_int(0)
        buf = ctypes.create_string_buffer(256)
        if lib.cuDeviceGet(ctypes.byref(dev), i) == 0 and lib.cuDeviceGetName(buf, 256, dev) == 0:
            devices.append(buf.value.decode(errors="replace"))
    if not devices:
        return NvidiaProbe(library=name, driver_version=version.value or None,
                           error="the NVIDIA driver reports no devices")
    return NvidiaProbe(library=name, driver_version=version.value or None, devices=tuple(devices))


def probe_rocm() -> RocmProbe:
    try:
        hip = importlib.util.find_spec("numba.hip") is not None
    except (ImportError, ValueError):
        hip = False
    return RocmProbe(kfd=os.path.exists("/dev/kfd"), numba_hip=hip)


def _warp_size(default: int) -> int:
    raw = os.environ.get(WARP_SIZE_ENV, "")
    if not raw:
        return default
    size = int(raw)
    if size not in (32, 64):
        raise ValueError(f"{WARP_SIZE_ENV} must be 32 or 64, not {raw!r}")
    return size


def choose(override: str | None = None) -> Backend:
    """Decide the backend from what the machine has (no side effects)."""
    raw = (override if override is not None else os.environ.get(BACKEND_ENV, "")).strip().lower()
    wanted = _ALIASES.get(raw, raw) or "auto"
    if wanted not in BACKENDS + ("auto",):
        raise ValueError(f"{BACKEND_ENV}={raw!r}: expected one of cuda, hip, cpu (or leave it unset)")
    nv = probe_nvidia() if wanted in ("auto", "cuda") else NvidiaProbe()
    rocm = probe_rocm() if wanted in ("auto", "hip") else RocmProbe()
    if wanted == "cuda":
        if not nv.usable:
            raise RuntimeError(f"{BACKEND_ENV}=cuda but {nv.error}")
        return Backend("cuda", f"{BACKEND_ENV}=cuda", 32, nv, rocm)
    if wanted == "hip":
        if not rocm.usable:
            missing = "numba-hip is not installed (pip install '.[hip]')" if not rocm.numba_hip \
                else "ROCm's /dev/kfd is missing"
            raise RuntimeError(f"{BACKEND_ENV}=hip but {missing}")
        return Backend("hip", f"{BACKEND_ENV}=hip", 64, nv, rocm)
    if wanted == "cpu":
        return Backend("cpu", f"{BACKEND_ENV}=cpu", _warp_size(32), nv, rocm)
    if nv.usable:
        n = len(nv.devices)
        return Backend("cuda", f"found {n} NVIDIA GPU{'s' * (n > 1)}", 32, nv, rocm)
    if rocm.usable:
        return Backend("hip", "found ROCm and numba-hip", 64, nv, rocm)
    why = nv.error or "no GPU found"
    if rocm.kfd and not rocm.numba_hip:
        why = "ROCm is present but numba-hip is not installed (pip install '.[hip]')"
    return Backend("cpu", why, _warp_size(32), nv, rocm)


_selected: Backend | None = None


def select(override: str | None = None) -> Backend:
    """Choose the backend once per process and configure Numba for it.

    Must run before ``numba.cuda`` is imported; if it was imported already (a learner ran
    ``from numba import cuda`` first), the backend Numba already loaded wins and the reason says so.
    """
    global _selected
    if _selected is not None and override is None:
        return _selected
    backend = choose(override)
    for key, value in _QUIET_ENV.items():
        os.environ[key] = value
    if "numba.cuda" in sys.modules:
        import numba.core.config as config
        loaded = "cpu" if config.ENABLE_CUDASIM else backend.name
        if loaded != backend.name or backend.name == "cpu" and not config.ENABLE_CUDASIM:
            backend = Backend(loaded, "numba.cuda was imported before the course chose a backend; "
                              "restart the kernel and import autograder first",
                              backend.warp_size, backend.nvidia, backend.rocm)
    else:
        if backend.name == "cpu":
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
            from autograder.machine import triton_bridge
            triton_bridge.interpret_in_cpu_mode()   # Triton's kernels run in its interpreter
        else:
            os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
        if "numba.core.config" in sys.modules:
            import numba.core.config as config
            config.reload_config()
        if backend.name == "hip":
            from numba import hip  # type: ignore[attr-defined]
            hip.pose_as_cuda()
    _silence_performance_warnings()
    if backend.name == "cpu":
        from autograder.machine import simulator
        simulator.install(warp_size=backend.warp_size)
    if backend.name in ("cpu", "cuda"):
        from autograder.machine import events
        events.install(backend.name)
    _selected = backend
    return backend


def _silence_performance_warnings() -> None:
    import numba.core.config as config
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    config.CUDA_WARN_ON_IMPLICIT_COPY = 0
    from numba.core.errors import NumbaPerformanceWarning
    warnings.simplefilter("ignore", NumbaPerformanceWarning)
    import numba.cuda  # noqa: F401  (the backend is fixed from here on)
    try:
        from numba.cuda.core.errors import NumbaPerformanceWarning as CudaPerformanceWarning
        warnings.simplefilter("ignore", CudaPerformanceWarning)
    except ImportError:
        pass


def current() -> Backend:
    return select()
