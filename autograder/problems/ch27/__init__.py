"""Chapter 27 (GPU MODE track): quantized matrix products: int8 and packed int4 weights with
per-group scales, dequantised on the fly, in Numba and in Triton.

See :mod:`.specs` for the format, the Numba exercises and their error bound, :mod:`.triton_specs`
for the Triton exercise, :mod:`.references` for the course's kernels (:mod:`.triton_reference`
for its Triton one, imported only when first used: importing the course never imports Triton),
:mod:`.notebook` for what the notebook's other cells call.
"""

from autograder.problems.ch27.notebook import (CHART, NOT_RECORDED, TritonMissing, chart,
                                               compare_triton, measure, quantization_errors,
                                               record, recorded, time_cpu)
from autograder.problems.ch27.references import (fp16_matvec, reference_int4_matmul,
                                                 reference_int4_triton, reference_int8_matvec,
                                                 torch_dequantized_matmul, torch_fp16_matmul)
from autograder.problems.ch27.specs import (SPEED_GROUP, QuantProblem, bound, chain, dequantize,
                                            expand_scales, groups, int4_matmul, int8_matvec,
                                            pack_int4, product_host, quant_time_bound, quantize,
                                            quantize_int4, quantize_int8, unpack_int4)
from autograder.problems.ch27.triton_specs import int4_matmul_triton, triton_chain

__all__ = ["CHART", "NOT_RECORDED", "PROBLEMS", "SPEED_GROUP", "QuantProblem", "TritonMissing",
           "bound", "chain", "chart", "compare_triton", "dequantize", "expand_scales",
           "fp16_matvec", "groups", "int4_matmul", "int4_matmul_triton", "int8_matvec",
           "measure", "pack_int4", "product_host", "quant_time_bound", "quantization_errors",
           "quantize",
           "quantize_int4", "quantize_int8", "record", "recorded", "reference_int4_matmul",
           "reference_int4_triton", "reference_int8_matvec", "time_cpu",
           "torch_dequantized_matmul", "torch_fp16_matmul", "triton_chain", "unpack_int4"]

PROBLEMS = (quant_time_bound, int8_matvec, int4_matmul, int4_matmul_triton)
