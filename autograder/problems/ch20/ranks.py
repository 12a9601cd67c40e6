"""Running a learner's per-rank function as N MPI processes, from a notebook that is one process.

A notebook (or the judge's student process) is one Python process; an MPI program is N of them,
started together by ``mpiexec``. :func:`launch` bridges the two:

1. the per-rank function is pickled **by value** with cloudpickle (as ``ag.profile`` pickles a
   kernel for Nsight Compute; here the ``cloudpickle`` package, a dependency of Dask, so that a
   rank whose function needs no Numba loads none), and each rank's inputs (its slab of the grid,
   nothing more) are written to a private folder, one file per rank;
2. ``mpiexec -n N python .../ch20/ranks.py FOLDER`` starts the ranks (the ``mpiexec`` of the
   MPICH wheel, in this Python's ``bin``), in a session of their own;
3. each rank reads **its own** file and deletes it, waits at a barrier until every rank has done
   so (no rank can then read another's slab), and calls the course's *driver* for the exercise,
   which calls the learner's function with ``comm`` and the rank's data;
4. while the learner's function runs, a rank may not open files outside Python's own folders, nor
   start processes, nor open sockets (an audit hook refuses them): data moves between ranks
   through MPI, not through a file another rank wrote;
5. a rank that raises writes its traceback and aborts the job (so the others do not wait for it
   forever); a rank still running at the time limit has its stack written by ``faulthandler``,
   and the whole process group is killed: no rank outlives the call.

The learner's errors come back as :class:`RankFailed` (which rank, its traceback) and
:class:`RankHung` (which ranks, where each one was waiting).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DEFAULT_TIMEOUT = 30.0       # seconds of wall time for one launch (startup and JIT included)
FN_FILE = "fn.pkl"
RECORDED = ("Send", "Recv", "Sendrecv", "Isend", "Irecv", "Isendrecv", "Ssend", "Bsend", "Rsend",
            "send", "recv", "sendrecv", "isend", "irecv", "Barrier", "barrier", "Wait", "Waitall")


class RankFailed(RuntimeError):
    """A rank raised: ``rank`` is which one, the message holds its traceback."""

    def __init__(self, rank: int, text: str):
        super().__init__(text)
        self.rank = rank


class RankHung(RuntimeError):
    """Ranks still running at the time limit (a receive no rank sends to, a barrier one skips)."""

    def __init__(self, ranks: list[int], text: str):
        super().__init__(text)
        self.ranks = ranks


def mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the MPICH wheel's), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if not found:
        raise RuntimeError("no `mpiexec` found: the course installs MPICH's wheel with it on Linux "
                           "and on Apple-silicon Macs (`./aag lab` does it for you). Elsewhere "
                           "(Intel Macs) install an MPI yourself, e.g. `brew install mpich`, so "
                           "that `mpiexec` is on PATH")
    return found


def _learner_frames(text: str) -> str:
    """A traceback with the course's own frames (this module, the drivers) left out."""
    lines = text.splitlines()
    keep, skip = [], False
    for line in lines:
        if line.startswith('  File "'):
            skip = "autograder/problems/ch20" in line
        elif not line.startswith(" "):
            skip = False            # "Traceback ...", the exception's own lines
        if not skip:
            keep.append(line)
    return "\n".join(keep) if keep else text


