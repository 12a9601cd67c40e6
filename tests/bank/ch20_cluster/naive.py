"""Naive harnesses for chapter 20's exercises (see :mod:`bank.naive`): the test an MPI programmer
often writes first. The whole grid is saved to a file, ``mpiexec -n 2`` starts a small script in
which every rank loads the grid, cuts out its own slab, calls the function with
``MPI.COMM_WORLD`` and saves its slab; the slabs are compared with NumPy's answer by
``np.allclose``. One fixed grid, 2 ranks, nothing else watched."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from autograder.problems.ch08.specs import stencil7

RANKS = 2
SCRIPT = """
import sys
import numpy as np
import autograder
import cloudpickle
from mpi4py import MPI
from numba import cuda
folder, kind = sys.argv[1], sys.argv[2]
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
grid = np.load(folder + "/grid.npy")
c = np.load(folder + "/c.npy")
fn = cloudpickle.loads(open(folder + "/fn.pkl", "rb").read())
nz = grid.shape[0]
z0, z1 = rank * nz // size, (rank + 1) * nz // size
slab = np.zeros((z1 - z0 + 2,) + grid.shape[1:], np.float32)
slab[1:-1] = grid[z0:z1]
if kind == "overlap":
    if z0 > 0:
        slab[0] = grid[z0 - 1]
    if z1 < nz:
        slab[-1] = grid[z1]
if kind == "halo":
    fn(comm, slab)
    out = slab
else:
    d_slab, d_out = cuda.to_device(slab), cuda.to_device(np.zeros_like(slab))
    fn(comm, d_slab, d_out, tuple(c))
    out = d_out.copy_to_host()
np.save(folder + "/out-%d.npy" % rank, out)
"""


def _plain(fn, kind: str) -> list[np.ndarray]:
    import cloudpickle
    rng = np.random.default_rng(0)
    grid = rng.random((8, 5, 6)).astype(np.float32)
    c = np.array([0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(f"{tmp}/grid.npy", grid)
        np.save(f"{tmp}/c.npy", c)
        Path(f"{tmp}/fn.pkl").write_bytes(cloudpickle.dumps(fn))
        Path(f"{tmp}/run.py").write_text(SCRIPT)
        mpiexec = str(Path(sys.executable).parent / "mpiexec")
        subprocess.run([mpiexec, "-n", str(RANKS), sys.executable, f"{tmp}/run.py", tmp, kind],
                       check=True, timeout=60, capture_output=True)
        slabs = [np.load(f"{tmp}/out-{r}.npy") for r in range(RANKS)]
    return grid, c, slabs


def _allclose_halo(fn) -> bool:
    grid, _, slabs = _plain(fn, "halo")
    # rank 0's upper ghost is rank 1's first plane, rank 1's lower ghost rank 0's last
    return bool(np.allclose(slabs[0][-1], grid[4]) and np.allclose(slabs[1][0], grid[3]))


def _allclose_step(fn, kind="step") -> bool:
    grid, c, slabs = _plain(fn, kind)
    expected = stencil7(grid, c)
    got = np.concatenate([s[1:-1] for s in slabs])
    return bool(np.allclose(got, expected, rtol=1e-5, atol=1e-6))


def _allclose_overlap(fn) -> bool:
    return _allclose_step(fn, "overlap")


HARNESS = {"halo_exchange": _allclose_halo, "stencil_step": _allclose_step,
           "stencil_overlap": _allclose_overlap}
