"""Chapter 27's graded exercises besides Triton: the least time of a quantised product (27.1, a
formula: bytes over bandwidth), and weight-only int8 and packed int4 matrix products with
per-group scales, dequantised on the fly (27.2, 27.3); the format, the quantisers, the inputs, the float64
specs, the error bound, the launches and the CPU baseline (which 27.4, the int4 product in Triton,
shares: :mod:`.triton_specs`).

The format
----------
``W`` is ``N × K`` (out_features × in_features). Each row is cut into groups of ``G`` consecutive
columns (``G`` even; the last group of a row is ragged when ``G`` does not divide ``K``), and each
group has one scale ``s[n, g]``, float16, g = k // G, ``ceil(K / G)`` scales per row. The weight
the format stands for is ``w[n, k] = q[n, k] · s[n, k // G]``:

* **int8**: ``q`` int8, ``N × K``, symmetric (the quantiser gives −127 .. 127, s = max|w| / 127).
* **int4, packed**: two 4-bit values per byte, ``packed`` uint8 ``N × ceil(K / 2)``: byte j of a
  row holds column 2j in its **low** nibble and column 2j + 1 in its **high** nibble, each stored
  with an offset of 8: ``q = nibble − 8`` (−8 .. 7; the quantiser gives −7 .. 7, s = max|w| / 7).
  When K is odd the last byte's high nibble is padding (any value: it stands for no column).

Activations ``x`` are float16, ``K`` long (27.2) or ``B × K`` (27.3, B = 1 .. 16); ``y = W x`` is
float32 (``y[b, n] = Σ_k w[n, k] · x[b, k]``), accumulated in float32.

The error bound
---------------
The spec is the float64 product of the **dequantised** weights, and those are exact in float32:
|q| ≤ 127 needs 7 bits and a float16 scale 11, so ``float32(q) · float32(s)`` (18 bits) rounds
nothing; ``q · x`` (7 + 11 bits) is exact too. What float32 code adds is rounding in the products
by ``x`` (or by the scale, for a group's partial sum) and in the sums. With u = 2^-24 and
γ_c = c·u / (1 − c·u) (Higham, ch. 3), a sum whose every term passes through at most c roundings
is within γ_c · Σ|terms| of the exact one, in any order of the additions. The exercises split a
row of K columns over the lanes of a warp (or the threads of a block): a lane's share is at most
ceil(K / 32) + 8 columns (columns, bytes or runs of up to 8 columns strided by the warp), added
one after another; per group the partial sum may be multiplied by its scale and added to the
lane's total (one multiplication and one addition per group: ceil(K / G) more); each product
w·x, q·x·s or q·(s·x) rounds at most twice; a tree over the lanes and warps takes at most 10 steps
(1024 threads). So c = ceil(K / 32) + ceil(K / G) + 24 covers every such order (:func:`chain`):

    |ŷ[b, n] − y[b, n]| ≤ γ_c · Σ_k |w[n, k] · x[b, k]| + the smallest normal float32.

Accumulating in float16 (u = 2^-11 per addition) misses it by orders of magnitude, as do
dequantising into float16 (an error of up to 2^-12 in every weight), a nibble read from the wrong
half of its byte, a nibble taken without its offset, a scale of the neighbouring group, and a
ragged last group left out (``tests/test_ch27.py`` emulates each against the checks' cases).

Warps: 27.2 and 27.3 are written for any warp size. CPU mode's hidden cases alternate warp sizes
64 and 32 (:func:`autograder.problems.ch10.at_warp_size`); a judge on a GPU runs them again at
the other warp size in a CPU-mode student process (``portability_cases``).
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.grading.problem import Baseline, Case, Problem, Sizes, SpeedBar
from autograder.machine import device
from autograder.problems.ch10 import at_warp_size, device_warp_size
from autograder.problems.ch27.references import (reference_int4_matmul, reference_int8_matvec,
                                                 torch_int4_vendor, torch_int8_vendor)
from autograder.problems.kit.formula import formula_problem

WARP_BLOCKS = (64, 128)      # multiples of 64: whole warps at warp size 32 and 64
SPEED_GROUP = 128            # G of the speed test (and of most int4/int8 checkpoints in use)
SPEED_MATVEC = (16384, 8192)         # 27.2's speed test: N × K int8 weights, 128 MiB
SPEED_MATMUL = (8, 16384, 8192)      # 27.3's: B × N × K, 64 MiB of packed int4 weights
CPU_GROUPS = (16, 32, 64)    # CPU mode draws G per case from these (GPU cases: 32 .. 128)
GPU_GROUPS = (32, 64, 128)


# ---- the format -----------------------------------------------------------------------------------

def groups(k: int, group: int) -> int:
    """The number of groups (scales) in a row of ``k`` columns."""
    return -(-int(k) // int(group))


def expand_scales(scales, k: int, group: int) -> np.ndarray:
    """The scale of every column: ``scales[n, c // group]`` for c < k (float64)."""
    return np.repeat(np.asarray(scales, np.float64), int(group), axis=1)[:, :int(k)]


def pack_int4(q) -> np.ndarray:
    """``q`` (N × K integers in −8 .. 7) packed two per byte: column 2j in the low nibble of byte
    j, column 2j + 1 in its high nibble, each as q + 8; an odd K's last high nibble is 8 (0)."""
    q = np.asarray(q, np.int64)
    n, k = q.shape
    if q.size and (q.min() < -8 or q.max() > 7):
        raise ValueError("int4 values must lie in -8 .. 7")
    nib = np.full((n, 2 * groups(k, 2)), 8, np.uint8)
    nib[:, :k] = (q + 8).astype(np.uint8)
    return (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)


def unpack_int4(packed, k: int) -> np.ndarray:
    """The int4 values (int8, N × k) of ``packed``: low nibble first, each minus 8."""
    p = np.asarray(packed, np.uint8)
    nib = np.empty((p.shape[0], 2 * p.shape[1]), np.int8)
    nib[:, 0::2] = (p & 0x0F).astype(np.int8) - 8
    nib[:, 1::2] = (p >> 4).astype(np.int8) - 8
    return nib[:, :int(k)]


def dequantize(q, scales, group: int) -> np.ndarray:
    """The weights ``q[n, k] · scales[n, k // group]`` in float64 (exact: see the bound)."""
    q = np.asarray(q)
    return q.astype(np.float64) * expand_scales(scales, q.shape[1], group)


def quantize(w, group: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-group quantisation of ``w`` (N × K floats): ``(q, scales)`` with scales
    float16 = max|w| of the group / qmax (qmax = 127 for 8 bits, 7 for 4), q = round(w / s)
    clipped to ±qmax, int8. A group of zeros gets the scale 1 (q = 0 there)."""
    w = np.asarray(w, np.float64)
    n, k = w.shape
    qmax = (1 << (int(bits) - 1)) - 1
    ng = groups(k, group)
    padded = np.zeros((n, ng * int(group)))
    padded[:, :k] = np.abs(w)
    amax = padded.reshape(n, ng, int(group)).max(axis=2)
    scales = np.where(amax > 0, amax / qmax, 1.0).astype(np.float16)
    scales = np.where(scales > 0, scales, np.float16(2.0 ** -24))   # below float16's range
    q = np.clip(np.rint(w / expand_scales(scales, k, group)), -qmax, qmax).astype(np.int8)
    return q, scales


def quantize_int8(w, group: int = SPEED_GROUP) -> tuple[np.ndarray, np.ndarray]:
    """``(q, scales)``: int8 weights, −127 .. 127, one float16 scale per group."""
    return quantize(w, group, 8)


def quantize_int4(w, group: int = SPEED_GROUP) -> tuple[np.ndarray, np.ndarray]:
    """``(packed, scales)``: int4 weights −7 .. 7 packed two per byte, one float16 scale per
    group."""
    q, scales = quantize(w, group, 4)
    return pack_int4(q), scales


# ---- the bound --------------------------------------------------------------------------------------

def chain(k: int, group: int) -> int:
    """c: the most roundings a term of a row's sum goes through (see the module's docstring)."""
    return -(-int(k) // 32) + groups(k, group) + 24


def product_host(w, x) -> tuple[np.ndarray, np.ndarray]:
    """(y, Σ|w||x|) in float64 for ``w`` N × K (float64) and ``x`` B × K: both B × N."""
    x = np.asarray(x, np.float64)
    return x @ w.T, np.abs(x) @ np.abs(w).T


def bound(magnitude, k: int, group: int) -> np.ndarray:
    """The error bound of every output from its Σ|w||x| (see the module's docstring)."""
    return gamma(chain(k, group)) * np.asarray(magnitude, np.float64) + TINY32


# ---- inputs ----------------------------------------------------------------------------------------

def draw_group(rng, k: int) -> int:
    """G for a case: one of the backend's sizes, drawn; the checks' K are mostly not multiples."""
    choices = GPU_GROUPS if device.current().is_gpu else CPU_GROUPS
    return int(choices[int(rng.integers(len(choices)))])


def draw_scales(rng, n: int, ng: int) -> np.ndarray:
    """Positive float16 scales spread over two decades (10^-3 .. 10^-1), so that a neighbouring
    group's scale is a different number."""
    return (10.0 ** rng.uniform(-3, -1, (int(n), int(ng)))).astype(np.float16)


def draw_x(rng, shape) -> np.ndarray:
    """float16 activations of mixed magnitudes: N(0, 1) times 10^U(-2, 1) per element."""
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 1, shape)).astype(np.float16)


