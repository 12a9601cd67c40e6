"""Record Nsight Compute reports of the course's kernels on the GPU machine, for the chapters'
profiler cells to show where no GPU (or no ``ncu``) is at hand.

    python3 scripts/gpu-ncu-record.py --out DIR            # every target below, one ncu run each
    python3 scripts/gpu-ncu-record.py --target EXERCISE [VARIANT]   # (what ncu runs)

Each target is a course kernel at its exercise's speed-test size, launched twice through the
speed test's own harness (fresh inputs, poisoned outputs); ncu profiles the second launch only.
Writes DIR/<device>_<chapter>_ncu.json (h200_ch05_ncu.json: the name a chapter's folder gives it,
ready to be copied into autograder/problems/<chapter>/): the device, ncu's version and, per kernel, every metric of
``METRICS`` below with its unit."""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (chapter, exercise, bench variant label or None, what the row shows[, kernel name]). The kernel's
# name is what ncu's -k filter matches; it is read from the reference kernel (its py_func) unless
# the entry names it: a reference that is a kernel factory (chapter 7's, whose make(F, in_tile)
# builds ``conv2d_unrolled``) has no name of its own to read.
TARGETS = [
    ("ch05", "matmul_naive", None, "one element per thread, no tiles (chapter 3's kernel)"),
    ("ch05", "tiled_matmul", None, "tiled in shared memory"),
    ("ch06", "transpose_naive", None, "naive transpose"),
    ("ch06", "transpose_tiled", None, "tiled transpose, padded tile"),
    ("ch06", "transpose_tiled", "unpadded 32 × 32 tile (bank conflicts)", "tiled transpose, unpadded tile"),
    ("ch06", "matmul_register_tiled", None, "register-tiled matmul"),
    ("ch06", "matmul_register_tiled",
     "tuned (128-bit shared loads, BK = 16, unsigned indices; ungraded)", "register-tiled, tuned"),
    ("ch07", "conv2d_tiled", None, "course reference (8 rows × 2 columns per thread, straight-line "
     "code)", "conv2d_unrolled"),
]

# A variant named CUB is not a course kernel: CUB's own algorithm for the exercise, through
# cuda.compute (autograder.tools.bench's CUB column), on the same inputs.
CUB = "cub"

# Issue 23's rows (`--set issue23`): the course's fastest kernel of each, profiled for what limits
# it; written to one file (issue23_ncu.json) rather than the chapters' recordings.
ISSUE23_TARGETS = [
    ("ch02", "vector_add_grid_stride", None, "vector add, course reference (4 elements per step)",
     "vector_add_unrolled"),
    ("ch02", "vector_add_grid_stride", "8 elements per thread per step, loads before stores, "
     "unsigned indices", "vector add, 8 elements per step", "vector_add_unrolled_by"),
    ("ch06", "transpose_tiled", None, "tiled transpose, course reference"),
    ("ch06", "transpose_tiled", "8-byte loads and stores (uint64 pairs), 32 × 64 tile, 32 × 8 "
     "threads", "transpose, 8-byte pairs", "transpose_pairs"),
    ("ch06", "matmul_register_tiled", "128 × 128 tiles, 32 × 64 warp tiles, BK = 8, "
     "double-buffered, 8-byte global loads (ungraded)", "SGEMM, 128 × 128 tiles, 8-byte loads",
     "matmul_big_tile"),
    ("ch07", "conv2d_tiled", None, "convolution, course reference", "conv2d_unrolled"),
    ("ch07", "conv2d_tiled", "the reference's design with 8-byte loads (each row's window as "
     "pairs of floats)", "convolution, 8-byte loads", "conv2d_pairs"),
    ("ch08", "stencil_coarsened", "flat int32 offsets, z columns, 4 rows per thread sharing y "
     "neighbours, crosses 1 plane ahead (32 × 4 threads, 32 × 16 tile, z chunks of 64)",
     "stencil, z columns, 4 rows per thread, flat offsets", "stencil_flat"),
    ("ch08", "stencil_coarsened", "flat int32 offsets made on the host (no reshape in the kernel), "
     "z columns, 4 rows per thread sharing y neighbours, crosses 1 plane ahead (32 × 4 threads, "
     "32 × 16 tile, z chunks of 64)", "stencil, flat offsets, views made on the host",
     "stencil_flat_views"),
    ("ch08", "stencil_coarsened", "flat int32 offsets made on the host, x neighbours loaded as "
     "each plane is computed (L1 hits), z columns, 4 rows per thread, crosses 1 plane ahead "
     "(32 × 4 threads, 32 × 16 tile, z chunks of 64)", "stencil, x neighbours loaded late",
     "stencil_flat_views"),
    ("ch03", "blur", "shared-memory tile 128 x 32 (+ halo), 256 threads, 16 rows per thread",
     "blur, shared-memory tile 128 × 32", "blur_shared_tile"),
    ("ch11", "scan_single_pass", None, "scan, packed-word reference", "scan_packed_reference"),
    ("ch11", "scan_single_pass", "the reference with signed indices (wraparound code for "
     "negative indices)", "scan, packed words, signed indices", "scan_packed_reference"),
    ("ch12", "merge_tiled", None, "merge path, 256 × 11 (course reference)", "merge_path_tiles"),
    ("ch11", "scan_single_pass", CUB, "scan, CUB's DeviceScan::InclusiveSum (cuda.compute)",
     ".*DeviceScanKernel"),
    ("ch10", "reduce_sum", None, "sum, course reference (4 pairs in flight per thread)"),
    ("ch10", "reduce_sum", "the reference's loop pipelined: 4 pairs per pass, loaded a pass "
     "before they are added", "sum, pipelined, 4 pairs per pass"),
    ("ch10", "reduce_sum", CUB, "sum, CUB's DeviceReduce::Sum (cuda.compute)",
     ".*DeviceReduceKernel"),
]

METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread", "launch__shared_mem_per_block_static",
    "launch__block_size", "launch__grid_size",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_bytes.sum",
]


# ncu's own sections behind ``--sections``: what limits a kernel, in the profiler's words.
SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "WarpStateStats", "SchedulerStats",
            "Occupancy", "LaunchStats"]


def _problem(exercise: str, variant: str | None):
    from autograder.problems import ALL, bench_variants
    problem = ALL[exercise]
    if variant:
        factory = bench_variants(problem)[variant]
        problem = copy.copy(problem)
        problem.reference = factory
    return problem


def target(exercise: str, variant: str | None) -> None:
    """Launch the kernel twice at the speed size (ncu profiles the second)."""
    from autograder.grading.judge import time_reference
    from autograder.grading.runner import speed_inputs
    if variant == CUB:
        from numba import cuda
        from autograder.problems import ALL
        from autograder.tools.bench import _CUB_OPS
        problem = ALL[exercise]
        masters = {k: cuda.to_device(v) for k, v in
                   speed_inputs(problem, 12345, 0, problem.gpu_sizes.speed).items()
                   if isinstance(v, np.ndarray)}
        op = _CUB_OPS[exercise][1](masters)
        for _ in range(2):
            op(masters)
        cuda.synchronize()
        return
    problem = _problem(exercise, variant)
    size = problem.gpu_sizes.speed
    blocks, threads = problem.speed_shape(size)
    host = [speed_inputs(problem, 12345, 0, size)]
    kernel = problem.reference_kernel()
    print("KERNEL", getattr(getattr(kernel, "py_func", kernel), "__name__", "?"), flush=True)
    print("ms", time_reference(problem, host, [(0, 0)], size, blocks, threads))


def kernel_name(exercise, variant, name=None) -> tuple:
    """(the kernel's name for ncu's -k filter, the speed-test size). A reference that is not a
    kernel (a factory: no py_func) must have its kernel's name given in TARGETS."""
    if variant == CUB:
        from autograder.problems import ALL
        return name, ALL[exercise].gpu_sizes.speed
    problem = _problem(exercise, variant)
    if name is None:
        kernel = problem.reference_kernel()
        if not hasattr(kernel, "py_func"):
            raise ValueError(f"{exercise}'s reference {kernel!r} is not a kernel (a factory?): "
                             "name its kernel in TARGETS")
        name = kernel.py_func.__name__
    return name, problem.gpu_sizes.speed


