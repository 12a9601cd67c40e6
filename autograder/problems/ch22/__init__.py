"""Chapter 22 (PMPP ch. 22, Advanced practices and future evolution): how work reaches the GPU.
Streams and events; pinned memory and a chunked pipeline whose copies run under its kernels,
seen on a timeline drawn from CUDA event stamps (22.1); Python's launch overhead, and many small
problems done in one launch instead of one launch each (22.2); occupancy against instruction-level
parallelism, four independent elements per thread (22.3); unified (managed) memory and its page
faults, and CUDA graphs (through CuPy; Numba has no graph API), measured.

Files: ``specs.py`` the graded exercises (inputs, float64 spec, tolerance, launches, the
pipeline's watch on its copies and waits, baselines, speed bars), ``references.py`` the course's
kernels and pipelines, ``notebook.py`` what the notebook's other cells call.
"""

from autograder.problems.ch22.notebook import (BOUND_LAUNCH, CALL_KINDS, CALL_SIZES, CALLS, CHART,
                                               TIMELINE, call_bars, call_costs, call_kind,
                                               calls_table, chart, cpu_mode_table, draw_timeline,
                                               launch_overhead, measure, measure_pipeline,
                                               overlap, record_calls, record_timelines,
                                               recorded_calls, show_calls, show_cpu_mode,
                                               show_recorded_timelines, stamps_to_rows, time_cpu,
                                               timeline, try_pipeline)
from autograder.problems.ch22.references import (ILP, THREADS, chunk_bounds, reference_axpb,
                                                 reference_batched, reference_ilp,
                                                 reference_one_each, reference_pipeline,
                                                 reference_rounds, serial_pipeline)
from autograder.problems.ch22.specs import (BATCHED_SPEED, ILP_SPEED, StreamTrace,
                                            axpb_tolerance, batched, batched_inputs,
                                            batched_sample, ilp, ilp_blocks, ilp_inputs, pipeline,
                                            pipeline_inputs)

__all__ = ["BATCHED_SPEED", "BENCH_VARIANTS", "BOUND_LAUNCH", "CALLS", "CALL_KINDS", "CALL_SIZES",
           "CHART", "ILP", "ILP_SPEED", "PROBLEMS", "THREADS", "TIMELINE", "StreamTrace",
           "axpb_tolerance", "batched", "batched_inputs", "batched_sample", "call_bars",
           "call_costs", "call_kind", "calls_table", "chart", "chunk_bounds", "cpu_mode_table",
           "draw_timeline", "ilp", "ilp_blocks", "ilp_inputs", "launch_overhead", "measure",
           "measure_pipeline", "overlap", "pipeline", "pipeline_inputs", "record_calls",
           "record_timelines", "recorded_calls", "reference_axpb", "reference_batched",
           "reference_ilp", "reference_one_each", "reference_pipeline", "reference_rounds",
           "serial_pipeline", "show_calls", "show_cpu_mode", "show_recorded_timelines",
           "stamps_to_rows", "time_cpu", "timeline", "try_pipeline"]

PROBLEMS = (pipeline, batched, ilp)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {}
