"""One kernel launch, saved to a folder and replayed in another process: the process that
:mod:`autograder.learner.profiler` runs under Nsight Compute.

ncu can only profile a process it starts, never the Jupyter kernel that is already running, so
the notebook saves the launch (the kernel, pickled by value; its grid and block; host copies of
its arguments) and ncu starts ``python -m autograder.learner.profiled_launch FOLDER``, which
loads it and launches the kernel twice: the first launch compiles it (ncu skips it), the
second is the one profiled.

    python -m autograder.learner.profiled_launch FOLDER [--results]

``--results`` writes the arrays back to the folder after the launches (``result<i>.npy``), so
that a test can see what the kernel computed.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

LAUNCH_FILE = "launch.pkl"
LAUNCHES = 2            # the first compiles; ncu profiles the second (--launch-skip 1)


def kernel_name(kernel) -> str:
    """The Python name of a kernel (a numba-cuda dispatcher or the simulator's kernel)."""
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None)
    name = getattr(fn, "__name__", None)
    if not name or not callable(getattr(kernel, "__getitem__", None)):
        raise TypeError(f"{kernel!r} is not a kernel: pass the function decorated with @cuda.jit "
                        "(a factory's result, not the factory)")
    return name


def _host_copy(value):
    """('device' | 'host' | 'value', what to save) for one launch argument."""
    if hasattr(value, "copy_to_host"):                     # a Numba device array (or the simulator's)
        return "device", np.ascontiguousarray(value.copy_to_host())
    if hasattr(value, "__cuda_array_interface__"):         # CuPy and friends
        from numba import cuda
        return "device", np.ascontiguousarray(cuda.as_cuda_array(value).copy_to_host())
    if isinstance(value, np.ndarray):
        return "host", value
    return "value", value


def save(folder, kernel, grid, block, args) -> str:
    """Write the launch ``kernel[grid, block](*args)`` to ``folder``; returns the kernel's name.
    Device arrays are copied to the host (their contents at this moment are what the profiled
    launch gets); other arguments are kept as they are."""
    from numba.cuda import cloudpickle       # numba-cuda's own copy: pickles __main__'s functions by value
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = kernel_name(kernel)
    try:
        pickled = cloudpickle.dumps(kernel)
    except Exception as exc:
        raise ValueError(f"the kernel {name} cannot be sent to another process: {exc}") from exc
    saved = []
    for i, value in enumerate(args):
        kind, data = _host_copy(value)
        if kind == "value":
            saved.append((kind, data))
        else:
            np.save(folder / f"arg{i}.npy", data, allow_pickle=False)
            saved.append((kind, f"arg{i}.npy"))
    with open(folder / LAUNCH_FILE, "wb") as f:
        pickle.dump({"kernel": pickled, "name": name, "grid": grid, "block": block,
                     "args": saved}, f)
    return name


def load(folder):
    """(kernel, grid, block, args) of a saved launch, the arrays placed as they were given."""
    from numba import cuda
    from numba.cuda import cloudpickle
    folder = Path(folder)
    with open(folder / LAUNCH_FILE, "rb") as f:
        launch = pickle.load(f)
    kernel = cloudpickle.loads(launch["kernel"])
    args = []
    for kind, data in launch["args"]:
        if kind == "value":
            args.append(data)
        else:
            array = np.load(folder / data, allow_pickle=False)
            args.append(cuda.to_device(array) if kind == "device" else array)
    return kernel, launch["grid"], launch["block"], args


def run(folder, launches: int = LAUNCHES) -> list:
    """Load the saved launch and run it ``launches`` times; returns the arguments as launched."""
    from numba import cuda
    kernel, grid, block, args = load(folder)
    for _ in range(launches):
        kernel[grid, block](*args)
    cuda.synchronize()
    return args


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Replay a kernel launch saved by ag.profile.")
    ap.add_argument("folder")
    ap.add_argument("--results", action="store_true",
                    help="write the arrays back to FOLDER/result<i>.npy after the launches")
    args = ap.parse_args(argv)
    launched = run(args.folder)
    if args.results:
        for i, value in enumerate(launched):
            if hasattr(value, "copy_to_host"):
                value = value.copy_to_host()
            if isinstance(value, np.ndarray):
                np.save(Path(args.folder) / f"result{i}.npy", value, allow_pickle=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
