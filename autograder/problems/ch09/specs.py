"""Chapter 9's graded exercises: the byte histograms (inputs with real structure, the spec,
verdicts that name the likely bug, CPU baselines) and the bound on a histogram's time."""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.core.checks import Verdict
from autograder.grading.problem import Baseline, Problem, SpeedBar, Sizes
from autograder.problems.ch03 import test_image, to_gray
from autograder.problems.ch09.references import (NUM_BINS, cupy_bincount, reference_aggregate,
                                                 reference_private, speed_shape, zero)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import cores, in_parallel
from autograder.problems.kit.memo import once_per_array

U64 = 2.0 ** -53

KINDS = ("uniform", "text", "image", "page")
KIND_LABELS = {"uniform": "uniform random values", "text": "English-like text",
               "image": "a gray photo-like image", "page": "a scanned page (mostly white)"}


def kind_of(n: int) -> str:
    """The content a case of n bytes gets: fixed by the size, so a verdict can name it."""
    return KINDS[int(n) % 4]


def _label(n) -> str:
    return f"n = {int(n)} byte{'s' * (int(n) != 1)} of {KIND_LABELS[kind_of(n)]}"


# ---- inputs with real structure --------------------------------------------------------------

# Common English words, most frequent first; drawn with Zipf weights 1 / rank^1.1.
WORDS = (
    "the of and to a in is it you that he was for on are with as his they be at one have this "
    "from or had by hot word but what some we can out other were all there when up use your how "
    "said an each she which do their time if will way about many then them write would like so "
    "these her long make thing see him two has look more day could go come did number sound no "
    "most people my over know water than call first who may down side been now find any new work "
    "part take get place made live where after back little only round man year came show every "
    "good me give our under name very through just form sentence great think say help low line "
    "differ turn cause much mean before move right boy old too same tell does set three want air "
    "well also play small end put home read hand port large spell add even land here must big "
    "high such follow act why ask men change went light kind off need house picture try us again "
    "animal point mother world near build self earth father head stand own page should country "
    "found answer school grow study still learn plant cover food sun four between state keep eye "
    "never last let thought city tree cross farm hard start might story saw far sea draw left late "
    "run while press close night real life few north open seem together next white children begin "
    "got walk example ease paper group always music those both mark often letter until mile river "
    "car feet care second book carry took science eat room friend began idea fish mountain stop "
    "once base hear horse cut sure watch color face wood main enough plain girl usual young ready "
    "above ever red list though feel talk bird soon body dog family direct pose leave song measure "
    "door product black short numeral class wind question happen complete ship area half rock "
    "order fire south problem piece told knew pass since top whole king space heard best hour "
    "better true during hundred five remember step early hold west ground interest reach fast verb "
    "sing listen six table travel less morning ten simple several vowel toward war lay against"
).split()
_ZIPF = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.1
_ZIPF /= _ZIPF.sum()
_BASE_BYTES = 1 << 20          # large inputs repeat a base of this size (generation stays fast)


