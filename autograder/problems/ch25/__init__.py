"""Chapter 25 (GPU MODE track): LayerNorm and RMSNorm: one pass, stable, fused, and backward.

See :mod:`.specs` for the exercises and their error bounds, :mod:`.triton_specs` for the Triton
exercise, :mod:`.references` for the course's kernels (:mod:`.triton_reference` for its Triton one,
imported only when first used: importing the course never imports Triton), :mod:`.notebook` for
what the notebook's other cells call.
"""

from autograder.problems.ch25.notebook import (CHART, NOT_RECORDED, ROW_LENGTHS, TritonMissing,
                                               break_inputs, chart, compare_triton, measure,
                                               record, recorded, time_cpu, variance_errors)
from autograder.problems.ch25.references import (reference_layernorm,
                                                 reference_layernorm_backward,
                                                 reference_layernorm_triton, reference_rmsnorm,
                                                 textbook_layernorm, torch_layernorm,
                                                 torch_rmsnorm, two_pass_layernorm)
from autograder.problems.ch25.specs import (BASELINES, SPEED_ROWS, WARP_BLOCKS, RowsProblem,
                                            backward_host, chain, layernorm_backward,
                                            layernorm_bound, layernorm_host, layernorm_rows,
                                            make_rows, max_kappa, rmsnorm_bound, rmsnorm_host,
                                            rmsnorm_rows, row_blocks, saved_stats, speed_shape)
from autograder.problems.ch25.triton_specs import layernorm_triton, triton_chain

__all__ = ["BASELINES", "CHART", "NOT_RECORDED", "PROBLEMS", "ROW_LENGTHS", "SPEED_ROWS",
           "WARP_BLOCKS", "RowsProblem", "TritonMissing", "backward_host",
           "break_inputs", "chain", "chart", "compare_triton", "layernorm_backward",
           "layernorm_bound", "layernorm_host", "layernorm_rows", "layernorm_triton",
           "make_rows", "max_kappa", "measure", "record", "recorded",
           "reference_layernorm", "reference_layernorm_backward",
           "reference_layernorm_triton", "reference_rmsnorm", "rmsnorm_bound",
           "rmsnorm_host", "rmsnorm_rows", "row_blocks", "saved_stats", "speed_shape",
           "textbook_layernorm", "time_cpu", "torch_layernorm", "torch_rmsnorm",
           "triton_chain", "two_pass_layernorm", "variance_errors"]

PROBLEMS = (layernorm_rows, rmsnorm_rows, layernorm_backward, layernorm_triton)

# `aag bench`: the two-pass LayerNorm (the row read three times) beside the reference.
BENCH_VARIANTS = {"layernorm_rows": {
    "two-pass: mean, then mean of squared deviations, then normalise": two_pass_layernorm,
}}
