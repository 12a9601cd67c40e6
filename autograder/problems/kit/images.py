"""A test image with real structure, and its gray version (chapters 3, 7 and 9)."""

from __future__ import annotations

import numpy as np

GRAY_WEIGHTS = (0.299, 0.587, 0.114)   # ITU-R BT.601 luma weights for r, g, b


def test_image(height: int, width: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """A height × width × 3 float32 RGB image in [0, 1] with something for every bug to hit: a
    colour gradient (different per channel and direction), a bright rectangle with sharp edges, a
    disk, a one-pixel diagonal line, a fine checkerboard patch, and noise. Seeded, no downloads."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    v = yy / max(height - 1, 1)          # 0 at the top, 1 at the bottom
    u = xx / max(width - 1, 1)           # 0 at the left, 1 at the right
    img = np.stack([0.15 + 0.6 * u, 0.1 + 0.5 * v, 0.7 - 0.4 * (u + v) / 2], axis=-1)
    # A rectangle with sharp edges, somewhere in the left half.
    r0, c0 = int(rng.integers(0, max(height // 2, 1))), int(rng.integers(0, max(width // 2, 1)))
    rect = (yy >= r0) & (yy < r0 + max(height // 3, 1)) & (xx >= c0) & (xx < c0 + max(width // 4, 1))
    img[rect] = (0.95, 0.85, 0.2)
    # A disk, somewhere in the right half.
    cy, cx = rng.uniform(0.2, 0.8) * height, rng.uniform(0.5, 0.9) * width
    radius = max(min(height, width) / 5, 1.0)
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= radius ** 2] = (0.1, 0.3, 0.9)
    # A one-pixel line from the top-left corner going down-right (a diagonal only if square).
    line = np.abs(yy - xx * (height / max(width, 1))) < 0.5
    img[line] = (1.0, 1.0, 1.0)
    # A checkerboard of 2 × 2 squares in the bottom-right corner: high frequencies for the blur.
    checker = (yy >= height * 0.7) & (xx >= width * 0.75) & (((yy // 2 + xx // 2) % 2) == 0)
    img[checker] = (0.0, 0.0, 0.0)
    img += rng.normal(0.0, 0.04, img.shape)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def to_gray(image: np.ndarray) -> np.ndarray:
    """The spec of Exercise 3.1 in float64: 0.299 r + 0.587 g + 0.114 b."""
    image = np.asarray(image, dtype=np.float64)
    w = GRAY_WEIGHTS
    return w[0] * image[..., 0] + w[1] * image[..., 1] + w[2] * image[..., 2]
