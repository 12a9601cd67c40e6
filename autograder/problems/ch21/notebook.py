"""What chapter 21's notebook calls outside the graded cells: the book's CUDA C++ (as text), the
tessellated curves and the quadtree drawn, tries of the learner's code on small inputs, the CPU
baselines timed, and the "measure it" cell (adaptive against flat tessellation on a GPU)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch21.references import (MAX_POINTS, course_quadtree, course_tessellate,
                                                 quadtree_threads, reference_counts,
                                                 tessellate_flat)
from autograder.problems.ch21.specs import (BASELINES, SPEED_N, SPEED_THREADS, bezier_host,
                                            cell_of, counts_of, make_curves, quadtree_host,
                                            quadtree_inputs)

# ---- the book's CUDA C++, shown as text (Numba CUDA cannot launch from a kernel) -----------------

BEZIER_CUDA = r"""
// CUDA C++ (compiled with nvcc -rdc=true, linked with the device runtime): the parent grid has a
// thread per curve; each thread sizes its curve and launches a child grid for its points.
__global__ void tessellate_child(BezierLine* lines, int lidx, int nPoints) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;          // one thread per point
    if (k < nPoints) {
        float u = (float)k / (float)(nPoints - 1);
        float w = 1.0f - u;
        float2 p = w*w * lines[lidx].CP[0] + 2.0f*u*w * lines[lidx].CP[1] + u*u * lines[lidx].CP[2];
        lines[lidx].vertexPos[k] = p;
    }
}