def draw_int8(rng, n: int, k: int) -> np.ndarray:
    """int8 weights as a quantiser leaves them (bell-shaped, ±127 at each group's largest), with
    −127 and 127 both present when the matrix has room for them."""
    q = np.clip(np.rint(rng.standard_normal((int(n), int(k))) * 45), -127, 127).astype(np.int8)
    if q.size >= 2:
        flat = q.reshape(-1)
        at = rng.choice(flat.size, 2, replace=False)
        flat[at[0]], flat[at[1]] = 127, -127
    return q


def draw_int4(rng, n: int, k: int) -> np.ndarray:
    """int4 values over the whole range −8 .. 7 (nibbles 0 .. 15), int8."""
    return rng.integers(-8, 8, (int(n), int(k))).astype(np.int8)


def int8_inputs(rng, size):
    n, k = (int(v) for v in size)
    group = draw_group(rng, k)
    return {"q": draw_int8(rng, n, k), "scales": draw_scales(rng, n, groups(k, group)),
            "x": draw_x(rng, k), "group": group}


def int8_speed_inputs(rng, size):
    n, k = (int(v) for v in size)
    q = rng.integers(-127, 128, (n, k), dtype=np.int8)
    return {"q": q, "scales": draw_scales(rng, n, groups(k, SPEED_GROUP)), "x": draw_x(rng, k),
            "group": SPEED_GROUP}


