"""The ``aag`` command line and what it runs: ``cli``, ``build`` (notebooks from source/),
``bench`` (the reference kernels on a GPU) and ``goals`` (what they are held to), ``doctor``,
``workspace`` and ``grade`` (self-study)."""