def report_name(device: str, chapter: str) -> str:
    """``h200_ch05_ncu.json``: the name the chapter's folder gives a recorded report
    (autograder.problems.recorded_file), so that the file can be dropped in as it is."""
    words = [w for w in device.split(",")[0].lower().replace("nvidia", " ").split() if w]
    slug = "_".join("".join(c for c in w if c.isalnum()) for w in words) or "gpu"
    return f"{slug}_{chapter}_ncu.json"


def sections_report(out: Path, name: str, label: str, exercise: str, variant) -> None:
    """ncu's own text report of :data:`SECTIONS` for one kernel (its second launch), saved as
    ``<kernel>[_<variant>]_sections.txt``: the stall reasons and the profiler's rules, in its
    words."""
    from autograder.learner.profiler import ncu_second_launch
    sections = [a for sec in SECTIONS for a in ("--section", sec)]
    cmd = ["ncu", *sections, "--print-details", "all", *ncu_second_launch(name),
           sys.executable, __file__, "--target", exercise] + ([variant] if variant else [])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        text = p.stdout + p.stderr[-2000:]
    except subprocess.TimeoutExpired:
        text = "ncu ran past 240 s"
    stem = "".join(c for c in name if c.isalnum() or c == "_")
    if variant and variant != CUB:          # two rows of one kernel (a reference and its variant)
        stem += "_" + "".join(c if c.isalnum() else "_" for c in variant)[:40].strip("_")
    (out / f"{stem}_sections.txt").write_text(f"{label}\n{' '.join(cmd)}\n\n{text}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", nargs="+")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/ncu"))
    ap.add_argument("--only", nargs="*", help="only these exercises of the set")
    ap.add_argument("--set", choices=("chapters", "issue23"), default="chapters",
                    help="the chapters' recorded kernels, or issue 23's fastest kernel per row")
    ap.add_argument("--sections", action="store_true",
                    help="also save, per kernel, ncu's own report of the sections that say what "
                         "limits it (speed of light, memory, warp stalls, scheduler, occupancy) "
                         "as text: <kernel>[_<variant>]_sections.txt")
    args = ap.parse_args()
    from autograder.learner.profiler import METRICS as SHOWN
    missing = set(SHOWN) - set(METRICS)
    assert not missing, f"the chapters' profiler cells show metrics this script does not record: {missing}"
    if args.target:
        target(args.target[0], args.target[1] if len(args.target) > 1 else None)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    import numba_cuda
    import numpy
    from autograder.learner.profiler import ncu_options, parse_csv
    reports: dict[str, dict] = {}
    targets = ISSUE23_TARGETS if args.set == "issue23" else TARGETS
    targets = [t for t in targets if not args.only or t[1] in args.only]
    for chapter, exercise, variant, label, *named in targets:
        name, size = kernel_name(exercise, variant, *named)
        cmd = ["ncu", *ncu_options(name, METRICS),
               sys.executable, __file__, "--target", exercise] + ([variant] if variant else [])
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        except subprocess.TimeoutExpired:
            print(f"{chapter} {exercise} {variant or ''}: ncu ran past 240 s", flush=True)
            continue
        launches = [launch for launch in parse_csv(p.stdout) if launch["metrics"]]
        metrics = launches[-1]["metrics"] if launches else {}
        print(f"{chapter} {exercise} {variant or ''}: {len(metrics)} metrics in "
              f"{time.monotonic() - t0:.0f} s (rc {p.returncode})", flush=True)
        if not metrics:
            print(p.stdout[-2000:], p.stderr[-2000:])
        if args.sections:
            sections_report(out, name, label, exercise, variant)
        reports.setdefault(chapter if args.set == "chapters" else "issue23", []).append({
            "exercise": exercise, "variant": variant, "label": label, "kernel": name,
            "size": size, "metrics": metrics})
        # Written after every kernel, so a run cut short keeps what it measured.
        for chapter_, kernels in reports.items():
            name_ = report_name(gpu, chapter_) if args.set == "chapters" else "issue23_ncu.json"
            (out / name_).write_text(json.dumps({
                "device": gpu, "ncu": version.splitlines()[-1] if version else "",
                "numba_cuda": numba_cuda.__version__, "numpy": numpy.__version__,
                "date": datetime.date.today().isoformat(),
                "how": "scripts/gpu-ncu-record.py: ncu --metrics (the list in the script) on the "
                       "second launch of the course kernel at the exercise's speed-test size",
                "kernels": kernels}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
