"""Chapter 23 (PMPP ch. 23, Conclusion and outlook): the course reviewed in questions that are
graded like any exercise (shared-memory banks, Little's law and the bytes in flight, the traffic
of a softmax, the first kernel of the track that follows), the course's reference kernels set
against their roofs on an H200, and the map onward.

Files: ``specs.py`` the graded questions, ``notebook.py`` what the notebook's other cells call,
``h200_reference_kernels.json`` the H200 measurements the picture shows (from ``aag bench``).
"""

from autograder.problems.ch23.notebook import (course_map, course_map_text, reference_kernels,
                                               show_banks, show_reference_kernels)
from autograder.problems.ch23.specs import (BANKS, bank_conflict_ways, bank_ways,
                                            bytes_in_flight, softmax_traffic, worked_little)

__all__ = ["BANKS", "PROBLEMS", "bank_conflict_ways", "bank_ways", "bytes_in_flight",
           "course_map", "course_map_text", "reference_kernels", "show_banks", "show_reference_kernels",
           "softmax_traffic", "worked_little"]

PROBLEMS = (bank_conflict_ways, bytes_in_flight, softmax_traffic)