__global__ void tessellate_parent(BezierLine* lines, int nLines) {
    int lidx = blockIdx.x * blockDim.x + threadIdx.x;       // one thread per curve
    if (lidx < nLines) {
        float c = curvature(lines[lidx]);                    // |P1 - (P0+P2)/2| / |P2 - P0|
        int n = min(max((int)(c * 16.0f), 4), MAX_TESS_POINTS);
        lines[lidx].nVertices = n;
        cudaMalloc(&lines[lidx].vertexPos, n * sizeof(float2));   // device-side heap
        tessellate_child<<<(n + 31) / 32, 32>>>(lines, lidx, n);  // a launch FROM the GPU
    }
}
""".strip("\n")

QUADTREE_CUDA = r"""
// CUDA C++: a block per node. It counts its points per quadrant, scans the four counts, moves
// the points into the other buffer quadrant by quadrant, then launches four child blocks, one
// per quadrant, if the node holds too many points and the tree may grow deeper.
__global__ void build_quadtree(Node* nodes, Points* pts, Params p) {
    __shared__ int counts[4], offsets[4];
    Node& node = nodes[blockIdx.x];
    ... count_points_in_children(pts[0], counts, node.bbox);      // shared atomics
    ... scan_for_offsets(counts, offsets);                          // 4 values, one thread
    ... reorder_points(pts[1], pts[0], counts, offsets, node.bbox); // scatter
    if (threadIdx.x == 0 && node.num_points() > p.min_points && p.depth < p.max_depth) {
        prepare_children(nodes, node, offsets);                     // four child nodes
        build_quadtree<<<4, blockDim.x, 4 * sizeof(int)>>>(&nodes[child_base], pts_swapped,
                                                            p.deeper());
    }
}
""".strip("\n")

LIMITS_TEXT = """\
What a launch from the GPU costs and where it stops (CUDA's programming guide, "CUDA Dynamic
Parallelism"; PMPP ch. 21, important considerations):
- nesting depth: at most 24 levels of child grids;
- pending launches: a fixed-size buffer (cudaLimitDevRuntimePendingLaunchCount, 2,048 by default)
  holds the launches not started yet; past it, a launch fails (or, on older versions, goes to a
  slower virtualized pool): a million threads each launching a child overflows it at once;
- synchronizing on children: cudaDeviceSynchronize() inside a kernel, which made the parent
  wait for its children, is deprecated since CUDA 11.6 and not part of the device runtime's
  current interface (CUDA 12; the only one for compute capability 9.0 and up); a parent now
  gets its children's results by launching a tail grid
  (cudaStreamTailLaunch: it runs after the parent and all its children finish) or by leaving the
  consumer to the next host launch;
- memory: a child sees its parent's global memory, consistent at the child's launch and, for
  the parent, only after the children are known complete; a parent's shared and local memory
  cannot be passed to a child;
- streams: a kernel's launches without a stream go to one implicit stream per block, so children
  of one block run one after the other unless the kernel makes streams of its own
  (cudaStreamCreateWithFlags(..., cudaStreamNonBlocking))."""


def show_cuda(which: str = "bezier") -> None:
    """Print the CUDA C++ of the book's design: ``bezier``, ``quadtree`` or ``limits``."""
    texts = {"bezier": BEZIER_CUDA, "quadtree": QUADTREE_CUDA, "limits": LIMITS_TEXT}
    if which not in texts:
        raise ValueError(f"which is one of {sorted(texts)}, not {which!r}")
    print(texts[which])


# ---- pictures ---------------------------------------------------------------------------------------

def sample_curves(n: int = 12, seed: int = 21) -> np.ndarray:
    """A few curves of scale 1 to draw: cp float32 [n, 3, 2]."""
    rng = np.random.default_rng(seed)
    cp = make_curves(rng, n)
    span = np.abs(cp).max()
    return (cp / span).astype(np.float32)


def show_tessellation(cp, counts=None, ax=None):
    """Each curve drawn twice: with its adaptive count of points (left) and with MAX_POINTS
    points (right); points as dots, control points as crosses. ``counts`` default: the spec's."""
    import matplotlib.pyplot as plt
    cp = np.asarray(cp, np.float32)
    counts = counts_of(cp) if counts is None else np.asarray(counts)
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
    flat = np.full(cp.shape[0], MAX_POINTS)
    for a, cnt, title in ((ax[0], counts, "adaptive"), (ax[1], flat, f"flat: {MAX_POINTS} each")):
        pts, _ = bezier_host(cp, cnt)
        start = 0
        colours = plt.cm.tab10(np.arange(cp.shape[0]) % 10)
        for i in range(cp.shape[0]):
            p = pts[start:start + cnt[i]]
            start += cnt[i]
            a.plot(p[:, 0], p[:, 1], "-", color=colours[i], lw=0.8)
            a.plot(p[:, 0], p[:, 1], ".", color=colours[i], ms=3)
            a.plot(cp[i, :, 0], cp[i, :, 1], "x", color=colours[i], ms=4, alpha=0.5)
        a.set_title(f"{title}: {int(np.sum(cnt))} points", fontsize=10)
        a.set_aspect("equal")
    return ax


def show_quadtree(x, y, leaf, ax=None, title: str = ""):
    """The leaves' cells over the points (each cell once), coloured by depth."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    leaf = np.asarray(leaf, np.int64)
    codes = np.unique(leaf)
    ax.plot(np.asarray(x), np.asarray(y), ".", ms=2, color="k")
    depths = [(int(c).bit_length() - 1) // 2 for c in codes]
    top = max(depths + [1])
    # Every node that split (an ancestor of a leaf) drawn with its four children, the empty ones
    # too, so that the whole subdivision shows.
    split = set()
    for code in codes:
        c = int(code) // 4
        while c >= 1 and c not in split:
            split.add(c)
            c //= 4
    ax.add_patch(Rectangle((0, 0), 1, 1, fill=False, lw=0.8, color=plt.cm.viridis(0.0)))
    for parent in split:
        for q in range(4):
            x0, y0, side = cell_of(4 * parent + q)
            d = ((4 * parent + q).bit_length() - 1) // 2
            ax.add_patch(Rectangle((x0, y0), side, side, fill=False, lw=0.6,
                                   color=plt.cm.viridis(d / top)))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_title(title or f"{codes.size} leaves holding points, depth up to {max(depths + [0])}",
                 fontsize=10)
    return ax


# ---- tries -----------------------------------------------------------------------------------------

def try_counts(kernel, n: int = 40, threads: int = 32, seed: int = 21):
    """Run a counts kernel once on ``n`` curves; return (what it stored, the spec's counts)."""
    from numba import cuda
    cp = make_curves(np.random.default_rng(seed), n)
    counts = cuda.to_device(np.full(n, -1, np.int32))
    kernel[(n + threads - 1) // threads, threads](cuda.to_device(cp), counts)
    return counts.copy_to_host(), counts_of(cp)


def try_tessellate(tessellate, n: int = 12, threads: int = 16, seed: int = 21):
    """Run a tessellation host function once on ``n`` curves with their spec counts; return (the
    points it stored, the float64 points)."""
    from numba import cuda
    cp = make_curves(np.random.default_rng(seed), n)
    counts = counts_of(cp).astype(np.int32)
    points = cuda.to_device(np.full((int(counts.sum()), 2), np.nan, np.float32))
    tessellate(cuda.to_device(cp), cuda.to_device(counts), points, threads)
    return points.copy_to_host(), bezier_host(cp, counts)[0]


def try_quadtree(build, n: int = 200, threads: int = 32, seed: int = 21, capacity: int = 4,
                 max_depth: int = 5):
    """Run a quadtree host function once on ``n`` clustered points; return (x, y, the leaves it
    stored, the spec's leaves)."""
    from numba import cuda
    inputs = quadtree_inputs(np.random.default_rng(seed), n)
    x, y = inputs["x"], inputs["y"]
    leaf = cuda.to_device(np.full(n, -1, np.int32))
    table = cuda.device_array(4 ** (max_depth - 1), np.int32)
    build(cuda.to_device(x), cuda.to_device(y), capacity, max_depth, leaf, table, threads)
    return x, y, leaf.copy_to_host(), quadtree_host(x, y, capacity, max_depth)


def course_quadtree_of(x, y, capacity: int, max_depth: int) -> np.ndarray:
    """The course's quadtree of host points (leaves as int32), built on the device."""
    from numba import cuda
    leaf = cuda.device_array(len(x), np.int32)
    course_quadtree(cuda.to_device(np.asarray(x, np.float32)),
                    cuda.to_device(np.asarray(y, np.float32)), capacity, max_depth, leaf,
                    cuda.device_array(4 ** (max_depth - 1), np.int32), quadtree_threads())
    return leaf.copy_to_host()


def work_saved(cp) -> dict:
    """Points and bytes written, adaptive against flat, for curves ``cp``."""
    counts = counts_of(cp)
    adaptive, flat = int(counts.sum()), MAX_POINTS * len(counts)
    return {"adaptive_points": adaptive, "flat_points": flat, "ratio": flat / max(1, adaptive),
            "adaptive_bytes": 28 * len(counts) + 8 * adaptive, "flat_bytes": 24 * len(counts) + 8 * flat}


# ---- timing -------------------------------------------------------------------------------------------

def _right(points, cp, counts, seed: int = 1) -> bool:
    """The points checked at 512 sampled coordinates against the float64 polynomial."""
    from autograder.problems.ch21.specs import bezier_tolerance
    total = int(np.sum(counts))
    rng = np.random.default_rng(seed)
    idx = np.unique(rng.integers(0, total, size=min(512, total)))
    exp, mag = bezier_host(cp, counts, idx)
    got = np.asarray(points)[idx]
    return bool(np.all(np.abs(got - exp) <= bezier_tolerance(mag)))


def time_cpu(n: int = 100_000, seed: int = 21) -> list[dict]:
    """The CPU baselines on ``n`` curves with their adaptive counts: label, ms, points, right."""
    from autograder.machine import timing
    cp = make_curves(np.random.default_rng(seed), n)
    counts = counts_of(cp).astype(np.int32)
    points = np.empty((int(counts.sum()), 2), np.float32)
    out = []
    for base in BASELINES.values():
        points[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(cp=cp, counts=counts, points=points),
                                repeats=3, nbytes=28 * n + 8 * points.shape[0])
        out.append({"label": base.label, "ms": stats.median_ms, "points": points.shape[0],
                    "right": _right(points, cp, counts)})
    return out


def measure(tessellate=None, counts_kernel=None, n: int = SPEED_N, repeats: int = 20,
            seed: int = 21) -> list[dict]:
    """Time the tessellation of ``n`` curves on a GPU: the flat version (MAX_POINTS points for
    every curve, one kernel), the course's adaptive one (the counts kernel, the scan, a block per
    curve), and, where given, the learner's (``counts_kernel`` then ``tessellate``, or the
    course's counts then ``tessellate``), beside the compiled CPU loop on every core. Rows:
    label, ms, points (written), GB/s (bytes read and written), right (points checked at 512
    sampled coordinates)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the tessellation")
    from numba import cuda
    cp = make_curves(np.random.default_rng(seed), n)
    counts = counts_of(cp).astype(np.int32)
    total = int(counts.sum())
    d_cp = cuda.to_device(cp)
    d_counts = cuda.device_array(n, np.int32)
    flat = cuda.device_array((MAX_POINTS * n, 2), np.float32)
    points = cuda.device_array((total, 2), np.float32)
    poison = np.full((total, 2), np.nan, np.float32)
    blocks = (n + 255) // 256
    out = []

    def record(label, launch, buffer, written, expected_counts):
        buffer.copy_to_device(np.full(buffer.shape, np.nan, np.float32) if buffer is flat
                              else poison)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=28 * n + 8 * written)
        out.append({"label": label, "ms": stats.median_ms, "points": written,
                    "gbps": stats.gbps,
                    "right": _right(buffer.copy_to_host(), cp, expected_counts)})

    record(f"flat: {MAX_POINTS} points every curve (course)",
           lambda i: tessellate_flat(d_cp, flat, SPEED_THREADS), flat, MAX_POINTS * n,
           np.full(n, MAX_POINTS))

    def adaptive(count_with, tess_with):
        def launch(i):
            count_with[blocks, 256](d_cp, d_counts)
            tess_with(d_cp, d_counts, points, SPEED_THREADS)
        return launch

    record("adaptive: counts, scan, a block per curve (course)",
           adaptive(reference_counts(), course_tessellate), points, total, counts)
    if tessellate is not None:
        record("adaptive (yours)", adaptive(counts_kernel or reference_counts(), tessellate),
               points, total, counts)
    host = np.full((total, 2), np.nan, np.float32)
    base = BASELINES["parallel"]
    base.run(cp=cp, counts=counts, points=host)
    stats = timing.time_cpu(base.label, lambda: base.run(cp=cp, counts=counts, points=host),
                            repeats=3, nbytes=28 * n + 8 * total,
                            cache_key=f"ch21.measure|parallel|{n}|{seed}")
    out.append({"label": "CPU: " + base.label, "ms": stats.median_ms, "points": total,
                "gbps": stats.gbps, "right": _right(host, cp, counts)})
    return out


CHART = "ch21_measure"      # the measuring cell's recorded picture: h200_ch21_measure.json here


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each row of
    :func:`measure` as a bar, the flat version first. Without a GPU, ``chart()`` names the course's
    own run of it, recorded on the H200 (``h200_ch21_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    return {"name": CHART, "rows": list(rows),
            "title": f"Tessellating {SPEED_N:,} curves, flat and adaptive"}
