"""Grading: the ``Problem`` class and its declared hooks (``problem``), the speed test (``speed``),
the judge and the student process it runs learner code in (``judge``, ``runner``, ``sandbox``,
``safe_files``), where an answer came from (``provenance``) and nbgrader's preprocessors
(``nbgrader_ext``). Imports ``core`` and ``machine``; finds a chapter's problems by name through
``autograder.problems.registry``, never by importing the chapters."""
