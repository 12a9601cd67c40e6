"""Chapter 11's kernels of the course: the reference kernels of the speed tests (11.4, 11.5), the
shapes of 11.1 and 11.2 for the GPU tests and the notebook's comparison, the kernels `aag bench`
times beside them (``BENCH_VARIANTS``), CuPy's cumsum (the vendor), and the small fill kernel that
resets the scratch arrays of a launch."""

from __future__ import annotations

import numpy as np

from autograder.machine.launch import BoundLaunches
from autograder.problems.kit.kernels import KernelCache

MAX_THREADS = 256           # the largest block the checks launch: shared arrays are sized by it
COARSEN = 16                # elements per thread in 11.4 and 11.5: a tile is COARSEN·T elements

cuda = float32 = int32 = int64 = uint32 = uint64 = libdevice = None   # bound by KernelCache
_kernels = KernelCache(globals(), "cuda", "float32", "int32", "int64", "uint32", "uint64",
                       "libdevice")


@_kernels.lazy
def fill_kernel():
    """``fill[blocks, threads](out, value)``: every element of ``out`` set to ``value`` (a
    grid-stride loop), for the scratch arrays a launch of 11.4 or 11.5 starts from."""
    from autograder.grading import provenance

    @cuda.jit
    def fill(out, value):
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            out[i] = value
    # It prepares a check call (resets its scratch arrays) and computes no answer: launching it
    # inside the call is not a kernel that is not the learner's (on a GPU that would fail a
    # correct 11.4 or 11.5).
    return provenance.course_helper(fill)


# ---- the course's reference kernels -------------------------------------------------------------------

# Tiles in shared memory are padded with one word every 32 (element j at j + j // 32): a thread
# reading its COARSEN consecutive elements at stride COARSEN would otherwise hit 2 of the 32
# banks (a 16-way conflict); with the padding a warp's 32 reads fall in 32 different banks.
TILE_MAX = COARSEN * MAX_THREADS
TILE_WORDS = TILE_MAX + TILE_MAX // 32


FULL_MASK = 0xFFFFFFFF