def int4_inputs(rng, size):
    b, n, k = (int(v) for v in size)
    group = draw_group(rng, k)
    packed = pack_int4(draw_int4(rng, n, k))
    if k % 2:                     # the padding nibble: anything (it stands for no column)
        packed[:, -1] = (packed[:, -1] & 0x0F) | (rng.integers(0, 16, n).astype(np.uint8) << 4)
    return {"packed": packed, "scales": draw_scales(rng, n, groups(k, group)),
            "x": draw_x(rng, (b, k)), "group": group}


def int4_speed_inputs(rng, size):
    b, n, k = (int(v) for v in size)
    packed = rng.integers(0, 256, (n, -(-k // 2)), dtype=np.uint8)
    return {"packed": packed, "scales": draw_scales(rng, n, groups(k, SPEED_GROUP)),
            "x": draw_x(rng, (b, k)), "group": SPEED_GROUP}


# ---- specs and tolerances -------------------------------------------------------------------------
# The memo keeps (y, Σ|w||x|) of a case's inputs: the tolerance needs both.

def int8_spec(q, scales, x, group, **launch):
    y, _ = product_host(dequantize(q, scales, group), np.atleast_2d(x))
    return {"y": y[0]}


def _int8_tolerance(inputs, expected):
    q = inputs["q"]
    _, mag = product_host(dequantize(q, inputs["scales"], inputs["group"]),
                          np.atleast_2d(inputs["x"]))
    return {"y": bound(mag[0], q.shape[1], inputs["group"])}


def int4_spec(packed, scales, x, group, **launch):
    k = x.shape[1]
    y, _ = product_host(dequantize(unpack_int4(packed, k), scales, group), x)
    return {"y": y}


def int4_tolerance(inputs, expected):
    x = inputs["x"]
    k = x.shape[1]
    w = dequantize(unpack_int4(inputs["packed"], k), inputs["scales"], inputs["group"])
    _, mag = product_host(w, x)
    return {"y": bound(mag, k, inputs["group"])}


def int8_sample(inputs, idx):
    """(expected, bound) at output rows ``idx`` only (the speed test's samples)."""
    rows = np.asarray(idx)
    q, x, group = inputs["q"], inputs["x"], inputs["group"]
    w = dequantize(q[rows], inputs["scales"][rows], group)
    y, mag = product_host(w, np.atleast_2d(x))
    return {"y": y[0]}, {"y": bound(mag[0], q.shape[1], group)}


def int4_sample(inputs, idx, chain_of=None):
    """(expected, bound) at flat indices ``idx`` of y (B × N), from the sampled rows of W."""
    x = inputs["x"]
    b, k = x.shape
    n = inputs["packed"].shape[0]
    bi, ni = np.unravel_index(np.asarray(idx), (b, n))
    w = dequantize(unpack_int4(inputs["packed"][ni], k), inputs["scales"][ni], inputs["group"])
    xs = np.asarray(x[bi], np.float64)
    y = np.sum(w * xs, axis=1)
    mag = np.sum(np.abs(w * xs), axis=1)
    c = (chain_of or chain)(k, inputs["group"])
    return {"y": y}, {"y": gamma(c) * mag + TINY32}


def matvec_bytes(size) -> int:
    n, k = (int(v) for v in size)
    return n * k + 2 * n * groups(k, SPEED_GROUP) + 2 * k + 4 * n


def matmul_bytes(size) -> int:
    b, n, k = (int(v) for v in size)
    return n * -(-k // 2) + 2 * n * groups(k, SPEED_GROUP) + 2 * b * k + 4 * b * n


def matvec_flops(size) -> int:
    n, k = (int(v) for v in size)
    return 2 * n * k


def matmul_flops(size) -> int:
    b, n, k = (int(v) for v in size)
    return 2 * b * n * k


# ---- CPU baselines ---------------------------------------------------------------------------------

def _numpy_int8(q, scales, x, group, y):
    w = q.astype(np.float32) * np.repeat(scales.astype(np.float32), group, axis=1)[:, :q.shape[1]]
    y[...] = w @ x.astype(np.float32)


def _numpy_int4(packed, scales, x, group, y):
    k = x.shape[1]
    w = unpack_int4(packed, k).astype(np.float32)
    w *= np.repeat(scales.astype(np.float32), group, axis=1)[:, :k]
    y[...] = x.astype(np.float32) @ w.T


INT8_BASELINES = {"numpy": Baseline("NumPy: dequantise to float32, then W @ x (1 core)",
                                    _numpy_int8)}
INT4_BASELINES = {"numpy": Baseline("NumPy: unpack, dequantise to float32, then x @ W.T",
                                    _numpy_int4)}


# ---- launches and cases -----------------------------------------------------------------------------

def row_blocks(size, threads: int) -> int:
    """Fewer warps than output rows, so a loop over the rows covers them: 2 blocks in CPU mode, a
    few dozen to a few hundred on a GPU."""
    rows = int(size[-2])
    if device.current().is_gpu:
        return max(1, min(-(-rows * 32 // int(threads)), 96 + rows % 37))
    return 2


def speed_shape(size) -> tuple[int, int]:
    """(blocks, threads) for the speed tests: 256 threads (8 warps), 8 blocks per SM, never more
    than the rows need."""
    from numba import cuda as numba_cuda
    sms = numba_cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * 8, -(-int(size[-2]) // 8))), 256


def _launcher(names_in):
    def launch(kernel, inputs, outputs, case):
        args = [inputs[k] if k != "group" else int(inputs[k]) for k in names_in] + [outputs["y"]]
        warp = inputs.get("warp_size")
        if warp is None:
            kernel[case.blocks, case.threads](*args)
            return
        with at_warp_size(int(warp)):
            kernel[case.blocks, case.threads](*args)
    return launch


def shape_label(size) -> str:
    if len(size) == 2:
        n, k = (int(v) for v in size)
        return f"N = {n}, K = {k}"
    b, n, k = (int(v) for v in size)
    return f"B = {b}, N = {n}, K = {k}"


def case_label(case: Case) -> str:
    return f"{shape_label(case.size)}, G = {int(case.inputs['group'])}"


NIBBLE_HINT = (
    "the values match what a kernel gives that reads the two nibbles of a byte the other way "
    "round: column 2j is the LOW nibble (byte & 0xF) and column 2j + 1 the HIGH one (byte >> 4).")
OFFSET_HINT = (
    "the values match what a kernel gives that takes a nibble as it is: the format stores q + 8, "
    "so q = nibble − 8 (a nibble of 0 is −8, 8 is 0, 15 is 7).")


class QuantProblem(Problem):
    """A quantised product written for any warp size: sizes are (N, K) or (B, N, K); the group
    size G is drawn per case; CPU mode's hidden cases alternate warp sizes 64 and 32, a GPU runs
    its own (the judge adds the other one in a CPU-mode process through
    :meth:`portability_cases`)."""

    portable_warp_sizes = (32, 64)

    def _with_warps(self, cases: list[Case], warps: list[int]) -> list[Case]:
        for case, warp in zip(cases, warps):
            case.inputs["warp_size"] = int(warp)
            case.label = f"{case_label(case)} at warp size {int(warp)}"
        return cases

    def _random_sizes(self, rng, count: int, lo: int, hi: int, dims: int) -> list[tuple]:
        """Random shapes: K odd (no block or group divides it), N up to 12, B up to 8."""
        out = []
        for _ in range(count):
            v = [int(s) for s in rng.integers(lo, hi, size=dims)]
            v[-1] |= 1
            v[-2] = 1 + v[-2] % 12          # a few rows: the simulator's time goes with B·N·K
            if dims == 3:
                v[0] = 1 + v[0] % 8
            out.append(tuple(v))
        return out

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            sizes += self._random_sizes(rng, count, lo, hi, len(sizes[0]))
        shapes = (self.block_size_cycle(rng, len(sizes)) if hidden
                  else [self.visible_block_size] * len(sizes))
        cases = []
        for size, threads in zip(sizes, shapes):
            case = Case(size=size, inputs=self.make_inputs(rng, size))
            case.label = case_label(case)
            case.threads, case.blocks = threads, self.blocks_for(size, threads)
            cases.append(case)
        if hidden and not device.current().is_gpu:
            warps = [64 if i % 2 == 0 else 32 for i in range(len(cases))]
        else:
            warps = [device_warp_size()] * len(cases)
        return self._with_warps(cases, warps)

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        """The CPU hidden sizes at warp size ``warp`` (for a judge on a GPU)."""
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        sizes = self.cpu_sizes.hidden
        shapes = self.block_size_cycle(rng, len(sizes))
        cases = []
        for size, threads in zip(sizes, shapes):
            case = Case(size=size, inputs=self.make_inputs(rng, size))
            case.threads, case.blocks = threads, 2
            cases.append(case)
        return self._with_warps(cases, [warp] * len(cases))

    def judge(self, case: Case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=show_inputs)
        if verdict.passed or outcome.error or "packed" not in case.inputs:
            return verdict
        got = outcome.outputs.get("y")
        expected, tolerance = self.reference_values(case)
        if got is None or np.shape(got) != expected["y"].shape:
            return verdict
        hint = diagnose_int4(case.inputs, np.asarray(got, np.float64))
        verdict.hint = hint or verdict.hint
        return verdict


def diagnose_int4(inputs, got) -> str | None:
    """A hint when every output matches a kernel with the nibbles swapped or without the offset."""
    x = inputs["x"]
    k = x.shape[1]
    q = unpack_int4(inputs["packed"], 2 * inputs["packed"].shape[1]).astype(np.int64)
    swapped = np.empty_like(q)
    swapped[:, 0::2], swapped[:, 1::2] = q[:, 1::2], q[:, 0::2]
    for wrong, hint in ((swapped[:, :k], NIBBLE_HINT), (q[:, :k] + 8, OFFSET_HINT)):
        y, mag = product_host(dequantize(wrong, inputs["scales"], inputs["group"]), x)
        if np.all(np.abs(got - y) <= 1e-3 * mag + 1e-6):
            return hint
    return None


# ---- the problems --------------------------------------------------------------------------------------
# CPU: K not a multiple of 32, 64 or G (a ragged last group), K = 1 (one column, one group), fewer
# rows than the launch has warps and more; G drawn from 16, 32, 64. Hidden: 4 times the largest
# visible case's multiply-adds (N·K: 10 × 301 against 5 × 150; B·N·K: 5 × 6 × 201 against
# 3 × 5 × 100). GPU: chip-sized cases and the same edges.

INT8_CPU = Sizes(visible=((5, 150), (3, 37), (4, 1)),
                 hidden=((10, 301), (6, 64), (3, 2)), hidden_random=(1, 2, 120))
INT8_GPU = Sizes(visible=((4096, 4099), (5, 150), (3, 37), (4, 1)),
                 hidden=((8192, 8191), (10, 301), (6, 64), (3, 2)),
                 hidden_random=(3, 1, 6000), speed=SPEED_MATVEC)

int8_matvec = QuantProblem(
    "int8_matvec",
    title="int8 weight-only matrix–vector product: one warp per row, dequantised on the fly",
    spec=int8_spec, make_inputs=int8_inputs,
    outputs=lambda size: {"y": ((int(size[0]),), np.float32)},
    tolerance=_int8_tolerance, launch=_launcher(("q", "scales", "x", "group")),
    block_sizes=WARP_BLOCKS, visible_block_size=64, blocks_for=row_blocks,
    cpu_sizes=INT8_CPU, gpu_sizes=INT8_GPU, size_label=shape_label,
    bytes_moved=matvec_bytes, flops=matvec_flops, baselines=INT8_BASELINES,
    reference=reference_int8_matvec, speed_inputs=int8_speed_inputs,
    speed_launch=speed_shape, sample_spec=int8_sample, vendor=torch_int8_vendor,
    vendor_label="PyTorch: dequantise to float16, then cuBLAS",
    # The reference reads every byte of W once, as this kernel must: half its speed passes.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    value_hint=("y[n] = Σ_k q[n, k] · scales[n, k // group] · x[k], in float32: convert q, the "
                "scale and x to float32 (numba.float32(...)) before multiplying, take the scale of "
                "the column's own group (k // group, not k // 32), cover every column up to K "
                "(the last group may be shorter than the others), and add the lanes' sums with "
                "shuffles at any warp size."),
)

INT4_CPU = Sizes(visible=((3, 5, 100), (1, 4, 37), (2, 3, 1)),
                 hidden=((5, 6, 201), (16, 1, 30), (1, 6, 3)), hidden_random=(1, 2, 90))
INT4_GPU = Sizes(visible=((8, 4096, 4099), (3, 5, 100), (1, 4, 37), (2, 3, 1)),
                 hidden=((16, 4096, 8191), (5, 6, 201), (16, 1, 30), (1, 6, 3)),
                 hidden_random=(3, 1, 6000), speed=SPEED_MATMUL)

int4_matmul = QuantProblem(
    "int4_matmul",
    title="packed int4 weights times a small batch: one warp per row, every byte read once",
    spec=int4_spec, make_inputs=int4_inputs,
    outputs=lambda size: {"y": ((int(size[0]), int(size[1])), np.float32)},
    tolerance=int4_tolerance, launch=_launcher(("packed", "scales", "x", "group")),
    block_sizes=WARP_BLOCKS, visible_block_size=64, blocks_for=row_blocks,
    cpu_sizes=INT4_CPU, gpu_sizes=INT4_GPU, size_label=shape_label,
    bytes_moved=matmul_bytes, flops=matmul_flops, baselines=INT4_BASELINES,
    reference=reference_int4_matmul, speed_inputs=int4_speed_inputs,
    speed_launch=speed_shape, sample_spec=int4_sample, vendor=torch_int4_vendor,
    vendor_label="PyTorch: unpack, dequantise to float16, then cuBLAS",
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    value_hint=("y[b, n] = Σ_k q[n, k] · scales[n, k // group] · x[b, k] with K = x.shape[1]: "
                "byte j of row n holds column 2j in its low nibble (byte & 15) and column 2j + 1 "
                "in its high nibble (byte >> 4), each as q + 8; when K is odd the last high "
                "nibble is no column. Every batch row b needs its own sum."),
)


# ---- 27.1 predict: the least time of a quantised product ----------------------------------------

def _time_bound_spec(n, k, batch, bits, group, bandwidth):
    scales = np.where(group > 0, 2 * n * np.ceil(k / np.maximum(group, 1)), 0)
    nbytes = n * k * bits / 8 + scales + 2 * batch * k + 4 * batch * n
    return {"seconds": nbytes / bandwidth}


def _time_bound_inputs(rng, count):
    n = rng.integers(1, 65_536, count).astype(np.float64)
    k = 2 * rng.integers(1, 32_768, count).astype(np.float64)        # K even
    batch = rng.integers(1, 17, count).astype(np.float64)
    bits = rng.choice([4, 8, 16], count).astype(np.float64)
    group = np.where(bits < 16, rng.choice([32, 64, 128, 256], count), 0).astype(np.float64)
    bandwidth = 10.0 ** rng.uniform(11, 13, count)                    # 100 GB/s to 10 TB/s
    # First: the speed tests' products at an H200's 4.8 TB/s: int8 (B = 1) and int4 (B = 8) with
    # G = 128, and the same matrix in float16 (no scales); then a 1 × 2 matrix.
    n[:4], k[:4], batch[:4] = [16384, 16384, 16384, 1], [8192, 8192, 8192, 2], [1, 8, 1, 1]
    bits[:4], group[:4], bandwidth[:4] = [8, 4, 16, 4], [128, 128, 0, 32], [4.8e12] * 3 + [1e12]
    return {"n": n, "k": k, "batch": batch, "bits": bits, "group": group, "bandwidth": bandwidth}


quant_time_bound = formula_problem(
    "quant_time_bound", title="The least time a weight-only quantised product can take",
    function="quant_time_bound",
    args=(("n", int), ("k", int), ("batch", int), ("bits", int), ("group", int),
          ("bandwidth", float)),
    results=("seconds",), spec=_time_bound_spec, make_inputs=_time_bound_inputs,
    # A handful of float64 roundings in any order: 32 u relative is generous and still exact
    # enough that a number rounded by hand fails.
    tolerance=lambda inputs, expected: {"seconds": 32 * 2.0 ** -53 * expected["seconds"]},
    sizes=Sizes(visible=(6,), hidden=(200,)),
    value_hint=("everything is read or written once: the weights (k·bits/8 bytes a row), one "
                "2-byte scale per group of every row when group > 0 (ceil(k / group) of them: the "
                "last group may be short), the float16 activations (2 bytes, batch × k) and the "
                "float32 outputs (4 bytes, batch × n); seconds = bytes / bandwidth."),
)
