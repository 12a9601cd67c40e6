"""Chapter 27's reference kernels: the int8 weight-only matrix–vector product and the packed int4
small-batch product, each with one warp per output row and a loop over the row's groups (one
scale per group, no division per element), dequantised on the fly, float32 sums merged by
shuffles; the float16 matrix–vector product they are compared with; and
:func:`reference_int4_triton`, the Triton kernel of :mod:`.triton_reference`. Every Numba kernel
is written for any warp size (32 on NVIDIA, 64 on AMD and in CPU mode's portability runs) and
strides over the rows with its warps.

Launch: ``kernel[blocks, threads](...)`` with ``threads`` a multiple of the warp size; warp
``w = (blockIdx.x · blockDim.x + threadIdx.x) // warpsize`` takes rows w, w + (all warps), ...
"""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

MAX_BATCH = 16      # activation rows 27.3's kernels take (a local array of this many sums)

cuda = float32 = int32 = uint64 = None      # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "int32", "uint64")


@_kernels.lazy
def reference_int8_matvec():
    @cuda.jit
    def int8_matvec_reference(q, scales, x, group, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, k = q.shape
        for row in range(warp, rows, warps):
            acc = float32(0.0)
            for g in range(scales.shape[1]):
                start = g * group
                end = min(start + group, k)
                part = float32(0.0)          # Σ q·x over the lane's columns of group g
                for c in range(start + lane, end, cuda.warpsize):
                    part += float32(q[row, c]) * float32(x[c])
                acc += part * float32(scales[row, g])
            offset = cuda.warpsize // 2
            while offset > 0:
                acc += cuda.shfl_xor_sync(mask, acc, offset)
                offset //= 2
            if lane == 0:
                y[row] = acc
    return int8_matvec_reference


@_kernels.lazy
def reference_int4_matmul():
    @cuda.jit
    def int4_matmul_reference(packed, scales, x, group, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, nbytes = packed.shape
        batch, k = x.shape
        half = group // 2                    # bytes per group (G is even)
        acc = cuda.local.array(16, float32)  # MAX_BATCH sums, one per activation row
        for row in range(warp, rows, warps):
            for b in range(batch):
                acc[b] = float32(0.0)
            for g in range(scales.shape[1]):
                s = float32(scales[row, g])
                start = g * half
                end = min(start + half, nbytes)
                for j in range(start + lane, end, cuda.warpsize):
                    byte = int32(packed[row, j])
                    w0 = float32((byte & 15) - 8) * s        # column 2j: the low nibble
                    w1 = float32((byte >> 4) - 8) * s        # column 2j + 1: the high one
                    c = 2 * j
                    if c + 1 < k:
                        for b in range(batch):
                            acc[b] += w0 * float32(x[b, c]) + w1 * float32(x[b, c + 1])
                    else:                                    # odd K: the last byte's low nibble
                        for b in range(batch):
                            acc[b] += w0 * float32(x[b, c])
            for b in range(batch):
                v = acc[b]
                offset = cuda.warpsize // 2
                while offset > 0:
                    v += cuda.shfl_xor_sync(mask, v, offset)
                    offset //= 2
                if lane == 0:
                    y[b, row] = v
    return int4_matmul_reference


@_kernels.lazy
def fp16_matvec():
    """The same matrix–vector product with float16 weights (2 bytes a weight, no scales): what
    the int8 and int4 kernels are measured against."""
    @cuda.jit
    def fp16_matvec_reference(w, x, y):
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
        warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        rows, k = w.shape
        for row in range(warp, rows, warps):
            acc = float32(0.0)
            for c in range(lane, k, cuda.warpsize):
                acc += float32(w[row, c]) * float32(x[c])
            offset = cuda.warpsize // 2
            while offset > 0:
                acc += cuda.shfl_xor_sync(mask, acc, offset)
                offset //= 2
            if lane == 0:
                y[row] = acc
    return fp16_matvec_reference


def reference_int4_triton():
    """The course's Triton int4 launcher, ``run(packed, scales, x, group, y)``
    (:mod:`autograder.problems.ch27.triton_reference`, imported here on first use: importing the
    course never imports Triton)."""
    from autograder.problems.ch27 import triton_reference
    return triton_reference.int4_matmul


def torch_fp16_matmul():
    """PyTorch's float16 product ``y = x @ W.T`` (cuBLAS) as ``run(w16, x, y)`` over device
    arrays (``x`` B × K or K long, ``y`` float32), or None where PyTorch with a GPU is not
    installed (it is never a dependency of the course)."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None

    def run(w, x, y):
        tw, tx, ty = (torch.as_tensor(a, device="cuda") for a in (w, x, y))
        ty.copy_(torch.matmul(tx, tw.T).float())
    return run


def torch_dequantized_matmul():
    """PyTorch without a quantised kernel: dequantise the int8 weights to float16 in one kernel,
    then cuBLAS, as ``run(q, scales, x, group, y)``; or None (see :func:`torch_fp16_matmul`)."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None

    def run(q, scales, x, group, y):
        tq, ts, tx, ty = (torch.as_tensor(a, device="cuda") for a in (q, scales, x, y))
        k = tq.shape[1]
        w = tq.to(torch.float16) * ts.repeat_interleave(int(group), dim=1)[:, :k]
        ty.copy_(torch.matmul(tx, w.T).float())
    return run


def _torch_on_gpu():
    """PyTorch with a GPU, or ImportError saying why not (what ``aag bench`` expects of a
    vendor: it skips the vendor's column with the reason)."""
    import torch
    if not torch.cuda.is_available():
        raise ImportError("PyTorch is installed without a GPU")
    return torch


def torch_int8_vendor():
    """For ``aag bench``: PyTorch, which has no int8 weight-only kernel of its own, dequantising
    the int8 weights to float16 and multiplying with cuBLAS, each call, as ``run(inputs,
    outputs)``."""
    torch = _torch_on_gpu()

    def run(inputs, outputs):
        q, s, x = (torch.as_tensor(inputs[k], device="cuda") for k in ("q", "scales", "x"))
        g = int(inputs["group"])
        w = q.to(torch.float16) * s.repeat_interleave(g, dim=1)[:, :q.shape[1]]
        torch.as_tensor(outputs["y"], device="cuda").copy_(torch.mv(w, x).float())
    return run


def torch_int4_vendor():
    """For ``aag bench``: PyTorch unpacking the int4 weights on the GPU, dequantising them to
    float16 and multiplying with cuBLAS, each call, as ``run(inputs, outputs)``."""
    torch = _torch_on_gpu()

    def run(inputs, outputs):
        p, s, x = (torch.as_tensor(inputs[k], device="cuda") for k in ("packed", "scales", "x"))
        k, g = x.shape[1], int(inputs["group"])
        q = torch.stack(((p & 15).to(torch.int8) - 8, (p >> 4).to(torch.int8) - 8), dim=2)
        w = q.reshape(p.shape[0], -1)[:, :k].to(torch.float16)
        w = w * s.repeat_interleave(g, dim=1)[:, :k]
        torch.as_tensor(outputs["y"], device="cuda").copy_((x @ w.T).float())
    return run
