"""The ``aag`` command line and what it runs: ``cli``, ``build`` (notebooks from source/),
``bench`` (the reference kernels on a GPU), ``doctor``, ``workspace`` and ``grade`` (self-study)."""
