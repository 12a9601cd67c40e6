"""autograder.doctor: runs anywhere, reports what it detects, and survives a broken Numba."""

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

import without_numba
from autograder import doctor


def run_aag(*args, backend="cpu", timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "AAG_"))}
    if backend is not None:
        env["AAG_BACKEND"] = backend
    return subprocess.run([sys.executable, "-m", "autograder", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def text_report():
    proc = run_aag("doctor")
    # 1 means the doctor found a problem with this machine (judged in the JSON test below).
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stdout + proc.stderr
    return proc.stdout


def test_text_report_has_its_sections_and_a_summary(text_report):
    for section in ("System", "Packages", "Known breakages", "NVIDIA", "AMD", "Backend",
                    "Will not work here"):
        assert f"\n{section}\n" in text_report
    last = text_report.strip().splitlines()[-1]
    assert last.startswith(("✓", "!", "✗", "+", "x"))


def test_text_report_names_backend_override_and_versions(text_report):
    assert "CPU mode (CUDA simulator): AAG_BACKEND=cpu" in text_report
    assert "AAG_BACKEND=cpu" in text_report
    for dist in ("numpy", "numba", "numba-cuda", "llvmlite", "nbgrader", "jupyterlab", "jupytext"):
        assert f"{dist} {metadata.version(dist)}" in text_report
    assert "speed tests and timing" in text_report and "warp intrinsics" in text_report


def test_json_report_parses_and_agrees_with_the_machine():
    proc = run_aag("doctor", "--json", "--no-ptx")
    report = json.loads(proc.stdout)
    # The environment the tests run in is the course's own: the doctor must find nothing wrong.
    failures = [c["text"] for c in report["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0 and report["ok"] is True, failures
    assert report["backend"]["name"] == "cpu" and report["backend"]["override"] == "cpu"
    assert report["backend"]["env_var"] == "AAG_BACKEND"
    assert report["packages"]["numpy"] == metadata.version("numpy")
    assert report["system"]["python"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert {c["status"] for c in report["checks"]} <= {"ok", "warn", "fail", "info"}
    assert report["ptx"] is None


def test_invalid_override_is_reported_not_raised(monkeypatch):
    # In-process: `python -m autograder` with a bad AAG_BACKEND fails at import, before doctor.
    monkeypatch.setenv("AAG_BACKEND", "tpu")
    report = doctor.collect(ptx=False)
    assert report["ok"] is False and report["backend"]["name"] is None
    assert "AAG_BACKEND='tpu'" in report["backend"]["error"]
    assert "problem" in report["summary"]


@pytest.mark.parametrize("versions, expected", [
    ({"numpy": "2.5.0"}, "numpy 2.5.0 >= 2.5"),
    ({"nbgrader": "0.9.4"}, "nbgrader 0.9.4 < 0.9.6"),
    ({"numba-hip": "0.2.1", "numba": "0.64.0"}, "numba-hip needs numba < 0.64"),
])
def test_known_breakages_are_failures(monkeypatch, versions, expected):
    real = doctor._version
    monkeypatch.setattr(doctor, "_version", lambda name: versions.get(name, real(name)))
    report = doctor.collect(ptx=False)
    fails = [c["text"] for c in report["checks"] if c["status"] == "fail"]
    assert any(expected in text for text in fails), fails
    assert report["ok"] is False


def test_version_parsing():
    assert doctor._vtuple("2.5.0rc1") == (2, 5, 0)
    assert doctor._vtuple("0.30.4") == (0, 30, 4)
    assert doctor._vtuple(None) == ()


def test_survives_numba_missing(repo_root):
    # Load the doctor without the package's __init__ (which selects a backend through Numba) and
    # with `import numba` failing, as on a machine where Numba is not installed.
    proc = without_numba.run("""
        from autograder.tools import doctor
        sys.exit(doctor.main([]))
    """, env={"AAG_BACKEND": "cpu"})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "numba does not import" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith(("✗", "x"))


def test_a_missing_toolkit_is_explained_not_dumped():
    """A laptop without the CUDA extra cannot compile PTX: doctor says what is missing, what needs
    it and how to add it, instead of a library loader's exception."""
    raw = ('cuda.pathfinder._dynamic_libs.load_dl_common.DynamicLibNotFoundError: Failure finding '
           '"libnvrtc.so.13 or libnvrtc.so.12": No such file: libnvrtc.so.13')
    text = doctor.ptx_error_text(raw)
    assert "DynamicLibNotFoundError" not in text and "AAG_EXTRAS=cuda13" in text
    assert doctor.ptx_error_text("SyntaxError: something else") == "SyntaxError: something else"
