"""Capstone after chapter 12 (PMPP ch. 3, 9 and 11 together): histogram equalization of an 8-bit
grayscale image, measured. The learner writes a host function ``equalize(img, out)`` that
receives device arrays and launches kernels of their own design (a histogram, a scan of its 256
counts, a 2-D map through a lookup table; fused or not, any scratch arrays), graded against an
exact spec with a tolerance derived from float32's error bound (:mod:`.specs`), and a written
report graded by hand.

Files: ``specs.py`` the graded exercise (images, spec, tolerance, verdicts, CPU baselines),
``references.py`` the course's designs (the reference, and a plainer one for ``aag bench``),
``notebook.py`` what the notebook's other cells call (the picture, the measuring cell).
"""

from autograder.problems.ch12c.notebook import floor_ms, show_equalization, time_equalize
from autograder.problems.ch12c.references import (equalize_global_atomics, equalize_reference,
                                                  reference_equalize, reference_global_atomics)
from autograder.problems.ch12c.specs import (KINDS, SPEED_SIZE, counts, equalize,
                                             equalize_bytes, equalized, gray_image, kind_of,
                                             tolerance_of_image, variants)

__all__ = ["BENCH_VARIANTS", "KINDS", "PROBLEMS", "SPEED_SIZE", "counts", "equalize",
           "equalize_bytes", "equalize_global_atomics", "equalize_reference", "equalized",
           "floor_ms", "gray_image", "kind_of", "reference_equalize", "reference_global_atomics",
           "show_equalization", "time_equalize", "tolerance_of_image", "variants"]

PROBLEMS = (equalize,)

# `aag bench` times beside the reference: one global atomic per pixel and a one-thread scan.
BENCH_VARIANTS = {"equalize": {"global atomics, one-thread scan": reference_global_atomics}}