@_kernels.lazy
def _tile_parts():
    """Device functions the reference kernels share: the padded tile's load and store, phase 1
    (each thread's COARSEN elements in registers), and two block scans of the thread totals."""
    @cuda.jit(device=True)
    def load_tile(x, tile, start, t, T):
        n = x.size
        if start + COARSEN * T <= n:             # a whole tile: no bounds checks
            for k in range(COARSEN):
                j = k * T + t
                tile[j + (j >> 5)] = x[start + j]
        else:
            for k in range(COARSEN):
                j = k * T + t
                tile[j + (j >> 5)] = x[start + j] if start + j < n else float32(0)

    @cuda.jit(device=True)
    def store_tile(y, tile, start, t, T):
        n = y.size
        if start + COARSEN * T <= n:
            for k in range(COARSEN):
                j = k * T + t
                y[start + j] = tile[j + (j >> 5)]
        else:
            for k in range(COARSEN):
                j = k * T + t
                if start + j < n:
                    y[start + j] = tile[j + (j >> 5)]

    @cuda.jit(device=True)
    def block_scan_shared(running, part, warp_totals, t, T):
        """Kogge-Stone over the T thread totals, double-buffered in shared memory (one barrier
        per step). Returns (the sum of the totals of threads before t, the block's total)."""
        part[0, t] = running
        cuda.syncthreads()
        src = 0
        stride = 1
        while stride < T:
            if t >= stride:
                part[1 - src, t] = part[src, t] + part[src, t - stride]
            else:
                part[1 - src, t] = part[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        before = part[src, t - 1] if t > 0 else float32(0)
        return before, part[src, T - 1]

    @cuda.jit(device=True)
    def block_scan_shuffle(running, part, warp_totals, t, T):
        """The same with warp shuffles (chapter 10): a Kogge-Stone of 5 shuffle steps in each
        warp, the warps' totals scanned by warp 0, two barriers in all. T a multiple of 32."""
        lane = t & 31
        w = t >> 5
        v = running
        d = 1
        while d < 32:
            other = cuda.shfl_up_sync(FULL_MASK, v, d)
            if lane >= d:
                v += other
            d *= 2
        if lane == 31:
            warp_totals[w] = v
        cuda.syncthreads()
        warps = T >> 5
        if w == 0:
            s = warp_totals[lane] if lane < warps else float32(0)
            d = 1
            while d < 32:
                other = cuda.shfl_up_sync(FULL_MASK, s, d)
                if lane >= d:
                    s += other
                d *= 2
            if lane < warps:
                warp_totals[lane] = s
        cuda.syncthreads()
        before = cuda.shfl_up_sync(FULL_MASK, v, 1)
        if lane == 0:
            before = float32(0)
        if w > 0:
            before += warp_totals[w - 1]
        return before, warp_totals[warps - 1]

    return (load_tile, store_tile, block_scan_shared, block_scan_shuffle)


def _block_scan(kind: str):
    load_tile, store_tile, shared, shuffle = _tile_parts()
    return shuffle if kind == "shuffle" else shared


def _hierarchical_kernels(block: str):
    """Exercise 11.4's pair as the course writes it: the three-phase section scan with a padded
    tile (conflict-free), each thread's running sums in registers (COARSEN of them, unrolled), the
    thread totals scanned by ``block`` ("shared": Kogge-Stone in shared memory, as in the
    exercise; "shuffle": warp shuffles); and a coalesced add of the carries."""
    load_tile, store_tile, _, _ = _tile_parts()
    block_scan = _block_scan(block)

    @cuda.jit
    def scan_sections_reference(x, y, sums):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        warp_totals = cuda.shared.array(32, float32)
        vals = cuda.local.array(COARSEN, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        start = cuda.blockIdx.x * (COARSEN * T)
        load_tile(x, tile, start, t, T)
        cuda.syncthreads()
        first = t * COARSEN
        running = float32(0)
        for k in range(COARSEN):
            j = first + k
            running += tile[j + (j >> 5)]
            vals[k] = running
        before, total = block_scan(running, part, warp_totals, t, T)
        for k in range(COARSEN):
            j = first + k
            tile[j + (j >> 5)] = vals[k] + before
        if t == 0:
            sums[cuda.blockIdx.x] = total
        cuda.syncthreads()
        store_tile(y, tile, start, t, T)

    @cuda.jit
    def add_carries_reference(y, carries):
        b = cuda.blockIdx.x
        if b == 0:
            return
        carry = carries[b - 1]
        T = cuda.blockDim.x
        start = b * (COARSEN * T) + cuda.threadIdx.x
        n = y.size
        for k in range(COARSEN):
            i = start + k * T
            if i < n:
                y[i] += carry

    return (scan_sections_reference, add_carries_reference)


def reference_hierarchical():
    """Exercise 11.4's pair as the course writes it (see :func:`_hierarchical_kernels`), launched
    by :func:`scan_any_length` with SPEED_THREADS threads per block on the GPU."""
    return _kernels.get("hierarchical", lambda: _hierarchical_kernels("shared"))


def hierarchical_shuffle():
    """The same pair with the thread totals scanned by warp shuffles."""
    return _kernels.get("hierarchical_shuffle", lambda: _hierarchical_kernels("shuffle"))


LOOK_BACK_WINDOW = 32        # the reference looks at up to 32 earlier tiles per round
NEG_INF = np.float32(-np.inf)

# A tile's status word (``status[b]``, int32): what tile b has published so far. The launch sets
# every word to NOT_READY; the value a status names is in ``aggregates[b]`` or ``prefixes[b]``.
NOT_READY, AGGREGATE, PREFIX = 0, 1, 2


def _single_pass_kernel(look_back: str, block: str = "shared"):
    """The single-pass scan: 11.4's tile scan (``block``: how the thread totals are scanned), a
    tile index from the counter, and one of three look-backs:

    - ``"window"`` (the course reference): 32 threads read the status of the 32 previous tiles at
      once (one round trip to the L2 cache for all of them); thread 0 then adds up, nearest
      first, the aggregates until a published prefix, and the block repeats for the tiles that
      were not ready;
    - ``"one"`` (the notebook's solution): thread 0 reads the previous tiles one at a time;
    - ``"chained"`` (PMPP §11.7's stream-based scan): thread 0 waits for the previous tile's
      inclusive prefix, whatever its aggregate says.

    Publishing, as CUB's tile status does it (``ScanTileState``): the value is stored, then
    ``cuda.threadfence()``, then the status word is set with an atomic. Reading: the status with
    an atomic, then ``cuda.threadfence()``, then the value. Without the two fences the value's
    store and the status's store (or the two loads) may be seen in either order by another SM,
    so a reader could see the status and an old value. Every read of another block's word is an
    atomic, so that it reaches the L2 cache (which every SM shares) rather than a stale copy in
    this SM's L1 or a register: the exercise's ``cuda.atomic.add(a, j, 0)``; the window reference
    reads the values with ``cuda.atomic.max(a, j, -inf)``, which Numba compiles to a volatile load
    and a compare that never writes, so that hot values are not queued read-modify-writes.

    No value is ever taken to mean "not published": NaN is a value a tile really has when its
    input holds a NaN."""
    load_tile, store_tile, _, _ = _tile_parts()
    block_scan = _block_scan(block)
    W = LOOK_BACK_WINDOW
    window_look_back = look_back == "window"
    one_look_back = look_back == "one"

    @cuda.jit
    def scan_single_pass_reference(x, y, status, aggregates, prefixes, counter):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        warp_totals = cuda.shared.array(32, float32)
        vals = cuda.local.array(COARSEN, float32)
        ticket = cuda.shared.array(1, int32)
        carry_s = cuda.shared.array(1, float32)
        win_v = cuda.shared.array(LOOK_BACK_WINDOW, float32)
        win_s = cuda.shared.array(LOOK_BACK_WINDOW, int32)
        state = cuda.shared.array(2, int32)          # [tiles still to read back from, done]
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        if t == 0:
            ticket[0] = cuda.atomic.add(counter, 0, 1)
        cuda.syncthreads()
        b = ticket[0]
        start = b * (COARSEN * T)
        load_tile(x, tile, start, t, T)
        cuda.syncthreads()
        first = t * COARSEN
        running = float32(0)
        for k in range(COARSEN):
            j = first + k
            running += tile[j + (j >> 5)]
            vals[k] = running
        before, total = block_scan(running, part, warp_totals, t, T)
        if t == 0:
            carry_s[0] = float32(0)
            if b == 0:                               # nothing before tile 0
                prefixes[0] = total
                cuda.threadfence()
                cuda.atomic.exch(status, 0, PREFIX)
            else:                                    # publish first, then look back
                aggregates[b] = total
                cuda.threadfence()
                cuda.atomic.exch(status, b, AGGREGATE)
        if window_look_back:
            if t == 0:
                state[0] = b
                state[1] = 1 if b == 0 else 0
            cuda.syncthreads()
            while state[1] == 0:
                end = state[0]
                if t < W:
                    j = end - 1 - t
                    s = NOT_READY
                    v = float32(0)
                    if j >= 0:
                        s = cuda.atomic.add(status, j, 0)
                        if s != NOT_READY:
                            cuda.threadfence()
                            if s == PREFIX:
                                v = cuda.atomic.max(prefixes, j, NEG_INF)
                            else:
                                v = cuda.atomic.max(aggregates, j, NEG_INF)
                    win_s[t] = s
                    win_v[t] = v
                cuda.syncthreads()
                if t == 0:
                    c = carry_s[0]
                    k = 0
                    done = 0
                    while k < W:
                        s = win_s[k]
                        if s == NOT_READY:
                            break
                        c += win_v[k]
                        k += 1
                        if s == PREFIX:
                            done = 1
                            break
                    carry_s[0] = c
                    state[0] = end - k
                    state[1] = done
                cuda.syncthreads()
            if t == 0 and b > 0:
                prefixes[b] = carry_s[0] + total
                cuda.threadfence()
                cuda.atomic.exch(status, b, PREFIX)
        elif t == 0 and b > 0:
            carry = float32(0)
            j = b - 1
            while True:
                s = cuda.atomic.add(status, j, 0)
                if s == PREFIX:
                    cuda.threadfence()
                    carry += cuda.atomic.add(prefixes, j, 0.0)
                    break
                if one_look_back and s == AGGREGATE:
                    cuda.threadfence()
                    carry += cuda.atomic.add(aggregates, j, 0.0)
                    j -= 1
            prefixes[b] = carry + total
            cuda.threadfence()
            cuda.atomic.exch(status, b, PREFIX)
            carry_s[0] = carry
        cuda.syncthreads()
        before = carry_s[0] + before
        for k in range(COARSEN):
            j = first + k
            tile[j + (j >> 5)] = vals[k] + before
        cuda.syncthreads()
        store_tile(y, tile, start, t, T)

    return scan_single_pass_reference


def window_single_pass():
    """Exercise 11.5 with the status word of the exercise: the three-phase tile scan of 11.4's
    reference, a dynamic tile index from the counter, and a look-back that reads 32 earlier tiles
    per round trip (see :func:`_single_pass_kernel`)."""
    return _kernels.get("single_pass", lambda: _single_pass_kernel("window"))


# ---- the reference: status and value in one 64-bit word ----------------------------------------------

# A tile publishes one 64-bit word: the high half is (epoch << 2) | flag, the low half the float's
# bits. One atomic exchange publishes both, and one load reads both, so no fence orders a value
# against its status and a reader never sees one without the other (CUB's tile state for 4-byte
# values works the same way). The epoch is the launch's number: a word left by an earlier launch
# has another epoch and reads as "not ready", so the words need no reset between launches. The
# epoch stays below 2**18, so the high half is below 2**20: read as a float64 the word is a
# positive denormal, never a NaN, and ``atomic.max(words_f, j, -inf)`` (a volatile load and a
# compare that never writes) returns it unchanged.
EPOCHS = 1 << 18
NEG_INF64 = -np.inf


def _packed_kernel(T: int, C: int, unsigned: bool = False):
    """Tiles of T·C elements: T threads, C consecutive elements each, staged through a padded
    shared tile (coalesced global loads and stores); thread totals scanned with warp shuffles;
    warp 0 looks back over 32 predecessors per round with one load each, two ballots find the
    nearest prefix and the first tile not ready, a shuffle reduction adds the values before them.
    The ticket is ``atomic.add(counter, 0, 1) - base``: the exercise's launch resets the counter
    (base 0); :class:`PackedScan`'s own counter is never reset, and ``base`` is the tickets taken
    before this launch. ``unsigned`` (the reference's): global indices are cast to uint64 and
    shared ones to uint32, so that Numba emits no wraparound for a negative index (a compare and a
    select per access) and the shared tile's addresses are 32-bit arithmetic; the coalesced loops
    step through the padded tile by a constant (T is a multiple of 32, as the block scan's warps
    need at any index type). On the H200 it ran 1.27 times faster than the signed build (0.621
    against 0.786 ms at 2^28 elements, "Issue 23, fourth run" in docs/benchmarks.md), whose
    integer pipe the profiler found 90% busy ("third run")."""
    block_scan = _block_scan("shuffle")
    ix = uint64 if unsigned else int64
    sx = uint32 if unsigned else int64
    STEP = T + T // 32          # k·T + t, padded, is k·STEP + t + t/32 (T % 32 == 0)
    TILE = T * C
    WORDS = TILE + TILE // 32

    @cuda.jit(device=True, inline=True)
    def pack(tag, v):
        return (uint64(tag) << uint64(32)) | (uint64(libdevice.float_as_int(v)) & uint64(FULL_MASK))

    @cuda.jit
    def scan_packed_reference(x, y, words, words_f, counter, base, epoch):
        tile = cuda.shared.array(WORDS, float32)
        part = cuda.shared.array(1, float32)          # unused by the shuffle block scan
        warp_totals = cuda.shared.array(32, float32)
        ticket = cuda.shared.array(1, int64)
        carry_s = cuda.shared.array(1, float32)
        vals = cuda.local.array(C, float32)
        t = cuda.threadIdx.x
        if t == 0:
            ticket[0] = cuda.atomic.add(counter, 0, 1) - base
        cuda.syncthreads()
        b = ticket[0]
        start = b * TILE
        n = x.size
        if start + TILE <= n:
            if unsigned:
                tp = sx(t + (t >> 5))
                for k in range(C):
                    tile[sx(k * STEP + tp)] = x[ix(start + k * T + t)]
            else:
                for k in range(C):
                    j = k * T + t
                    tile[j + (j >> 5)] = x[start + j]
        else:
            for k in range(C):
                j = k * T + t
                tile[sx(j + (j >> 5))] = x[ix(start + j)] if start + j < n else float32(0)
        cuda.syncthreads()
        running = float32(0)
        first = t * C
        for k in range(C):
            j = sx(first + k)
            running += tile[j + (j >> sx(5))]
            vals[k] = running
        before, total = block_scan(running, part, warp_totals, t, T)
        if t < 32:
            lane = t
            if lane == 0:
                cuda.atomic.exch(words, b, pack((epoch << 2) | (PREFIX if b == 0 else AGGREGATE),
                                                total))
            carry = float32(0)
            end = b
            done = b == 0
            while not done:
                j = end - 1 - lane
                flag = PREFIX                         # before tile 0: as if a prefix of 0
                value = float32(0)
                if j >= 0:
                    bits = libdevice.double_as_longlong(cuda.atomic.max(words_f, j, NEG_INF64))
                    hi = int32(bits >> 32)
                    flag = hi & 3 if (hi >> 2) == epoch else NOT_READY
                    value = libdevice.int_as_float(int32(bits & 0xFFFFFFFF))
                not_ready = cuda.ballot_sync(FULL_MASK, flag == NOT_READY)
                prefix = cuda.ballot_sync(FULL_MASK, flag == PREFIX)
                first_nr = cuda.ffs(not_ready)        # 1-based lane; 0: none
                first_p = cuda.ffs(prefix)
                if first_p != 0 and (first_nr == 0 or first_p < first_nr):
                    upto = first_p                    # up to the nearest prefix, included
                    done = True
                elif first_nr != 0:
                    upto = first_nr - 1               # the ready tiles before the first not ready
                else:
                    upto = 32
                part_sum = value if lane < upto else float32(0)
                d = 16
                while d > 0:
                    part_sum += cuda.shfl_down_sync(FULL_MASK, part_sum, d)
                    d //= 2
                carry += cuda.shfl_sync(FULL_MASK, part_sum, 0)
                end -= upto
            if lane == 0:
                carry_s[0] = carry
                if b > 0:
                    cuda.atomic.exch(words, b, pack((epoch << 2) | PREFIX, carry + total))
        cuda.syncthreads()
        before += carry_s[0]
        for k in range(C):
            j = sx(first + k)
            tile[j + (j >> sx(5))] = vals[k] + before
        cuda.syncthreads()
        if start + TILE <= n:
            if unsigned:
                tp = sx(t + (t >> 5))
                for k in range(C):
                    y[ix(start + k * T + t)] = tile[sx(k * STEP + tp)]
            else:
                for k in range(C):
                    j = k * T + t
                    y[start + j] = tile[j + (j >> 5)]
        else:
            for k in range(C):
                j = k * T + t
                if start + j < n:
                    y[ix(start + j)] = tile[sx(j + (j >> 5))]

    return scan_packed_reference


SPEED_SHAPE = (128, 32)      # (T, C) at the speed test's 256 threads: the fastest measured


def packed_shape(threads: int, speed_shape: tuple[int, int] = SPEED_SHAPE) -> tuple[int, int]:
    """(T, C) of the packed kernel: at the speed test's 256 threads ``speed_shape`` (128 threads
    × 32 elements, the fastest of the shapes measured on the H200, docs/benchmarks.md); at the
    checks' block sizes a tile of ``COARSEN·threads``, as the exercise's (``threads × COARSEN``)."""
    threads = int(threads)
    return speed_shape if threads == 256 else (threads, COARSEN)


class PackedScan:
    """The course reference of 11.5, launched as the exercise is
    (``scan[blocks, threads](x, y, status, aggregates, prefixes, counter)``: it takes its tile
    index from ``counter``; ``status``, ``aggregates`` and ``prefixes`` are not used, its tiles
    publish into 64-bit words of its own), and callable on its own: ``scan(x, y)`` is one launch,
    with nothing filled, allocated or read back once the first call has made its words."""

    def __init__(self, speed_shape: tuple[int, int] = SPEED_SHAPE, unsigned: bool = True):
        self.speed_shape = speed_shape
        self.unsigned = unsigned
        self._state: dict = {}
        self._calls = BoundLaunches()          # __call__'s launches, bound once per arrays

    def shape(self, threads: int) -> tuple[int, int]:
        return packed_shape(threads, self.speed_shape)

    def tiles(self, n: int, threads: int) -> int:
        T, C = self.shape(threads)
        return max(1, -(-int(n) // (T * C)))

    def kernel(self, threads: int):
        T, C = self.shape(threads)
        u = "u" if self.unsigned else ""
        return _kernels.get(f"packed_{T}x{C}{u}", lambda: _packed_kernel(T, C, self.unsigned))

    def _words(self, tiles: int):
        """(words, their float64 view, epoch) for a launch of ``tiles`` tiles. CPU mode: fresh
        zeroed words every launch. GPU: one array per CUDA context, grown when a launch needs
        more and zeroed again when the epochs run out."""
        from numba import cuda as numba_cuda
        from autograder.machine import device
        if not device.current().is_gpu:
            words = numba_cuda.to_device(np.zeros(max(tiles, 1), np.uint64))
            return words, words.view(np.float64), 1
        state = self._state
        context = numba_cuda.current_context()
        if state.get("context") is not context:
            state.clear()
        if not state or state["words"].size < tiles or state["epoch"] + 1 >= EPOCHS:
            size = max(tiles, 2 * state["words"].size if state else 0)
            state.update(context=context, epoch=0,
                         words=numba_cuda.to_device(np.zeros(size, np.uint64)))
            state["words_f"] = state["words"].view(np.float64)
        state["epoch"] += 1
        return state["words"], state["words_f"], state["epoch"]

    def _counter(self, tiles: int):
        """(the counter :meth:`__call__`'s launches take tickets from, the tickets taken before
        this launch): never reset, so a launch's tiles are ``base .. base + tiles - 1``."""
        from numba import cuda as numba_cuda
        from autograder.machine import device
        if not device.current().is_gpu:
            return numba_cuda.to_device(np.zeros(1, np.int64)), 0
        state = self._state
        if state.get("counter_context") is not state["context"]:
            state.update(counter=numba_cuda.to_device(np.zeros(1, np.int64)), taken=0,
                         counter_context=state["context"])
        base = state["taken"]
        state["taken"] = base + tiles
        return state["counter"], base

    def __getitem__(self, config):
        blocks, threads = config

        def launch(x, y, status, aggregates, prefixes, counter):
            tiles = self.tiles(x.shape[0], threads)      # ``blocks`` at the checks' shapes
            words, words_f, epoch = self._words(tiles)
            self.kernel(threads)[tiles, self.shape(threads)[0]](x, y, words, words_f, counter, 0,
                                                                epoch)
        return launch

    def __call__(self, x, y, threads: int = 256):
        """y = the inclusive scan of x (float32 device arrays, or any objects with a
        ``__cuda_array_interface__`` on a GPU): one launch, bound once per pair of arrays
        (:class:`autograder.machine.launch.BoundLaunches`; the ticket base and the epoch are
        written into it on each call)."""
        tiles = self.tiles(x.shape[0], threads)
        words, words_f, epoch = self._words(tiles)
        counter, base = self._counter(tiles)
        self._calls.launch(self.kernel(threads), lambda: (tiles, self.shape(threads)[0]),
                           x, y, words, words_f, counter, base, epoch, scalars=(5, 6))
        return y


def scan_on_device(x, y):
    """``y`` = the inclusive scan of ``x`` (float32, on the device) with the course's single-pass
    reference: one launch per call, nothing allocated or filled after the first call for these
    arrays. For code outside the exercises (``aag bench`` times it end to end)."""
    return reference_single_pass()(x, y)


@_kernels.lazy
def reference_single_pass():
    """Exercise 11.5 as the course writes it for speed (see :func:`_packed_kernel`)."""
    return PackedScan()


def packed_at(T: int, C: int, unsigned: bool = False):
    """The reference at another speed-test shape (T threads × C elements per tile), its indices
    unsigned or not, for the bench."""
    u = "u" if unsigned else ""
    return lambda: _kernels.get(f"packed_scan_{T}x{C}{u}", lambda: PackedScan((T, C), unsigned))


def single_pass_shuffle():
    """The status-word scan with the thread totals scanned by warp shuffles (two barriers, not
    eight)."""
    return _kernels.get("single_pass_shuffle", lambda: _single_pass_kernel("window", "shuffle"))


def single_pass_one_thread():
    """The exercise's solution shape: thread 0 looks back one tile at a time."""
    return _kernels.get("single_pass_one", lambda: _single_pass_kernel("one"))


def single_pass_chained():
    """PMPP §11.7's stream-based (chained) scan: each tile waits for its predecessor's prefix."""
    return _kernels.get("single_pass_chained", lambda: _single_pass_kernel("chained"))


@_kernels.lazy
def reference_kogge_stone():
    """Exercise 11.1's shape (double-buffered), for the GPU tests and the notebook's comparison."""
    @cuda.jit
    def kogge_stone_reference(x, y):
        buf = cuda.shared.array((2, MAX_THREADS), float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + t
        buf[0, t] = x[i] if i < x.size else float32(0)
        cuda.syncthreads()
        src = 0
        stride = 1
        while stride < cuda.blockDim.x:
            if t >= stride:
                buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
            else:
                buf[1 - src, t] = buf[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        if i < x.size:
            y[i] = buf[src, t]
    return kogge_stone_reference


BK_SECTION = 2 * MAX_THREADS


@_kernels.lazy
def reference_brent_kung():
    """Exercise 11.2's shape, for the GPU tests and the notebook's comparison."""
    @cuda.jit
    def brent_kung_reference(x, y):
        xy = cuda.shared.array(BK_SECTION, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        section = 2 * T
        start = cuda.blockIdx.x * section
        for k in range(t, section, T):
            xy[k] = x[start + k] if start + k < x.size else float32(0)
        stride = 1
        while stride < section:
            cuda.syncthreads()
            j = (t + 1) * 2 * stride - 1
            if j < section:
                xy[j] += xy[j - stride]
            stride *= 2
        stride = T // 2
        while stride > 0:
            cuda.syncthreads()
            j = (t + 1) * 2 * stride - 1
            if j + stride < section:
                xy[j + stride] += xy[j]
            stride //= 2
        cuda.syncthreads()
        for k in range(t, section, T):
            if start + k < x.size:
                y[start + k] = xy[k]
    return brent_kung_reference


# ---- the vendor ----------------------------------------------------------------------------------------

def cupy_cumsum():
    """For `aag bench` and the notebook: CuPy's cumsum into the output."""
    import cupy as cp

    def run(inputs, outputs):
        cp.cumsum(cp.asarray(inputs["x"]), out=cp.asarray(outputs["y"]))
    return run
