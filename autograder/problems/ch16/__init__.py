"""Chapter 16 (PMPP ch. 16, Deep learning): the kernels of a convolutional network's layer: the
forward pass of a convolution layer (multi-channel, batched) computed directly, one thread per
output, and as im2col + a GEMM (the input unrolled into a matrix, multiplied by chapter 6's
register-tiled kernel); max pooling; and the backward pass for the gradient with respect to the
layer's input; with the FLOPs, bytes and time bound of a layer, and cuDNN (through PyTorch, where
it is installed) as the vendor's convolution in the measuring cell.

Layouts are NCHW: ``X[n, c, h, w]`` (N images of C channels, H × W), filters ``W[m, c, r, s]`` (M
filters of C × R × S), ``Y[n, m, p, q]`` with ``P = H − R + 1`` and ``Q = W − S + 1`` (a valid
convolution: stride 1, no padding; PMPP's form, a correlation: the filters are not flipped)::

    Y[n, m, p, q] = Σ over c, r, s of X[n, c, p + r, q + s] · W[m, c, r, s]
    dX[n, c, h, w] = Σ over m, r, s of dY[n, m, h − r, w − s] · W[m, c, r, s]   (inside dY only)

The unrolled matrix is ``Xu [C·R·S, N·P·Q]``, row ``c·R·S + r·S + s``, column ``n·P·Q + p·Q + q``;
the filters read as a ``[M, C·R·S]`` matrix times it give ``[M, N·P·Q]``, which is Y with n and m
swapped. The specs are float64; each output is judged within the error bound of a float32 dot
product of its k terms, γ_k · Σ|terms|, k = C·R·S forward and M·R·S for the input gradient.

Files: ``specs.py`` the graded exercises (shapes, spec, tolerances, launches, baselines),
``references.py`` the course's kernels and the im2col + GEMM pipeline, ``notebook.py`` what the
notebook's other cells call.
"""

from autograder.problems.ch16.notebook import (chart, check_small, measure, show_im2col,
                                               small_layer, time_cpu_forward)
from autograder.problems.ch16.references import (conv_by_im2col, course_gemm,
                                                 reference_conv_backward_input,
                                                 reference_conv_forward, reference_im2col,
                                                 reference_maxpool, unrolled_shape)
from autograder.problems.ch16.specs import (BASELINES, BLOCK_SHAPES, SPEED_BLOCK, SPEED_LAYER,
                                            conv_backward_input, conv_backward_input_host,
                                            conv_forward, conv_forward_host, conv_layer_bound,
                                            forward_sample, im2col, im2col_host, layer_bytes,
                                            layer_dims, layer_flops, layer_tolerance, maxpool,
                                            maxpool_host, pool_input_shape)

__all__ = ["BASELINES", "BLOCK_SHAPES", "PROBLEMS", "SPEED_BLOCK", "SPEED_LAYER", "chart",
           "check_small", "conv_backward_input", "conv_backward_input_host", "conv_by_im2col",
           "conv_forward", "conv_forward_host", "conv_layer_bound", "course_gemm", "forward_sample",
           "im2col", "im2col_host", "layer_bytes", "layer_dims", "layer_flops", "layer_tolerance",
           "maxpool", "maxpool_host", "measure", "pool_input_shape",
           "reference_conv_backward_input", "reference_conv_forward", "reference_im2col",
           "reference_maxpool", "show_im2col", "small_layer", "time_cpu_forward", "unrolled_shape"]

PROBLEMS = (conv_forward, im2col, maxpool, conv_backward_input, conv_layer_bound)
