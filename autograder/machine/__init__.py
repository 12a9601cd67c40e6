"""The machine the code runs on: the backend's choice and facts (``device``), measuring time
(``timing``: events, medians, CPU baselines; it grades nothing) and CPU mode (``simulator``).
Imports only ``autograder.core``."""
