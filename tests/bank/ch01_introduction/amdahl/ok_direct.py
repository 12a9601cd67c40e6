# bank: the textbook formula 1 / ((1 - p) + p / s), written directly; correct, so it must get full marks.
# naive: none
def amdahl_speedup(parallel_fraction, speedup):
    """Overall speedup when `parallel_fraction` of the run time becomes `speedup` times faster."""
    return 1.0 / ((1.0 - parallel_fraction) + parallel_fraction / speedup)
