# bank: a lambda with the form 1 / (1 - p (1 - 1/s)), which cancels for p near 1 but stays within a few roundings; correct, full marks.
# naive: none
amdahl_speedup = lambda parallel_fraction, speedup: 1.0 / (1.0 - parallel_fraction * (1.0 - 1.0 / speedup))
