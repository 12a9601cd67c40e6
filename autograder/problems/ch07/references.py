"""Chapter 7's reference kernel (timed beside the learner's in the speed test): a kernel factory
like the learner's tiled one, with a launch of its own (:func:`reference_shape`), and the other
kernels `aag bench` times beside it."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.kernels import KernelCache, chose, pairs_fit

# Each thread of the reference computes REF_ROWS × REF_COLS outputs (REF_ROWS rows of REF_COLS
# adjacent columns), keeping the running sums in registers: an input row it loads (REF_COLS + 2r
# values) serves up to 2r + 1 of its output rows, so a thread loads (REF_ROWS + 2r)(REF_COLS + 2r)
# values for REF_ROWS · REF_COLS outputs (4.5 per output for r = 2) instead of (2r + 1)² = 25.
# Loads go through L1 (no shared memory, no barrier); a warp reads 64 neighbouring columns of a
# row at a time (coalesced). The kernel is generated as straight-line code for its filter (below).
REF_ROWS = 8
REF_COLS = 2
REF_BLOCK = (64, 4)
# The same design as a loop, one column per thread (a bench row): its rows and block.
LOOP_ROWS = 8
LOOP_BLOCK = (32, 8)

cuda = float32 = uint32 = uint64 = None   # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint32", "uint64")


def reference_shape(h: int, w: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(blocks, threads) of the reference kernel for an h × w image."""
    bx, by = REF_BLOCK
    cols, rows = bx * REF_COLS, by * REF_ROWS
    return ((w + cols - 1) // cols, (h + rows - 1) // rows), REF_BLOCK


def loop_shape(h: int, w: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(blocks, threads) of :func:`conv_rows_loop` for an h × w image."""
    bx, by = LOOP_BLOCK
    return ((w + bx - 1) // bx, (h + by * LOOP_ROWS - 1) // (by * LOOP_ROWS)), LOOP_BLOCK


# The course's kernels' own launch shapes, by factory: the course's own table, so that a factory a
# learner writes cannot pick its launch by carrying an attribute.
_OWN_SHAPES: dict = {}


def own_launch_shape(factory, h: int, w: int):
    """(blocks, threads) of the reference or a bench variant (each has a launch of its own), or
    None for any other factory."""
    shape = _OWN_SHAPES.get(factory)
    return shape(h, w) if shape is not None else None


def conv_rows_loop():
    """For `aag bench`: the reference's design written as loops, one column per thread: a
    factory like the learner's, ``make(F, in_tile)`` (``in_tile`` is ignored: it has a launch of
    its own, :func:`loop_shape`)."""
    return _kernels.get("conv_rows_loop", _rows_loop)


def _rows_loop():
    def make_rows_loop(F, in_tile=0):
        F = np.ascontiguousarray(F, dtype=np.float32)
        r = F.shape[0] // 2
        d = 2 * r + 1
        rows = LOOP_ROWS

        @cuda.jit
        def conv2d_rows_loop(image, out):
            Fc = cuda.const.array_like(F)
            h, w = image.shape
            col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * rows
            if col >= w or row0 >= h:
                return
            acc = cuda.local.array(rows, float32)
            v = cuda.local.array(d, float32)
            for k in range(rows):
                acc[k] = float32(0)
            for t in range(rows + 2 * r):          # input rows row0 - r .. row0 + rows - 1 + r
                i = row0 + t - r
                inside = i >= 0 and i < h
                for b in range(d):
                    j = col + b - r
                    v[b] = image[i, j] if inside and j >= 0 and j < w else float32(0)
                for k in range(rows):              # output row0 + k uses filter row t - k
                    a = t - k
                    if a >= 0 and a < d:
                        for b in range(d):
                            acc[k] += Fc[a, b] * v[b]
            for k in range(rows):
                if row0 + k < h:
                    out[row0 + k, col] = acc[k]
        return conv2d_rows_loop

    _OWN_SHAPES[make_rows_loop] = loop_shape
    return make_rows_loop


# ---- the reference and the other straight-line kernels -------------------------------------------
#
# Written as loops (conv_rows_loop), the loop over input rows stays a loop when compiled (5 loads
# and 40 FMAs per trip, the filter read from constant memory by a run-time row index). These kernels
# are generated as straight-line Python source for one filter, rows per thread and columns per
# thread, so there is no loop left to unroll: every filter weight is an immediate operand of its
# FMA, every running sum a scalar (a register), every load an independent instruction that the
# compiler may issue early (the next rows' loads overlap the current row's FMAs). Indices are cast
# to uint64, so Numba emits no negative-index wrap-around. A thread that handles `cols` adjacent
# columns loads cols + 2r values per input row instead of cols(2r + 1). Threads whose window leaves
# the image (the image's border) take a plain path with bounds checks.

def _accumulate(L: list[str], F: np.ndarray, t: int, rows: int, cols: int, started: set) -> None:
    """The FMAs that input row t (its values v{t}_b) gives the thread's running sums: output row k
    uses filter row t - k, each weight an immediate operand."""
    d = F.shape[0]
    for k in range(rows):
        a = t - k
        if 0 <= a < d:
            for c in range(cols):
                for bb in range(d):
                    f = repr(float(F[a, bb]))
                    name = f"acc{k}_{c}"
                    if name in started:
                        L.append(f"        {name} += float32({f}) * v{t}_{c + bb}")
                    else:
                        L.append(f"        {name} = float32({f}) * v{t}_{c + bb}")
                        started.add(name)


def _border_path(rows: int, cols: int, r: int) -> list[str]:
    """The branch for threads whose window leaves the image: bounds checks, the filter from
    constant memory."""
    d = 2 * r + 1
    return ["    else:",
            "        Fc = cuda.const.array_like(FILTER)",
            f"        for k in range({rows}):",
            f"            for c in range({cols}):",
            "                i, j = row0 + k, col + c",
            "                if i < h and j < w:",
            "                    s = float32(0)",
            f"                    for a in range({d}):",
            f"                        ii = i + a - {r}",
            "                        if ii >= 0 and ii < h:",
            f"                            for b in range({d}):",
            f"                                jj = j + b - {r}",
            "                                if jj >= 0 and jj < w:",
            "                                    s += Fc[a, b] * image[ii, jj]",
            "                    out[i, j] = s"]


def _conv_source(F: np.ndarray, rows: int, cols: int) -> str:
    r = F.shape[0] // 2
    nv = cols + 2 * r
    L = ["def conv2d_unrolled(image, out):",
         "    h, w = image.shape",
         f"    col = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * {cols}",
         f"    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * {rows}",
         "    if col >= w or row0 >= h:",
         "        return",
         f"    if row0 >= {r} and row0 + {rows + r} <= h and col >= {r} and col + {cols + r} <= w:",
         f"        i0 = row0 - {r}",
         f"        j0 = col - {r}"]
    started = set()
    for t in range(rows + 2 * r):
        for b in range(nv):
            L.append(f"        v{t}_{b} = image[uint64(i0 + {t}), uint64(j0 + {b})]")
        _accumulate(L, F, t, rows, cols, started)
    for k in range(rows):
        for c in range(cols):
            L.append(f"        out[uint64(row0 + {k}), uint64(col + {c})] = acc{k}_{c}")
    return "\n".join(L + _border_path(rows, cols, r)) + "\n"


def _unrolled_conv(rows: int, cols: int, block: tuple[int, int]):
    def make_unrolled(F, in_tile=0):
        F = np.ascontiguousarray(F, dtype=np.float32)
        namespace = {"cuda": cuda, "float32": float32, "uint64": uint64, "FILTER": F}
        exec(compile(_conv_source(F, rows, cols), f"<conv2d_unrolled_{rows}x{cols}>", "exec"),
             namespace)
        return cuda.jit(namespace["conv2d_unrolled"])

    def launch_shape(h: int, w: int):
        bx, by = block
        return ((w + bx * cols - 1) // (bx * cols), (h + by * rows - 1) // (by * rows)), block

    _OWN_SHAPES[make_unrolled] = launch_shape
    return make_unrolled


def conv_unrolled_16():
    """For `aag bench`: 16 outputs of one column per thread, fully unrolled, blocks of 32 × 8."""
    return _kernels.get("conv_unrolled_16", lambda: _unrolled_conv(16, 1, (32, 8)))


def reference_conv2d_tiled():
    """The course reference: REF_ROWS rows × REF_COLS adjacent columns per thread, generated as
    straight-line code for each filter, blocks of REF_BLOCK (:func:`reference_shape`). A factory
    like the learner's, ``make(F, in_tile)``; ``in_tile`` is ignored."""
    return _kernels.get("reference_conv2d_tiled",
                        lambda: _unrolled_conv(REF_ROWS, REF_COLS, REF_BLOCK))


def conv_unrolled_16x2():
    """For `aag bench`: 16 rows × 2 adjacent columns per thread, fully unrolled, blocks of 64 × 4."""
    return _kernels.get("conv_unrolled_16x2", lambda: _unrolled_conv(16, 2, (64, 4)))


# ---- 8-byte loads: the reference's design through pairs of floats -------------------------------
#
# The reference's warp reads a row's window at a stride of 8 bytes (each thread's 2 columns), so
# each of its cols + 2r loads per row spans 256 bytes for 128 used, and Nsight Compute found the
# L1 84% busy. Here the window comes through a uint64 view of the flat image: a thread's 6 floats
# of a row (r = 2) are 3 pairs when the row's first float sits at an even flat index, 4 pairs when
# at an odd one (a row of odd width alternates), and a warp's pair loads are contiguous. Which rows
# are odd is known when the code is generated: i0 = row0 - r and j0 = col - r are even (rows per
# thread, cols and r even), so input row i0 + t starts odd exactly when t and the width are odd.
# Output rows are stored as one pair where row0 + k starts even, as two floats elsewhere.

def _conv_pairs_source(F: np.ndarray, rows: int, odd_width: bool) -> str:
    r = F.shape[0] // 2
    cols = 2
    nv = cols + 2 * r
    assert r % 2 == 0 and rows % 2 == 0
    L = ["def conv2d_pairs(image, out, image2, out2):",
         "    h, w = image.shape",
         f"    col = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * {cols}",
         f"    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * {rows}",
         "    if col >= w or row0 >= h:",
         "        return",
         # strictly inside at the bottom: an odd row's last pair reaches one float past the
         # window, which on the image's last row would be past the view's end
         f"    if row0 >= {r} and row0 + {rows + r} < h and col >= {r} and col + {cols + r} <= w:",
         "        ww = uint64(w)",
         f"        base = uint64(row0 - {r}) * ww + uint64(col - {r})",
         "        top = uint64(row0) * ww + uint64(col)"]
    started = set()
    for t in range(rows + 2 * r):
        odd = odd_width and t % 2 == 1
        L.append(f"        q = (base + uint64({t}) * ww) >> uint64(1)")
        pairs = (nv + 2) // 2 if odd else nv // 2
        for p in range(pairs):
            L.append(f"        p{p} = image2[q + uint64({p})]")
        for b in range(nv):
            # even start: float b is half b % 2 of pair b // 2; odd start: half (b + 1) % 2 of
            # pair (b + 1) // 2
            p, half = ((b + 1) // 2, (b + 1) % 2) if odd else (b // 2, b % 2)
            bits = f"p{p} >> uint64(32)" if half else f"p{p} & uint64(0xFFFFFFFF)"
            L.append(f"        v{t}_{b} = uint32({bits}).view(np.float32)")
        _accumulate(L, F, t, rows, cols, started)
    for k in range(rows):
        if odd_width and k % 2 == 1:
            for c in range(cols):
                L.append(f"        out[uint64(row0 + {k}), uint64(col + {c})] = acc{k}_{c}")
        else:
            L.append(f"        out2[(top + uint64({k}) * ww) >> uint64(1)] = "
                     f"uint64(acc{k}_0.view(np.uint32)) | "
                     f"(uint64(acc{k}_1.view(np.uint32)) << uint64(32))")
    return "\n".join(L + _border_path(rows, cols, r)) + "\n"


class PairedConv:
    """``PairedConv(plain, even, odd)[blocks, threads](image, out)``: the pair kernel for the
    image's width parity (``even`` or ``odd``, each ``kernel(image, out, image2, out2)``) on flat
    uint64 views of both images, where both start on an 8-byte boundary; else ``plain`` (the
    reference's scalar build), with the same launch."""

    def __init__(self, plain, even, odd):
        self.plain, self.even, self.odd = plain, even, odd

    def __getitem__(self, config):
        def launch(image, out):
            h, w = image.shape
            size = h * w
            flat_in, flat_out = image.reshape(size), out.reshape(size)
            if self.even is None or size < 2 or not pairs_fit(flat_in[:2], flat_out[:2]):
                chose("the scalar build (no pairs: an odd radius or an unaligned image)")
                self.plain[config](image, out)
                return
            kernel = self.odd if w % 2 else self.even
            chose(f"8-byte pairs ({'odd' if w % 2 else 'even'} width)")
            whole = size - size % 2
            kernel[config](image, out, flat_in[:whole].view(np.uint64),
                           flat_out[:whole].view(np.uint64))
        return launch


def _paired_conv(rows: int, block: tuple[int, int]):
    make_plain = _unrolled_conv(rows, 2, block)

    def make_paired(F, in_tile=0):
        F = np.ascontiguousarray(F, dtype=np.float32)
        plain = make_plain(F)
        if (F.shape[0] // 2) % 2:                    # odd r: j0 = col - r is odd; no pairs
            return PairedConv(plain, None, None)
        built = []
        for odd in (False, True):
            namespace = {"cuda": cuda, "float32": float32, "uint32": uint32, "uint64": uint64,
                         "np": np, "FILTER": F}
            exec(compile(_conv_pairs_source(F, rows, odd), f"<conv2d_pairs_{rows}x2_{odd}>",
                         "exec"), namespace)
            built.append(cuda.jit(namespace["conv2d_pairs"]))
        return PairedConv(plain, *built)

    def launch_shape(h: int, w: int):
        bx, by = block
        return ((w + bx * 2 - 1) // (bx * 2), (h + by * rows - 1) // (by * rows)), block

    _OWN_SHAPES[make_paired] = launch_shape
    return make_paired


def conv_pairs_8x2():
    """For `aag bench`: the reference's design (8 rows × 2 columns per thread, blocks of 64 × 4)
    reading each row's window as pairs of floats (8-byte loads; a warp's are contiguous)."""
    return _kernels.get("conv_pairs_8x2", lambda: _paired_conv(REF_ROWS, REF_BLOCK))

