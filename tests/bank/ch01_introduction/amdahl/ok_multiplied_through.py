# bank: an algebraically equal form, s / (s (1 - p) + p), with named steps; correct, so it must get full marks.
# naive: none
def amdahl_speedup(parallel_fraction, speedup):
    serial_part = 1 - parallel_fraction
    new_time = speedup * serial_part + parallel_fraction   # the run time, in units of 1/speedup
    return speedup / new_time
