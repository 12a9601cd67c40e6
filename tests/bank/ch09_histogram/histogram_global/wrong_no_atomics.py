# bank: a histogram without atomics: hist[data[i]] += 1 is a read-modify-write that loses counts when two threads hit one bin; the simulator rarely shows it, the race detector stops it every time; it must lose the points.
# naive: none
@cuda.jit
def histogram_global_kernel(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        hist[data[i]] += 1
