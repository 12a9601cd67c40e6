"""What the capstone's notebook calls outside the graded cells: the picture of an image before and
after equalization, the derived floor of a design's time, and the measuring cell (the learner's
``equalize`` timed with CUDA events beside a copy of the same bytes and NumPy on the CPU)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch12c.specs import (BASELINES, NUM_BINS, SPEED_SIZE, counts,
                                             equalize_bytes, equalized, sample_equalized,
                                             speed_image)


def show_equalization(img: np.ndarray, title: str = ""):
    """The image and its equalized version side by side, each with its histogram below."""
    import matplotlib.pyplot as plt
    out = equalized(img)
    fig, axes = plt.subplots(2, 2, figsize=(9, 5.5), gridspec_kw={"height_ratios": [3, 1.3]})
    for col, (picture, name) in enumerate(((img / 255.0, "the image"),
                                           (out, "equalized"))):
        axes[0, col].imshow(picture, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        axes[0, col].set_title(name, fontsize=10)
        axes[0, col].axis("off")
    axes[1, 0].bar(np.arange(NUM_BINS), counts(img)[0], width=1.0, color="#3b6ea8")
    axes[1, 0].set_xlim(-1, NUM_BINS)
    axes[1, 0].set_xlabel("value (0-255)", fontsize=8)
    scaled = np.rint(out * 255).astype(np.int64)
    axes[1, 1].bar(np.arange(NUM_BINS), np.bincount(scaled.reshape(-1), minlength=NUM_BINS),
                   width=1.0, color="#e07b39")
    axes[1, 1].set_xlim(-1, NUM_BINS)
    axes[1, 1].set_xlabel("output × 255", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def time_equalize(equalize, size: tuple[int, int] = SPEED_SIZE, repeats: int = 30,
                  seed: int = 12) -> list[dict]:
    """On a GPU: the learner's ``equalize`` on a photo-like image of ``size`` (default 4097 ×
    8191), timed with CUDA events after warm-up (median of ``repeats``), its output checked at
    4096 sampled pixels; beside it, in the same run, a device-to-device copy of the same bytes
    (6 per pixel) and the NumPy equalization on one CPU core. Rows: label, ms, GB/s (6 bytes per
    pixel), right. In CPU mode (or while graded) raises ``ag.timing.NeedsGPU``."""
    from autograder.machine import timing
    timing.require_gpu("Timing your equalize")
    from numba import cuda
    host = speed_image(np.random.default_rng(seed), size)["img"]
    nbytes = equalize_bytes(size)
    d_img = cuda.to_device(host)
    d_out = cuda.device_array(size, np.float32)
    rng = np.random.default_rng(seed)
    idx = rng.choice(host.size, size=min(4096, host.size), replace=False)
    expected, tolerance = sample_equalized({"img": host}, idx)

    def right(values) -> bool:
        got = values.reshape(-1)[idx].astype(np.float64)
        return bool(np.all(np.abs(got - expected["out"]) <= tolerance["out"]))

    stats = timing.time_gpu("your equalize", lambda i: equalize(d_img, d_out), repeats=repeats,
                            nbytes=nbytes)
    rows = [{"label": "your equalize", "ms": stats.median_ms, "gbps": stats.gbps,
             "right": right(d_out.copy_to_host())}]
    ceiling = timing.copy_ceiling(nbytes)
    rows.append({"label": f"same bytes, {ceiling.label}", "ms": ceiling.median_ms, "gbps": ceiling.gbps,
                 "right": True})
    out = np.empty(size, np.float32)
    numpy = BASELINES["numpy"]
    cpu = timing.time_cpu(numpy.label, lambda: numpy.run(img=host, out=out), nbytes=nbytes)
    rows.append({"label": numpy.label, "ms": cpu.median_ms, "gbps": cpu.gbps,
                 "right": right(out)})
    return rows


def floor_ms(size: tuple[int, int], bandwidth_gbps: float, bytes_per_pixel: float = 6.0) -> float:
    """Milliseconds a design needs at least to move ``bytes_per_pixel`` per pixel at
    ``bandwidth_gbps`` (a derived floor, not a measurement)."""
    return bytes_per_pixel * int(size[0]) * int(size[1]) / (bandwidth_gbps * 1e9) * 1e3
