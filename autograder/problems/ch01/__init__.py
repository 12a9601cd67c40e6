"""Chapter 1 (PMPP ch. 1, Introduction): Amdahl's law, thread indices, a first map kernel.

``specs.py`` holds the graded exercises (this chapter has no reference kernels or notebook
helpers).
"""

from autograder.problems.ch01.specs import amdahl, saxpy, thread_ids

PROBLEMS = (amdahl, thread_ids, saxpy)
