"""Chapter 26 (GPU MODE track): attention, naive and FlashAttention-style, in Numba and in Triton.

See :mod:`.specs` for the Numba exercises and their error bound, :mod:`.triton_specs` for the
Triton exercise, :mod:`.references` for the course's kernels (:mod:`.triton_reference` for its
Triton one, imported only when first used: importing the course never imports Triton),
:mod:`.notebook` for what the notebook's other cells call.
"""

from autograder.problems.ch25.notebook import TritonMissing
from autograder.problems.ch26.notebook import (CHART, HEAD_DIMS, LENGTHS, NOT_RECORDED,
                                               PEAK_FP16_TENSOR_TFLOPS, PEAK_FP32_TFLOPS, chart,
                                               compare_triton, measure, overflow_demo, record,
                                               recorded, time_cpu, traffic)
from autograder.problems.ch26.references import (D_MAX, TILE, reference_attention_naive,
                                                 reference_attention_triton,
                                                 reference_flash_attention, torch_sdpa)
from autograder.problems.ch26.specs import (BASELINES, SPEED_SIZE, VARIANTS, AttentionProblem,
                                            attention_bound, attention_host, attention_naive,
                                            attention_sample, flash_attention, make_attention,
                                            row_bound)
from autograder.problems.ch26.triton_specs import TRITON_DOT_FACTOR, attention_triton

__all__ = ["BASELINES", "CHART", "D_MAX", "HEAD_DIMS", "LENGTHS", "NOT_RECORDED",
           "PEAK_FP16_TENSOR_TFLOPS", "PEAK_FP32_TFLOPS", "PROBLEMS", "SPEED_SIZE", "TILE",
           "TRITON_DOT_FACTOR", "VARIANTS", "AttentionProblem", "TritonMissing",
           "attention_bound", "attention_host", "attention_naive", "attention_sample",
           "attention_triton", "chart", "compare_triton", "flash_attention", "make_attention",
           "measure", "overflow_demo", "record", "recorded", "reference_attention_naive",
           "reference_attention_triton", "reference_flash_attention", "row_bound", "time_cpu",
           "torch_sdpa", "traffic"]

PROBLEMS = (attention_naive, flash_attention, attention_triton)
