"""``aag doctor``: explain this machine from what it actually detects.

Every fact comes from a probe run now (the driver through ctypes, package metadata, a PTX compile
in a child process), never from assumptions, and every probe is wrapped so that a missing or
broken package becomes a line in the report instead of a traceback: the doctor is what a learner
runs when things are broken.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from importlib import metadata

from autograder.machine import device

OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"
_MARKS = {OK: "✓", WARN: "!", FAIL: "✗", INFO: "·"}
_ASCII_MARKS = {OK: "+", WARN: "!", FAIL: "x", INFO: "-"}

PACKAGES = ("numpy", "numba", "numba-cuda", "llvmlite", "nbgrader", "jupyterlab", "jupytext",
            "numba-hip", "triton")
# The CUDA toolkit as wheels (the cuda12/cuda13 extras): NVRTC compiles, libdevice/NVVM lowers,
# nvJitLink links. Without them numba-cuda needs a system CUDA toolkit.
TOOLKIT_WHEELS = ("cuda-toolkit", "nvidia-cuda-nvrtc", "nvidia-nvvm", "nvidia-nvjitlink",
                  "nvidia-cuda-runtime", "nvidia-cuda-nvdisasm")
WARP_INTRINSICS = "shfl_*_sync, ballot_sync, syncwarp, activemask"


@dataclass
class Check:
    section: str
    status: str       # ok | warn | fail | info
    text: str


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
    except Exception:                              # a corrupt dist-info must not stop the report
        return None


def _vtuple(v: str | None) -> tuple[int, ...]:
    """Leading numeric release parts: '2.5.0rc1' -> (2, 5, 0); good enough for the caps we check."""
    out = []
    for part in (v or "").split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        out.append(int(digits))
        if digits != part:
            break
    return tuple(out)


def _os_description() -> tuple[str, str, str]:
    """(name, status, note)"""
    system = platform.system()
    if system == "Linux":
        try:
            with open("/proc/version") as f:
                wsl = "microsoft" in f.read().lower()
        except OSError:
            wsl = False
        try:
            pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "Linux")
        except (OSError, AttributeError):
            pretty = "Linux"
        name = f"{pretty} ({'WSL2, ' if wsl else ''}kernel {platform.release()}, {platform.machine()})"
        return name, OK, "supported"
    if system == "Darwin":
        return (f"macOS {platform.mac_ver()[0]} ({platform.machine()})", OK,
                "supported; no CUDA on macOS, so CPU mode")
    if system == "Windows":
        return (f"Windows {platform.release()}", FAIL,
                "not supported natively: use WSL2 (Ubuntu) and run ./aag there")
    return system or "unknown", WARN, "untested: the course supports Linux and macOS"


def _ptx_probe(timeout: float = 180) -> dict:
    """Compile a tiny kernel to PTX in a child process with the simulator off.

    This needs no GPU (only NVVM from the toolkit wheels or a CUDA install), and it exercises the
    path that breaks when numpy or the toolkit is wrong. A child process, because this process has
    already fixed its backend, possibly to the simulator.
    """
    code = (
        "from numba import cuda, float32\n"
        "def k(a):\n"
        "    i = cuda.grid(1)\n"
        "    if i < a.size:\n"
        "        a[i] += 1\n"
        "ptx, _ = cuda.compile_ptx(k, (float32[:],), cc=(8, 0))\n"
        "print(len(ptx))\n"
    )
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
    except OSError as exc:
        return {"ok": False, "error": str(exc)}
    if proc.returncode == 0:
        return {"ok": True, "error": None}
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return {"ok": False, "error": ptx_error_text(lines[-1] if lines else f"exit {proc.returncode}")}


def ptx_error_text(error: str) -> str:
    """A failed PTX compile in plain words: most often the toolkit's compiler libraries are not
    installed (a laptop without the CUDA extra), which is a choice, not a breakage."""
    if any(word in error for word in ("DynamicLibNotFoundError", "libnvrtc", "libnvvm",
                                      "NvvmSupportError", "NVVM")):
        return ("the CUDA toolkit's compiler libraries (NVVM, NVRTC) are not installed here; "
                "only the compiled-code viewer (ag.visual.show_code) needs them without a GPU: "
                "AAG_EXTRAS=cuda13 ./aag doctor installs them as wheels (about 190 MB)")
    return error


def _jupyter_kernel() -> dict:
    """Which Python Jupyter's default ``python3`` kernel starts (a user-level kernelspec left over
    from another install wins over this environment's and then nothing installed here imports)."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager
        spec = KernelSpecManager().get_kernel_spec("python3")
        exe = spec.argv[0]
    except Exception as exc:                      # jupyter missing or no python3 kernel
        return {"python": None, "error": f"{type(exc).__name__}: {exc}"}
    resolved = shutil.which(exe) or exe
    same = exe in ("python", "python3", sys.executable) or \
        os.path.realpath(resolved) == os.path.realpath(sys.executable)
    return {"python": exe, "resource_dir": spec.resource_dir, "matches": same, "error": None}


