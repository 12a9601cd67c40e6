"""Nsight Compute in a notebook: a few hardware counters of one kernel launch, in plain words.

A timing says how long a kernel took; a profiler says why. NVIDIA's Nsight Compute (the ``ncu``
command) replays one launch several times and reads the GPU's counters: bytes moved from DRAM,
the memory sectors each warp-wide load touched, shared-memory bank conflicts, how many warps
were resident. GPU MODE's first lecture, *How to profile CUDA kernels in PyTorch* (Mark
Saroufim), shows the same tool from PyTorch.

ncu profiles only a process that it starts, so :func:`profile` saves the launch
(:mod:`autograder.learner.profiled_launch`) and runs, in a separate process::

    ncu --csv --print-units base --metrics <METRICS> -k regex:^<kernel name>
        --launch-skip 1 --launch-count 1  python -m autograder.learner.profiled_launch <folder>

then reads ncu's CSV. Where that cannot run (CPU mode, no ``ncu``, counters not readable, or
the notebook is being graded), :func:`recorded` gives what the course measured the same way on
its reference GPU for the chapter's own kernels (``<device>_<chapter>_ncu.json`` in the chapter's
folder, written by ``scripts/gpu-ncu-record.py``).

The metrics come in groups, one per idea of chapters 5-7 (:data:`GROUPS`); :meth:`Report.show`
prints the groups asked for, each column explained underneath.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.machine import device, timing

REFERENCE_GPU = "h200"          # the device of the recorded reports shipped with the chapters

TIME = "gpu__time_duration.sum"
GROUPS = {
    "dram": (TIME, "dram__bytes_read.sum", "dram__bytes_write.sum",
             "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    "coalescing": (TIME,
                   "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                   "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    "bank_conflicts": (TIME,
                       "smsp__inst_executed_op_shared_ld.sum",
                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                       "smsp__inst_executed_op_shared_st.sum",
                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    "occupancy": (TIME, "launch__registers_per_thread", "launch__shared_mem_per_block_static",
                  "launch__block_size", "sm__maximum_warps_per_active_cycle_pct",
                  "sm__warps_active.avg.pct_of_peak_sustained_active"),
}
# Every metric a profile collects (the recorded reports hold these and a few more).
METRICS = tuple(dict.fromkeys(m for group in GROUPS.values() for m in group))

# ncu's units, scaled to the base unit (ncu --print-units base already gives those; older
# versions or another setting may print "Mbyte" or "usecond").
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40}
_COUNTED = ("byte", "sector", "inst", "request", "wavefront", "warp", "cycle")
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
            "s": 1e9, "second": 1e9}

NO_NCU = ("Nsight Compute's command line tool, ncu, is not on this machine (it comes with the "
          "CUDA toolkit, in its bin folder, and as NVIDIA's Nsight Compute download; set AAG_NCU "
          "to its path if it is installed elsewhere).")
NO_PERMISSION = ("ncu started, but this user may not read the GPU's performance counters "
                 "(ERR_NVGPUCTRPERM). By default NVIDIA's driver lets only administrators read "
                 "them: an administrator can allow every user (driver option "
                 "NVreg_RestrictProfilingToAdminUsers=0, see NVIDIA's page on ERR_NVGPUCTRPERM), "
                 "or run ncu as root; in a container, ncu also needs the capability SYS_ADMIN.")


class ProfilerFailed(RuntimeError):
    """Profiling could not run here, or ncu gave no result: the message says why, plainly."""


# ---- ncu's CSV ------------------------------------------------------------------------------------

def number(text) -> float | None:
    """A metric value as ncu prints it ('67,113,216', '2.57', 'n/a') as a float, or None."""
    if isinstance(text, (int, float)):
        return float(text)
    text = str(text).strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def to_base(value: float | None, unit: str) -> tuple[float | None, str]:
    """(value, unit) in the base unit: bytes for 'Mbyte', sectors for 'Ksector'..., ns for any time."""
    unit = (unit or "").strip()
    if value is None:
        return None, unit
    if unit in _TIME_NS:
        return value * _TIME_NS[unit], "ns"
    head, slash, tail = unit.partition("/")
    for prefix in sorted(_SCALE, key=len, reverse=True):
        for base in _COUNTED:
            if prefix and head == prefix + base:
                return value * _SCALE[prefix], base + slash + tail
    return value, unit


def parse_csv(text: str) -> list[dict]:
    """The launches in ncu's ``--csv`` output, in order: ``{"kernel", "id", "metrics"}`` with
    metrics as ``{name: {"value", "unit"}}`` in base units. Lines that are not part of the table
    (ncu's ``==PROF==`` notes, what the program printed) are skipped."""
    head, launches = None, {}
    for row in csv.reader(io.StringIO(text)):
        if head is None:
            if "Metric Name" in row and "Metric Value" in row:
                head = row
            continue
        if len(row) != len(head):
            continue
        rec = dict(zip(head, row))
        key = rec.get("ID", "")
        launch = launches.setdefault(key, {"kernel": rec.get("Kernel Name", ""), "id": key,
                                           "metrics": {}})
        value, unit = to_base(number(rec["Metric Value"]), rec.get("Metric Unit", ""))
        launch["metrics"][rec["Metric Name"]] = {"value": value, "unit": unit}
    return list(launches.values())


# ---- one kernel's numbers -------------------------------------------------------------------------

@dataclass
class KernelReport:
    """One profiled launch: ``metrics`` as ``{name: {"value", "unit"}}`` in base units."""

    label: str
    kernel: str
    metrics: dict
    array_bytes: int | None = None      # the bytes of the arrays it was given (each once)
    exercise: str = ""                  # a recorded row's exercise

    def value(self, name: str) -> float | None:
        entry = self.metrics.get(name)
        return None if entry is None else number(entry.get("value"))

    @property
    def ms(self) -> float | None:
        ns = self.value(TIME)
        return None if ns is None else ns / 1e6

    @property
    def dram_bytes(self) -> float | None:
        read, written = self.value("dram__bytes_read.sum"), self.value("dram__bytes_write.sum")
        return None if read is None or written is None else read + written

    @property
    def gbps(self) -> float | None:
        """Achieved DRAM bandwidth: the bytes DRAM read and wrote, over the kernel's time."""
        if not self.dram_bytes or not self.ms:
            return None
        return self.dram_bytes / (self.ms * 1e-3) / 1e9

    def sectors_per_request(self, op: str) -> float | None:
        """32-byte sectors per warp-wide global ``ld`` or ``st``: 4 when 32 threads read 32
        neighbouring float32 (128 bytes), 32 when every thread's word lies in its own sector."""
        return _ratio(self.value(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"),
                      self.value(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"))

    def passes_per_instruction(self, op: str) -> float | None:
        """Shared-memory passes (ncu's wavefronts) per warp-wide shared ``ld`` or ``st``: 1 with
        no bank conflict, up to 32 when all 32 threads hit one bank."""
        return _ratio(self.value(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
                      self.value(f"smsp__inst_executed_op_shared_{op}.sum"))


def _ratio(a, b):
    return a / b if a is not None and b else None


# ---- a table of them ------------------------------------------------------------------------------

def _fmt(value, digits=2, scale=1.0, suffix=""):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = value / scale
    if digits == 0:
        return f"{value:,.0f}{suffix}"
    return f"{value:,.{digits}f}{suffix}"


# group -> [(header, how to compute from a row, what it means)]
COLUMNS = {
    "dram": [
        ("time ms", lambda r: _fmt(r.ms, 3),
         "the kernel's time under the profiler (ncu fixes the clocks at their base rate and "
         "empties the caches first, so it is longer than a timed run's)"),
        ("DRAM read MB", lambda r: _fmt(r.value("dram__bytes_read.sum"), 0, 1e6),
         "megabytes read from DRAM (the GPU's main memory); loads served by the L1 or L2 cache "
         "are not counted"),
        ("written MB", lambda r: _fmt(r.value("dram__bytes_write.sum"), 0, 1e6),
         "megabytes written to DRAM"),
        ("GB/s", lambda r: _fmt(r.gbps, 0),
         "achieved DRAM bandwidth: (read + written) / time"),
        ("% of peak", lambda r: _fmt(r.value("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 1,
                                     suffix="%"),
         "DRAM throughput as a share of what this GPU's DRAM can sustain"),
        ("× arrays", lambda r: _fmt(_ratio(r.dram_bytes, r.array_bytes), 2),
         "DRAM bytes over the bytes of the kernel's arrays: 1 means every input read once and "
         "every output written once, more means data fetched again"),
    ],
    "coalescing": [
        ("time ms", lambda r: _fmt(r.ms, 3), "the kernel's time under the profiler"),
        ("load requests M", lambda r: _fmt(r.value("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
                                           1, 1e6),
         "warp-wide global load instructions (millions)"),
        ("sectors/load", lambda r: _fmt(r.sectors_per_request("ld"), 1),
         "32-byte sectors each load touched: 4 means fully coalesced (32 threads, 32 neighbouring "
         "float32); 32 means one sector per thread"),
        ("store requests M", lambda r: _fmt(r.value("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                                            1, 1e6),
         "warp-wide global store instructions (millions)"),
        ("sectors/store", lambda r: _fmt(r.sectors_per_request("st"), 1),
         "32-byte sectors each store touched (4 is coalesced, 32 the worst for float32)"),
    ],
    "bank_conflicts": [
        ("time ms", lambda r: _fmt(r.ms, 3), "the kernel's time under the profiler"),
        ("shared loads M", lambda r: _fmt(r.value("smsp__inst_executed_op_shared_ld.sum"), 1, 1e6),
         "warp-wide shared-memory load instructions (millions)"),
        ("passes/load", lambda r: _fmt(r.passes_per_instruction("ld"), 2),
         "passes (ncu: wavefronts) each shared load took: 1 for a 32-bit load without bank "
         "conflicts, up to 32 (a 64- or 128-bit load needs 2 to 4 passes even without)"),
        ("load conflicts M", lambda r: _fmt(r.value(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 1, 1e6),
         "the extra passes of the loads, caused by bank conflicts (millions)"),
        ("shared stores M", lambda r: _fmt(r.value("smsp__inst_executed_op_shared_st.sum"), 1, 1e6),
         "warp-wide shared-memory store instructions (millions)"),
        ("passes/store", lambda r: _fmt(r.passes_per_instruction("st"), 2),
         "passes each shared store took"),
        ("store conflicts M", lambda r: _fmt(r.value(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 1, 1e6),
         "the extra passes of the stores (millions)"),
    ],
    "occupancy": [
        ("time ms", lambda r: _fmt(r.ms, 3), "the kernel's time under the profiler"),
        ("registers", lambda r: _fmt(r.value("launch__registers_per_thread"), 0),
         "registers per thread, as compiled"),
        ("shared B", lambda r: _fmt(r.value("launch__shared_mem_per_block_static"), 0),
         "static shared memory per block, in bytes (the cuda.shared.array's)"),
        ("threads", lambda r: _fmt(r.value("launch__block_size"), 0), "threads per block"),
        ("theoretical", lambda r: _fmt(r.value("sm__maximum_warps_per_active_cycle_pct"), 1,
                                       suffix="%"),
         "theoretical occupancy: the most warps an SM can hold with these registers, shared "
         "memory and block size, as a share of its maximum (64 warps on an H200)"),
        ("achieved", lambda r: _fmt(r.value("sm__warps_active.avg.pct_of_peak_sustained_active"), 1,
                                    suffix="%"),
         "achieved occupancy: the warps actually resident, on average while the SM was busy"),
    ],
}


def _groups(metrics) -> tuple:
    if metrics is None or metrics == "all":
        return tuple(GROUPS)
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        raise ValueError(f"unknown metric group(s) {unknown}: choose from {sorted(GROUPS)}")
    return names


@dataclass
class Report:
    """Profiled kernels, and where the numbers come from (``source``, one sentence)."""

    rows: list = field(default_factory=list)
    source: str = ""
    note: str = ""              # a report with no rows says why here

    def __add__(self, other: Report) -> Report:
        return Report(self.rows + other.rows, self.source or other.source, self.note or other.note)

    def text(self, metrics=None) -> str:
        if not self.rows:
            return self.note or "(no kernel profiled)"
        out = [self.source] if self.source else []
        width = max(len("kernel"), *(len(r.label) for r in self.rows))
        legend = {}
        for group in _groups(metrics):
            columns = [c for c in COLUMNS[group]
                       if c[0] != "× arrays" or any(r.array_bytes for r in self.rows)]
            sizes = [max(len(h), *(len(fn(r)) for r in self.rows)) for h, fn, _ in columns]
            out.append("")
            out.append(f"{'kernel':<{width}}  " + "  ".join(
                f"{h:>{s}}" for (h, _, _), s in zip(columns, sizes)))
            for r in self.rows:
                out.append(f"{r.label:<{width}}  " + "  ".join(
                    f"{fn(r):>{s}}" for (_, fn, _), s in zip(columns, sizes)))
            for h, _, meaning in columns:
                legend.setdefault(h, meaning)
        out.append("")
        out.extend(f"  {h}: {meaning}" for h, meaning in legend.items())
        return "\n".join(out)

    def show(self, metrics=None) -> None:
        print(self.text(metrics))

    __str__ = text


# ---- running ncu ----------------------------------------------------------------------------------

def ncu_path() -> str | None:
    """Where ncu is: $AAG_NCU, the PATH, or the CUDA toolkit's bin folder."""
    named = os.environ.get("AAG_NCU", "").strip()
    if named:
        return named if os.path.isfile(named) else None
    found = shutil.which("ncu")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.path.isfile(os.path.join(home, "bin", "ncu")):
            return os.path.join(home, "bin", "ncu")
    return None


def why_not() -> str | None:
    """Why :func:`profile` cannot run here, or None where it can."""
    b = device.current()
    if not b.is_gpu:
        return (f"Profiling needs an NVIDIA GPU, and this machine runs in {b.label}: {b.reason}. "
                "Nsight Compute reads counters that only a GPU has.")
    if b.name != "cuda":
        return ("Nsight Compute profiles NVIDIA GPUs only; on an AMD GPU, rocprof-compute "
                "(ROCm Compute Profiler) reads the equivalent counters.")
    why = timing.not_measured("Profiling")
    if why:
        return why
    if ncu_path() is None:
        return NO_NCU
    return None


def ncu_second_launch(kernel: str) -> list[str]:
    """ncu's options that profile only the second launch of ``kernel`` (the first compiles), in
    whatever process the program after them starts."""
    return ["--target-processes", "all", "-k", f"regex:^{kernel}",
            "--launch-skip", "1", "--launch-count", "1"]


def ncu_options(kernel: str, metrics=METRICS) -> list[str]:
    """ncu's options that read ``metrics`` of the second launch of ``kernel``, as CSV in base
    units."""
    return ["--csv", "--print-units", "base", "--metrics", ",".join(metrics),
            *ncu_second_launch(kernel)]


def ncu_command(ncu: str, kernel: str, folder, metrics=METRICS) -> list[str]:
    """The command line that profiles the second launch of ``kernel`` saved in ``folder``."""
    return [ncu, *ncu_options(kernel, metrics),
            sys.executable, "-m", "autograder.learner.profiled_launch", str(folder)]


def _child_env() -> dict:
    root = str(Path(__file__).resolve().parents[2])        # the folder that holds autograder/
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, AAG_BACKEND=device.current().name, PYTHONUNBUFFERED="1",
                PYTHONPATH=root + (os.pathsep + path if path else ""))


def _array_bytes(args) -> int:
    return sum(int(a.nbytes) for a in args if hasattr(a, "nbytes") and hasattr(a, "shape"))


def profile(kernel, grid, block, *args, label: str | None = None, metrics="all",
            timeout: float = 600.0) -> KernelReport:
    """Profile the launch ``kernel[grid, block](*args)`` with Nsight Compute, in a separate
    process (the kernel is launched twice there: the first launch compiles it, the second is
    measured). ``metrics``: ``"all"`` or some of :data:`GROUPS` (fewer metrics, fewer replays).
    Raises :class:`ProfilerFailed`, saying why, where it cannot run (see :func:`why_not`)."""
    why = why_not()
    if why:
        raise ProfilerFailed(why)
    from autograder.learner import profiled_launch
    wanted = tuple(dict.fromkeys(m for g in _groups(metrics) for m in GROUPS[g]))
    folder = tempfile.mkdtemp(prefix="aag-ncu-")
    try:
        try:
            name = profiled_launch.save(folder, kernel, grid, block, args)
        except (TypeError, ValueError) as exc:
            raise ProfilerFailed(str(exc)) from exc
        cmd = ncu_command(ncu_path(), name, folder, wanted)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=_child_env())
        except subprocess.TimeoutExpired:
            raise ProfilerFailed(f"ncu did not finish profiling {name} within {timeout:.0f} s.")
        return _report_from(proc, name, label or name, _array_bytes(args))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _report_from(proc, name: str, label: str, array_bytes: int | None) -> KernelReport:
    """The profiled launch from ncu's finished process, or :class:`ProfilerFailed` saying why."""
    output = (proc.stdout or "") + "\n" + (proc.stderr or "")
    if "ERR_NVGPUCTRPERM" in output:
        raise ProfilerFailed(NO_PERMISSION)
    launches = [launch for launch in parse_csv(proc.stdout or "") if launch["metrics"]]
    if not launches:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise ProfilerFailed(f"ncu profiled no launch of {name} (exit status {proc.returncode}). "
                             f"The end of its output:\n{tail}")
    return KernelReport(label, name, launches[-1]["metrics"], array_bytes or None)


def live(rows) -> Report:
    """A report of kernels just profiled here, titled with this GPU."""
    try:
        from autograder.machine.facts import gpu_facts
        here = gpu_facts()["name"]
    except Exception:
        here = device.current().label
    return Report(list(rows), f"Nsight Compute on this machine's {here}: your kernels.")


# ---- the course's recorded reports ----------------------------------------------------------------

def recorded(chapter: str, exercises=None) -> Report:
    """What the course measured with ncu on its reference GPU for ``chapter``'s kernels (those of
    ``exercises`` when given), from ``<device>_<chapter>_ncu.json`` in the chapter's folder. A
    report with no rows, and a note saying so, where the course has none."""
    from autograder.problems import ALL, recorded_file
    path = recorded_file(f"{REFERENCE_GPU}_{chapter}_ncu")
    if path is None:
        number = chapter[2:].lstrip("0")
        return Report(note=f"The course has no recorded Nsight Compute report for chapter {number} "
                           "yet. On a machine with an NVIDIA GPU and ncu, this cell profiles your "
                           "own kernels instead.")
    data = json.loads(path.read_text())
    keep = None if exercises is None else ({exercises} if isinstance(exercises, str) else set(exercises))
    rows = []
    for entry in data["kernels"]:
        if keep is not None and entry["exercise"] not in keep:
            continue
        problem = ALL.get(entry["exercise"])
        size = tuple(entry.get("size") or ())
        arrays = None
        if problem is not None and size and problem.bytes_moved is not None:
            arrays = int(problem.bytes_moved(size))
        rows.append(KernelReport(entry["label"], entry["kernel"], entry["metrics"], arrays,
                                 entry["exercise"]))
    device_name = data["device"].split(",")[0]
    version = data.get("ncu", "").replace("Version ", "").split(" ")[0]
    source = (f"Recorded by the course on an {device_name} with Nsight Compute {version}: the "
              "course's own kernels for these exercises (not yours), at the speed tests' sizes.")
    return Report(rows, source)