def launch(fn, driver: str, per_rank: list[dict], *, timeout: float = DEFAULT_TIMEOUT,
           options: dict | None = None) -> list[dict]:
    """Run ``fn`` on ``len(per_rank)`` ranks through the course's driver ``driver``: "halo" or
    "user" (:data:`LIGHT_DRIVERS`, NumPy only), else "package.module:function" (a driver that
    needs the package and Numba, imported in each rank); ``per_rank[r]`` is rank r's arrays (and
    only its). Returns each rank's outputs (a dict of arrays), in rank order."""
    import cloudpickle   # by value for the notebook's functions; Dask's dependency, so always here
    ranks = len(per_rank)
    folder = Path(tempfile.mkdtemp(prefix="aag-ranks-"))
    try:
        # A function from a module the ranks cannot import (a test's, a learner's own file) goes
        # by value too, as a notebook's does.
        modules = _by_value_modules(fn)
        for module in modules:
            cloudpickle.register_pickle_by_value(module)
        try:
            payload = cloudpickle.dumps(fn)
        except Exception as exc:
            raise ValueError(f"your function cannot be sent to the ranks: {exc}") from exc
        finally:
            for module in modules:
                cloudpickle.unregister_pickle_by_value(module)
        (folder / FN_FILE).write_bytes(payload)
        (folder / "options.json").write_text(json.dumps({"driver": driver, "timeout": timeout,
                                                          **(options or {})}))
        for r, data in enumerate(per_rank):
            np.savez(folder / f"in-{r}.npz", **data)
        return _run(folder, ranks, timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _by_value_modules(fn) -> list:
    """The modules of ``fn`` (or of a dict's functions) that are neither ``__main__`` nor
    installed packages the ranks import as well."""
    installed = ("autograder", "numba", "numpy", "mpi4py", "cloudpickle")
    found = []
    for f in (fn.values() if isinstance(fn, dict) else [fn]):
        name = getattr(f, "__module__", None) or ""
        module = sys.modules.get(name)
        if module is not None and name != "__main__" and name.split(".")[0] not in installed \
                and module not in found:
            found.append(module)
    return found


def _env() -> dict:
    from autograder.machine import device
    env = dict(os.environ)
    env["AAG_BACKEND"] = device.current().name
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The folder that holds the package (an editable install), first on the ranks' sys.path.
    env["AAG_RANK_PATH"] = str(Path(__file__).resolve().parents[3])
    env["MPIR_CVAR_ENABLE_GPU"] = "0"        # buffers are host arrays: no CUDA hooks in MPICH
    env.pop("AAG_GRADING", None)             # the ranks run course drivers, never notebook cells
    env.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    env.setdefault("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    """End mpiexec, its proxies and every rank: the process group, then any descendant left."""
    import psutil
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        family = []
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for child in family:
        try:
            child.kill()
        except psutil.Error:
            pass
    proc.wait()
    psutil.wait_procs(family, timeout=5)


def _write_whole(path: Path, text: str) -> None:
    """Write ``path`` so that it exists only once whole: when two ranks fail at once, the abort of
    one kills the other, perhaps while it writes, and an empty traceback must not be shown."""
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    os.replace(part, path)


def _run(folder: Path, ranks: int, timeout: float) -> list[dict]:
    argv = [mpiexec(), "-n", str(ranks), sys.executable, "-B", str(Path(__file__).resolve()),
            str(folder)]
    log = open(folder / "mpiexec.log", "w+b")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=_env(), start_new_session=True, cwd=folder)
    deadline = time.monotonic() + timeout
    hung = False
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                hung = True
                # faulthandler in each rank dumps its stack a little before this: give it time
                time.sleep(0.5)
                break
            time.sleep(0.02)
    finally:
        _kill_group(proc)
    log.seek(0)
    printed = log.read().decode(errors="replace")
    log.close()
    for r in range(ranks):
        err = folder / f"error-{r}.txt"
        if err.exists():
            raise RankFailed(r, f"rank {r} of {ranks} raised:\n"
                                f"{_learner_frames(err.read_text())}")
    done = [r for r in range(ranks) if (folder / f"out-{r}.npz").exists()]
    if hung or len(done) < ranks:
        missing = [r for r in range(ranks) if r not in done]
        if not hung:
            raise RankFailed(missing[0], f"rank {missing[0]} of {ranks} ended without an answer "
                                         f"(mpiexec exit status {proc.returncode}):\n"
                                         f"{printed[-1500:]}")
        where = []
        for r in missing:
            stack = folder / f"stack-{r}.txt"
            text = stack.read_text() if stack.exists() else ""
            where.append(f"rank {r} was waiting here:\n{_stack_text(text)}")
        raise RankHung(missing, f"rank{'s' * (len(missing) > 1)} "
                                f"{', '.join(map(str, missing))} of {ranks} did not finish "
                                f"within {timeout:.0f} s, and every rank was stopped. "
                                + "\n".join(where))
    out = []
    for r in range(ranks):
        with np.load(folder / f"out-{r}.npz", allow_pickle=False) as data:
            out.append({k: data[k] for k in data.files})
    return out


def _stack_text(dump: str) -> str:
    """faulthandler's dump, the current thread's frames only, innermost last, course frames out."""
    block = dump.split("\n\n")[0] if dump else ""
    frames = [line.strip() for line in block.splitlines() if line.strip().startswith("File ")]
    frames = [f for f in frames if "autograder/problems/ch20" not in f]
    if not frames:
        return "  (no stack was recorded)"
    return "\n".join("  " + f for f in reversed(frames[:6]))


# ---- the rank side -----------------------------------------------------------------------------
# This file is also run as a script in every rank (``python .../ranks.py FOLDER``): what a light
# driver needs (NumPy, mpi4py, cloudpickle) loads in a fraction of a second, and the package (with
# Numba and CPU mode's simulator) only when the function or the driver needs it.

class RankComm:
    """``MPI.COMM_WORLD`` of this rank, every point-to-point call recorded in :attr:`calls` as
    (name, start, end) in ``time.perf_counter`` seconds. Anything else is the communicator's."""

    def __init__(self, comm):
        object.__setattr__(self, "_comm", comm)
        object.__setattr__(self, "calls", [])

    def __getattr__(self, name):
        value = getattr(self._comm, name)
        if name not in RECORDED or not callable(value):
            return value
        calls = self.calls

        def recorded(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                calls.append((name, t0, time.perf_counter()))
        return recorded

    def __repr__(self) -> str:
        return f"<comm: rank {self._comm.Get_rank()} of {self._comm.Get_size()}>"


def _halo(fn, comm, inputs, options, switch) -> dict:
    """Exercise 20.1: ``fn(comm, slab)`` fills the ghost planes of a host slab in place."""
    slab = np.array(inputs["slab"], np.float32)
    interior = slab[1:-1].copy()
    rc = RankComm(comm)
    switch(True)
    fn(rc, slab)
    switch(False)
    return {"slab": slab, "interior_kept": np.array(np.array_equal(slab[1:-1], interior,
                                                                     equal_nan=True))}


def _user(fn, comm, inputs, options, switch) -> dict:
    """``ch20.run_ranks``: ``fn(comm, slab)`` with the rank's host slab; what it returns comes back
    (as an array)."""
    slab = np.array(inputs["slab"], np.float32)
    switch(True)
    got = fn(RankComm(comm), slab)
    switch(False)
    if hasattr(got, "copy_to_host"):
        got = got.copy_to_host()
    return {"returned": np.asarray(got if got is not None else np.zeros(0, np.float32)),
            "slab": slab}



LIGHT_DRIVERS = {"halo": _halo, "user": _user}



def _guard():
    """An audit hook that, while on, refuses what ranks must not use to share data: files outside
    Python's own folders, new processes, sockets. Returns the switch (a closure, not a global)."""
    allowed = tuple({str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix,
                                                      sys.exec_prefix)}
                    | {str(Path(p).resolve()) for p in sys.path if p and os.path.isdir(p)})
    state = [False]
    refused = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
               "os.fork", "os.forkpty", "socket.__new__", "os.mkfifo", "shutil.copyfile",
               "os.rename", "os.remove", "os.link", "os.symlink", "os.truncate")

    def hook(event, args):
        if not state[0]:
            return
        if event == "open":
            path, mode = args[0], args[1] if len(args) > 1 else "r"
            if isinstance(path, int):
                return
            real = os.path.realpath(os.fsdecode(path))
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = (any(c in mode for c in "wax+") if isinstance(mode, str)
                       else bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)))
            if writing or not real.startswith(allowed):
                state[0] = False
                raise PermissionError(
                    f"a rank may not open {real!r} while your function runs: ranks share data "
                    "through MPI messages only (no files, another rank's or your own)")
        elif event in refused:
            state[0] = False
            raise PermissionError(f"a rank may not use {event} while your function runs: "
                                  "ranks share data through MPI messages only")

    sys.addaudithook(hook)

    def switch(on: bool) -> None:
        state[0] = on
    return switch


