"""Chapter 9's course kernels: the reference histograms (privatized, and with runs aggregated),
CuPy's bincount as the vendor's, and :func:`zero`, the kernel the launch clears ``hist`` with."""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.machine.launch import BoundLaunches, zero_words
from autograder.problems.kit.kernels import KernelCache

NUM_BINS = 256          # one bin per byte value

cuda = uint32 = None    # numba.cuda and numba.uint32, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "uint32")


@_kernels.lazy
def _zero_bins():
    from autograder.grading import provenance

    @cuda.jit
    def zero_bins(out):
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            out[i] = 0
    return provenance.course_helper(zero_bins)   # prepares; computes no answer


def zero(hist) -> None:
    """Set a device array to 0 (a tiny kernel on a GPU, so it costs microseconds; a copy in CPU
    mode, where a launch would be simulated thread by thread)."""
    if not device.current().is_gpu:
        if isinstance(hist, np.ndarray):      # a host array the race detector watches
            np.asarray(hist)[...] = 0
            from autograder.grading import provenance
            provenance.course_set_up(hist)    # zeros set by the course, not by the learner
        else:
            hist.copy_to_device(np.zeros(hist.shape, hist.dtype))
        return
    _zero_bins()[max(1, min(64, (hist.size + 255) // 256)), 256](hist)


# ---- the course's reference kernels (timed beside the learner's in the speed tests) -------------

@_kernels.lazy
def reference_private():
    """Privatized in shared memory, grid-stride (interleaved) coarsening, four loads in flight
    per thread before their four shared-memory atomics, and a merge that skips empty bins."""
    @cuda.jit
    def histogram_private_reference(data, hist):
        bins = cuda.shared.array(NUM_BINS, uint32)
        t = cuda.threadIdx.x
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            bins[b] = 0
        cuda.syncthreads()
        n = data.size
        stride = cuda.gridsize(1)
        i = cuda.grid(1)
        while i + 3 * stride < n:
            a = data[i]
            b1 = data[i + stride]
            c = data[i + 2 * stride]
            d = data[i + 3 * stride]
            cuda.atomic.add(bins, a, 1)
            cuda.atomic.add(bins, b1, 1)
            cuda.atomic.add(bins, c, 1)
            cuda.atomic.add(bins, d, 1)
            i += 4 * stride
        while i < n:
            cuda.atomic.add(bins, data[i], 1)
            i += stride
        cuda.syncthreads()
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            count = bins[b]
            if count != 0:
                cuda.atomic.add(hist, b, count)
    return histogram_private_reference


@_kernels.lazy
def reference_aggregate():
    """Privatized, grid-stride, and each thread adds a run of equal bytes with one atomic."""
    @cuda.jit
    def histogram_aggregate_reference(data, hist):
        bins = cuda.shared.array(NUM_BINS, uint32)
        t = cuda.threadIdx.x
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            bins[b] = 0
        cuda.syncthreads()
        previous = -1
        run = 0
        for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
            value = int(data[i])
            if value == previous:
                run += 1
            else:
                if run > 0:
                    cuda.atomic.add(bins, previous, run)
                previous = value
                run = 1
        if run > 0:
            cuda.atomic.add(bins, previous, run)
        cuda.syncthreads()
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            count = bins[b]
            if count != 0:
                cuda.atomic.add(hist, b, count)
    return histogram_aggregate_reference


def cupy_bincount():
    """For `aag bench`: CuPy's bincount (one global atomic per byte), into the output's bins."""
    import cupy as cp

    def run(inputs, outputs):
        hist = cp.asarray(outputs["hist"])
        hist[...] = cp.bincount(cp.asarray(inputs["data"]), minlength=256)
    return run


# ---- the speed test's launch, and the histogram for code outside the exercises ---------------

def speed_shape(n: int) -> tuple[int, int]:
    """(blocks, threads) for grid-stride histograms on a GPU: 8 blocks of 256 threads per SM,
    enough to fill every SM; no more, since every block merges 256 bins at its end."""
    from numba import cuda
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * 8, -(-int(n) // 256))), 256


_histograms = BoundLaunches()


def histogram_on_device(data, hist):
    """``hist`` (256 uint32, on the device) = the counts of the byte values in ``data`` (uint8, on
    the device), with the course's privatized reference: ``hist`` zeroed by one driver call, then
    one launch, bound once per pair of arrays (:class:`autograder.machine.launch.BoundLaunches`).
    For code outside the exercises (``aag bench`` times it end to end)."""
    zero_words(hist)
    _histograms.launch(reference_private(),
                       lambda: speed_shape(data.shape[0]) if device.current().is_gpu else (2, 64),
                       data, hist)
    return hist