def _repeat(base: np.ndarray, n: int) -> np.ndarray:
    base = np.ascontiguousarray(base, dtype=np.uint8).reshape(-1)
    if base.size >= n:
        return base[:n].copy()
    return np.tile(base, -(-n // base.size))[:n]


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def uniform_bytes(n: int, seed=0) -> np.ndarray:
    """n bytes, each value 0..255 equally likely: the friendliest input for a histogram."""
    return _rng(seed).integers(0, 256, int(n), dtype=np.uint8)


def english_text(n: int, seed=0) -> np.ndarray:
    """n bytes of English-like ASCII text: sentences of common words drawn with Zipf frequencies,
    capitals, commas, full stops and paragraphs. The space and 'e' dominate; no byte is >= 128."""
    rng = _rng(seed)
    target = max(min(int(n), _BASE_BYTES), 1)
    pieces, size = [], 0
    while size < target:
        k = int(rng.integers(3, 16))
        words = [WORDS[w] for w in rng.choice(len(WORDS), size=k, p=_ZIPF)]
        words[0] = words[0].capitalize()
        if k > 6 and rng.random() < 0.4:
            words[int(rng.integers(2, k - 2))] += ","
        sentence = " ".join(words) + (".", ".", "?", "!")[int(rng.integers(0, 4))]
        sentence += "\n\n" if rng.random() < 0.08 else " "
        pieces.append(sentence)
        size += len(sentence)
    return _repeat(np.frombuffer("".join(pieces).encode("ascii"), np.uint8), int(n))


def _page_shape(n: int) -> tuple[int, int]:
    """(rows, cols) of a base picture for n bytes: about 3:2, at most ~1.5 MB."""
    cols = int(min(max(np.sqrt(1.5 * n), 1), 1536))
    rows = int(min(-(-n // cols), 1024))
    return rows, cols


def photo_bytes(n: int, seed=0) -> np.ndarray:
    """n bytes of a gray image with structure (chapter 3's test image: a gradient, a bright
    rectangle, a disk, a line, a checkerboard patch and noise) quantised to 0..255, row by row."""
    rows, cols = _page_shape(int(n))
    gray = to_gray(test_image(rows, cols, _rng(seed)))
    return _repeat(np.clip(np.rint(gray * 255.0), 0, 255).astype(np.uint8), int(n))


def scanned_page(rows: int, cols: int, seed=0) -> np.ndarray:
    """A rows × cols scan of a printed page: white paper (255) with a few faint specks, and lines
    of glyphs (boxes of dark strokes, 10..80) grouped into words: most bytes are 255, in runs."""
    rng = _rng(seed)
    page = np.full((rows, cols), 255, np.uint8)
    speck = rng.random((rows, cols)) < 0.02
    page[speck] = rng.integers(225, 255, int(speck.sum()), dtype=np.uint8)
    line_h, pitch = 7, 12
    margin = max(1, cols // 16)
    for top in range(pitch // 2, rows - line_h + 1, pitch):
        if rng.random() < 0.12:            # a blank line between paragraphs
            continue
        x = margin + int(rng.integers(0, 4))
        end = cols - margin - int(rng.integers(0, max(cols // 4, 1)))
        while x < end:
            for _ in range(int(rng.integers(2, 9))):          # the glyphs of one word
                width = int(rng.integers(3, 6))
                if x + width > end:
                    break
                stroke = rng.random((line_h, width)) < 0.3
                ink = rng.integers(10, 80, (line_h, width), dtype=np.uint8)
                box = page[top:top + line_h, x:x + width]
                box[stroke] = ink[stroke]
                x += width + 1
            x += int(rng.integers(3, 6))
    return page


def page_bytes(n: int, seed=0) -> np.ndarray:
    """n bytes of a scanned page (see :func:`scanned_page`), row by row: heavily skewed."""
    rows, cols = _page_shape(int(n))
    return _repeat(scanned_page(rows, cols, seed), int(n))


_MAKERS = {"uniform": uniform_bytes, "text": english_text, "image": photo_bytes, "page": page_bytes}


def make_bytes(kind: str, n: int, seed=0) -> np.ndarray:
    """n bytes of one kind of content: ``"uniform"``, ``"text"``, ``"image"`` or ``"page"``."""
    return _MAKERS[kind](int(n), seed)


def byte_counts(data: np.ndarray) -> np.ndarray:
    """The spec: how many bytes of ``data`` hold each value 0..255 (int64; in slices, so a large
    array is never converted to 8-byte integers all at once)."""
    flat = np.asarray(data).reshape(-1)
    step = 1 << 22
    out = np.zeros(NUM_BINS, np.int64)
    for part in in_parallel(lambda i: np.bincount(flat[i * step:(i + 1) * step], minlength=NUM_BINS),
                            -(-flat.size // step), flat.size):
        out += part[:NUM_BINS]
    return out


def hot_fraction(data: np.ndarray) -> float:
    """The share of the elements that fall in the fullest bin (1/256 at best, 1 at worst)."""
    data = np.asarray(data)
    return float(byte_counts(data).max() / max(data.size, 1))


# ---- what every histogram problem shares ---------------------------------------------------------

def _inputs(rng, n):
    return {"data": make_bytes(kind_of(n), n, rng)}


def _page_inputs(rng, n):
    return {"data": page_bytes(n, rng)}


def _uniform_inputs(rng, n):
    return {"data": uniform_bytes(n, rng)}


def _spec(data, **launch):
    return {"hist": byte_counts(data).astype(np.float64)}


@once_per_array
def _counted(data: np.ndarray) -> np.ndarray:
    return byte_counts(data).astype(np.float64)


def _sample_spec(inputs, idx):
    """(expected, tolerance) at flat indices ``idx`` of ``hist``, counted once per input array (a
    speed run checks every timed call against the same 2^28 bytes)."""
    expected = {"hist": _counted(inputs["data"])[np.asarray(idx)]}
    return expected, _tolerance(inputs, expected)


def _tolerance(inputs, expected):
    return {"hist": np.zeros_like(expected["hist"])}     # counts are exact


def _outputs(n):
    return {"hist": ((NUM_BINS,), np.uint32)}


def run_histogram(kernel, data, hist, blocks: int, threads: int) -> None:
    """Launch a histogram kernel as the checks do: ``hist`` zeroed, then
    ``kernel[blocks, threads](data, hist)``."""
    zero(hist)
    kernel[blocks, threads](data, hist)


def _launch(kernel, inputs, outputs, case):
    run_histogram(kernel, inputs["data"], outputs["hist"], case.blocks, case.threads)


def _few_blocks(n, threads):
    # 2 to 4 blocks, far fewer threads than bytes: only a loop covers the data (coarsening), and
    # every launch has several blocks (private copies to merge, shared memory reused by a block).
    return 2 + (int(n) // threads) % 3


def _bytes_moved(n):
    return int(n) + 4 * NUM_BINS      # the bytes once, the bins once


# ---- CPU baselines (honest labels) ---------------------------------------------------------------

def _numpy_hist(data, hist):
    hist[:] = byte_counts(data)

@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def serial(data, hist):
        hist[:] = 0
        for i in range(data.size):
            hist[data[i]] += 1
    return serial


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def parallel(data, hist):
        chunks = numba.get_num_threads() * 4
        size = (data.size + chunks - 1) // chunks
        private = np.zeros((chunks, 256), np.uint32)
        for c in numba.prange(chunks):
            for i in range(c * size, min((c + 1) * size, data.size)):
                private[c, data[i]] += 1
        for b in range(256):
            total = 0
            for c in range(chunks):
                total += private[c, b]
            hist[b] = total
    return parallel


def _serial_hist(data, hist):       # Baseline.run is called with keywords
    _serial_loop(data, hist)


def _parallel_hist(data, hist):
    _parallel_loop(data, hist)


BASELINES = {
    "numpy": Baseline("NumPy np.bincount (1 core)", _numpy_hist),
    "serial": Baseline("numba.njit loop (1 core)", _serial_hist),
    "parallel": Baseline(f"numba.njit parallel, private copies ({cores()} cores)", _parallel_hist),
}


# ---- verdicts that say what a wrong histogram usually means -------------------------------------

def diagnose(data: np.ndarray, got: np.ndarray, blocks: int = 0, threads: int = 0) -> str:
    """What a wrong histogram of ``data`` most likely comes from, in words (for the hint)."""
    data = np.asarray(data).reshape(-1)
    n = data.size
    exp = byte_counts(data)
    got = np.asarray(got).astype(np.int64)
    total = int(got.sum())
    launched = int(blocks) * int(threads)
    if total == 0:
        return ("nothing was counted: does the kernel add to `hist` (cuda.atomic.add(hist, "
                "data[i], 1), or a merge of the private copy into it)?")
    if threads and 0 < launched < n and np.array_equal(got, byte_counts(data[:launched])):
        return (f"exactly the first {launched} bytes (blocks × threads) were counted: each thread "
                "took one byte. Loop with a grid stride: `for i in range(cuda.grid(1), data.size, "
                "cuda.gridsize(1))`.")
    if threads and blocks > 1 and np.array_equal(got, blocks * exp):
        return (f"every byte was counted {blocks} times, once per block: the loop starts at "
                "cuda.threadIdx.x and steps by cuda.blockDim.x, so every block walks all the data. "
                "Start at cuda.grid(1) and step by cuda.gridsize(1).")
    if threads and threads < NUM_BINS and np.array_equal(got[:threads], exp[:threads]):
        return (f"bins 0 to {threads - 1} are right, bins from {threads} (= blockDim.x) up are "
                "wrong: zeroing or merging the private histogram touched one bin per thread. "
                "Cover all 256 bins: "
                "`for b in range(cuda.threadIdx.x, NUM_BINS, cuda.blockDim.x)`.")
    if total == n:
        return ("every byte was counted once, but some in the wrong bin: the bin of a byte is its "
                "value, `data[i]`, used as the index (0 to 255).")
    if launched and total < n:
        last_runs, run_starts = _run_stats(data, launched)
        if np.array_equal(got, exp - last_runs):
            return ("every thread's last run is missing: when the loop ends, the bytes counted in "
                    "`run` since the last change are still in registers. After the loop: `if run "
                    "> 0: cuda.atomic.add(bins, previous, run)`.")
        if np.array_equal(got, exp - run_starts):
            return ("every run is one byte short: the byte that starts a new run belongs to it, so "
                    "a new run starts at `run = 1`, not 0.")
    if total < n:
        short = exp - got
        b = int(np.argmax(short))
        return (f"{n - total} of the {n} bytes are missing from the counts, most of them from bin "
                f"{b} (expected {int(exp[b])}, got {int(got[b])}). Counts vanish when two threads "
                "increment one bin with a plain `+=` (a read-modify-write race: use "
                "cuda.atomic.add), when private counts are merged with `hist[b] = ...` instead of "
                "added atomically, or when some bytes are never visited.")
    return (f"{total - n} counts too many for {n} bytes: is the private histogram set to zero, "
            "every bin, before any thread counts (shared memory holds whatever was there before, "
            "e.g. the counts of the previous block), and is each byte counted by one thread only?")


def _run_stats(data: np.ndarray, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """For a grid-stride loop over ``threads`` threads: per bin, the bytes in each thread's last
    run, and the number of runs that start in it (what an aggregating kernel's two classic bugs
    lose)."""
    last = np.zeros(NUM_BINS, np.int64)
    starts = np.zeros(NUM_BINS, np.int64)
    for t in range(min(threads, data.size)):
        seq = data[t::threads]
        change = np.flatnonzero(seq[1:] != seq[:-1]) + 1
        begin = np.concatenate(([0], change))
        starts += np.bincount(seq[begin], minlength=NUM_BINS)[:NUM_BINS]
        last[seq[-1]] += seq.size - begin[-1]
    return last, starts


GLOBAL_RACE_HINT = (
    "two threads updated the same bin of `hist` with a plain `+=`: each reads the count, adds one "
    "and writes it back, so on a GPU one of the two increments is lost. Use "
    "cuda.atomic.add(hist, bin, 1) (or merge a private copy with cuda.atomic.add).")
GLOBAL_STORE_HINT = (
    "threads of different blocks stored into the same bin of `hist`: each block's counts "
    "overwrite the others' (blocks run in no fixed order). Add a private copy into `hist` "
    "atomically: cuda.atomic.add(hist, b, bins[b]).")
SHARED_INCREMENT_HINT = (
    "two threads of a block updated the same bin of the shared histogram with a plain `+=`: on a "
    "GPU one increment is lost. Shared-memory bins need cuda.atomic.add too.")
SHARED_BARRIER_HINT = (
    "the private histogram was used by two threads between the same two barriers: put "
    "cuda.syncthreads() after zeroing it (before any thread counts) and again after counting "
    "(before any thread merges it into `hist`).")


def _race_hint(error: str) -> str:
    if "GlobalMemoryRace" in error or "global-memory race" in error:
        return GLOBAL_RACE_HINT if "+=" in error or "read it" in error else GLOBAL_STORE_HINT
    if "shared-memory race" in error:
        if "updated (atomically)" in error:
            return SHARED_BARRIER_HINT
        return SHARED_INCREMENT_HINT
    return ""


class NotPrivatized(RuntimeError):
    """CPU mode: a histogram exercise that asks for private copies got a kernel without them."""


PRIVATE_HINT = (
    "count each block's bytes in a private histogram in shared memory "
    "(cuda.shared.array(256, uint32), zeroed, then cuda.atomic.add(bins, byte, 1)), and after a "
    "cuda.syncthreads() add each private bin into `hist` with one cuda.atomic.add per bin.")


def check_privatized(counts: dict, n: int, blocks: int) -> None:
    """Raise :class:`NotPrivatized` unless the launch's atomics look like a privatized histogram:
    some on a shared-memory copy (whenever there is a byte to count), and at most one global
    atomic per bin per block (the merges), not one per byte."""
    if n == 0:
        return
    if counts["shared"] == 0:
        raise NotPrivatized(
            "this exercise asks for a privatized histogram: your kernel never updated a "
            "shared-memory copy (no cuda.atomic.* on a cuda.shared.array); it made "
            f"{counts['global']} atomic updates of `hist` for {n} bytes")
    merges = blocks * NUM_BINS
    if counts["global"] > merges:
        raise NotPrivatized(
            "this exercise asks for a privatized histogram: your kernel made "
            f"{counts['global']} atomic updates of `hist` for {n} bytes in {blocks} blocks; "
            f"merging private copies takes at most {merges} (one per bin per block)")


class HistogramProblem(Problem):
    """A histogram exercise: verdicts count what was counted, and name the likely bug.

    ``requires=("shared_atomics",)``: the exercise asks for privatization. In CPU mode every
    launch of a check counts its atomics (:func:`autograder.races.count_atomics`) and fails
    with :class:`NotPrivatized` without shared-memory atomics, or with more global atomics than
    blocks × bins. On a GPU the speed cell is the check (global atomics are far below its bar).
    """

    def __init__(self, *args, requires: tuple[str, ...] = (), **kw):
        super().__init__(*args, **kw)
        self.requires = tuple(requires)
        if "shared_atomics" in self.requires:
            plain = self.launch

            def launch(kernel, inputs, outputs, case):
                if device.current().is_gpu:
                    return plain(kernel, inputs, outputs, case)
                from autograder.machine.simulator import races
                with races.count_atomics() as counts:
                    plain(kernel, inputs, outputs, case)
                check_privatized(counts, int(np.asarray(inputs["data"]).size), int(case.blocks))
            self.launch = launch

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        # The inputs at the wrong bin's index mean nothing here (data[b] is not bin b's input).
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.passed:
            return verdict
        if outcome.error:
            hint = PRIVATE_HINT if "NotPrivatized" in outcome.error else _race_hint(outcome.error)
            if hint:
                verdict.hint = hint
            return verdict
        got = outcome.outputs.get("hist")
        if verdict.index is not None and got is not None:
            data = case.inputs["data"]
            total = int(np.asarray(got, dtype=np.int64).sum())
            size = np.asarray(data).size
            verdict.message += f"\n  the bins add up to {total}; there are {size} bytes"
            blocks = case.blocks if isinstance(case.blocks, int) else 0
            threads = case.threads if isinstance(case.threads, int) else 0
            verdict.hint = diagnose(data, got, blocks, threads)
        return verdict


def _histogram(name, title, **kw):
    kw.setdefault("vendor", cupy_bincount)
    kw.setdefault("vendor_label", "cupy.bincount")
    return HistogramProblem(
        name, title=title, spec=_spec, outputs=_outputs, tolerance=_tolerance, launch=_launch,
        block_sizes=(32, 64, 128), visible_block_size=64, bytes_moved=_bytes_moved,
        baselines=BASELINES, size_label=_label, sample_spec=_sample_spec,
        race_check_outputs=True, **kw)


# ---- 9.1 global atomics, one thread per byte ---------------------------------------------------

histogram_global = _histogram(
    "histogram_global", "A byte histogram with atomic adds on global memory, one thread per byte",
    make_inputs=_inputs,
    # n % 4 picks the content: 1501 text, 1002 image, 1 a single byte of text; hidden 1031 a
    # scanned page (one bin holds most bytes: contention), 1204 uniform bytes, 6007 a page 4
    # times the largest visible size (a kernel right only for small inputs fails it).
    cpu_sizes=Sizes(visible=(1501, 1002, 1), hidden=(1031, 1204, 6007),
                    hidden_random=(2, 100, 1500)),
    gpu_sizes=Sizes(visible=(10_000_001, 1501, 1002, 1), hidden=(1031, 1204, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000)),
)


# ---- 9.2 privatized in shared memory, with coarsening --------------------------------------------

histogram_private = _histogram(
    "histogram_private",
    "A byte histogram privatized in shared memory, merged with atomics; a grid-stride loop",
    make_inputs=_inputs, blocks_for=_few_blocks, speed_inputs=_uniform_inputs,
    speed_launch=speed_shape,
    # 2001 text, 1404 uniform (bins >= blockDim.x in use), 1 byte for 2 blocks; hidden 1031 page,
    # 1026 image. Launched with 2 to 4 blocks: every thread loops over many bytes.
    cpu_sizes=Sizes(visible=(2001, 1404, 1), hidden=(1031, 1026, 8005),
                    hidden_random=(2, 100, 2000)),
    gpu_sizes=Sizes(visible=(10_000_004, 2001, 1404, 1), hidden=(1031, 1026, 16_777_217),
                    hidden_random=(3, 100_000, 30_000_000), speed=1 << 28),
    reference=reference_private, requires=("shared_atomics",),
    # 2^28 uniform bytes. On the H200 (docs/benchmarks.md) the reference took 0.190 ms (15.6×
    # cupy.bincount). The plain solution (one load per loop step, no loads in flight) reached 59%
    # of it in nbgrader autograde (timed calls 0.29-0.44 ms, median 0.324 ms). Judged on the H200
    # on 2026-12-01, the reference's median moved between 0.188 and 0.260 ms from one judge run to
    # the next, and correct plain kernels reached 36% (merging all 256 bins, zeros included, per
    # block), 43% and 84%; global atomics only (9.1's kernel) 0.3%. So the bar is 0.25: every
    # plain privatized kernel clears it, with room for the reference's own spread.
    speed=SpeedBar(min_fraction_of_reference=0.25, baseline="serial", min_speedup=20.0),
)


# ---- 9.3 aggregation of runs of equal bytes ------------------------------------------------------

histogram_aggregate = _histogram(
    "histogram_aggregate",
    "A privatized byte histogram that adds each run of equal bytes with one atomic",
    make_inputs=_inputs, blocks_for=_few_blocks, speed_inputs=_page_inputs,
    speed_launch=speed_shape,
    # 2003 a scanned page (long runs), 1405 text, 1 byte; hidden 1204 uniform (runs are rare),
    # 1026 image. The speed size 2^28 - 1 is a scanned page too (n % 4 == 3), for the CPU baselines.
    cpu_sizes=Sizes(visible=(2003, 1405, 1), hidden=(1204, 1026, 8015),
                    hidden_random=(2, 100, 2000)),
    gpu_sizes=Sizes(visible=(10_000_003, 2003, 1405, 1), hidden=(1204, 1026, 16_777_219),
                    hidden_random=(3, 100_000, 30_000_000), speed=(1 << 28) - 1),
    reference=reference_aggregate, requires=("shared_atomics",),
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="serial", min_speedup=20.0),
)


# ---- 9.4 predict: a bound on a histogram's time ------------------------------------------------

def _bound_spec(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return {"seconds": np.maximum(np.maximum(n / bandwidth, n / atomic_rate),
                                  hot_fraction * n / (copies * address_rate))}


# The chapter's figures (round numbers of the order an H200 shows).
BANDWIDTH = 4.8e12
GLOBAL_RATE, GLOBAL_ADDRESS_RATE, GLOBAL_COPIES = 1e11, 5e8, 1
SHARED_RATE, SHARED_ADDRESS_RATE, SHARED_COPIES = 2e12, 1e9, 1056


def _bound_inputs(rng, count):
    n = np.floor(10.0 ** rng.uniform(3, 10, count))
    hot = rng.uniform(1 / 256, 1.0, count)
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)        # 30 GB/s to 10 TB/s
    atomic_rate = 10.0 ** rng.uniform(9, 13, count)
    address_rate = 10.0 ** rng.uniform(7, 10, count)
    copies = np.where(rng.random(count) < 0.3, 1, rng.integers(1, 4097, count)).astype(np.float64)
    # The first cases: the chapter's device on 2^28 bytes, uniform (1/256) then a scanned page
    # (0.9), with global atomics and then privatized; a slower memory (memory bound); one byte.
    figures = [(1 << 28, 1 / 256, BANDWIDTH, GLOBAL_RATE, GLOBAL_ADDRESS_RATE, GLOBAL_COPIES),
               (1 << 28, 0.9, BANDWIDTH, GLOBAL_RATE, GLOBAL_ADDRESS_RATE, GLOBAL_COPIES),
               (1 << 28, 1 / 256, BANDWIDTH, SHARED_RATE, SHARED_ADDRESS_RATE, SHARED_COPIES),
               (1 << 28, 0.9, BANDWIDTH, SHARED_RATE, SHARED_ADDRESS_RATE, SHARED_COPIES),
               (1 << 28, 1 / 256, 3e11, SHARED_RATE, SHARED_ADDRESS_RATE, SHARED_COPIES),
               (1, 1.0, BANDWIDTH, SHARED_RATE, SHARED_ADDRESS_RATE, SHARED_COPIES)]
    for i, row in enumerate(figures[:count]):
        n[i], hot[i], bandwidth[i], atomic_rate[i], address_rate[i], copies[i] = row
    return {"n": n, "hot_fraction": hot, "bandwidth": bandwidth, "atomic_rate": atomic_rate,
            "address_rate": address_rate, "copies": copies}


def _bound_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {"seconds": 64 * U64 * expected["seconds"]}

histogram_time_bound = formula_problem(
    "histogram_time_bound",
    title="Three ceilings on a histogram's speed: bandwidth, atomic throughput, the hottest bin",
    function="histogram_time_bound",
    args=(("n", int), ("hot_fraction", float), ("bandwidth", float), ("atomic_rate", float),
          ("address_rate", float), ("copies", int)),
    results=("seconds",), spec=_bound_spec, make_inputs=_bound_inputs,
    tolerance=_bound_tolerance, sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("the bound is the largest of three times: n / bandwidth (reading the bytes), "
                "n / atomic_rate (one atomic per byte, all bins together), and "
                "hot_fraction · n / (copies · address_rate) (the fullest bin's updates, one "
                "after another on each copy)."),
)
