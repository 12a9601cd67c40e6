"""Facts about this machine recorded beside every measurement: versions, the GPU's figures and
its FP32 peak."""

from __future__ import annotations

import platform
from importlib import metadata

from autograder.machine import device, timing


def versions() -> dict:
    """The versions of Python and the packages the numbers depend on."""
    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "numba-cuda", "llvmlite", "cupy-cuda13x", "cupy-cuda12x", "torch",
                 "cuda-core", "cuda-cccl"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def gpu_facts() -> dict:
    """The GPU's name, compute capability, SMs, L2 size and driver (recorded with every number)."""
    from numba import cuda
    dev = cuda.get_current_device()
    b = device.current()
    return {"name": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
            "compute_capability": ".".join(map(str, dev.compute_capability)),
            "sms": dev.MULTIPROCESSOR_COUNT, "l2_bytes": timing.l2_bytes(),
            "driver_cuda": b.nvidia.driver_cuda}


# FP32 lanes per SM by compute capability (CUDA programming guide, arithmetic instructions):
# peak FP32 FLOP/s = SMs × lanes × 2 (a fused multiply-add) × clock.
_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
               (9, 0): 128, (10, 0): 128, (12, 0): 128}


def peak_fp32_flops() -> float:
    """The device's FP32 peak without tensor cores, from its SM count and boost clock."""
    from numba import cuda
    dev = cuda.get_current_device()
    lanes = _FP32_LANES.get(tuple(dev.compute_capability), 128)
    return dev.MULTIPROCESSOR_COUNT * lanes * 2 * dev.CLOCK_RATE * 1e3