def _rank_main(folder: Path) -> int:
    import faulthandler
    import traceback

    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    options = json.loads((folder / "options.json").read_text())
    own = folder / f"in-{rank}.npz"
    with np.load(own, allow_pickle=False) as data:
        inputs = {k: data[k] for k in data.files}
    own.unlink()
    stack = open(folder / f"stack-{rank}.txt", "w")
    error_file = folder / f"error-{rank}.txt"
    try:
        payload = (folder / FN_FILE).read_bytes()
        driver = LIGHT_DRIVERS.get(options["driver"])
        # The package importable in every rank (a course function goes by reference), even where
        # it is not installed; imported only where the driver or the function needs it.
        sys.path[:0] = [p for p in os.environ.get("AAG_RANK_PATH", "").split(os.pathsep) if p]
        if driver is None or b"numba" in payload:
            from autograder.machine.device import select
            select()             # the backend (CPU mode's simulator), before numba.cuda loads
        if driver is None:
            # "module:function", named by the caller: a chapter's driver with Numba in it
            import importlib
            module, _, name = options["driver"].partition(":")
            driver = getattr(importlib.import_module(module), name)
        import cloudpickle
        fn = cloudpickle.loads(payload)
        switch = _guard()
    except BaseException:
        _write_whole(error_file, traceback.format_exc())
        comm.Abort(1)
        return 1
    comm.Barrier()               # every rank has read and deleted its own file
    faulthandler.dump_traceback_later(max(1.0, options["timeout"] - 1.5), file=stack)
    try:
        outputs = driver(fn, comm, inputs, options, switch)
    except BaseException:
        switch(False)
        faulthandler.cancel_dump_traceback_later()
        _write_whole(error_file, traceback.format_exc())
        sys.stdout.flush()
        comm.Abort(1)
        return 1
    switch(False)
    faulthandler.cancel_dump_traceback_later()
    np.savez(folder / f"part-{rank}.npz", **outputs)
    os.replace(folder / f"part-{rank}.npz", folder / f"out-{rank}.npz")
    return 0


if __name__ == "__main__":
    # Run as a script: its own folder (this chapter's) is not a place to import modules from.
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    sys.exit(_rank_main(Path(sys.argv[1])))
