"""Chapter 2 (PMPP ch. 2, Heterogeneous data parallel computing): vector addition, first one
thread per element with a launcher the learner writes, then a grid-stride loop timed on a GPU.

``specs.py`` holds the graded exercises and their CPU baselines, ``references.py`` the course's
reference kernel (this chapter has no notebook helpers).
"""

from autograder.problems.ch02.references import reference_grid_stride
from autograder.problems.ch02.specs import vector_add, vector_add_grid_stride

__all__ = ["PROBLEMS", "reference_grid_stride", "vector_add", "vector_add_grid_stride"]

PROBLEMS = (vector_add, vector_add_grid_stride)