def collect(ptx: bool = True) -> dict:
    """Run every probe; return plain data (what ``--json`` prints) with the checks in order."""
    checks: list[Check] = []

    def add(section: str, status: str, text: str) -> None:
        checks.append(Check(section, status, text))

    # -- system
    os_name, os_status, os_note = _os_description()
    add("System", os_status, f"OS: {os_name}: {os_note}")
    py_ok = sys.version_info >= (3, 11)
    add("System", OK if py_ok else FAIL,
        f"Python {platform.python_version()} at {sys.executable}"
        + ("" if py_ok else ": the course needs 3.11 or newer"))
    in_venv = sys.prefix != sys.base_prefix
    add("System", INFO, f"environment: {sys.prefix}" + (" (virtual environment)" if in_venv else ""))
    add("System", INFO, f"CPU cores: {os.cpu_count()}")

    # -- packages
    versions = {name: _version(name) for name in PACKAGES}
    required = ("numpy", "numba", "numba-cuda", "llvmlite", "nbgrader", "jupyterlab", "jupytext")
    for name in required:
        v = versions[name]
        add("Packages", OK if v else FAIL, f"{name} {v}" if v else f"{name} is not installed")
    if versions["numba-hip"]:
        add("Packages", INFO, f"numba-hip {versions['numba-hip']}")
    from autograder.machine import triton_bridge
    triton_missing = triton_bridge.unavailable_reason()
    # The GPU MODE track's Triton exercises: Triton's interpreter in CPU mode, its compiler on a GPU.
    add("Packages", WARN if triton_missing else OK,
        triton_missing or f"triton {versions['triton']} (the GPU MODE chapters' Triton exercises; "
        "in CPU mode they run in its interpreter)")
    numba_error = None
    try:
        import numba  # noqa: F401
    except Exception as exc:                      # broken installs raise more than ImportError
        numba_error = f"{type(exc).__name__}: {exc}"
        add("Packages", FAIL, f"numba does not import: {numba_error}")

    # -- known breakages, judged from the versions installed
    np_v, nb_v = _vtuple(versions["numpy"]), _vtuple(versions["numba"])
    if np_v and np_v >= (2, 5):
        add("Known breakages", FAIL, f"numpy {versions['numpy']} >= 2.5 removed np.row_stack: every "
            "numba-cuda kernel compile fails; pip install 'numpy<2.5'")
    nbg = _vtuple(versions["nbgrader"])
    if nbg and nbg < (0, 9, 6):
        add("Known breakages", FAIL, f"nbgrader {versions['nbgrader']} < 0.9.6: its JupyterLab "
            "extension breaks on JupyterLab >= 4.3; pip install 'nbgrader>=0.9.6'")
    if versions["numba-hip"] and nb_v and nb_v >= (0, 64):
        add("Known breakages", FAIL, f"numba-hip needs numba < 0.64 but numba {versions['numba']} "
            "is installed: pip install 'numba<0.64'")
    nc = _vtuple(versions["numba-cuda"])
    if nc and nc[:2] != (0, 30):
        add("Known breakages", WARN, f"numba-cuda {versions['numba-cuda']}: the course is tested "
            "with 0.30.x")
    if not any(c.section == "Known breakages" for c in checks):
        add("Known breakages", OK, "none of the known ones (numpy >= 2.5, nbgrader < 0.9.6, "
            "numba-hip with numba >= 0.64)")

    # -- NVIDIA
    try:
        nv = device.probe_nvidia()
    except Exception as exc:
        nv = device.NvidiaProbe(error=f"the probe itself failed: {type(exc).__name__}: {exc}")
    if nv.driver_version:
        add("NVIDIA", OK, f"driver {nv.library}, supports CUDA {nv.driver_cuda}")
    for i, name in enumerate(nv.devices):
        add("NVIDIA", OK, f"GPU {i}: {name}")
    if not nv.usable:
        add("NVIDIA", INFO if not nv.driver_version else WARN, f"no usable GPU: {nv.error}")
    smi = shutil.which("nvidia-smi")
    add("NVIDIA", INFO, f"nvidia-smi: {smi or 'not on PATH'}")
    wheels = {name: _version(name) for name in TOOLKIT_WHEELS}
    present = [f"{n} {v}" for n, v in wheels.items() if v]
    if present:
        add("NVIDIA", OK, "CUDA toolkit wheels: " + ", ".join(present))
    else:
        add("NVIDIA", WARN if nv.usable else INFO,
            "no CUDA toolkit wheels (NVRTC, NVVM): install the cuda13 or cuda12 extra "
            "(AAG_EXTRAS=cuda13 ./aag ...) unless a system CUDA toolkit is set up")
    nvrtc_major = _vtuple(wheels["nvidia-cuda-nvrtc"])[:1]
    if nv.usable and nvrtc_major and nv.driver_version and nvrtc_major[0] > nv.driver_version // 1000:
        add("NVIDIA", FAIL, f"the toolkit wheels are CUDA {nvrtc_major[0]} but the driver supports "
            f"only CUDA {nv.driver_cuda}: reinstall with AAG_EXTRAS=cuda{nv.driver_version // 1000}")

    # -- AMD
    try:
        rocm = device.probe_rocm()
    except Exception as exc:
        rocm = device.RocmProbe()
        add("AMD", WARN, f"the ROCm probe failed: {type(exc).__name__}: {exc}")
    add("AMD", OK if rocm.kfd else INFO,
        "ROCm driver (/dev/kfd) present" if rocm.kfd else "no ROCm driver (/dev/kfd)")
    if rocm.kfd or rocm.numba_hip:
        add("AMD", OK if rocm.numba_hip else WARN,
            "numba-hip installed" if rocm.numba_hip
            else "numba-hip not installed: AAG_EXTRAS=hip ./aag ... to use the AMD GPU")

    # -- backend
    override = os.environ.get(device.BACKEND_ENV)
    add("Backend", INFO, f"{device.BACKEND_ENV}={override}" if override
        else f"{device.BACKEND_ENV} not set: the course detects the backend "
             f"(set {device.BACKEND_ENV}=cuda|hip|cpu to override)")
    backend = None
    backend_error = None
    try:
        backend = device.choose()
        add("Backend", OK, f"{backend.label}: {backend.reason} (warp size {backend.warp_size})")
    except Exception as exc:
        backend_error = f"{type(exc).__name__}: {exc}"
        add("Backend", FAIL, f"cannot choose a backend: {exc}")

    ptx_result = None
    if ptx and numba_error is None and versions["numba-cuda"] and (backend is None or
                                                                   backend.name != "hip"):
        ptx_result = _ptx_probe()
        if ptx_result["ok"]:
            add("Backend", OK, "compiles kernels to PTX (cc 8.0) with no GPU needed: learners "
                "can read what their kernels compile to")
        else:
            add("Backend", FAIL if backend is not None and backend.name == "cuda" else WARN,
                f"cannot compile a kernel to PTX: {ptx_result['error']}")

    kernel = _jupyter_kernel()
    if kernel["python"] is None:
        add("Backend", WARN, f"Jupyter has no python3 kernel: {kernel['error']}")
    elif not kernel["matches"]:
        add("Backend", WARN, f"Jupyter's python3 kernel runs {kernel['python']} (from "
            f"{kernel['resource_dir']}), not this environment's Python: notebooks will not find "
            "the course; remove that kernelspec or start the lab with ./aag lab from a clean shell")

    # -- grading: the sandbox learner code runs in (docs/grading.md)
    try:
        from autograder.grading import sandbox
        why_not = sandbox.unavailable_reason()
    except Exception as exc:   # the doctor must report, never crash
        why_not = f"the sandbox probe failed: {type(exc).__name__}: {exc}"
    if why_not is None:
        add("Grading", OK, f"learner code can run sandboxed (bubblewrap at {sandbox.bwrap_path()})")
    else:
        add("Grading", INFO, f"no grading sandbox: {why_not}. Learners can still grade their own "
            "notebooks (`aag grade`); an instructor's autograde refuses to run without one")

    # -- limits of this machine
    if backend is not None and backend.name == "cpu":
        add("Will not work here", WARN, "speed tests and timing of your kernels: they need a GPU "
            "(the simulator runs kernels as Python threads, so their times say nothing about a "
            "GPU); speed cells say so and are skipped")
        add("Will not work here", WARN, f"warp intrinsics ({WARP_INTRINSICS}) are missing from "
            "Numba's simulator; the course's CPU mode supplies what it can")
        add("Will not work here", INFO, "the simulator runs every thread in Python: exercises use "
            "tiny sizes here (a 2^16-thread vector add takes seconds)")
    elif backend is not None and backend.name == "hip":
        add("Will not work here", INFO, "AMD wavefronts are 64 wide: kernels that hard-code 32 "
            "lanes give wrong answers; read cuda.warpsize")
    elif backend is not None:
        add("Will not work here", OK, "nothing known: correctness, timing and speed tests all run")

    fails = [c for c in checks if c.status == FAIL]
    warns = [c for c in checks if c.status == WARN]
    if fails:
        summary = f"{len(fails)} problem{'s' * (len(fails) > 1)} to fix: {fails[0].text}"
    elif backend is not None and backend.name == "cpu":
        summary = f"ready in CPU mode ({backend.reason}): correctness checks run, timing needs a GPU"
    elif backend is not None:
        summary = f"ready: {backend.label}" + (f", {nv.devices[0]}" if backend.name == "cuda"
                                              and nv.devices else "")
    else:
        summary = "not ready"
    return {
        "ok": not fails,
        "summary": summary,
        "status": FAIL if fails else (WARN if warns or (backend and backend.name == "cpu") else OK),
        "system": {"os": os_name, "platform": sys.platform, "python": platform.python_version(),
                   "executable": sys.executable, "prefix": sys.prefix, "venv": in_venv,
                   "cpu_count": os.cpu_count()},
        "packages": versions,
        "toolkit_wheels": wheels,
        "numba_import_error": numba_error,
        "nvidia": {"library": nv.library, "driver_version": nv.driver_version,
                   "driver_cuda": nv.driver_cuda, "devices": list(nv.devices), "error": nv.error,
                   "nvidia_smi": smi},
        "rocm": {"kfd": rocm.kfd, "numba_hip": rocm.numba_hip},
        "backend": {"override": override, "env_var": device.BACKEND_ENV,
                    "name": backend.name if backend else None,
                    "label": backend.label if backend else None,
                    "reason": backend.reason if backend else None,
                    "warp_size": backend.warp_size if backend else None,
                    "error": backend_error},
        "ptx": ptx_result,
        "jupyter_kernel": kernel,
        "checks": [asdict(c) for c in checks],
    }


def _marks() -> dict[str, str]:
    enc = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "".join(_MARKS.values()).encode(enc)
        return _MARKS
    except (UnicodeEncodeError, LookupError):
        return _ASCII_MARKS


def render(report: dict) -> str:
    marks = _marks()
    lines = ["All About GPUs: doctor"]
    section = None
    for c in report["checks"]:
        if c["section"] != section:
            section = c["section"]
            lines += ["", section]
        lines.append(f"  {marks[c['status']]} {c['text']}")
    lines += ["", f"{marks[report['status']]} {report['summary']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aag doctor", description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-ptx", action="store_true", help="skip the PTX compile probe (seconds)")
    args = p.parse_args(argv)
    report = collect(ptx=not args.no_ptx)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0 if report["ok"] else 1
