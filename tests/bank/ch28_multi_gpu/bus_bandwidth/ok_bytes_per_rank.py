# bank: counts what each rank sends, 2 (n - 1) chunks of nbytes / n, and divides by the time for busbw; the same numbers another way: it must get full marks.
# naive: none
def allreduce_bandwidth(nbytes, seconds, ranks):
    sent = 2 * (ranks - 1) * (nbytes / ranks)
    return nbytes / seconds * 1e-9, sent / seconds * 1e-9
