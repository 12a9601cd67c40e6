"""The capstone's course code: the reference equalization (three kernels launched by one host
function, as a learner's ``equalize`` is) and a second, plainer design timed beside it by
``aag bench``.

The reference: (1) a histogram privatized in shared memory, one private copy per block, filled
by a grid-stride loop over the pixels and merged into 256 global bins with one atomic per
non-empty bin; (2) one block of 256 threads that scans the bins (Kogge-Stone, in shared memory),
finds ``cdf_min`` and writes a 256-entry lookup table ``lut[v] = (cdf[v] - cdf_min) / (N -
cdf_min)``; (3) a 2-D map ``out[r, c] = lut[img[r, c]]``. The bins, the table and the tiny kernel
that clears the bins before each call are the host function's scratch arrays.
"""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.problems.kit.kernels import KernelCache

NUM_BINS = 256                     # one bin per 8-bit value
MAP_BLOCK = (32, 8)                # the map's blocks: 32 columns (coalesced) × 8 rows
HIST_THREADS = 256

cuda = uint32 = int32 = float32 = None    # bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "uint32", "int32", "float32")


@_kernels.lazy
def _clear():
    @cuda.jit
    def clear_bins(hist):
        i = cuda.grid(1)
        if i < hist.size:
            hist[i] = 0
    return clear_bins


@_kernels.lazy
def _histogram_private():
    @cuda.jit
    def histogram_private(img, hist):
        bins = cuda.shared.array(NUM_BINS, uint32)
        t = cuda.threadIdx.x
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            bins[b] = 0
        cuda.syncthreads()
        width = img.shape[1]
        for i in range(cuda.grid(1), img.size, cuda.gridsize(1)):
            r = i // width
            cuda.atomic.add(bins, img[r, i - r * width], 1)
        cuda.syncthreads()
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            count = bins[b]
            if count != 0:
                cuda.atomic.add(hist, b, count)
    return histogram_private


@_kernels.lazy
def _scan_table():
    @cuda.jit
    def scan_to_table(hist, n, lut):
        """One block of 256 threads: the inclusive scan of the bins, cdf_min, the table."""
        buf = cuda.shared.array((2, NUM_BINS), int32)
        low = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        buf[0, t] = hist[t]
        cuda.syncthreads()
        src = 0
        stride = 1
        while stride < NUM_BINS:                    # Kogge-Stone, double-buffered
            if t >= stride:
                buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
            else:
                buf[1 - src, t] = buf[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        cdf = buf[src, t]
        # The smallest value present is the one whose bin is not empty while everything below
        # it is: exactly one thread finds it (N >= 1), and its cdf is cdf_min.
        if cdf > 0 and (t == 0 or buf[src, t - 1] == 0):
            low[0] = cdf
        cuda.syncthreads()
        cdf_min = low[0]
        spread = n - cdf_min
        if spread > 0 and cdf >= cdf_min:
            lut[t] = float32(cdf - cdf_min) / float32(spread)
        else:
            lut[t] = float32(0)                     # a constant image, or a value not present
    return scan_to_table


@_kernels.lazy
def _map():
    @cuda.jit
    def map_through_table(img, lut, out):
        c, r = cuda.grid(2)
        if r < img.shape[0] and c < img.shape[1]:
            out[r, c] = lut[img[r, c]]
    return map_through_table


_scratch: dict = {}


def _scratch_arrays():
    """(bins, table) of the reference: kept between calls on a GPU (allocating them costs more
    than equalizing a small image), fresh in CPU mode."""
    from numba import cuda as numba_cuda
    if not device.current().is_gpu:
        return (numba_cuda.device_array(NUM_BINS, np.uint32),
                numba_cuda.device_array(NUM_BINS, np.float32))
    context = numba_cuda.current_context()
    if _scratch.get("context") is not context:
        _scratch.clear()
        _scratch.update(context=context, hist=numba_cuda.device_array(NUM_BINS, np.uint32),
                        lut=numba_cuda.device_array(NUM_BINS, np.float32))
    return _scratch["hist"], _scratch["lut"]


def hist_blocks(pixels: int) -> int:
    """Blocks of the reference histogram: enough to fill a GPU (8 per SM), none without work;
    in CPU mode 2 or 3, so that private copies are merged."""
    if not device.current().is_gpu:
        return max(1, min(3, -(-int(pixels) // HIST_THREADS)))
    from numba import cuda as numba_cuda
    sms = numba_cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(8 * sms, -(-int(pixels) // HIST_THREADS)))


def equalize_reference(img, out) -> None:
    """The course's equalization of a device image ``img`` (uint8, H × W) into ``out`` (float32,
    H × W): clear the bins, privatized histogram, one-block scan writing the table, 2-D map."""
    hist, lut = _scratch_arrays()
    height, width = img.shape
    _clear()[1, NUM_BINS](hist)
    _histogram_private()[hist_blocks(img.size), HIST_THREADS](img, hist)
    _scan_table()[1, NUM_BINS](hist, np.int32(img.size), lut)
    grid = (-(-width // MAP_BLOCK[0]), -(-height // MAP_BLOCK[1]))
    _map()[grid, MAP_BLOCK](img, lut, out)


def reference_equalize():
    """The reference as the course uses it (a factory: the speed and reference tests call it)."""
    return equalize_reference


# ---- a second design, for `aag bench` ---------------------------------------------------------

@_kernels.lazy
def _histogram_global():
    @cuda.jit
    def histogram_global(img, hist):
        r, c = cuda.grid(2)
        if r < img.shape[0] and c < img.shape[1]:
            cuda.atomic.add(hist, img[r, c], 1)
    return histogram_global


@_kernels.lazy
def _serial_table():
    @cuda.jit
    def serial_table(hist, n, lut):
        if cuda.grid(1) == 0:
            running = 0
            cdf_min = 0
            for v in range(NUM_BINS):              # cdf_min: the first count that is not 0
                running += hist[v]
                if cdf_min == 0:
                    cdf_min = running
            running = 0
            for v in range(NUM_BINS):
                running += hist[v]
                if n > cdf_min and running >= cdf_min:
                    lut[v] = float32(running - cdf_min) / float32(n - cdf_min)
                else:
                    lut[v] = float32(0)
    return serial_table


def equalize_global_atomics(img, out) -> None:
    """One global atomic per pixel, a one-thread scan, the same map (a plainer design)."""
    hist, lut = _scratch_arrays()
    height, width = img.shape
    _clear()[1, NUM_BINS](hist)
    _histogram_global()[(-(-height // 16), -(-width // 16)), (16, 16)](img, hist)
    _serial_table()[1, 1](hist, np.int32(img.size), lut)
    grid = (-(-width // MAP_BLOCK[0]), -(-height // MAP_BLOCK[1]))
    _map()[grid, MAP_BLOCK](img, lut, out)


def reference_global_atomics():
    return equalize_global_atomics
