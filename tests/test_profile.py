"""The profiler cells of chapters 5-7 (autograder.learner.profiler): ncu's CSV read right, the
numbers derived from it, the command line built right, the launch carried to the process ncu
runs, and the recorded H200 reports shown where ncu cannot run (CPU mode, while graded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import autograder as ag
from autograder.learner import profiled_launch, profiler
from autograder.machine import device

HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
        '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
NAME = "copy_kernel[v1,cw51cXTLSUwv1sDUaKthqqNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIA](Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>)"


def _line(metric, unit, value, launch="0", kernel=NAME):
    return (f'"{launch}","532","python3.12","127.0.0.1","{kernel}","1","7","(256, 1, 1)",'
            f'"(65536, 1, 1)","0","9.0","Command line profiler metrics","{metric}","{unit}","{value}"')


# What ncu --csv prints for a copy of 16 Mi float32 (the program's own lines and ncu's notes around it)
SAMPLE = "\n".join([
    "==PROF== Connected to process 532 (/usr/bin/python3.12)",
    "==PROF== Profiling \"copy_kernel\" - 0: 0%....50%....100% - 9 passes",
    "a line the program printed",
    "==PROF== Disconnected from process 532",
    HEAD,
    _line("dram__bytes_read.sum", "byte", "67,113,216"),
    _line("dram__bytes_write.sum", "byte", "67,108,864"),
    _line("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "27.94"),
    _line("gpu__time_duration.sum", "ns", "100,000"),
    _line("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", "524,288"),
    _line("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "2,097,152"),
    _line("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "", "524,288"),
    _line("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sector", "16,777,216"),
    _line("smsp__inst_executed_op_shared_ld.sum", "inst", "0"),
    _line("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", "0"),
    _line("launch__registers_per_thread", "register/thread", "16"),
    _line("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "n/a"),
])


# ---- ncu's CSV and the numbers from it -------------------------------------------------------------

def test_csv_is_read_with_thousands_separators_and_notes_skipped():
    launches = profiler.parse_csv(SAMPLE)
    assert len(launches) == 1
    launch = launches[0]
    assert launch["kernel"] == NAME and launch["id"] == "0"
    m = launch["metrics"]
    assert m["dram__bytes_read.sum"] == {"value": 67113216.0, "unit": "byte"}
    assert m["gpu__time_duration.sum"] == {"value": 100000.0, "unit": "ns"}
    assert m["launch__registers_per_thread"]["value"] == 16.0
    assert m["sm__warps_active.avg.pct_of_peak_sustained_active"]["value"] is None     # 'n/a'
    assert len(m) == 12


def test_csv_of_two_launches_keeps_them_apart():
    text = "\n".join([HEAD, _line("dram__bytes_read.sum", "byte", "1,000", "0"),
                      _line("dram__bytes_read.sum", "byte", "2,000", "1", "other_kernel(int)")])
    launches = profiler.parse_csv(text)
    assert [la["metrics"]["dram__bytes_read.sum"]["value"] for la in launches] == [1000.0, 2000.0]
    assert launches[1]["kernel"] == "other_kernel(int)"
    assert profiler.parse_csv("no table here\n==PROF== nothing") == []


@pytest.mark.parametrize("value, unit, expected", [
    (1.5, "Mbyte", (1.5e6, "byte")), (2.0, "Kbyte", (2000.0, "byte")), (1.0, "Gbyte", (1e9, "byte")),
    (3.0, "usecond", (3000.0, "ns")), (2.5, "msecond", (2.5e6, "ns")), (7.0, "ns", (7.0, "ns")),
    (4.0, "Kbyte/block", (4000.0, "byte/block")), (12.0, "sector", (12.0, "sector")),
    (2.5, "Msector", (2.5e6, "sector")), (3.0, "Kinst", (3000.0, "inst")), (9.0, "%", (9.0, "%")),
    (1.0, "Mibyte", (2.0 ** 20, "byte")), (6.0, "register/thread", (6.0, "register/thread")),
    (None, "byte", (None, "byte")),
])
def test_units_are_scaled_to_base(value, unit, expected):
    assert profiler.to_base(value, unit) == expected


def test_numbers_as_ncu_prints_them():
    assert profiler.number("67,113,216") == 67113216.0
    assert profiler.number(" 2.57 ") == 2.57
    assert profiler.number("n/a") is None
    assert profiler.number(3) == 3.0


def test_derived_numbers():
    row = profiler.KernelReport("copy", "copy_kernel", profiler.parse_csv(SAMPLE)[0]["metrics"],
                                array_bytes=2 * 4 * (1 << 24))
    assert row.ms == pytest.approx(0.1)
    assert row.dram_bytes == 67113216 + 67108864
    assert row.gbps == pytest.approx((67113216 + 67108864) / 1e-4 / 1e9)       # 1342 GB/s
    assert row.sectors_per_request("ld") == 4.0          # coalesced
    assert row.sectors_per_request("st") == 32.0         # one sector per thread
    assert row.passes_per_instruction("ld") is None      # no shared load: no ratio, not 0/0
    text = profiler.Report([row], "source line").text(("dram", "coalescing"))
    assert "1,342" in text and "32.0" in text and "× arrays" in text and "1.00" in text


def test_recorded_transposes_say_what_the_chapter_says():
    """The numbers chapter 6's text quotes are the recorded report's."""
    rows = {r.kernel: r for r in profiler.recorded("ch06").rows}
    naive, padded = rows["transpose_naive_reference"], rows["transpose_tiled_reference"]
    unpadded, plain = rows["transpose_tiled_unpadded"], rows["matmul_register_tiled_plain"]
    assert (naive.sectors_per_request("ld"), naive.sectors_per_request("st")) == (4.0, 32.0)
    assert (padded.sectors_per_request("ld"), padded.sectors_per_request("st")) == (4.0, 4.0)
    assert unpadded.passes_per_instruction("ld") == pytest.approx(32.4, abs=0.05)
    assert padded.passes_per_instruction("ld") == pytest.approx(1.12, abs=0.01)
    assert (naive.ms, padded.ms, unpadded.ms) == pytest.approx((1.582, 0.244, 0.638), abs=5e-4)
    assert plain.value("sm__warps_active.avg.pct_of_peak_sustained_active") == pytest.approx(17.39)
    assert plain.value("launch__registers_per_thread") == 152
    assert unpadded.array_bytes == 8 * 8192 * 12288        # the exercise's bytes_moved


def test_every_recorded_report_holds_the_metrics_the_cells_show():
    files = sorted(Path(profiler.__file__).resolve().parents[1].glob("problems/ch*/*_ncu.json"))
    assert files, "no recorded ncu report found"
    for path in files:
        data = json.loads(path.read_text())
        assert data["device"] and data["kernels"], path
        for entry in data["kernels"]:
            missing = set(profiler.METRICS) - set(entry["metrics"])
            assert not missing, f"{path.name} {entry['label']}: {sorted(missing)}"


# ---- where ncu cannot run -------------------------------------------------------------------------

@pytest.mark.skipif(ag.backend.is_gpu, reason="checks CPU-mode behaviour")
def test_cpu_mode_shows_the_recorded_report_and_names_its_device():
    why = profiler.why_not()
    assert why and "CPU mode" in why and "NVIDIA GPU" in why
    with pytest.raises(profiler.ProfilerFailed, match="CPU mode"):
        profiler.profile(None, 1, 1)
    text = profiler.recorded("ch05").text("dram")
    assert "NVIDIA H200" in text and "not yours" in text
    assert "tiled in shared memory" in text and "GB/s" in text
    assert [r.label for r in profiler.recorded("ch06", "transpose_naive").rows] == ["naive transpose"]


def test_a_chapter_without_a_recorded_report_says_so():
    report = profiler.recorded("ch01")
    assert report.rows == []
    assert "no recorded Nsight Compute report for chapter 1 yet" in report.text("dram")


def _fake_gpu(monkeypatch, tmp_path):
    gpu = SimpleNamespace(is_gpu=True, name="cuda", label="NVIDIA GPU (numba-cuda)", reason="faked")
    monkeypatch.setattr(device, "current", lambda: gpu)
    monkeypatch.delenv("AAG_GRADING", raising=False)
    ncu = tmp_path / "ncu"
    ncu.write_text("")
    monkeypatch.setenv("AAG_NCU", str(ncu))
    return str(ncu)


def _tiny_kernel():
    from numba import cuda

    @cuda.jit
    def copy_kernel(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]
    return copy_kernel


def test_no_ncu_while_the_notebook_is_graded(monkeypatch, tmp_path):
    _fake_gpu(monkeypatch, tmp_path)
    monkeypatch.setenv("AAG_GRADING", "judge")
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    assert "skipped while the notebook is graded" in profiler.why_not()
    with pytest.raises(profiler.ProfilerFailed, match="graded"):
        profiler.profile(_tiny_kernel(), 1, 32, np.zeros(32, np.float32), np.zeros(32, np.float32))
    assert ran == []


def test_no_ncu_on_the_machine(monkeypatch, tmp_path):
    _fake_gpu(monkeypatch, tmp_path)
    monkeypatch.setenv("AAG_NCU", str(tmp_path / "missing"))
    assert profiler.why_not() == profiler.NO_NCU


def test_the_ncu_command_line(monkeypatch, tmp_path):
    """profile() saves the launch, runs ncu on the child with the right options, reads its CSV."""
    from numba import cuda
    ncu = _fake_gpu(monkeypatch, tmp_path)
    seen = {}

    def fake_run(cmd, **kw):
        folder = Path(cmd[-1])
        seen.update(cmd=cmd, env=kw["env"], saved=sorted(p.name for p in folder.iterdir()))
        return subprocess.CompletedProcess(cmd, 0, SAMPLE, "")
    monkeypatch.setattr(subprocess, "run", fake_run)
    src = cuda.to_device(np.arange(64, dtype=np.float32))
    dst = cuda.device_array(64, np.float32)
    row = profiler.profile(_tiny_kernel(), 2, 32, src, dst, label="my copy", metrics="dram")
    cmd = seen["cmd"]
    assert cmd[0] == ncu and "--csv" in cmd
    assert cmd[cmd.index("--print-units") + 1] == "base"
    assert cmd[cmd.index("-k") + 1] == "regex:^copy_kernel"
    assert cmd[cmd.index("--launch-skip") + 1] == "1" and cmd[cmd.index("--launch-count") + 1] == "1"
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(profiler.GROUPS["dram"])
    assert cmd[-4:-1] == [sys.executable, "-m", "autograder.learner.profiled_launch"]
    assert seen["saved"] == ["arg0.npy", "arg1.npy", profiled_launch.LAUNCH_FILE]
    assert seen["env"]["AAG_BACKEND"] == "cuda"
    assert str(Path(profiler.__file__).resolve().parents[2]) in seen["env"]["PYTHONPATH"]
    assert not Path(cmd[-1]).exists()                    # the folder is removed afterwards
    assert row.label == "my copy" and row.array_bytes == 2 * 64 * 4
    assert row.value("dram__bytes_read.sum") == 67113216.0


@pytest.mark.parametrize("stdout, stderr, match", [
    ("", "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
         "Performance Counters on the target device 0.", "ERR_NVGPUCTRPERM"),
    ("==PROF== Disconnected from process 1\n", "==WARNING== No kernels were profiled.",
     "(?s)profiled no launch of copy_kernel.*No kernels were profiled"),
])
def test_ncu_failures_are_said_plainly(monkeypatch, tmp_path, stdout, stderr, match):
    _fake_gpu(monkeypatch, tmp_path)
    monkeypatch.setattr(subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, stdout, stderr))
    with pytest.raises(profiler.ProfilerFailed, match=match):
        profiler.profile(_tiny_kernel(), 1, 32, np.zeros(32, np.float32), np.zeros(32, np.float32))


def test_a_factory_is_not_a_kernel():
    with pytest.raises(TypeError, match="not a kernel"):
        profiled_launch.kernel_name(lambda F: None)


# ---- the launch, carried to another process --------------------------------------------------------

NOTEBOOK = textwrap.dedent("""
    # What a notebook does: kernels defined in __main__, then saved for the profiler's process.
    import sys
    import numpy as np
    import autograder as ag
    from numba import cuda, float32
    from autograder.learner import profiled_launch

    TILE = 8

    @cuda.jit
    def reverse_tiles(src, dst, scale):
        tile = cuda.shared.array(TILE, float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * TILE + t
        tile[t] = src[i]
        cuda.syncthreads()
        dst[i] = tile[TILE - 1 - t] * scale

    def make_shift(F):
        @cuda.jit
        def shift(out):
            w = cuda.const.array_like(F)
            i = cuda.grid(1)
            if i < out.size:
                out[i] += w[0]
        return shift

    src = np.arange(16, dtype=np.float32)
    profiled_launch.save(sys.argv[1], reverse_tiles, 2, TILE,
                         [cuda.to_device(src), cuda.to_device(np.zeros(16, np.float32)), 2.0])
    profiled_launch.save(sys.argv[2], make_shift(np.array([1.5], np.float32)), 1, 16,
                         [np.zeros(16, np.float32)])
""")


@pytest.mark.skipif(ag.backend.is_gpu, reason="runs the child in CPU mode (the simulator)")
def test_launch_round_trips_through_the_child(tmp_path):
    """A kernel from __main__ (a module constant, shared memory, a barrier) and a factory-made
    one (a closure over a NumPy array) reach the child, which launches each twice."""
    script = tmp_path / "notebook.py"
    script.write_text(NOTEBOOK)
    env = dict(os.environ, AAG_BACKEND="cpu")
    one, two = tmp_path / "one", tmp_path / "two"
    made = subprocess.run([sys.executable, str(script), str(one), str(two)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    for folder in (one, two):
        child = subprocess.run([sys.executable, "-m", "autograder.learner.profiled_launch",
                                str(folder), "--results"], capture_output=True, text=True,
                               timeout=120, env=env)
        assert child.returncode == 0, child.stderr[-3000:]
        assert "RuntimeWarning" not in child.stderr
    src = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(np.load(one / "result0.npy"), src)
    np.testing.assert_array_equal(np.load(one / "result1.npy"),
                                  2 * np.concatenate([src[:8][::-1], src[8:][::-1]]))
    np.testing.assert_array_equal(np.load(two / "result0.npy"), np.full(16, 3.0))   # twice 1.5


def test_child_fails_plainly_without_a_launch(tmp_path):
    with pytest.raises(FileNotFoundError):
        profiled_launch.load(tmp_path)


def test_every_chapter_cell_finds_its_recorded_kernels():
    """Each profiler cell of a chapter names recorded kernels that its report holds (a chapter
    whose report is not recorded yet shows the note instead)."""
    import ast
    import re
    calls = []
    for path in sorted(Path(profiler.__file__).resolve().parents[2].glob("source/ch*/ch*.py")):
        for m in re.finditer(r"ag\.profiler\.recorded\((\"ch\w+\".*?)\)\.show", path.read_text(),
                             re.DOTALL):
            args = ast.literal_eval(f"({m.group(1)},)")
            calls.append(args)
    assert {args[0] for args in calls} >= {"ch05", "ch06", "ch07"}
    for args in calls:
        report = profiler.recorded(*args)
        has_file = (Path(profiler.__file__).resolve().parents[1] / "problems" / args[0]
                    / f"{profiler.REFERENCE_GPU}_{args[0]}_ncu.json").is_file()
        assert bool(report.rows) == has_file, args
        if len(args) > 1 and has_file:
            wanted = {args[1]} if isinstance(args[1], str) else set(args[1])
            assert {r.exercise for r in report.rows} == wanted, args
