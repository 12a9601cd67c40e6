"""autograder.device: the backend choice, with the machine faked, and its effect on a real process."""

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

from autograder import device
from autograder.device import Backend, NvidiaProbe, RocmProbe

H200 = NvidiaProbe(library="libcuda.so.1", driver_version=13000, devices=("NVIDIA H200",))
NO_DRIVER = NvidiaProbe(error="no NVIDIA driver library (libcuda) on this machine")


@pytest.fixture
def machine(monkeypatch):
    """Fake the probes: machine(nvidia=..., rocm=...) sets what choose() sees."""
    monkeypatch.delenv(device.BACKEND_ENV, raising=False)
    monkeypatch.delenv(device.WARP_SIZE_ENV, raising=False)

    def fake(nvidia=NO_DRIVER, rocm=RocmProbe()):
        monkeypatch.setattr(device, "probe_nvidia", lambda: nvidia)
        monkeypatch.setattr(device, "probe_rocm", lambda: rocm)
    fake()
    return fake


def test_auto_picks_nvidia_gpu(machine):
    machine(nvidia=H200)
    b = device.choose()
    assert (b.name, b.warp_size, b.is_gpu) == ("cuda", 32, True)
    assert b.reason == "found 1 NVIDIA GPU"


def test_auto_without_gpu_is_cpu_mode_and_says_why(machine):
    b = device.choose()
    assert b.name == "cpu" and not b.is_gpu
    assert "libcuda" in b.reason


def test_auto_prefers_nvidia_over_rocm(machine):
    machine(nvidia=H200, rocm=RocmProbe(kfd=True, numba_hip=True))
    assert device.choose().name == "cuda"


def test_auto_picks_rocm_with_numba_hip(machine):
    machine(rocm=RocmProbe(kfd=True, numba_hip=True))
    b = device.choose()
    assert (b.name, b.warp_size) == ("hip", 64)


def test_rocm_without_numba_hip_falls_back_to_cpu_and_says_so(machine):
    machine(rocm=RocmProbe(kfd=True, numba_hip=False))
    b = device.choose()
    assert b.name == "cpu"
    assert "numba-hip is not installed" in b.reason and "[hip]" in b.reason


def test_env_override_beats_detection(machine, monkeypatch):
    machine(nvidia=H200)
    monkeypatch.setenv(device.BACKEND_ENV, "cpu")
    b = device.choose()
    assert b.name == "cpu"
    assert b.reason == "AAG_BACKEND=cpu"


def test_argument_beats_env(machine, monkeypatch):
    machine(nvidia=H200)
    monkeypatch.setenv(device.BACKEND_ENV, "cpu")
    assert device.choose("cuda").name == "cuda"


@pytest.mark.parametrize("alias, name", [
    ("nvidia", "cuda"), ("gpu", "cuda"), ("CUDA", "cuda"), (" cuda ", "cuda"),
    ("rocm", "hip"), ("amd", "hip"),
    ("sim", "cpu"), ("simulator", "cpu"), ("cudasim", "cpu"), ("CPU", "cpu"),
])
def test_aliases(machine, monkeypatch, alias, name):
    machine(nvidia=H200, rocm=RocmProbe(kfd=True, numba_hip=True))
    monkeypatch.setenv(device.BACKEND_ENV, alias)
    assert device.choose().name == name


@pytest.mark.parametrize("empty", ["", "  "])
def test_empty_override_means_auto(machine, monkeypatch, empty):
    machine(nvidia=H200)
    monkeypatch.setenv(device.BACKEND_ENV, empty)
    assert device.choose().name == "cuda"


def test_invalid_override_is_a_clear_error(machine, monkeypatch):
    monkeypatch.setenv(device.BACKEND_ENV, "tpu")
    with pytest.raises(ValueError) as err:
        device.choose()
    message = str(err.value)
    assert "AAG_BACKEND" in message and "'tpu'" in message
    assert all(name in message for name in ("cuda", "hip", "cpu"))


def test_cuda_requested_but_absent_is_a_clear_error(machine, monkeypatch):
    monkeypatch.setenv(device.BACKEND_ENV, "cuda")
    with pytest.raises(RuntimeError) as err:
        device.choose()
    assert "AAG_BACKEND=cuda" in str(err.value) and "libcuda" in str(err.value)


def test_hip_requested_without_numba_hip_says_how_to_install(machine):
    machine(rocm=RocmProbe(kfd=True, numba_hip=False))
    with pytest.raises(RuntimeError, match=r"numba-hip is not installed.*\[hip\]"):
        device.choose("hip")


def test_hip_requested_without_rocm_says_so(machine):
    machine(rocm=RocmProbe(kfd=False, numba_hip=True))
    with pytest.raises(RuntimeError, match="/dev/kfd"):
        device.choose("hip")


def test_warp_size_override_in_cpu_mode(machine, monkeypatch):
    monkeypatch.setenv(device.WARP_SIZE_ENV, "64")
    assert device.choose().warp_size == 64
    monkeypatch.setenv(device.WARP_SIZE_ENV, "48")
    with pytest.raises(ValueError, match="AAG_WARP_SIZE"):
        device.choose()


def test_banner_names_backend_reason_and_override(machine):
    cpu = device.choose()
    text = cpu.banner()
    assert "CPU mode" in text and cpu.reason in text
    assert "AAG_BACKEND=cuda|hip|cpu" in text
    assert "timing needs a GPU" in text
    machine(nvidia=H200)
    gpu = device.choose().banner()
    assert "NVIDIA GPU" in gpu and "NVIDIA H200" in gpu and "AAG_BACKEND" in gpu
    hip = Backend("hip", "found ROCm and numba-hip", 64).banner()
    assert "AMD GPU" in hip and "AAG_BACKEND" in hip


def test_driver_cuda_version_text():
    assert H200.driver_cuda == "13.0"
    assert NvidiaProbe(driver_version=12040).driver_cuda == "12.4"
    assert NvidiaProbe().driver_cuda is None


# -- probe_nvidia against a fake libcuda: the ctypes calls, without a driver


class FakeLibcuda:
    def __init__(self, init_rc=0, names=("NVIDIA H200",), version=13000):
        self.init_rc, self.names, self.version = init_rc, names, version

    def cuDriverGetVersion(self, ref):
        ref._obj.value = self.version
        return 0

    def cuInit(self, flags):
        return self.init_rc

    def cuDeviceGetCount(self, ref):
        ref._obj.value = len(self.names)
        return 0

    def cuDeviceGet(self, ref, i):
        ref._obj.value = i
        return 0

    def cuDeviceGetName(self, buf, size, dev):
        buf.value = self.names[dev.value].encode()
        return 0


def _fake_cdll(monkeypatch, lib):
    def cdll(name):
        if lib is None:
            raise OSError(f"{name}: cannot open shared object file")
        return lib
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", cdll)


def test_probe_nvidia_lists_devices(monkeypatch):
    _fake_cdll(monkeypatch, FakeLibcuda(names=("NVIDIA H200", "NVIDIA H200")))
    probe = device.probe_nvidia()
    assert probe.usable and probe.devices == ("NVIDIA H200", "NVIDIA H200")
    assert probe.driver_cuda == "13.0" and probe.error is None


def test_probe_nvidia_without_driver(monkeypatch):
    _fake_cdll(monkeypatch, None)
    probe = device.probe_nvidia()
    assert not probe.usable and "libcuda" in probe.error


def test_probe_nvidia_when_cuinit_fails(monkeypatch):
    _fake_cdll(monkeypatch, FakeLibcuda(init_rc=100))
    probe = device.probe_nvidia()
    assert not probe.usable and "cuInit failed (error 100)" in probe.error
    assert probe.driver_version == 13000


def test_probe_nvidia_with_no_devices(monkeypatch):
    _fake_cdll(monkeypatch, FakeLibcuda(names=()))
    probe = device.probe_nvidia()
    assert not probe.usable and "no devices" in probe.error


def test_probe_nvidia_on_macos(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert "macOS" in device.probe_nvidia().error


def test_real_probes_do_not_raise():
    assert isinstance(device.probe_nvidia(), NvidiaProbe)
    assert isinstance(device.probe_rocm(), RocmProbe)


# -- a fresh interpreter: what `import autograder` does to Numba

_KERNEL_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import sys
    if sys.argv[1] == "course":
        import autograder
    from numba import cuda
    import numba.core.config as config

    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    # A host array (an implicit copy) and a 1-block grid (low occupancy): both warn on a GPU
    # unless the course silenced them, and any stderr scores an nbgrader test cell 0.
    a = np.zeros(8, dtype=np.float32)
    add_one[1, 8](a)
    print(json.dumps({
        "backend": autograder.backend.name if sys.argv[1] == "course" else None,
        "cudasim": config.ENABLE_CUDASIM,
        "low_occupancy": config.CUDA_LOW_OCCUPANCY_WARNINGS,
        "implicit_copy": config.CUDA_WARN_ON_IMPLICIT_COPY,
        "kernel_type": type(add_one).__module__,
        "result": a.tolist(),
    }))
""")


def _run_fresh(env_backend, mode="course"):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "AAG_"))}      # nothing inherited decides for it
    if env_backend is not None:
        env["AAG_BACKEND"] = env_backend
    proc = subprocess.run([sys.executable, "-c", _KERNEL_SCRIPT, mode], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import json
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_fresh_import_in_cpu_mode_enables_simulator_quietly():
    out, stderr = _run_fresh("cpu")
    assert out["backend"] == "cpu"
    assert out["cudasim"] == 1
    assert out["kernel_type"].startswith("numba.cuda.simulator")
    assert out["low_occupancy"] == 0 and out["implicit_copy"] == 0
    assert out["result"] == [1.0] * 8
    # Numba's simulator does not emit these warnings, so the flags above are what CPU mode can
    # show; the GPU test below proves the silencing where the warnings exist.
    assert stderr == ""


@pytest.mark.gpu
def test_fresh_import_on_gpu_runs_kernel_without_warnings():
    out, stderr = _run_fresh(None)
    assert out["backend"] == "cuda" and out["cudasim"] == 0
    assert out["low_occupancy"] == 0 and out["implicit_copy"] == 0
    assert out["result"] == [1.0] * 8
    assert stderr == ""
    # The control: without the course, the same launch does warn (seen on an H200, numba-cuda
    # 0.30.4), so the empty stderr above is the course's doing.
    _, plain = _run_fresh(None, mode="plain")
    assert "low occupancy" in plain and "Host array" in plain
